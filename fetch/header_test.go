package fetch_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/testsite"
)

// newWireSite starts a loopback server that records every request head as
// the bytes on the wire (testsite.Wire): Go's server canonicalises header
// names, so only the raw head tells X-AGENT from X-Agent. /robots.txt is
// 404, /r redirects to /p, anything else is 200.
func newWireSite(t *testing.T) *testsite.Wire {
	return testsite.NewWire(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/r":
			http.Redirect(w, r, "/p", http.StatusFound)
		default:
			io.WriteString(w, "page")
		}
	}))
}

// requestLines returns the first line of every head.
func requestLines(heads []string) []string {
	var out []string
	for _, h := range heads {
		out = append(out, h[:strings.Index(h, "\r\n")])
	}
	return out
}

// assertWireIdentity checks that every head carries "X-AGENT: 2-UA" spelled
// exactly so, and the User-Agent, each once.
func assertWireIdentity(t *testing.T, heads []string) {
	t.Helper()
	require.NotEmpty(t, heads)
	for _, h := range heads {
		assert.Contains(t, h, "\r\nX-AGENT: 2-UA\r\n", h)
		assert.Equal(t, 1, strings.Count(strings.ToLower(h), "\r\nx-agent:"), "one X-AGENT header:\n%s", h)
		assert.Contains(t, h, "\r\nUser-Agent: "+testUA+"\r\n", h)
		assert.Equal(t, 1, strings.Count(strings.ToLower(h), "\r\nuser-agent:"), "one User-Agent header:\n%s", h)
	}
}

// TestExtraHeaderNamesSentAsWritten: the 2-UAcomBot page says "We also
// send an X-AGENT: 2-UA header", so that is what the wire carries — on
// robots.txt, pages, redirect hops, through Client, its RoundTripper and
// HTTPClient, and Transport — not the canonical X-Agent.
func TestExtraHeaderNamesSentAsWritten(t *testing.T) {
	// A caller's other spellings of the same names are replaced, not sent
	// as well.
	extra := http.Header{"X-AGENT": {"2-UA"}, "user-agent": {"not me"}}
	newSiteAndClient := func(t *testing.T) (*testsite.Wire, *fetch.Client) {
		s := newWireSite(t)
		return s, &fetch.Client{UserAgent: testUA, Header: extra, Gate: fetch.NoLimits{}}
	}
	newReq := func(t *testing.T, url string) *http.Request {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		require.NoError(t, err)
		req.Header["x-agent"] = []string{"caller's"}
		req.Header["USER-AGENT"] = []string{"caller's"}
		return req
	}
	drain := func(t *testing.T, resp *http.Response, err error) {
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}

	t.Run("Client.Get", func(t *testing.T) {
		s, c := newSiteAndClient(t)
		res, err := c.Get(t.Context(), s.URL()+"/r")
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, res.Status)
		heads := s.Heads()
		assert.Equal(t, []string{"GET /robots.txt HTTP/1.1", "GET /r HTTP/1.1", "GET /p HTTP/1.1"}, requestLines(heads))
		assertWireIdentity(t, heads)
	})
	t.Run("Client.RoundTripper", func(t *testing.T) {
		s, c := newSiteAndClient(t)
		resp, err := c.RoundTripper().RoundTrip(newReq(t, s.URL()+"/p"))
		drain(t, resp, err)
		assert.Equal(t, []string{"GET /robots.txt HTTP/1.1", "GET /p HTTP/1.1"}, requestLines(s.Heads()))
		assertWireIdentity(t, s.Heads())
	})
	t.Run("Client.HTTPClient", func(t *testing.T) {
		s, c := newSiteAndClient(t)
		resp, err := c.HTTPClient().Do(newReq(t, s.URL()+"/r"))
		drain(t, resp, err)
		assert.Equal(t, []string{"GET /robots.txt HTTP/1.1", "GET /r HTTP/1.1", "GET /p HTTP/1.1"}, requestLines(s.Heads()))
		assertWireIdentity(t, s.Heads())
	})
	t.Run("Transport", func(t *testing.T) {
		s := newWireSite(t)
		tr := &fetch.Transport{UserAgent: testUA, Header: extra, Gate: fetch.NoLimits{}}
		req := newReq(t, s.URL()+"/p")
		resp, err := tr.RoundTrip(req)
		drain(t, resp, err)
		assert.Equal(t, []string{"GET /p HTTP/1.1"}, requestLines(s.Heads()))
		assertWireIdentity(t, s.Heads())
		//lint:ignore SA1008 the caller's own non-canonical spelling is what is checked
		assert.Equal(t, []string{"caller's"}, req.Header["x-agent"], "the caller's request is not modified")
	})
	assert.Equal(t, http.Header{"X-AGENT": {"2-UA"}, "user-agent": {"not me"}}, extra, "the configured map is not modified")
}
