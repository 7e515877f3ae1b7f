package fetch_test

import (
	"context"
	"net"
	"net/http"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/testsite"
	"github.com/politecrawl/polite/robots"
)

// TestSiteOffLimitsKeepsTheCause: when robots.txt cannot be fetched, the
// error of Get is ErrSiteOffLimits and still matches the original cause —
// a timeout (fetch.ErrTimeout, context.DeadlineExceeded) or a refused
// connection (syscall.ECONNREFUSED) — so a caller can tell them apart.
func TestSiteOffLimitsKeepsTheCause(t *testing.T) {
	t.Run("robots.txt times out", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			n := testsite.NewNetwork(t, testsite.InMemory)
			s := n.Add("slow.test")
			s.Route("/robots.txt", testsite.Response{Delay: time.Hour, Body: "User-agent: *\n"})
			s.Page("/", "text/html", "home")
			c := newClient(n, newGate(t, 0))
			start := time.Now()
			_, err := c.Get(t.Context(), "http://slow.test/")
			requireFetchError(t, err, "http://slow.test/")
			assert.Equal(t, fetch.DefaultTimeout, time.Since(start), "cut by the client's timeout")
			assert.ErrorIs(t, err, fetch.ErrSiteOffLimits)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.ErrorIs(t, err, fetch.ErrTimeout)
			assert.ErrorIs(t, err, robots.ErrUnreachable)
			var fe *robots.FetchError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, "http://slow.test/robots.txt", fe.URL)
			assert.Equal(t, 0, s.Count("/"), "the page is never requested")
		})
	})
	t.Run("robots.txt times out, answer reloaded from a Store", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			n := testsite.NewNetwork(t, testsite.InMemory)
			s := n.Add("slow.test")
			s.Route("/robots.txt", testsite.Response{Delay: time.Hour, Body: "User-agent: *\n"})
			other := n.Add("other.test")
			other.Robots("")
			other.Page("/", "text/html", "home")
			c := newClient(n, newGate(t, 0))
			// One entry in memory: a second site evicts the first, which then
			// comes back from the Store (as Entry values, so with its error).
			c.Robots = &robots.Cache{Client: &http.Client{Transport: c.PoliteTransport()}, Store: &robots.MemoryStore{}, MaxEntries: 1}
			for i, u := range []string{"http://slow.test/", "http://other.test/", "http://slow.test/again"} {
				_, err := c.Get(t.Context(), u)
				if i == 1 {
					require.NoError(t, err)
					continue
				}
				requireFetchError(t, err, u)
				assert.ErrorIs(t, err, fetch.ErrSiteOffLimits, u)
				assert.ErrorIs(t, err, context.DeadlineExceeded, u)
				assert.ErrorIs(t, err, fetch.ErrTimeout, u)
			}
			assert.Equal(t, 1, s.Count("/robots.txt"), "the second answer came from the Store")
			assert.Equal(t, 0, s.Count("/"))
		})
	})
	t.Run("connection refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		ln.Close() // nothing listens there now
		c := &fetch.Client{UserAgent: testUA, Gate: fetch.NoLimits{}}
		_, err = c.Get(t.Context(), "http://"+addr+"/")
		requireFetchError(t, err, "http://"+addr+"/")
		assert.ErrorIs(t, err, fetch.ErrSiteOffLimits)
		assert.ErrorIs(t, err, syscall.ECONNREFUSED)
		var op *net.OpError
		assert.ErrorAs(t, err, &op)
	})
	t.Run("robots.txt 503 has no cause to keep", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			n := testsite.NewNetwork(t, testsite.InMemory)
			s := n.Add("down.test")
			s.Status("/robots.txt", http.StatusServiceUnavailable)
			_, err := newClient(n, fetch.NoLimits{}).Get(t.Context(), "http://down.test/")
			assert.ErrorIs(t, err, fetch.ErrSiteOffLimits)
			assert.ErrorIs(t, err, robots.ErrUnreachable)
			assert.NotErrorIs(t, err, context.DeadlineExceeded)
			assert.Contains(t, err.Error(), "503")
		})
	})
}
