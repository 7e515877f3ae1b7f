package fetch_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
)

// locationCases are Locations sent by https://host/d/page.html and the
// request a browser makes for each (Chromium's new URL(loc, base); the same
// pairs are in internal/htmlx's resolveCases, checked against Chromium).
var locationCases = []struct {
	name, location, want string
}{
	{"..//a keeps its empty segment", "..//a", "//a"},
	{"/p/..//q keeps its empty segment", "/p/..//q", "//q"},
	{"space with escaped delimiters", "/a b%2Fc%26d%3De%2Bf%3Bg", "/a%20b%2Fc%26d%3De%2Bf%3Bg"},
	{"backslashes are slashes", `\x\y`, "/x/y"},
	{"https:/path is relative", "https:/path", "/path"},
	{"pipe and caret escaped in a path, not in a query", "/a|b^c%2Fd?|^", "/a%7Cb%5Ec%2Fd?|^"},
	{"space in the query", "?q=a b", "/d/page.html?q=a%20b"},
}

// redirectSite is a loopback TLS site whose /d/page.html answers 302 with
// the Location set last, and which records the request-target of every
// other request.
type redirectSite struct {
	*httptest.Server
	mu       sync.Mutex
	location string
	got      []string // request-targets, as sent
}

func newRedirectSite(t *testing.T, robotsTxt string) *redirectSite {
	s := &redirectSite{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = w.Write([]byte(robotsTxt))
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if r.RequestURI == "/d/page.html" {
			w.Header().Set("Location", s.location)
			w.WriteHeader(http.StatusFound)
			return
		}
		s.got = append(s.got, r.RequestURI)
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *redirectSite) redirectTo(loc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.location, s.got = loc, nil
}

func (s *redirectSite) requested() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

// A redirect is followed to the URL a browser would request, by Get and
// by HTTPClient alike, and that URL is the one named in the result.
func TestRedirectRequestsWhatABrowserWould(t *testing.T) {
	s := newRedirectSite(t, "User-agent: *\nAllow: /\n")
	c := &fetch.Client{UserAgent: testUA, Transport: s.Client().Transport}
	for _, tc := range locationCases {
		t.Run(tc.name, func(t *testing.T) {
			s.redirectTo(tc.location)
			res, err := c.Get(t.Context(), s.URL+"/d/page.html")
			require.NoError(t, err)
			assert.Equal(t, []string{tc.want}, s.requested(), "Get")
			assert.Equal(t, s.URL+tc.want, res.FinalURL)

			s.redirectTo(tc.location)
			resp, err := c.HTTPClient().Get(s.URL + "/d/page.html")
			require.NoError(t, err)
			_ = resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, []string{tc.want}, s.requested(), "HTTPClient")
			assert.Equal(t, s.URL+tc.want, resp.Request.URL.String())
		})
	}
}

// robots.txt is asked about the URL that would be sent: "..//private" is
// "//private" to a browser, which the rules disallow, so nothing is
// requested (net/url's "/private" is allowed).
func TestRedirectRobotsCheckedOnTheURLSent(t *testing.T) {
	s := newRedirectSite(t, "User-agent: *\nDisallow: //private\nDisallow: /a%20b%2Fc\n")
	c := &fetch.Client{UserAgent: testUA, Transport: s.Client().Transport}
	for _, loc := range []string{"..//private", "/a b%2Fc"} {
		t.Run(loc, func(t *testing.T) {
			s.redirectTo(loc)
			_, err := c.Get(t.Context(), s.URL+"/d/page.html")
			assert.ErrorIs(t, err, fetch.ErrDisallowed)
			assert.Empty(t, s.requested(), "Get")

			s.redirectTo(loc)
			resp, err := c.HTTPClient().Get(s.URL + "/d/page.html")
			if resp != nil {
				_ = resp.Body.Close()
			}
			assert.ErrorIs(t, err, fetch.ErrDisallowed)
			assert.Empty(t, s.requested(), "HTTPClient")
		})
	}
}

// Where the browser's reading of a Location names another host than
// net/url's ("/\localhost:port/x" is //localhost:port/x to a browser, a
// path to net/url), HTTPClient does not carry the credentials http.Client
// copied for the same host to it.
func TestHTTPClientRedirectToAnotherHostDropsCredentials(t *testing.T) {
	var mu sync.Mutex
	auth := map[string][]string{} // request-target: Authorization
	var port string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		mu.Lock()
		auth[r.Host+r.RequestURI] = r.Header.Values("Authorization")
		mu.Unlock()
		if r.URL.Path == "/start" {
			w.Header().Set("Location", `/\localhost:`+port+`/x`)
			w.WriteHeader(http.StatusFound)
		}
	}))
	t.Cleanup(srv.Close)
	port = strconv.Itoa(int(srv.Listener.Addr().(*net.TCPAddr).AddrPort().Port()))
	c := &fetch.Client{UserAgent: testUA}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/start", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := c.HTTPClient().Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, map[string][]string{
		"127.0.0.1:" + port + "/start": {"Bearer secret"},
		"localhost:" + port + "/x":     nil,
	}, auth)
}
