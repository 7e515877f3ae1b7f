package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/testsite"
	"github.com/politecrawl/polite/robots"
)

func TestGetPageRobotsFirstIdentityEverywhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Robots("User-agent: *\nDisallow: /private/\n")
		a.Page("/", "text/html; charset=utf-8", "<title>hi</title>")
		g := newGate(t, 0)
		c := newClient(n, g)

		res, err := c.Get(t.Context(), "http://a.test/")
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, res.Status)
		assert.Equal(t, "http://a.test/", res.URL)
		assert.Equal(t, "http://a.test/", res.FinalURL)
		assert.Equal(t, "<title>hi</title>", string(res.Body))
		assert.False(t, res.Truncated)
		assert.Equal(t, "text/html; charset=utf-8", res.ContentType)
		assert.Equal(t, "text/html", res.MediaType())
		assert.Empty(t, res.Redirects)
		assert.Equal(t, []fetch.Attempt{{URL: "http://a.test/", Status: 200}}, res.Attempts)

		// robots.txt first, through the same gate, with the same identity.
		assert.Equal(t, []string{"a.test/robots.txt", "a.test/"}, seen(n.Requests()))
		assert.Equal(t, []string{"http://a.test/robots.txt", "http://a.test/"}, g.Acquired())
		assertIdentity(t, n.Requests())

		// robots.txt is cached: a second page costs one request.
		a.Page("/two", "text/plain", "2")
		_, err = c.Get(t.Context(), "http://a.test/two")
		require.NoError(t, err)
		assert.Equal(t, 1, a.Count("/robots.txt"))
		assert.Equal(t, 0, g.InFlight())
	})
}

func TestHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Page("/doc", "application/pdf", "%PDF-1.7 ...")
		c := newClient(n, newGate(t, 0))
		res, err := c.Head(t.Context(), "http://a.test/doc")
		require.NoError(t, err)
		assert.Equal(t, 200, res.Status)
		assert.Nil(t, res.Body)
		assert.Equal(t, "application/pdf", res.MediaType())
		reqs := a.Requests()
		require.Len(t, reqs, 2)
		assert.Equal(t, "GET", reqs[0].Method) // robots.txt
		assert.Equal(t, "HEAD", reqs[1].Method)
	})
}

// chain routes /r0 -> /r1 -> ... -> /r{hops-1} -> /final on s.
func chain(s *testsite.Site, hops int) {
	for i := range hops {
		next := fmt.Sprintf("/r%d", i+1)
		if i == hops-1 {
			next = "/final"
		}
		s.Redirect(fmt.Sprintf("/r%d", i), next, http.StatusFound)
	}
	s.Page("/final", "text/html", "end")
}

func TestRedirectChainOfTenReachesThePage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		chain(a, 10)
		g := newGate(t, 0)
		c := newClient(n, g)

		res, err := c.Get(t.Context(), "http://a.test/r0")
		require.NoError(t, err)
		assert.Equal(t, "end", string(res.Body))
		assert.Equal(t, "http://a.test/final", res.FinalURL)
		require.Len(t, res.Redirects, 10)
		assert.Equal(t, fetch.Hop{URL: "http://a.test/r0", Status: 302, Location: "/r1"}, res.Redirects[0])
		assert.Equal(t, fetch.Hop{URL: "http://a.test/r9", Status: 302, Location: "/final"}, res.Redirects[9])
		assert.Len(t, res.Attempts, 11)

		// 11 page requests, after the one robots.txt fetch.
		assert.Equal(t, 12, a.Total())
		assert.Equal(t, 1, a.Count("/final"))
		assert.Equal(t, "/robots.txt", a.Paths()[0])
		assert.Len(t, g.Acquired(), 12, "every hop passes the gate")
		assertIdentity(t, n.Requests())
	})
}

func TestRedirectChainOfElevenStopsAtTheEleventh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		chain(a, 11)
		c := newClient(n, newGate(t, 0))

		res, err := c.Get(t.Context(), "http://a.test/r0")
		fe := requireFetchError(t, err, "http://a.test/r10")
		assert.ErrorIs(t, err, fetch.ErrTooManyRedirects)
		assert.Len(t, fe.Redirects, 11)
		assert.Contains(t, err.Error(), "http://a.test/final") // the target not followed
		require.NotNil(t, res)
		assert.Len(t, res.Redirects, 11)
		assert.Equal(t, 302, res.Status)
		assert.Equal(t, 0, a.Count("/final"), "the 11th redirect must not be followed")
		assert.Equal(t, 11, a.Total()-a.Count("/robots.txt"))
	})
}

func TestMaxRedirectsConfigurable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		chain(a, 3)
		c := newClient(n, fetch.NoLimits{})
		c.MaxRedirects = 2
		_, err := c.Get(t.Context(), "http://a.test/r0")
		assert.ErrorIs(t, err, fetch.ErrTooManyRedirects)
		assert.Equal(t, 0, a.Count("/r3")+a.Count("/final"))

		// Negative: the redirect itself is the result.
		c2 := newClient(n, fetch.NoLimits{})
		c2.MaxRedirects = -1
		res, err := c2.Get(t.Context(), "http://a.test/r0")
		require.NoError(t, err)
		assert.Equal(t, 302, res.Status)
		assert.Equal(t, "/r1", res.Header.Get("Location"))
		assert.Empty(t, res.Redirects)
		assert.Equal(t, 1, a.Count("/r1"), "only the first client followed to /r1")
	})
}

func TestRedirectLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Redirect("/a", "/b", http.StatusMovedPermanently)
		a.Redirect("/b", "http://A.test/a#top", http.StatusFound) // same URL spelled differently
		c := newClient(n, fetch.NoLimits{})
		res, err := c.Get(t.Context(), "http://a.test/a")
		fe := requireFetchError(t, err, "http://a.test/b")
		assert.ErrorIs(t, err, fetch.ErrRedirectLoop)
		assert.Len(t, fe.Redirects, 2)
		assert.Len(t, res.Redirects, 2)
		assert.Equal(t, []string{"/robots.txt", "/a", "/b"}, a.Paths())
	})
}

func TestRelativeRedirects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		b := n.Add("b.test")
		a.Redirect("/dir/start", "next?x=1", http.StatusMovedPermanently)
		a.Redirect("/dir/next", "../up", http.StatusSeeOther)
		a.Redirect("/up", "//b.test/there", http.StatusTemporaryRedirect)
		b.Redirect("/there", "/final#frag", http.StatusPermanentRedirect)
		b.Page("/final", "text/plain", "ok")
		c := newClient(n, fetch.NoLimits{})
		res, err := c.Get(t.Context(), "http://a.test/dir/start")
		require.NoError(t, err)
		assert.Equal(t, "http://b.test/final", res.FinalURL)
		assert.Equal(t, []fetch.Hop{
			{URL: "http://a.test/dir/start", Status: 301, Location: "next?x=1"},
			{URL: "http://a.test/dir/next?x=1", Status: 303, Location: "../up"},
			{URL: "http://a.test/up", Status: 307, Location: "//b.test/there"},
			{URL: "http://b.test/there", Status: 308, Location: "/final#frag"},
		}, res.Redirects)
		assert.Equal(t, []string{
			"a.test/robots.txt", "a.test/dir/start", "a.test/dir/next?x=1", "a.test/up",
			"b.test/robots.txt", "b.test/there", "b.test/final",
		}, seen(n.Requests()))
		assertIdentity(t, n.Requests())
	})
}

func TestRedirectToDisallowedHostTargetNeverRequested(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		b := n.Add("b.test")
		a.Redirect("/go", "http://b.test/private/page", http.StatusFound)
		b.Robots("User-agent: 2-UAcomBot\nDisallow: /private/\n\nUser-agent: *\nAllow: /\n")
		b.Page("/private/page", "text/html", "secret")
		g := newGate(t, 0)
		c := newClient(n, g)

		res, err := c.Get(t.Context(), "http://a.test/go")
		fe := requireFetchError(t, err, "http://b.test/private/page")
		assert.ErrorIs(t, err, fetch.ErrDisallowed)
		require.NotNil(t, fe.Verdict)
		require.NotNil(t, fe.Verdict.Decision.Rule)
		assert.Equal(t, "/private/", fe.Verdict.Decision.Rule.Pattern)
		assert.False(t, fe.Verdict.Decision.Rule.Allow)
		assert.Equal(t, []fetch.Hop{{URL: "http://a.test/go", Status: 302, Location: "http://b.test/private/page"}}, fe.Redirects)
		assert.Equal(t, fe.Redirects, res.Redirects)
		assert.Equal(t, "http://b.test/private/page", res.FinalURL)

		// b saw robots.txt and nothing else; a's robots.txt came first.
		assert.Equal(t, []string{"a.test/robots.txt", "a.test/go", "b.test/robots.txt"}, seen(n.Requests()))
		assert.Equal(t, 0, b.Count("/private/page"))
		assert.Equal(t, []string{"http://a.test/robots.txt", "http://a.test/go", "http://b.test/robots.txt"}, g.Acquired())
		assertIdentity(t, n.Requests())
	})
}

func TestBadRedirects(t *testing.T) {
	for _, tc := range []struct {
		name, location string
	}{
		{"missing", ""},
		{"unparseable", "http://[::1"},
		{"ftp", "ftp://a.test/file"},
		{"mailto", "mailto:x@a.test"},
		{"javascript", "javascript:alert(1)"},
		{"no host", "http://"}, // "http:///path" is http://path/ to a browser
		{"empty host after the slashes", "https://?q"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := testsite.NewNetwork(t, testsite.InMemory)
				a := n.Add("a.test")
				a.Route("/r", testsite.Response{Status: http.StatusFound, Header: http.Header{"Location": {tc.location}}})
				c := newClient(n, newGate(t, 0))
				res, err := c.Get(t.Context(), "http://a.test/r")
				fe := requireFetchError(t, err, "http://a.test/r")
				assert.ErrorIs(t, err, fetch.ErrBadRedirect)
				assert.Equal(t, []fetch.Hop{{URL: "http://a.test/r", Status: 302, Location: tc.location}}, fe.Redirects)
				assert.Equal(t, 302, res.Status)
				assert.Equal(t, 1, a.Total()-a.Count("/robots.txt"))
			})
		})
	}
}

func TestFirstURLDisallowedSendsNoRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("shop.test")
		a.Robots("User-agent: CrawlCove-Crawler\nDisallow: /basket/\n")
		a.Page("/basket/1", "text/html", "basket")
		g := newGate(t, 0)
		c := newClient(n, g)
		c.UserAgent = "CrawlCove-Crawler"
		c.Header = nil

		res, err := c.Get(t.Context(), "http://shop.test/basket/1")
		fe := requireFetchError(t, err, "http://shop.test/basket/1")
		assert.ErrorIs(t, err, fetch.ErrDisallowed)
		assert.NotErrorIs(t, err, fetch.ErrSiteOffLimits)
		require.NotNil(t, fe.Verdict)
		assert.Equal(t, robots.Disallowed, fe.Verdict.Outcome)
		require.NotNil(t, fe.Verdict.Decision.Rule)
		assert.Equal(t, "/basket/", fe.Verdict.Decision.Rule.Pattern)
		assert.Equal(t, 2, fe.Verdict.Decision.Rule.Line)
		assert.Contains(t, err.Error(), "Disallow: /basket/")
		assert.Empty(t, res.Attempts)
		assert.Equal(t, []string{"/robots.txt"}, a.Paths())
		assert.Equal(t, "CrawlCove-Crawler", a.Requests()[0].Header.Get("User-Agent"))
	})
}

func TestSiteOffLimits(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(n *testsite.Network, s *testsite.Site)
	}{
		{"robots 503", func(_ *testsite.Network, s *testsite.Site) { s.Status("/robots.txt", 503) }},
		{"robots 500", func(_ *testsite.Network, s *testsite.Site) { s.Status("/robots.txt", 500) }},
		{"connection refused", func(_ *testsite.Network, s *testsite.Site) { s.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := testsite.NewNetwork(t, testsite.InMemory)
				s := n.Add("down.test")
				s.Page("/", "text/html", "home")
				tc.setup(n, s)
				g := newGate(t, 0)
				c := newClient(n, g)
				_, err := c.Get(t.Context(), "http://down.test/")
				fe := requireFetchError(t, err, "http://down.test/")
				assert.ErrorIs(t, err, fetch.ErrSiteOffLimits)
				assert.NotErrorIs(t, err, fetch.ErrDisallowed)
				require.NotNil(t, fe.Verdict)
				assert.Equal(t, robots.Unreachable, fe.Verdict.Outcome)
				assert.Equal(t, 0, s.Count("/"))
				assert.Equal(t, 0, g.InFlight())
			})
		})
	}
}

func TestUnknownHostIsOffLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		c := newClient(n, fetch.NoLimits{})
		_, err := c.Get(t.Context(), "http://nowhere.test/x")
		requireFetchError(t, err, "http://nowhere.test/x")
		assert.ErrorIs(t, err, fetch.ErrSiteOffLimits)
	})
}

func TestBadURLsAndMethods(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		g := newGate(t, 0)
		c := newClient(n, g)
		for _, raw := range []string{"", "/relative", "ftp://a.test/x", "http://", "http://a.test/%zz", "mailto:a@b"} {
			res, err := c.Get(t.Context(), raw)
			requireFetchError(t, err, raw)
			assert.ErrorIs(t, err, fetch.ErrBadURL, raw)
			require.NotNil(t, res)
		}

		// Other methods are refused before any I/O, by every entry point.
		for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT"} {
			req, err := http.NewRequest(m, "http://a.test/x", strings.NewReader("body"))
			require.NoError(t, err)
			_, err = (&fetch.Transport{Base: n.Transport(), Gate: g}).RoundTrip(req)
			assert.ErrorIs(t, err, fetch.ErrMethod, m)
			requireFetchError(t, err, "http://a.test/x")
			req, _ = http.NewRequest(m, "http://a.test/x", nil)
			_, err = c.RoundTripper().RoundTrip(req)
			assert.ErrorIs(t, err, fetch.ErrMethod, m)
			req, _ = http.NewRequest(m, "http://a.test/x", nil)
			_, err = c.HTTPClient().Do(req)
			assert.ErrorIs(t, err, fetch.ErrMethod, m)
		}
		_, err := c.HTTPClient().Post("http://a.test/x", "text/plain", strings.NewReader("x"))
		assert.ErrorIs(t, err, fetch.ErrMethod)
		assert.Equal(t, 0, a.Total(), "no request may reach the server")
		assert.Empty(t, g.Acquired())
	})
}

func TestCheckRedirectHook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		b := n.Add("b.test")
		a.Redirect("/in", "/in2", http.StatusFound)
		a.Redirect("/in2", "http://b.test/out", http.StatusFound)
		a.Page("/in2x", "text/plain", "x")
		errOffSite := errors.New("redirect leaves the site")
		var calls []string
		c := newClient(n, fetch.NoLimits{})
		c.CheckRedirect = func(next *url.URL, via []fetch.Hop) error {
			calls = append(calls, fmt.Sprintf("%s after %d", next, len(via)))
			if next.Host != "a.test" {
				return errOffSite
			}
			return nil
		}
		_, err := c.Get(t.Context(), "http://a.test/in")
		fe := requireFetchError(t, err, "http://b.test/out")
		assert.ErrorIs(t, err, errOffSite)
		assert.Len(t, fe.Redirects, 2)
		assert.Equal(t, []string{"http://a.test/in2 after 1", "http://b.test/out after 2"}, calls)
		assert.Equal(t, 0, b.Total(), "not even b's robots.txt is fetched")
	})
}

func TestExplicitRobotsCacheSharesTheGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Robots("User-agent: *\nDisallow: /no\n")
		a.Page("/yes", "text/plain", "y")
		g := newGate(t, 0)
		c := newClient(n, g)
		c.Robots = &robots.Cache{Client: &http.Client{Transport: c.PoliteTransport()}}
		_, err := c.Get(context.Background(), "http://a.test/yes")
		require.NoError(t, err)
		_, err = c.Get(context.Background(), "http://a.test/no")
		assert.ErrorIs(t, err, fetch.ErrDisallowed)
		assert.Equal(t, []string{"http://a.test/robots.txt", "http://a.test/yes"}, g.Acquired())
		assertIdentity(t, n.Requests())
	})
}
