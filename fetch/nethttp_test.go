package fetch_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/testsite"
)

func TestTransportIdentityAndGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Page("/p", "text/plain", "hello")
		g := newGate(t, 0)
		tr := &fetch.Transport{Base: n.Transport(), UserAgent: testUA, Header: http.Header{"X-AGENT": {"2-UA"}}, Gate: g}
		req, err := http.NewRequest(http.MethodGet, "http://a.test/p", nil)
		require.NoError(t, err)
		req.Header.Set("User-Agent", "Go-http-client/1.1 impostor")
		req.Header.Set("Accept", "text/plain")
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		assert.Equal(t, "Go-http-client/1.1 impostor", req.Header.Get("User-Agent"), "the caller's request is not modified")
		assert.Equal(t, 1, g.InFlight(), "the slot is held until the body is finished")
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, "hello", string(body))
		assert.Equal(t, 0, g.InFlight(), "released at EOF")
		require.NoError(t, resp.Body.Close()) // no double release (the gate checks)

		got := a.Requests()[0]
		assert.Equal(t, testUA, got.Header.Get("User-Agent"))
		assert.Equal(t, "2-UA", got.Header.Get("X-Agent"))
		assert.Equal(t, "text/plain", got.Header.Get("Accept"), "other headers pass through")

		// Closing without reading releases too; so does a transport error.
		resp, err = tr.RoundTrip(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, 0, g.InFlight())
		req2, _ := http.NewRequest(http.MethodGet, "http://gone.test/", nil)
		_, err = tr.RoundTrip(req2)
		assert.Error(t, err)
		assert.Equal(t, 0, g.InFlight())

		// The zero Transport sends DefaultUserAgent.
		z := &fetch.Transport{Base: n.Transport()}
		resp, err = z.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
		reqs := a.Requests()
		assert.Equal(t, fetch.DefaultUserAgent, reqs[len(reqs)-1].Header.Get("User-Agent"))
	})
}

func TestHTTPClientFollowsTenRedirectsNotEleven(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		b := n.Add("b.test")
		chain(a, 10)
		chain(b, 11)
		g := newGate(t, 0)
		hc := newClient(n, g).HTTPClient()

		resp, err := hc.Get("http://a.test/r0")
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, "end", string(body))
		assert.Equal(t, "http://a.test/final", resp.Request.URL.String())
		assert.Equal(t, 11, a.Total()-a.Count("/robots.txt"))

		_, err = hc.Get("http://b.test/r0")
		assert.ErrorIs(t, err, fetch.ErrTooManyRedirects)
		assert.Contains(t, err.Error(), "http://b.test/r10")
		assert.Equal(t, 0, b.Count("/final"))
		assert.Equal(t, 11, b.Total()-b.Count("/robots.txt"))
		assertIdentity(t, n.Requests())
		assert.Equal(t, 0, g.InFlight())
	})
}

func TestHTTPClientChecksRobotsPerHop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		b := n.Add("b.test")
		a.Redirect("/go", "http://b.test/private/x", http.StatusMovedPermanently)
		a.Redirect("/loop", "/loop2", http.StatusFound)
		a.Redirect("/loop2", "/loop", http.StatusFound)
		a.Redirect("/ftp", "ftp://a.test/f", http.StatusFound)
		b.Robots("User-agent: *\nDisallow: /private/\n")
		b.Page("/private/x", "text/html", "secret")
		hc := newClient(n, newGate(t, 0)).HTTPClient()

		_, err := hc.Get("http://a.test/go")
		assert.ErrorIs(t, err, fetch.ErrDisallowed)
		assert.Contains(t, err.Error(), "http://b.test/private/x")
		assert.Equal(t, []string{"/robots.txt"}, b.Paths(), "the target is never requested")

		_, err = hc.Get("http://a.test/loop")
		assert.ErrorIs(t, err, fetch.ErrRedirectLoop)
		assert.Equal(t, 1, a.Count("/loop"))
		_, err = hc.Get("http://a.test/ftp")
		assert.ErrorIs(t, err, fetch.ErrBadRedirect)
		_, err = hc.Get("http://b.test/private/x")
		assert.ErrorIs(t, err, fetch.ErrDisallowed)
		assert.Equal(t, 0, b.Count("/private/x"))
	})
}

func TestRoundTripperRetriesAndTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Route("/busy", testsite.Response{Status: 429, Header: retryAfter("4"), Body: "wait"}, testsite.Response{Body: "ok"})
		a.Route("/drip", testsite.Response{Body: strings.Repeat("d", 50), Drip: time.Second})
		a.Page("/big", "text/plain", strings.Repeat("b", 5000))
		g := newGate(t, 1)
		c := newClient(n, g)
		c.Timeout = 5500 * time.Millisecond
		c.MaxBodyBytes = 1000
		hc := c.HTTPClient()

		start := time.Now()
		resp, err := hc.Get("http://a.test/busy")
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, "ok", string(body))
		assert.Equal(t, 4*time.Second, elapsed(start))
		assert.Equal(t, 2, a.Count("/busy"))
		_, tripped := c.Slowdown.Tripped()
		assert.True(t, tripped)

		start = time.Now()
		resp, err = hc.Get("http://a.test/drip")
		require.NoError(t, err)
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.ErrorIs(t, err, fetch.ErrTimeout)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), "http://a.test/drip")
		assert.Len(t, body, 6)
		assert.Equal(t, c.Timeout, elapsed(start))

		resp, err = hc.Get("http://a.test/big")
		require.NoError(t, err)
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.ErrorIs(t, err, fetch.ErrBodyTooLarge)
		assert.Len(t, body, 1000)
		assert.Equal(t, 0, g.InFlight())
		assertIdentity(t, n.Requests())
	})
}

// A proxy from HTTP_PROXY sees the crawler's requests, robots.txt first.
func TestBaseTransportHonoursProxyEnvironment(t *testing.T) {
	var mu sync.Mutex
	var seenURIs, seenUA []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seenURIs = append(seenURIs, r.RequestURI)
		seenUA = append(seenUA, r.Header.Get("User-Agent"))
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		fmt.Fprint(w, "via proxy")
	}))
	defer proxy.Close()
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	t.Setenv("NO_PROXY", "direct.test")
	t.Setenv("no_proxy", "direct.test")

	tr := fetch.NewBaseTransport(nil)
	c := &fetch.Client{UserAgent: testUA, Transport: tr, Gate: fetch.NoLimits{}}
	res, err := c.Get(t.Context(), "http://far.example/page")
	require.NoError(t, err)
	assert.Equal(t, "via proxy", string(res.Body))
	mu.Lock()
	assert.Equal(t, []string{"http://far.example/robots.txt", "http://far.example/page"}, seenURIs)
	assert.Equal(t, []string{testUA, testUA}, seenUA)
	mu.Unlock()

	// NO_PROXY hosts are dialled directly (and here fail to resolve).
	u, _ := url.Parse("http://direct.test/")
	p, err := tr.Proxy(&http.Request{URL: u})
	require.NoError(t, err)
	assert.Nil(t, p)
}

// --resolve style mapping reaches a loopback server under a public name.
func TestBaseTransportResolve(t *testing.T) {
	t.Setenv("HTTP_PROXY", "")
	t.Setenv("http_proxy", "")
	n := testsite.NewNetwork(t, testsite.Loopback)
	s := n.Add("staging.example.com")
	s.Robots("User-agent: *\nDisallow: /admin\n")
	s.Page("/", "text/html", "staging home")
	c := &fetch.Client{UserAgent: testUA, Header: http.Header{"X-AGENT": {"2-UA"}}, Transport: fetch.NewBaseTransport(n.Resolve()), Gate: fetch.NoLimits{}}
	res, err := c.Get(t.Context(), "http://staging.example.com/")
	require.NoError(t, err)
	assert.Equal(t, "staging home", string(res.Body))
	_, err = c.Get(t.Context(), "http://staging.example.com/admin")
	assert.ErrorIs(t, err, fetch.ErrDisallowed)
	reqs := s.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "staging.example.com", reqs[1].Host, "the Host header keeps the public name")
	assertIdentity(t, reqs)

	// Host-only keys and keys without the port map every port.
	c2 := &fetch.Client{Transport: fetch.NewBaseTransport(map[string]string{"STAGING.example.com": s.Addr()}), Robots: allowAll{}, Gate: fetch.NoLimits{}}
	res, err = c2.Get(t.Context(), "http://staging.example.com/")
	require.NoError(t, err)
	assert.Equal(t, "staging home", string(res.Body))
}

func TestParseResolve(t *testing.T) {
	m, err := fetch.ParseResolve("Example.com:443:127.0.0.1", "v6.test:80:[::1]", "x.test:443:127.0.0.1:8443")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"example.com:443": "127.0.0.1:443",
		"v6.test:80":      "[::1]:80",
		"x.test:443":      "127.0.0.1:8443",
	}, m)
	for _, bad := range []string{"", "host", "host:80", "host:80:", ":80:1.2.3.4", "host:http:1.2.3.4", "host:0:1.2.3.4", "host:99999:1.2.3.4", "host:80:a b"} {
		_, err := fetch.ParseResolve(bad)
		assert.Error(t, err, bad)
	}
}

// With a single slot in the run, a cross-host redirect through HTTPClient
// must not deadlock: the new host's robots.txt needs the slot the redirect
// response held.
func TestHTTPClientCrossHostWithOneSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		b := n.Add("b.test")
		a.Redirect("/go", "http://b.test/page", http.StatusFound)
		b.Page("/page", "text/plain", "there")
		g := newGate(t, 1)
		hc := newClient(n, g).HTTPClient()
		resp, err := hc.Get("http://a.test/go")
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, "there", string(body))
		assert.Equal(t, []string{"a.test/robots.txt", "a.test/go", "b.test/robots.txt", "b.test/page"}, seen(n.Requests()))
	})
}

// The timeout starts when the gate admits the request: waiting for a slot is
// not the server's fault. A robots.txt that stalls is cut at the timeout.
func TestTimeoutStartsAfterTheGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		s := n.Add("stall.test")
		a.Page("/p", "text/plain", "p")
		s.Route("/robots.txt", testsite.Response{Delay: time.Hour})
		g := newGate(t, 1)
		c := newClient(n, g)

		// Someone else holds the only slot for 40s (> the 15s timeout).
		u, _ := url.Parse("http://elsewhere.test/")
		release, err := g.Acquire(t.Context(), u)
		require.NoError(t, err)
		time.AfterFunc(40*time.Second, release)

		start := time.Now()
		res, err := c.Get(t.Context(), "http://a.test/p")
		require.NoError(t, err, "robots.txt and the page waited for the slot, then had their full 15s")
		assert.Equal(t, "p", string(res.Body))
		assert.Equal(t, 40*time.Second, elapsed(start))

		start = time.Now()
		_, err = c.Get(t.Context(), "http://stall.test/x")
		assert.ErrorIs(t, err, fetch.ErrSiteOffLimits)
		assert.Contains(t, err.Error(), "robots.txt: request timed out after 15s", "the cause is named")
		assert.Equal(t, fetch.DefaultTimeout, elapsed(start))
		assert.Equal(t, []string{"/robots.txt"}, s.Paths())
	})
}

func TestTransportTimeoutCoversTheBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Route("/drip", testsite.Response{Body: strings.Repeat("x", 60), Drip: time.Second})
		g := newGate(t, 1)
		hc := &http.Client{Transport: &fetch.Transport{Base: n.Transport(), Gate: g, Timeout: 3500 * time.Millisecond}}
		start := time.Now()
		resp, err := hc.Get("http://a.test/drip")
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, 3500*time.Millisecond, elapsed(start))
		assert.ErrorIs(t, err, fetch.ErrTimeout)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), "http://a.test/drip")
		assert.Len(t, body, 4)
		assert.Equal(t, 0, g.InFlight())
	})
}

func TestHTTPClientAppliesCheckRedirectHook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		b := n.Add("b.test")
		a.Redirect("/1", "/2", http.StatusMovedPermanently)
		a.Redirect("/2", "http://b.test/x", http.StatusFound)
		var got []fetch.Hop
		c := newClient(n, newGate(t, 0))
		c.CheckRedirect = func(next *url.URL, via []fetch.Hop) error {
			got = via
			if next.Host != "a.test" {
				return fmt.Errorf("off site: %s", next.Host)
			}
			return nil
		}
		_, err := c.HTTPClient().Get("http://a.test/1")
		var fe *fetch.Error
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, "http://b.test/x", fe.URL)
		assert.Equal(t, []fetch.Hop{
			{URL: "http://a.test/1", Status: 301, Location: "/2"},
			{URL: "http://a.test/2", Status: 302, Location: "http://b.test/x"},
		}, got)
		assert.Equal(t, 0, b.Total())
	})
}

// Resolve.Addr says where a dial goes, as NewBaseTransport dials it.
func TestResolveAddr(t *testing.T) {
	m, err := fetch.ParseResolve("shop.test:443:127.0.0.1", "api.test:80:[::1]:8080")
	require.NoError(t, err)
	r := fetch.Resolve(m)
	assert.Equal(t, "127.0.0.1:443", r.Addr("shop.test:443"))
	assert.Equal(t, "127.0.0.1:443", r.Addr("SHOP.test:443"), "host case does not matter")
	assert.Equal(t, "[::1]:8080", r.Addr("api.test:80"))
	assert.Equal(t, "shop.test:80", r.Addr("shop.test:80"), "another port is not mapped")
	assert.Equal(t, "other.test:443", r.Addr("other.test:443"))
	assert.Equal(t, "x.test:1", fetch.Resolve(nil).Addr("x.test:1"))
}
