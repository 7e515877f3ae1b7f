package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/monitor/internal/card"
	"github.com/politecrawl/polite/examples/monitor/internal/report"
	"github.com/politecrawl/polite/internal/testsite"
)

// newRawSite starts a loopback server that keeps every request head as the
// bytes on the wire (testsite.Wire): Go's server canonicalises header names,
// so only the raw head tells X-AGENT from X-Agent.
func newRawSite(t *testing.T) *testsite.Wire {
	return testsite.NewWire(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<title>raw</title><h1>raw</h1>")
	}))
}

func TestXAgentHeaderSpelledAsThePageSaysOnTheWire(t *testing.T) {
	s := newRawSite(t)
	db := tempDB(t)
	page := s.URL() + "/p"
	e := env{anyGap: true} // the real base transport, as the command uses it
	code, _, errOut := cli(t, e, "track", "-db", db, "-allow-private", page)
	require.Equal(t, exitOK, code, errOut)
	code, out, errOut := cli(t, e, "run", "-db", db, "-gap", "0s", "-allow-private")
	require.Equal(t, exitOK, code, "%s\n%s", out, errOut)

	heads := s.Heads()
	require.Len(t, heads, 2, "robots.txt and the page")
	assert.True(t, strings.HasPrefix(heads[0], "GET /robots.txt "), heads[0])
	assert.True(t, strings.HasPrefix(heads[1], "GET /p "), heads[1])
	for _, h := range heads {
		assert.Contains(t, h, "\r\nX-AGENT: 2-UA\r\n", h)
		assert.Equal(t, 1, strings.Count(strings.ToLower(h), "\r\nx-agent:"), "one X-AGENT header only:\n%s", h)
		assert.Contains(t, h, "\r\nUser-Agent: "+defaultUserAgent+"\r\n", h)
	}
}

// The default identity is the one the 2-UAcomBot page publishes, compared
// with the page's text written out here, not with the constant itself.
func TestDefaultUserAgentIsThePublishedOne(t *testing.T) {
	const published = "Mozilla/5.0 (compatible; 2-UAcomBot/1.0; +https://2-ua.com/support/robots)"
	assert.Equal(t, published, defaultUserAgent)
	code, _, errOut := cli(t, env{}, "run", "-h")
	require.Equal(t, exitOK, code)
	assert.Contains(t, errOut, `(default "`+published+`")`)
	assert.Equal(t, "2-UAcomBot", report.ProductToken(defaultUserAgent))
	assert.Equal(t, "https://2-ua.com/support/robots", card.PolicyURLOf(defaultUserAgent))
}
