package fetch_test

import (
	"bytes"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/testsite"
)

func TestHugeBodyTruncatedAtTheDefaultCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Page("/huge", "text/html", strings.Repeat("a", 11<<20))
		a.Page("/exact", "text/html", strings.Repeat("b", 10<<20))
		c := newClient(n, newGate(t, 0))
		res, err := c.Get(t.Context(), "http://a.test/huge")
		require.NoError(t, err)
		assert.True(t, res.Truncated)
		assert.Len(t, res.Body, 10<<20)
		res, err = c.Get(t.Context(), "http://a.test/exact")
		require.NoError(t, err)
		assert.False(t, res.Truncated, "a body of exactly the cap is whole")
		assert.Len(t, res.Body, 10<<20)
	})
}

// An endless body proves the client stops reading at the cap: it would
// never return otherwise.
func TestEndlessBodyIsCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		var sent atomic.Int64
		a.Handle("/endless", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			chunk := bytes.Repeat([]byte("z"), 4096)
			for {
				k, err := w.Write(chunk)
				sent.Add(int64(k))
				if err != nil {
					return
				}
			}
		})
		c := newClient(n, newGate(t, 0))
		c.MaxBodyBytes = 100_000
		res, err := c.Get(t.Context(), "http://a.test/endless")
		require.NoError(t, err)
		assert.True(t, res.Truncated)
		assert.Len(t, res.Body, 100_000)
		assert.LessOrEqual(t, cap(res.Body), 100_001, "never holds more than the cap (+1)")
		synctest.Wait() // the handler sees the closed connection
		assert.Less(t, sent.Load(), int64(1<<20), "the server was cut off, not read to the end")
	})
}

func TestContentTypesReportedAsSent(t *testing.T) {
	for _, tc := range []struct {
		name, ctype, body, media string
	}{
		{"html as image", "image/png", "<html><title>x</title></html>", "image/png"},
		{"upper case with params", "TEXT/HTML; Charset=ISO-8859-1", "<p>x</p>", "text/html"},
		{"xml sitemap as text", "text/plain", `<?xml version="1.0"?><urlset/>`, "text/plain"},
		{"garbage", "not a type;;", "x", "not a type"},
		{"json", "application/json", "{}", "application/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := testsite.NewNetwork(t, testsite.InMemory)
				a := n.Add("a.test")
				a.Page("/x", tc.ctype, tc.body)
				c := newClient(n, fetch.NoLimits{})
				res, err := c.Get(t.Context(), "http://a.test/x")
				require.NoError(t, err)
				assert.Equal(t, tc.ctype, res.ContentType)
				assert.Equal(t, tc.media, res.MediaType())
				assert.Equal(t, tc.body, string(res.Body), "the body is returned whatever the type")
			})
		})
	}
	var r *fetch.Result
	assert.Equal(t, "", r.MediaType())
}
