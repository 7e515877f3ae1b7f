package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/testsite"
)

// Tests added in review: each pins a bug found by using the program.

// closeHook calls fn when the body of the response it wraps is closed, i.e. once fetch has read it.
type closeHook struct {
	io.ReadCloser
	once *sync.Once
	fn   func()
}

func (c closeHook) Close() error {
	err := c.ReadCloser.Close()
	c.once.Do(c.fn)
	return err
}

type hookTransport struct {
	rt   http.RoundTripper
	path string
	fn   func()
	once sync.Once
}

func (h *hookTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := h.rt.RoundTrip(req)
	if err == nil && req.URL.Path == h.path {
		resp.Body = closeHook{resp.Body, &h.once, h.fn}
	}
	return resp, err
}

// A page whose answer was read in full just as Ctrl-C arrived was dropped: "everything crawled so far is
// in the database" includes it.
func TestInterruptKeepsPageAnsweredInFull(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	var links []string
	for i := range 20 {
		links = append(links, fmt.Sprintf("/p%d", i))
		s.HTML(fmt.Sprintf("/p%d", i), page(fmt.Sprint("P", i)))
	}
	s.HTML("/", page("Home", links...))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	e.Transport = &hookTransport{rt: e.Transport, path: "/p3", fn: cancel} // Ctrl-C right after /p3 was read
	r := auditCtx(t, ctx, filepath.Join(t.TempDir(), "a.db"), e, "-gap", "0", "-concurrency", "1", "http://shop.test/")
	require.Equal(t, exitFailure, r.code, r)
	assert.Equal(t, []string{"interrupted"}, r.strs(t, `SELECT outcome FROM crawls`))
	assert.Equal(t, []string{"200 P3"}, r.strs(t, `SELECT status || ' ' || title FROM pages WHERE url = 'http://shop.test/p3'`),
		"the page answered before Ctrl-C is kept")
	assert.Equal(t, 0, s.Count("/p4"), "nothing is requested after Ctrl-C")
}

// The progress line was longer than an 80-column terminal once the crawl slowed down (the 429 URL was in
// it): a wrapped line cannot be redrawn in place, so every redraw scrolled a new line.
func TestProgressLineFitsTheTerminal(t *testing.T) {
	c := &counters{}
	c.pages.Store(123)
	c.errors.Store(1)
	c.requests.Store(200)
	start := time.Unix(0, 0)
	for _, cols := range []int{80, 40} {
		p := &progress{c: c, started: start, now: func() time.Time { return start.Add(100 * time.Second) },
			columns: func() int { return cols },
			state: func() (int, string, bool) {
				return 4567, "slowed down after 429: 1 in flight, 3s gap", true
			}}
		line := p.line()
		assert.LessOrEqual(t, utf8.RuneCountInString(line)+progressReserve, cols, "%q", line)
		assert.True(t, strings.HasPrefix(line, "slowed down after 429"), "the slowdown is never cut off: %q", line)
		if cols == 80 {
			assert.True(t, strings.HasPrefix(line, "slowed down after 429: 1 in flight, 3s gap · 123 done"), line)
		}
	}
	p := &progress{c: c, started: start, now: func() time.Time { return start.Add(time.Second) },
		columns: func() int { return 0 }, state: func() (int, string, bool) { return 0, "4 in flight max, 300ms gap", false }}
	assert.Equal(t, "123 done / 0 queued · 200.0 req/s · 1 error · 4 in flight max, 300ms gap", p.line(), "unknown width: whole line")
}

// A sort/filter variant that names the main page as canonical shares its title and description on
// purpose: reporting it as a duplicate was false. Content findings name the page where a redirect ended.
func TestAnalyzeCanonicalVariantsAndRedirectTargets(t *testing.T) {
	variant := ok("/products/?sort=price", "Products", "All products", 1)
	variant.Canonical = "/products/"
	hidden := ok("/print", "Products", "All products", 1)
	hidden.MetaRobots = "noindex"
	moved := ok("/sale", "", "Offers", 1) // /sale -> /offers/, and /offers/ has no title
	moved.TitleCount, moved.FinalURL = 0, "/offers/"
	moved.Redirects = []hopRecord{{URL: "/sale", Status: 301, Location: "/offers/"}}
	in := analysisInput{Pages: []*pageRecord{
		ok("/products/", "Products", "All products", 1), variant, hidden, moved,
		ok("/tent", "Tent", "Same", 1), ok("/lantern", "Lantern", "same", 1),
	}}
	assert.Equal(t, []string{
		"canonical_elsewhere /products/?sort=price",
		"description_duplicate /lantern",
		"description_duplicate /tent",
		"noindex /print",
		"redirect /sale",
		"title_missing /offers/",
	}, got(analyze(in)))
}

// A site answering every path with its HTML page (a soft 404) does not publish an llms.txt; and a 429 page
// is rate limited, not shown as plainly broken.
func TestAnalyzeSoft404LLMSAnd429(t *testing.T) {
	fs := analyze(analysisInput{
		Pages: []*pageRecord{{URL: "/busy", Status: 429}},
		Requests: []requestRecord{
			{URL: "/llms.txt", Purpose: "llms", Status: 200, ContentType: "text/html; charset=utf-8", Bytes: 900},
			{URL: "http://www.shop.test/llms.txt", Purpose: "llms", Status: 200, ContentType: "text/markdown", Bytes: 90},
		},
	})
	require.Len(t, fs, 3)
	assert.Equal(t, "HTTP 429 Too Many Requests, still after 2 retries (rate limited: the page itself may be fine); not linked from any crawled page", fs[0].Detail)
	assert.Equal(t, "probably not published: HTTP 200 but text/html; charset=utf-8, 900 bytes (a page served for any path?)", fs[1].Detail)
	assert.Equal(t, "published (HTTP 200, text/markdown, 90 bytes)", fs[2].Detail)
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
	require.Equal(t, exitOK, r.code, r)
	assert.Equal(t, []string{"/robots.txt"}, www.Paths(), "nothing but robots.txt is asked of an off-limits host")
	k := r.kinds(t)
	assert.Zero(t, k[kBrokenLink], "not requested, so not known to be broken")
	assert.Equal(t, 1, k[kRedirectBlocked])
	d := r.strs(t, `SELECT detail FROM findings WHERE kind = 'redirect_to_blocked'`)
	require.Len(t, d, 1)
	assert.Contains(t, d[0], "http://www.shop.test/moved")
	assert.Contains(t, d[0], "not requested")
}

// "One 429 anywhere in a run then slows the whole crawl": a 429 on the twin's robots.txt counts too.
func TestTwinRobots429SlowsTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, e := memNet(t)
		s, www := n.Add("shop.test"), n.Add("www.shop.test")
		s.Robots("")
		www.Status("/robots.txt", http.StatusTooManyRequests)
		flatSite(s, 6, 0)
		r := audit(t, e, "http://shop.test/")
		require.Equal(t, exitOK, r.code, r)
		reqs := n.Requests()
		require.Len(t, reqs, 10, "both robots.txt, /, 6 pages, llms.txt")
		assert.Equal(t, "www.shop.test /robots.txt", reqs[1].Site+" "+reqs[1].Path)
		for i := 2; i < len(reqs); i++ {
			assert.GreaterOrEqual(t, reqs[i].Time.Sub(reqs[i-1].Time), 3*time.Second, "before %s", reqs[i].Path)
		}
		assert.Equal(t, []string{"http://www.shop.test/robots.txt"}, r.strs(t, `SELECT slowed_by FROM crawls`))
		assert.Equal(t, 1, r.kinds(t)[kSlowedDown])
	})
}

// -resolve sends the start host to a staging server; its www twin is part of the site and, unless mapped
// too, goes through DNS to wherever the real name points. Say so before the first request.
func TestResolveWithoutTwinIsNoted(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", page("Home"))
	r := audit(t, e, "-gap", "0", "-resolve", "shop.test:80:127.0.0.1:9", "http://shop.test/")
	require.Equal(t, exitOK, r.code, r)
	assert.Contains(t, r.stderr, "-resolve maps shop.test:80 but not its twin www.shop.test:80")

	r = audit(t, e, "-gap", "0", "-resolve", "shop.test:80:127.0.0.1:9", "-resolve", "www.shop.test:80:127.0.0.1:9", "http://shop.test/")
	require.Equal(t, exitOK, r.code, r)
	assert.NotContains(t, r.stderr, "twin")
}

// Sitemap: lines of the twin's robots.txt are read too; sitemap URLs obey scope and robots.txt, and so do
// the sitemaps themselves.
func TestSitemapsOfBothTwinsObeyScopeAndRobots(t *testing.T) {
	n, e := loopNet(t)
	apex, www, other := n.Add("shop.test"), n.Add("www.shop.test"), n.Add("other.test")
	apex.Robots("User-agent: *\nDisallow: /private/\nSitemap: http://shop.test/private/sitemap.xml\n")
	www.Robots("User-agent: *\nDisallow:\nSitemap: http://www.shop.test/www-sitemap.xml\n")
	other.Robots("")
	other.HTML("/x", page("X"))
	apex.Page("/private/sitemap.xml", "application/xml", urlset("http://shop.test", "/hidden"))
	apex.HTML("/hidden", page("Hidden"))
	www.Page("/www-sitemap.xml", "application/xml",
		`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://www.shop.test/listed</loc></url>`+
			`<url><loc>http://other.test/x</loc></url></urlset>`)
	www.HTML("/listed", page("Listed"))
	apex.HTML("/", page("Home"))
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, exitOK, r.code, r)
	assert.Equal(t, 1, www.Count("/www-sitemap.xml"), "the twin's sitemap is read")
	assert.Equal(t, 1, www.Count("/listed"), "and its URLs crawled")
	for _, path := range apex.Paths() {
		assert.False(t, strings.HasPrefix(path, "/private/"), "a sitemap disallowed by robots.txt is not fetched: %s", path)
	}
	assert.Equal(t, 0, apex.Count("/hidden"))
	assert.Empty(t, other.Paths(), "a sitemap URL on another site is not requested")
	assert.Equal(t, []string{"sitemap"}, r.strs(t, `SELECT source FROM pages WHERE url = 'http://www.shop.test/listed'`))
}

// The summary table is cut to the terminal's width so its rows do not wrap; elsewhere it shows 90 characters.
func TestSummaryExampleWidth(t *testing.T) {
	counts := map[string]int{"sitemap_url_redirected": 1, "broken_link": 12}
	assert.Equal(t, 90, exampleWidth(0, counts), "not a terminal")
	assert.Equal(t, 80-22-5-4-1, exampleWidth(80, counts), "FINDING and COUNT columns, two 2-space gaps, one spare")
	assert.Equal(t, 90, exampleWidth(200, counts))
	assert.Equal(t, 30, exampleWidth(40, counts), "never less than 30")
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
		require.Equal(t, exitOffLimits, r.code, r)
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
		assert.Zero(t, k[kRedirectBlocked]+k[kBrokenLink]+k[kBrokenPage], "pages not requested are not findings: %v", k)
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
		require.Equal(t, exitOK, r.code, r)
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
	require.Equal(t, exitOK, r.code, r)
	assert.Equal(t, 1, s.Count("/a"))
	assert.Equal(t, 1, s.Count("/b"))
	assert.Equal(t, 1, strings.Count(r.stderr, "https://shop.test/robots.txt could not be fetched"), r.stderr)
}

// The README's first command must work behind a corporate proxy too: the demo shop is on loopback under a
// .test name, which no proxy can reach, so the demo never asks one.
func TestDemoIgnoresProxyEnvironment(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	t.Setenv("http_proxy", "http://127.0.0.1:1")
	t.Setenv("NO_PROXY", "")
	r := audit(t, env{}, "-demo", "-gap", "0")
	require.Equal(t, exitOK, r.code, r)
	assert.Equal(t, 12, r.int(t, `SELECT COUNT(*) FROM pages WHERE blocked_by_robots = 0`))
}

// WordPress is recognised from asset URLs alone (no generator meta), and only from HTML read: a link to
// some other site's /wp-content/ is not WordPress here.
func TestWordPressFromAssetsOnly(t *testing.T) {
	t.Run("wp-includes script", func(t *testing.T) {
		n, e := loopNet(t)
		s := n.Add("shop.test")
		s.Robots("")
		s.HTML("/", `<html><head><title>Shop</title><script src="/wp-includes/js/jquery/jquery.min.js"></script></head><body><h1>Shop</h1></body></html>`)
		r := audit(t, e, "-gap", "0", "http://shop.test/")
		require.Equal(t, exitOK, r.code, r)
		for _, p := range probePaths {
			assert.Equal(t, 1, s.Count(p), p)
		}
		assert.Equal(t, 1, r.kinds(t)[kWordPress])
	})
	t.Run("a link to another site's wp-content", func(t *testing.T) {
		n, e := loopNet(t)
		s := n.Add("shop.test")
		s.Robots("")
		s.HTML("/", page("Shop", "https://blog.example/wp-content/uploads/report.pdf"))
		r := audit(t, e, "-gap", "0", "http://shop.test/")
		require.Equal(t, exitOK, r.code, r)
		for _, p := range probePaths {
			assert.Equal(t, 0, s.Count(p), p)
		}
	})
}
