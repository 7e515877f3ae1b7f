package fetch_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
)

// wireSite is a loopback HTTP/1.1 server that records every request head
// as the bytes on the wire: Go's server (and so httptest and testsite)
// canonicalises header names, so only a raw reader tells X-AGENT from
// X-Agent. /robots.txt is 404, /r redirects to /p, anything else is 200.
type wireSite struct {
	ln    net.Listener
	mu    sync.Mutex
	heads []string
	conns []net.Conn
	wg    sync.WaitGroup
}

func newWireSite(t *testing.T) *wireSite {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &wireSite{ln: ln}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Go(func() { s.serve(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns { // idle keep-alive connections
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *wireSite) URL() string { return "http://" + s.ln.Addr().String() }

func (s *wireSite) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(io.LimitReader(c, 1<<20))
	for {
		var head strings.Builder
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			head.WriteString(line)
			if line == "\r\n" {
				break
			}
		}
		h := head.String()
		s.mu.Lock()
		s.heads = append(s.heads, h)
		s.mu.Unlock()
		status, extra, body := "200 OK", "", "page"
		switch {
		case strings.HasPrefix(h, "GET /robots.txt "):
			status, body = "404 Not Found", ""
		case strings.HasPrefix(h, "GET /r "):
			status, extra, body = "302 Found", "Location: /p\r\n", ""
		}
		if _, err := fmt.Fprintf(c, "HTTP/1.1 %s\r\n%sContent-Length: %d\r\n\r\n%s", status, extra, len(body), body); err != nil {
			return
		}
	}
}

func (s *wireSite) Heads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.heads...)
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
	newSiteAndClient := func(t *testing.T) (*wireSite, *fetch.Client) {
		s := newWireSite(t)
		return s, &fetch.Client{UserAgent: testUA, Header: extra}
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
		tr := &fetch.Transport{UserAgent: testUA, Header: extra}
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
