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
	assert.Equal(t, 0, apex.Count("/private/*"), "a sitemap disallowed by robots.txt is not fetched")
	assert.Equal(t, 0, apex.Count("/hidden"))
	assert.Empty(t, other.Paths(), "a sitemap URL on another site is not requested")
	assert.Equal(t, []string{"sitemap"}, r.strs(t, `SELECT source FROM pages WHERE url = 'http://www.shop.test/listed'`))
}
