package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/internal/testsite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// robots.txt unreachable or answering 5xx, at the start or on a refresh during the crawl: the site (or
// that host) is off limits and nothing more is requested of it.

func TestRobotsServerErrorStopsWithExit3(t *testing.T) {
	for _, code := range []int{500, 503} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			n, e := loopNet(t)
			s, www := n.Add("shop.test"), n.Add("www.shop.test")
			s.Status("/robots.txt", code)
			s.HTML("/", page("Home"))
			www.Robots("User-agent: *\nDisallow:\n")
			www.HTML("/", page("Home"))
			r := audit(t, e, "-gap", "0", "http://shop.test/")
			require.Equal(t, crawl.ExitOffLimits, r.code, r)
			assert.Empty(t, www.Paths(), "nothing more is requested: not even the www twin's robots.txt")
			assert.Contains(t, r.stderr, "http://shop.test/robots.txt")
			assert.Contains(t, r.stderr, fmt.Sprintf("HTTP %d", code))
			assert.Contains(t, r.stderr, "off limits")
			assert.Equal(t, []string{"/robots.txt"}, s.Paths(), "nothing but robots.txt is requested")
			assert.Len(t, n.Requests(), 1, "one request in all")
			assert.Equal(t, []string{"off_limits"}, r.strs(t, `SELECT outcome FROM crawls`))
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		n, e := loopNet(t)
		n.Add("other.test")
		r := audit(t, e, "-gap", "0", "http://shop.test/") // no such host on the network
		require.Equal(t, crawl.ExitOffLimits, r.code, r)
		assert.Contains(t, r.stderr, "http://shop.test/robots.txt could not be fetched")
		assert.Empty(t, n.Requests())
	})
	t.Run("4xx robots.txt means no rules", func(t *testing.T) {
		n, e := loopNet(t)
		s := n.Add("shop.test")
		s.Status("/robots.txt", 404)
		s.HTML("/", page("Home", "/a"))
		s.HTML("/a", page("A"))
		r := audit(t, e, "-gap", "0", "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		assert.Equal(t, 1, s.Count("/a"))
	})
	t.Run("twin unreachable: start host crawled alone", func(t *testing.T) {
		n, e := loopNet(t)
		s, www := n.Add("shop.test"), n.Add("www.shop.test")
		s.Robots("")
		www.Status("/robots.txt", 503)
		s.HTML("/", page("Home", "/a", "http://www.shop.test/b"))
		s.HTML("/a", page("A"))
		r := audit(t, e, "-gap", "0", "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		assert.Equal(t, 1, s.Count("/a"))
		assert.Equal(t, []string{"/robots.txt"}, www.Paths())
		assert.Contains(t, r.stderr, "www.shop.test/robots.txt answered HTTP 503")
	})
}

// A redirect into the twin whose robots.txt answered 503 is not requested (the twin is off limits); it
// was reported as a broken link although nothing was wrong with it that the crawl could know.
func TestRedirectIntoOffLimitsTwin(t *testing.T) {
	n, e := loopNet(t)
	s, www := n.Add("shop.test"), n.Add("www.shop.test")
	s.Robots("")
	www.Status("/robots.txt", 503)
	www.HTML("/moved", page("Moved"))
	s.HTML("/", page("Home", "/old"))
	s.Redirect("/old", "http://www.shop.test/moved", http.StatusMovedPermanently)
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Equal(t, []string{"/robots.txt"}, www.Paths(), "nothing but robots.txt is asked of an off-limits host")
	k := r.kinds(t)
	assert.Zero(t, k[findings.KindBrokenLink], "not requested, so not known to be broken")
	assert.Equal(t, 1, k[findings.KindRedirectBlocked])
	d := r.strs(t, `SELECT detail FROM findings WHERE kind = 'redirect_to_blocked'`)
	require.Len(t, d, 1)
	assert.Contains(t, d[0], "http://www.shop.test/moved")
	assert.Contains(t, d[0], "not requested")
}

// robots.txt answering 5xx when it is fetched again during a long crawl (the cache keeps it an hour) stops
// the crawl like at the start: exit 3, a clear message, nothing more requested, and what was crawled before
// kept and summarised. Before, the crawl "finished" with exit 0, re-asked robots.txt every five minutes and
// reported every later page as a blocked redirect.
func TestRobotsUnreachableDuringTheCrawlStopsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, e := memNet(t)
		s := n.Add("shop.test")
		s.Route("/robots.txt", testsite.Response{Body: "User-agent: *\nDisallow:\n", ContentType: "text/plain"},
			testsite.Response{Status: http.StatusServiceUnavailable})
		flatSite(s, 80, 0)
		r := audit(t, e, "-gap", "60s", "http://shop.test/") // 60 s between requests: robots.txt is refreshed after an hour
		require.Equal(t, crawl.ExitOffLimits, r.code, r)
		assert.Contains(t, r.stderr, "http://shop.test/robots.txt answered HTTP 503 during the crawl, so the whole site is off limits")
		assert.Contains(t, r.stderr, "everything crawled before is in")
		paths := s.Paths()
		assert.Equal(t, 2, s.Count("/robots.txt"), "asked once, refreshed once: %v", paths)
		assert.Equal(t, "/robots.txt", paths[len(paths)-1], "nothing is requested after the failed refresh")
		fetched := len(paths) - 2
		assert.Greater(t, fetched, 50)
		assert.Equal(t, fetched, r.int(t, `SELECT COUNT(*) FROM pages WHERE status = 200`), "what was crawled before is kept")
		assert.Equal(t, []string{"off_limits"}, r.strs(t, `SELECT outcome FROM crawls`))
		assert.Contains(t, r.stdout, "stopped (robots.txt unreachable)")
		k := r.kinds(t)
		assert.Zero(t, k[findings.KindRedirectBlocked]+k[findings.KindBrokenLink]+k[findings.KindBrokenPage], "pages not requested are not findings: %v", k)
	})
}

// The same on the twin: that host alone is stopped (its robots.txt not asked again), the crawl goes on.
func TestTwinRobotsUnreachableDuringTheCrawlStopsTheTwin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, e := memNet(t)
		s, www := n.Add("shop.test"), n.Add("www.shop.test")
		s.Robots("")
		www.Route("/robots.txt", testsite.Response{Body: "User-agent: *\nDisallow:\n", ContentType: "text/plain"},
			testsite.Response{Status: http.StatusServiceUnavailable})
		var links, twinLinks []string
		for i := range 5 {
			twinLinks = append(twinLinks, fmt.Sprintf("http://www.shop.test/w%d", i))
			www.HTML(fmt.Sprintf("/w%d", i), page(fmt.Sprint("W", i)))
		}
		for i := range 70 {
			links = append(links, fmt.Sprintf("/p%d", i))
			s.HTML(fmt.Sprintf("/p%d", i), page(fmt.Sprint("P", i)))
		}
		s.HTML("/p69", page("P69", twinLinks...)) // the twin's pages are found after more than an hour
		s.HTML("/", page("Home", links...))
		r := audit(t, e, "-gap", "60s", "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		assert.Equal(t, []string{"/robots.txt", "/robots.txt"}, www.Paths(), "asked once, refreshed once, then left alone")
		assert.Equal(t, 1, strings.Count(r.stderr, "http://www.shop.test/robots.txt answered HTTP 503 during the crawl: that host is off limits from now on"), r.stderr)
		assert.Equal(t, 1, s.Count("/llms.txt"), "the crawl of the start host went on to the end")
	})
}

// Links to the other scheme of the start host whose robots.txt cannot be fetched (a site without https)
// are not crawled, and said so once; the start host itself goes on (the frontier keys hosts without scheme,
// so stopping "that host" would have stopped the crawl).
func TestOtherSchemeUnreachableDoesNotStopTheStartHost(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", page("Home", "https://shop.test/secure", "/a", "https://shop.test/secure2", "/b"))
	s.HTML("/a", page("A"))
	s.HTML("/b", page("B"))
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Equal(t, 1, s.Count("/a"))
	assert.Equal(t, 1, s.Count("/b"))
	assert.Equal(t, 1, strings.Count(r.stderr, "https://shop.test/robots.txt could not be fetched"), r.stderr)
}
