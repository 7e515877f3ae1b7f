package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/demo"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/politecrawl/polite/internal/testsite"
)

// sitemapShop is a site whose home page links to /l0../l{links-1} and whose sitemap lists /s0../s{listed-1}
// (plus the extra paths), none of them linked. robots.txt disallows /private/.
func sitemapShop(s *testsite.Site, links, listed int, extra ...string) {
	s.Robots("User-agent: *\nDisallow: /private/\nSitemap: http://shop.test/sitemap.xml\n")
	var ls, sm []string
	for i := range links {
		p := fmt.Sprintf("/l%d", i)
		ls = append(ls, p)
		s.HTML(p, page(fmt.Sprint("L", i)))
	}
	for i := range listed {
		p := fmt.Sprintf("/s%d", i)
		sm = append(sm, p)
		s.HTML(p, page(fmt.Sprint("S", i)))
	}
	s.Page("/sitemap.xml", "application/xml", demo.Urlset("http://shop.test", append(sm, extra...)...))
	s.HTML("/", page("Home", ls...))
}

// The page limit counts URLs when they are queued. Sitemap URLs wait until the link crawl is complete, so a
// sitemap longer than the budget cannot crowd out the site's own links (the bot page's step 3); what the
// links leave of the budget goes to sitemap URLs, and the rest are reported as not crawled.
func TestLinksFirstThenSitemapURLs(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	// /l0 is listed too (a duplicate once a link found it); /private/x is listed last and disallowed.
	sitemapShop(s, 5, 50, "/l0", "/private/x")
	r := audit(t, e, "-gap", "0", "-max-pages", "10", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)

	paths := s.Paths()
	for i := range 5 {
		assert.Equal(t, 1, s.Count(fmt.Sprintf("/l%d", i)), "every link-found page is crawled, once: %v", paths)
	}
	var order []string
	for _, p := range paths {
		if p == "/" || isNumbered(p, "/l") || isNumbered(p, "/s") {
			order = append(order, p)
		}
	}
	require.Len(t, order, 10, "the page limit holds: %v", paths)
	assert.Equal(t, "/", order[0])
	for _, p := range order[1:6] {
		assert.True(t, isNumbered(p, "/l"), "links before sitemap URLs: %v", order)
	}
	assert.ElementsMatch(t, []string{"/s0", "/s1", "/s2", "/s3"}, order[6:], "the rest of the budget goes to the first sitemap URLs")
	assert.Zero(t, countPrefix(s.Paths(), "/private/"))
	assert.Less(t, indexOf(paths, "/sitemap.xml"), indexOf(paths, "/"), "step 2 is unchanged: sitemaps are read before the start page")

	assert.Equal(t, 10, r.int(t, `SELECT COUNT(*) FROM pages WHERE blocked_by_robots = 0`))
	assert.Equal(t, 4, r.int(t, `SELECT COUNT(*) FROM pages WHERE source = 'sitemap' AND blocked_by_robots = 0 AND depth = 1`))
	assert.Equal(t, 52, r.int(t, `SELECT COUNT(*) FROM sitemap_urls`), "every listed URL is stored")
	assert.Equal(t, 1, r.int(t, `SELECT COUNT(*) FROM sitemaps`))

	k := r.kinds(t)
	assert.Equal(t, 46, k[findings.KindSitemapNotCrawled], "s4..s49 left out by the page limit: %v", k)
	assert.Equal(t, 1, k[findings.KindSitemapBlocked], "a disallowed sitemap URL is still reported, even past the page limit: %v", k)
	assert.Equal(t, []string{"listed in http://shop.test/sitemap.xml; not crawled: page limit"},
		r.strs(t, `SELECT detail FROM findings WHERE kind = ? AND url = 'http://shop.test/s49'`, findings.KindSitemapNotCrawled))
	assert.Empty(t, r.strs(t, `SELECT url FROM findings WHERE kind = ? AND url IN ('http://shop.test/l0', 'http://shop.test/s0')`, findings.KindSitemapNotCrawled),
		"crawled URLs are not reported as not crawled")
	assert.Empty(t, r.strs(t, `SELECT status FROM pages WHERE url = 'http://shop.test/s49'`), "no status is invented for them")
	assert.Contains(t, r.stdout, findings.KindSitemapNotCrawled)
}

// A sitemap URL that a link also found, but only once the page limit was used up, is not crawled either
// and is reported so: the frontier refused it to the link and then knew it as seen when the sitemap
// offered it, and it went unreported.
func TestSitemapURLsLinkedPastThePageLimitAreReported(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	sitemapShop(s, 5, 0, "/l4", "/l3", "/l0")
	r := audit(t, e, "-gap", "0", "-max-pages", "4", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Zero(t, s.Count("/l3")+s.Count("/l4"), "past the page limit: %v", s.Paths())
	assert.Equal(t, []string{"http://shop.test/l3", "http://shop.test/l4"},
		r.strs(t, `SELECT url FROM findings WHERE kind = ? ORDER BY url`, findings.KindSitemapNotCrawled), "listed, linked, and left out by the limit")
}

// With budget to spare, sitemap-only (orphan) pages are crawled after the link crawl, and their own links
// are followed as usual.
func TestSitemapOnlyPagesStillCrawled(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	sitemapShop(s, 3, 0, "/orphan", "/l1", "/private/x")
	s.HTML("/orphan", page("Orphan", "/below-orphan", "/private/y"))
	s.HTML("/below-orphan", page("Below"))
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	for _, p := range []string{"/", "/l0", "/l1", "/l2", "/orphan", "/below-orphan"} {
		assert.Equal(t, 1, s.Count(p), "%s: %v", p, s.Paths())
	}
	assert.Zero(t, countPrefix(s.Paths(), "/private/"))
	assert.Equal(t, []string{"sitemap|1"}, r.strs(t, `SELECT source || '|' || depth FROM pages WHERE url = 'http://shop.test/orphan'`))
	assert.Equal(t, []string{"link|2"}, r.strs(t, `SELECT source || '|' || depth FROM pages WHERE url = 'http://shop.test/below-orphan'`))
	assert.Equal(t, []string{"link"}, r.strs(t, `SELECT source FROM pages WHERE url = 'http://shop.test/l1'`), "found by a link first")
	k := r.kinds(t)
	assert.Zero(t, k[findings.KindSitemapNotCrawled]+k[findings.KindSitemapOverHold], "%v", k)
	assert.Equal(t, 1, k[findings.KindSitemapBlocked], "%v", k)
	assert.Equal(t, 1, k[findings.KindLinkToBlocked], "/private/y, linked from the orphan: %v", k)
}

// Ctrl-C while the sitemap URLs are being crawled: the crawl stops gracefully, as in the link phase.
func TestInterruptWhileCrawlingSitemapURLs(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	sitemapShop(s, 3, 30)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s.Handle("/s5", func(w http.ResponseWriter, r *http.Request) {
		cancel()
		w.Write([]byte(page("S5")))
	})
	r := auditCtx(t, ctx, filepath.Join(t.TempDir(), "a.db"), e, "-gap", "0", "-concurrency", "1", "http://shop.test/")
	require.Equal(t, crawl.ExitFailure, r.code, r)
	assert.Contains(t, r.stderr, "interrupted")
	assert.Contains(t, r.stdout, "Crawl 1 of http://shop.test/ interrupted")
	assert.Equal(t, []string{"interrupted"}, r.strs(t, `SELECT outcome FROM crawls`))
	assert.Equal(t, 4, r.int(t, `SELECT COUNT(*) FROM pages WHERE source != 'sitemap'`), "the link crawl is kept")
	assert.GreaterOrEqual(t, r.int(t, `SELECT COUNT(*) FROM pages WHERE source = 'sitemap'`), 5, "s0..s4 are kept")
	assert.Zero(t, s.Count("/llms.txt"), "nothing after the interrupt")
	assert.Less(t, len(s.Paths()), 20)
	assert.Zero(t, r.kinds(t)[findings.KindSitemapNotCrawled], "an interrupted crawl does not blame the page limit")
}

// robots.txt turning unreachable while the sitemap URLs are crawled stops the crawl (exit 3), as it does
// during the link crawl.
func TestRobotsUnreachableWhileCrawlingSitemapURLs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, e := memNet(t)
		s := n.Add("shop.test")
		sitemapShop(s, 3, 80)
		s.Route("/robots.txt", testsite.Response{Body: "User-agent: *\nDisallow:\nSitemap: http://shop.test/sitemap.xml\n", ContentType: "text/plain"},
			testsite.Response{Status: http.StatusServiceUnavailable})
		r := audit(t, e, "-gap", "60s", "http://shop.test/") // robots.txt is refreshed after an hour: at the ~60th request
		require.Equal(t, crawl.ExitOffLimits, r.code, r)
		assert.Contains(t, r.stderr, "http://shop.test/robots.txt answered HTTP 503 during the crawl, so the whole site is off limits")
		paths := s.Paths()
		assert.Equal(t, 2, s.Count("/robots.txt"), "%v", paths)
		assert.Equal(t, "/robots.txt", paths[len(paths)-1], "nothing is requested after the failed refresh")
		assert.Greater(t, countNumbered(paths, "/s"), 40, "it stopped in the sitemap phase: %v", paths)
		assert.Equal(t, []string{"off_limits"}, r.strs(t, `SELECT outcome FROM crawls`))
		assert.Zero(t, r.kinds(t)[findings.KindSitemapNotCrawled])
	})
}

// Sitemap URLs are held in memory until the link crawl is complete, at most sitemapHoldMax of them; the
// rest are stored in sitemap_urls, not crawled, and the findings say how many.
func TestSitemapHoldCap(t *testing.T) {
	defer func(n int) { findings.SitemapHoldMax = n }(findings.SitemapHoldMax)
	findings.SitemapHoldMax = 5
	n, e := loopNet(t)
	s := n.Add("shop.test")
	sitemapShop(s, 2, 8, "/l0") // past the cap: crawled anyway, through the link
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	for i := range 8 {
		assert.Equal(t, store.B2i(i < 5), s.Count(fmt.Sprintf("/s%d", i)), "/s%d: %v", i, s.Paths())
	}
	assert.Equal(t, 1, s.Count("/l0"))
	assert.Equal(t, 9, r.int(t, `SELECT COUNT(*) FROM sitemap_urls`), "every listed URL is stored")
	assert.Equal(t, []string{"http://shop.test/s5|4 sitemap entries (this one the first) past the 5 sitemap URLs held for crawling: not crawled unless a link led there"},
		r.strs(t, `SELECT url || '|' || detail FROM findings WHERE kind = ?`, findings.KindSitemapOverHold))
	assert.Zero(t, r.kinds(t)[findings.KindSitemapNotCrawled])
	assert.Contains(t, r.stdout, findings.KindSitemapOverHold)
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

func countPrefix(paths []string, prefix string) int {
	n := 0
	for _, p := range paths {
		if strings.HasPrefix(p, prefix) {
			n++
		}
	}
	return n
}

// isNumbered says whether p is prefix followed by digits only (/s12, not /sitemap.xml).
func isNumbered(p, prefix string) bool {
	rest, ok := strings.CutPrefix(p, prefix)
	return ok && rest != "" && strings.Trim(rest, "0123456789") == ""
}

func countNumbered(paths []string, prefix string) int {
	n := 0
	for _, p := range paths {
		if isNumbered(p, prefix) {
			n++
		}
	}
	return n
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
	apex.Page("/private/sitemap.xml", "application/xml", demo.Urlset("http://shop.test", "/hidden"))
	apex.HTML("/hidden", page("Hidden"))
	www.Page("/www-sitemap.xml", "application/xml",
		`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://www.shop.test/listed</loc></url>`+
			`<url><loc>http://other.test/x</loc></url></urlset>`)
	www.HTML("/listed", page("Listed"))
	apex.HTML("/", page("Home"))
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Equal(t, 1, www.Count("/www-sitemap.xml"), "the twin's sitemap is read")
	assert.Equal(t, 1, www.Count("/listed"), "and its URLs crawled")
	for _, path := range apex.Paths() {
		assert.False(t, strings.HasPrefix(path, "/private/"), "a sitemap disallowed by robots.txt is not fetched: %s", path)
	}
	assert.Equal(t, 0, apex.Count("/hidden"))
	assert.Empty(t, other.Paths(), "a sitemap URL on another site is not requested")
	assert.Equal(t, []string{"sitemap"}, r.strs(t, `SELECT source FROM pages WHERE url = 'http://www.shop.test/listed'`))
}

// Ctrl-C while a sitemap is being fetched: the crawl is interrupted, and the sitemap cut short is not a
// sitemap_error (nor a sitemaps row): an interrupt is not a defect of the site.
func TestInterruptDuringSitemapIsNoSitemapError(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("Sitemap: http://shop.test/a.xml\nSitemap: http://shop.test/b.xml\n")
	s.Page("/a.xml", "application/xml", demo.Urlset("http://shop.test", "/x"))
	ctx, cancel := contextWithCancel(t)
	s.Handle("/b.xml", func(w http.ResponseWriter, r *http.Request) {
		cancel() // Ctrl-C while this sitemap is being fetched
		<-r.Context().Done()
	})
	s.HTML("/", page("Home"))
	r := auditCtx(t, ctx, filepath.Join(t.TempDir(), "a.db"), e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitFailure, r.code, r)
	assert.Equal(t, []string{"interrupted"}, r.strs(t, `SELECT outcome FROM crawls`))
	assert.Zero(t, r.kinds(t)[findings.KindSitemapError], "%v", r.kinds(t))
	assert.Empty(t, r.strs(t, `SELECT url FROM sitemaps WHERE error IS NOT NULL`))
}
