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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/demo"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/internal/testsite"
)

// End-to-end tests: the whole program, in-process, against loopback sites; assertions are on what the
// servers saw. Timing promises are in timing_test.go (synctest, in-memory sites).

func TestRobotsFirstForBothTwins(t *testing.T) {
	n, e := loopNet(t)
	apex, www := n.Add("shop.test"), n.Add("www.shop.test")
	apex.Robots("User-agent: *\nDisallow:\n")
	www.Robots("User-agent: *\nDisallow:\n")
	apex.HTML("/", page("Home", "/a", "http://www.shop.test/b"))
	apex.HTML("/a", page("A"))
	www.HTML("/b", page("B"))

	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)

	reqs := n.Requests()
	require.GreaterOrEqual(t, len(reqs), 2)
	assert.Equal(t, "shop.test /robots.txt", reqs[0].Site+" "+reqs[0].Path, "the given host's robots.txt comes first")
	assert.Equal(t, "www.shop.test /robots.txt", reqs[1].Site+" "+reqs[1].Path, "then its twin's, before any page")
	assert.Equal(t, 1, apex.Count("/robots.txt"))
	assert.Equal(t, 1, www.Count("/robots.txt"))
	assert.Equal(t, 1, www.Count("/b"), "the twin is part of the site")
	assert.Equal(t, 3, r.int(t, `SELECT COUNT(*) FROM pages WHERE status = 200`))
}

func TestTwinRulesApplyToTwinURLs(t *testing.T) {
	n, e := loopNet(t)
	apex, www := n.Add("shop.test"), n.Add("www.shop.test")
	apex.Robots("User-agent: *\nDisallow: /apex-only/\n")
	www.Robots("User-agent: *\nDisallow: /www-only/\n")
	apex.HTML("/", page("Home", "/www-only/x", "/apex-only/x", "http://www.shop.test/apex-only/y", "http://www.shop.test/www-only/y"))
	apex.HTML("/www-only/x", page("x"))
	www.HTML("/apex-only/y", page("y"))

	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Equal(t, 1, apex.Count("/www-only/x"), "each host's own rules apply to its URLs")
	assert.Equal(t, 0, apex.Count("/apex-only/x"))
	assert.Equal(t, 1, www.Count("/apex-only/y"))
	assert.Equal(t, 0, www.Count("/www-only/y"))
	assert.ElementsMatch(t, []string{"http://shop.test/apex-only/x", "http://www.shop.test/www-only/y"},
		r.strs(t, `SELECT url FROM pages WHERE blocked_by_robots = 1`))
}

func TestDisallowedNeverRequestedEvenViaRedirect(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("User-agent: *\nDisallow: /basket/\n")
	s.HTML("/", page("Home", "/basket/", "/basket/add?id=1", "/go-to-basket", "/ok"))
	s.Redirect("/go-to-basket", "/basket/view", http.StatusFound)
	s.HTML("/ok", page("OK"))
	s.HTML("/basket/", page("Basket"))

	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	for _, path := range s.Paths() {
		assert.False(t, strings.HasPrefix(path, "/basket/"), "a disallowed URL was requested: %s (all: %v)", path, s.Paths())
	}
	assert.Equal(t, 1, s.Count("/go-to-basket"))
	assert.Equal(t, 1, s.Count("/ok"))
	blocked := r.strs(t, `SELECT url FROM pages WHERE blocked_by_robots = 1 ORDER BY url`)
	assert.Equal(t, []string{"http://shop.test/basket/", "http://shop.test/basket/add?id=1"}, blocked)
	k := r.kinds(t)
	assert.Equal(t, 2, k[findings.KindLinkToBlocked])
	assert.Equal(t, 1, k[findings.KindRedirectBlocked])
	assert.Equal(t, "disallowed_redirect", r.strs(t, `SELECT error_kind FROM pages WHERE url = 'http://shop.test/go-to-basket'`)[0])
}

func TestTokenExactMatch(t *testing.T) {
	t.Run("CrawlCove group does not apply", func(t *testing.T) {
		n, e := loopNet(t)
		s := n.Add("shop.test")
		s.Robots("User-agent: CrawlCove\nDisallow: /\n\nUser-agent: *\nDisallow: /star/\n")
		s.HTML("/", page("Home", "/a", "/star/x"))
		s.HTML("/a", page("A"))
		r := audit(t, e, "-gap", "0", "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		assert.Equal(t, 1, s.Count("/"))
		assert.Equal(t, 1, s.Count("/a"))
		assert.Equal(t, 0, s.Count("/star/x"), "the * group applies when no group names us")
	})
	t.Run("crawlcove-crawler group applies, ignoring case", func(t *testing.T) {
		n, e := loopNet(t)
		s := n.Add("shop.test")
		s.Robots("User-agent: *\nDisallow: /\n\nUser-agent: crawlcove-crawler\nDisallow: /private/\n")
		s.HTML("/", page("Home", "/a", "/private/x"))
		s.HTML("/a", page("A"))
		r := audit(t, e, "-gap", "0", "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		assert.Equal(t, 1, s.Count("/a"), "our group replaces the * group")
		assert.Equal(t, 0, s.Count("/private/x"))
	})
	t.Run("token derived from a custom user agent", func(t *testing.T) {
		n, e := loopNet(t)
		s := n.Add("shop.test")
		s.Robots("User-agent: AuditBot\nDisallow: /a\n")
		s.HTML("/", page("Home", "/a", "/b"))
		s.HTML("/b", page("B"))
		ua := "Mozilla/5.0 (compatible; AuditBot/2.0; +https://example.test/bot)"
		r := audit(t, e, "-gap", "0", "-user-agent", ua, "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		assert.Equal(t, 0, s.Count("/a"))
		assert.Equal(t, 1, s.Count("/b"))
		for _, q := range s.Requests() {
			assert.Equal(t, ua, q.Header.Get("User-Agent"), q.Path)
		}
		assert.Equal(t, "AuditBot, CrawlCove-Crawler", r.strs(t, `SELECT robots_token FROM crawls`)[0])
	})
	// "The app will keep accepting the old token, so rules you write now keep working": with a new
	// User-Agent, a robots.txt that names only CrawlCove-Crawler still applies, and the * group does not.
	t.Run("CrawlCove-Crawler rules apply whatever -user-agent says", func(t *testing.T) {
		n, e := loopNet(t)
		s, www := n.Add("shop.test"), n.Add("www.shop.test")
		rules := "User-agent: CrawlCove-Crawler\nDisallow: /private/\n\nUser-agent: *\nDisallow: /\n"
		s.Robots(rules)
		www.Robots(rules)
		s.HTML("/", page("Home", "/a", "/private/x", "http://www.shop.test/w", "http://www.shop.test/private/y"))
		s.HTML("/a", page("A"))
		www.HTML("/w", page("W"))
		ua := "Mozilla/5.0 (compatible; CrawlCove/2.0; +https://crawlcove.example/bot)"
		r := audit(t, e, "-gap", "0", "-user-agent", ua, "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		assert.Equal(t, 1, s.Count("/"), "the * group (Disallow: /) does not apply: a group names one of our tokens")
		assert.Equal(t, 1, s.Count("/a"))
		assert.Equal(t, 1, www.Count("/w"), "on the twin too")
		assert.Zero(t, s.Count("/private/x")+www.Count("/private/y"), "the CrawlCove-Crawler group applies")
		for _, q := range n.Requests() {
			assert.Equal(t, ua, q.Header.Get("User-Agent"), q.Path)
		}
		assert.Equal(t, "CrawlCove, CrawlCove-Crawler", r.strs(t, `SELECT robots_token FROM crawls`)[0])
		assert.Equal(t, 2, r.int(t, `SELECT COUNT(*) FROM pages WHERE blocked_by_robots = 1`))
	})
}

func TestSitemapIndexDepth(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("User-agent: *\nDisallow:\nSitemap: http://shop.test/idx0.xml\n")
	index := func(children ...string) string {
		var b strings.Builder
		b.WriteString(`<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for _, c := range children {
			fmt.Fprintf(&b, "<sitemap><loc>http://shop.test%s</loc></sitemap>", c)
		}
		b.WriteString("</sitemapindex>")
		return b.String()
	}
	s.Page("/idx0.xml", "application/xml", index("/idx1.xml", "/set0.xml"))
	s.Page("/idx1.xml", "application/xml", index("/idx2.xml", "/set1.xml"))
	s.Page("/idx2.xml", "application/xml", index("/idx3.xml", "/set2.xml"))
	s.Page("/idx3.xml", "application/xml", index("/set3.xml"))
	for i := range 4 {
		s.Page(fmt.Sprintf("/set%d.xml", i), "application/xml", demo.Urlset("http://shop.test", fmt.Sprintf("/from-set%d", i)))
		s.HTML(fmt.Sprintf("/from-set%d", i), page(fmt.Sprint("set ", i)))
	}
	s.HTML("/", page("Home"))

	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Equal(t, 1, s.Count("/idx0.xml"), "named in robots.txt: followed")
	assert.Equal(t, 1, s.Count("/idx1.xml"), "listed in it: followed")
	assert.Equal(t, 1, s.Count("/idx2.xml"), "found below that: fetched")
	assert.Equal(t, 0, s.Count("/idx3.xml"), "...but not followed")
	assert.Equal(t, 0, s.Count("/set2.xml"))
	for _, p := range []string{"/from-set0", "/from-set1"} {
		assert.Equal(t, 1, s.Count(p), "sitemap URLs join the crawl as pages: %s", p)
	}
	assert.Equal(t, 0, s.Count("/sitemap.xml"))
	assert.Equal(t, 2, r.int(t, `SELECT COUNT(*) FROM pages WHERE source = 'sitemap'`))
	assert.GreaterOrEqual(t, r.int(t, `SELECT COUNT(*) FROM sitemaps`), 5)

	// Sitemap URLs come after robots.txt and the sitemaps, before links found on pages.
	p := s.Paths()
	assert.Equal(t, "/robots.txt", p[0])
	assert.Equal(t, "/idx0.xml", p[1])
}

func TestNoSitemapGuess(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("User-agent: *\nDisallow:\n")
	s.HTML("/", page("Home"))
	s.Page("/sitemap.xml", "application/xml", demo.Urlset("http://shop.test", "/hidden"))
	s.HTML("/hidden", page("Hidden"))
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Equal(t, 0, s.Count("/sitemap.xml"))
	assert.Equal(t, 0, s.Count("/sitemap_index.xml"))
	assert.Equal(t, 0, s.Count("/hidden"))
	assert.Equal(t, 0, r.int(t, `SELECT COUNT(*) FROM sitemaps`))
}

func TestLLMSTxtOnce(t *testing.T) {
	t.Run("published", func(t *testing.T) {
		n, e := loopNet(t)
		s := n.Add("shop.test")
		s.Robots("")
		s.HTML("/", page("Home", "/llms.txt", "/a"))
		s.HTML("/a", page("A", "/llms.txt"))
		s.Page("/llms.txt", "text/plain", "# Shop\n")
		r := audit(t, e, "-gap", "0", "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		assert.Equal(t, 1, s.Count("/llms.txt"))
		d := r.strs(t, `SELECT detail FROM findings WHERE kind = 'llms_txt'`)
		require.Len(t, d, 1)
		assert.Contains(t, d[0], "published (HTTP 200")
	})
	t.Run("absent", func(t *testing.T) {
		n, e := loopNet(t)
		s := n.Add("shop.test")
		s.Robots("")
		s.HTML("/", page("Home"))
		r := audit(t, e, "-gap", "0", "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		assert.Equal(t, 1, s.Count("/llms.txt"))
		assert.Equal(t, []string{"not published (HTTP 404)"}, r.strs(t, `SELECT detail FROM findings WHERE kind = 'llms_txt'`))
	})
	t.Run("disallowed", func(t *testing.T) {
		n, e := loopNet(t)
		s := n.Add("shop.test")
		s.Robots("User-agent: *\nDisallow: /llms.txt\n")
		s.HTML("/", page("Home"))
		r := audit(t, e, "-gap", "0", "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		assert.Equal(t, 0, s.Count("/llms.txt"))
		d := r.strs(t, `SELECT detail FROM findings WHERE kind = 'llms_txt'`)
		require.Len(t, d, 1)
		assert.Contains(t, d[0], "blocked by robots.txt")
	})
}

func TestExternalNeverRequested(t *testing.T) {
	n, e := loopNet(t)
	s, other := n.Add("shop.test"), n.Add("other.test")
	s.Robots("")
	other.Robots("")
	other.HTML("/", page("Other"))
	s.HTML("/", page("Home", "http://other.test/", "http://other.test/page", "http://blog.shop.test/", "/leave"))
	s.Redirect("/leave", "http://other.test/landing", http.StatusFound)
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Empty(t, other.Paths(), "not even robots.txt")
	assert.Equal(t, 1, s.Count("/leave"))
	ext := r.strs(t, `SELECT to_url FROM links WHERE external = 1 ORDER BY to_url`)
	assert.Equal(t, []string{"http://blog.shop.test/", "http://other.test/", "http://other.test/page"}, ext)
	assert.Equal(t, 3, r.kinds(t)[findings.KindExternalLink])
	assert.Equal(t, 1, r.kinds(t)[findings.KindRedirectOffsite])
}

func TestRedirectsTenHops(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", page("Home", "/ten0", "/eleven0"))
	for i := range 10 {
		s.Redirect(fmt.Sprintf("/ten%d", i), fmt.Sprintf("/ten%d", i+1), http.StatusMovedPermanently)
	}
	s.HTML("/ten10", page("Ten"))
	for i := range 11 {
		s.Redirect(fmt.Sprintf("/eleven%d", i), fmt.Sprintf("/eleven%d", i+1), http.StatusFound)
	}
	s.HTML("/eleven11", page("Eleven"))
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Equal(t, 1, s.Count("/ten10"), "a chain of ten redirects reaches its page")
	assert.Equal(t, 1, s.Count("/eleven10"))
	assert.Equal(t, 0, s.Count("/eleven11"), "an 11th redirect is not followed")
	assert.Equal(t, []string{"200 10"}, r.strs(t, `SELECT status || ' ' || redirect_count FROM pages WHERE url = 'http://shop.test/ten0'`))
	k := r.kinds(t)
	assert.Equal(t, 1, k[findings.KindRedirectChain])
	assert.Equal(t, 1, k[findings.KindTooManyRedirects])
}

func TestRedirectLoop(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", page("Home", "/a"))
	s.Redirect("/a", "/b", http.StatusFound)
	s.Redirect("/b", "/a", http.StatusFound)
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Equal(t, 1, s.Count("/a"))
	assert.Equal(t, 1, s.Count("/b"))
	assert.Equal(t, 1, r.kinds(t)[findings.KindRedirectLoop])
}

func TestLimits(t *testing.T) {
	chain := func(s *testsite.Site, n int) {
		for i := range n {
			s.HTML(fmt.Sprintf("/p%d", i), page(fmt.Sprint("P", i), fmt.Sprintf("/p%d", i+1)))
		}
	}
	t.Run("max-depth", func(t *testing.T) {
		n, e := loopNet(t)
		s := n.Add("shop.test")
		s.Robots("")
		chain(s, 10)
		r := audit(t, e, "-gap", "0", "-max-depth", "3", "http://shop.test/p0")
		require.Equal(t, crawl.ExitOK, r.code, r)
		assert.Equal(t, 1, s.Count("/p3"))
		assert.Equal(t, 0, s.Count("/p4"))
		assert.Equal(t, 3, r.int(t, `SELECT MAX(depth) FROM pages`))
	})
	t.Run("max-pages", func(t *testing.T) {
		n, e := loopNet(t)
		s := n.Add("shop.test")
		s.Robots("")
		var links []string
		for i := range 30 {
			links = append(links, fmt.Sprintf("/p%d", i))
			s.HTML(fmt.Sprintf("/p%d", i), page(fmt.Sprint("P", i)))
		}
		s.HTML("/", page("Home", links...))
		r := audit(t, e, "-gap", "0", "-max-pages", "7", "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		pages := 0
		for _, p := range s.Paths() {
			if strings.HasPrefix(p, "/p") || p == "/" {
				pages++
			}
		}
		assert.Equal(t, 7, pages)
		assert.Equal(t, 7, r.int(t, `SELECT COUNT(*) FROM pages`))
	})
}

func TestStatusHandling(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", page("Home", "/gone", "/forbidden", "/teapot", "/a"))
	s.HTML("/a", page("A", "/gone"))
	s.Status("/gone", 404)
	s.Status("/forbidden", 403)
	s.Status("/teapot", 418)
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	for _, p := range []string{"/gone", "/forbidden", "/teapot"} {
		assert.Equal(t, 1, s.Count(p), "4xx is taken at face value, not retried: %s", p)
	}
	d := r.strs(t, `SELECT detail FROM findings WHERE kind = 'broken_link' AND url = 'http://shop.test/gone'`)
	require.Len(t, d, 1)
	assert.Equal(t, "HTTP 404; linked from 2 pages: http://shop.test/, http://shop.test/a", d[0])
	assert.Equal(t, 3, r.kinds(t)[findings.KindBrokenLink])
}

func TestIdentityAndMethods(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("Sitemap: http://shop.test/sitemap.xml\n")
	s.Page("/sitemap.xml", "application/xml", demo.Urlset("http://shop.test", "/a"))
	s.HTML("/", page("Home", "/b", "/c"))
	s.HTML("/a", page("A"))
	s.Redirect("/b", "/a", http.StatusMovedPermanently)
	s.Status("/c", 503)
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	reqs := s.Requests()
	require.NotEmpty(t, reqs)
	kinds := map[string]bool{}
	for _, q := range reqs {
		assert.Equal(t, "CrawlCove-Crawler", q.Header.Get("User-Agent"), "User-Agent on %s", q.Path)
		assert.Equal(t, http.MethodGet, q.Method, q.Path)
		kinds[q.Path] = true
	}
	for _, p := range []string{"/robots.txt", "/sitemap.xml", "/", "/a", "/b", "/c", "/llms.txt"} {
		assert.True(t, kinds[p], "robots.txt, sitemaps, pages, redirect hops, retries and llms.txt alike: %s", p)
	}
	assert.Equal(t, 3, s.Count("/c"), "503 retried twice")
}

func TestResolveFlag(t *testing.T) {
	n := testsite.NewNetwork(t, testsite.Loopback)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", page("Home", "/a"))
	s.HTML("/a", page("A"))
	var args []string
	for k, v := range n.Resolve() { // "shop.test:80" -> "127.0.0.1:port"
		args = append(args, "-resolve", k+":"+v)
	}
	r := audit(t, crawl.Env{}, append(args, "-gap", "0", "http://shop.test/")...)
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Equal(t, 1, s.Count("/a"))
	assert.Equal(t, "shop.test", s.Requests()[0].Host)
}

func TestNewCrawlAddedToExistingFile(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", page("Home", "/a"))
	s.HTML("/a", page("A"))
	db := filepath.Join(t.TempDir(), "history.db")
	r1 := auditDB(t, db, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r1.code, r1)
	r2 := auditDB(t, db, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r2.code, r2)
	assert.Equal(t, []string{"1 finished 2", "2 finished 2"}, r2.strs(t, `SELECT id || ' ' || outcome || ' ' || pages FROM crawls ORDER BY id`))
	assert.Equal(t, 2, r2.int(t, `SELECT COUNT(*) FROM pages WHERE crawl_id = 1`))
	assert.Equal(t, 2, r2.int(t, `SELECT COUNT(*) FROM pages WHERE crawl_id = 2`))
	assert.Equal(t, "wal", r2.strs(t, `PRAGMA journal_mode`)[0])
	assert.Contains(t, r2.stdout, "Crawl 2 of http://shop.test/ finished")
}

func TestInterruptKeepsWhatWasCrawled(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var links []string
	for i := range 50 {
		links = append(links, fmt.Sprintf("/p%d", i))
		s.HTML(fmt.Sprintf("/p%d", i), page(fmt.Sprint("P", i)))
	}
	s.HTML("/", page("Home", links...))
	s.Handle("/p10", func(w http.ResponseWriter, r *http.Request) {
		cancel() // Ctrl-C while this request is in flight
		w.Write([]byte(page("P10")))
	})
	r := auditCtx(t, ctx, filepath.Join(t.TempDir(), "a.db"), e, "-gap", "0", "-concurrency", "1", "http://shop.test/")
	require.Equal(t, crawl.ExitFailure, r.code, r)
	assert.Contains(t, r.stderr, "interrupted")
	assert.Contains(t, r.stdout, "Crawl 1 of http://shop.test/ interrupted")
	assert.Equal(t, []string{"interrupted"}, r.strs(t, `SELECT outcome FROM crawls`))
	fetched := 0
	for _, p := range s.Paths() {
		if p != "/robots.txt" && p != "/p10" {
			fetched++
		}
	}
	// /p10 itself may or may not have been answered in full before the cancel reached the client.
	assert.Equal(t, fetched, r.int(t, `SELECT COUNT(*) FROM pages WHERE url != 'http://shop.test/p10'`), "every page answered before Ctrl-C is in the database")
	assert.Less(t, len(s.Paths()), 40)
}

func TestDemo(t *testing.T) {
	r := demoCrawl(t)
	require.Equal(t, crawl.ExitOK, r.code, r)
	k := r.kinds(t)
	for _, kind := range []string{findings.KindBrokenLink, findings.KindRedirectChain, findings.KindTitleMissing, findings.KindDescDuplicate, findings.KindLinkToBlocked,
		findings.KindExternalLink, findings.KindSitemapRedirected, findings.KindSitemapBroken, findings.KindSitemapBlocked, findings.KindLLMSTxt, findings.KindCanonicalElsewhere, findings.KindH1Multiple} {
		assert.Positive(t, k[kind], "demo shows %s", kind)
	}
	assert.Zero(t, k[findings.KindWordPressProbe])
	// Every deliberate problem, and nothing else: a false finding in the README's first command would
	// teach users to distrust the rest.
	assert.Equal(t, []string{
		"bot_protection /contact/form",
		"broken_link /products/paddle",
		"broken_page /products/stove",
		"canonical_elsewhere /products/?sort=price",
		"description_duplicate /products/lantern",
		"external_link https://www.example.org/partners/cove",
		"h1_multiple /contact",
		"link_to_blocked /account/login",
		"link_to_blocked /basket/",
		"link_to_redirect /sale",
		"llms_txt /llms.txt",
		"redirect /summer-sale",
		"redirect_chain /sale",
		"sitemap_url_blocked /basket/",
		"sitemap_url_broken /products/stove",
		"sitemap_url_redirected /summer-sale",
		"title_missing /about",
	}, r.strs(t, `SELECT kind || ' ' || REPLACE(url, 'http://cove-shop.test', '') FROM findings
		WHERE url NOT LIKE '%/lab/%' AND url NOT LIKE '%/site-checks/%' AND kind != 'slow_ttfb' ORDER BY 1`),
		"the shop's own pages (slow_ttfb depends on the test machine's load); the check pages under /lab/ and /site-checks/ are TestDemoLabPageKinds' and TestDemoLabSiteKinds'")
	assert.Equal(t, []string{"0 http://cove-shop.test/sitemap_index.xml",
		"1 http://cove-shop.test/site-checks/missing-sitemap.xml", "1 http://cove-shop.test/site-checks/sitemap.xml", "1 http://cove-shop.test/sitemap-pages.xml",
		"1 http://cove-shop.test/sitemap-products.xml"}, r.strs(t, `SELECT level || ' ' || url FROM sitemaps ORDER BY 1`), "the sitemap index, its two sitemaps, the site checks' and the missing one of sitemap_error")
	assert.Contains(t, r.stdout, "to the disallowed /basket/ and /account/: 0")
	assert.Contains(t, r.stdout, "with another User-Agent: 0")
	assert.Contains(t, r.stdout, "first: cove-shop.test/robots.txt")
}

func TestStartRedirectsToTwin(t *testing.T) {
	n, e := loopNet(t)
	apex, www := n.Add("shop.test"), n.Add("www.shop.test")
	apex.Robots("")
	www.Robots("User-agent: *\nDisallow: /private/\n")
	apex.Redirect("/", "http://www.shop.test/", http.StatusMovedPermanently)
	www.HTML("/", page("Home", "/a", "/private/x"))
	www.HTML("/a", page("A"))
	www.Page("/llms.txt", "text/plain", "# Shop\n")
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Equal(t, []string{"/robots.txt", "/"}, apex.Paths())
	assert.Equal(t, 1, www.Count("/a"))
	assert.Equal(t, 0, www.Count("/private/x"), "the twin's own rules apply to it")
	assert.Equal(t, 1, www.Count("/llms.txt"), "llms.txt is asked where the site lives")
	assert.Equal(t, []string{"http://www.shop.test/llms.txt"}, r.strs(t, `SELECT url FROM findings WHERE kind = 'llms_txt'`))
}

func TestStartPageBlocked(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("User-agent: CrawlCove-Crawler\nDisallow: /\n")
	s.HTML("/", page("Home"))
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Equal(t, []string{"/robots.txt"}, s.Paths(), "refused everywhere: nothing but robots.txt, not even llms.txt")
	assert.Contains(t, r.stderr, "the start page http://shop.test/ is blocked by robots.txt")
	assert.Equal(t, []string{"1"}, r.strs(t, `SELECT blocked_by_robots FROM pages`))
}

func TestProgressOnlyOnATerminal(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", page("Home", "/a"))
	s.HTML("/a", page("A"))
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Empty(t, r.stderr, "stderr is not a terminal: no progress line")

	e.Terminal = func(io.Writer) bool { return true }
	r = audit(t, e, "-gap", "0", "-quiet", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Empty(t, r.stderr, "-quiet: no progress line")

	r = audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Contains(t, r.stderr, "done /")
	assert.Contains(t, r.stderr, "4 in flight max, 0s gap")
	assert.NotContains(t, r.stdout, "done /", "progress goes to stderr only")
}

func TestProxyFromEnvironment(t *testing.T) {
	// A loopback server playing the proxy: it answers for shop.test itself and records what it was asked.
	proxy := testsite.New(t)
	proxy.Robots("User-agent: *\nDisallow: /private/\n")
	proxy.HTML("/", page("Home", "/a", "/private/x"))
	proxy.HTML("/a", page("A"))
	t.Setenv("HTTP_PROXY", proxy.URL())
	t.Setenv("NO_PROXY", "")
	r := audit(t, crawl.Env{}, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	reqs := proxy.Requests()
	require.NotEmpty(t, reqs)
	assert.Equal(t, "shop.test", reqs[0].Host)
	assert.Contains(t, reqs[0].Path, "/robots.txt")
	assert.Equal(t, 1, proxy.Count("/a"))
	assert.Equal(t, 0, proxy.Count("/private/x"))
}

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
	require.Equal(t, crawl.ExitFailure, r.code, r)
	assert.Equal(t, []string{"interrupted"}, r.strs(t, `SELECT outcome FROM crawls`))
	assert.Equal(t, []string{"200 P3"}, r.strs(t, `SELECT status || ' ' || title FROM pages WHERE url = 'http://shop.test/p3'`),
		"the page answered before Ctrl-C is kept")
	assert.Equal(t, 0, s.Count("/p4"), "nothing is requested after Ctrl-C")
}

// -resolve sends the start host to a staging server; its www twin is part of the site and, unless mapped
// too, goes through DNS to wherever the real name points. Say so before the first request.
func TestResolveWithoutTwinIsNoted(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", page("Home"))
	r := audit(t, e, "-gap", "0", "-resolve", "shop.test:80:127.0.0.1:9", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Contains(t, r.stderr, "-resolve maps shop.test:80 but not its twin www.shop.test:80")

	r = audit(t, e, "-gap", "0", "-resolve", "shop.test:80:127.0.0.1:9", "-resolve", "www.shop.test:80:127.0.0.1:9", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.NotContains(t, r.stderr, "twin")
}

// The README's first command must work behind a corporate proxy too: the demo shop is on loopback under a
// .test name, which no proxy can reach, so the demo never asks one. The shared demo crawl runs with
// demoProxyEnv (a proxy refusing every connection), so every test of the demo shows it too.
func TestDemoIgnoresProxyEnvironment(t *testing.T) {
	require.Equal(t, "http://127.0.0.1:1", demoProxyEnv["HTTP_PROXY"])
	require.Equal(t, "http://127.0.0.1:1", demoProxyEnv["http_proxy"])
	require.Empty(t, demoProxyEnv["NO_PROXY"])
	r := demoCrawl(t)
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Equal(t, 13, r.int(t, `SELECT COUNT(*) FROM pages WHERE blocked_by_robots = 0 AND url NOT LIKE '%/lab/%' AND url NOT LIKE '%/site-checks/%'`), "the shop's own pages")
}
