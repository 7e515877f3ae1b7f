package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/internal/testsite"
)

// The rendered pass end to end, in one run with one browser: a loopback shop with a page built for each
// finding and pages without the defects, crawled and then rendered; assertions are on what the server
// saw and on the database.

// renderDefects maps each page built for one finding kind to that kind.
var renderDefects = map[string]string{
	"/title-js":     findings.KindRenderTitle,
	"/canonical-js": findings.KindRenderCanonical,
	"/robots-js":    findings.KindRenderRobotsMeta,
	"/h1-js":        findings.KindRenderH1,
	"/links-js":     findings.KindRenderLinksOnly,
	"/js-error":     findings.KindRenderJSError,
	"/xhr-fail":     findings.KindRenderFailed,
	"/blocked-js":   findings.KindRenderBlocked,
}

// renderCleanPages run scripts too, without any defect: no rendered-pass finding may name them.
var renderCleanPages = []string{"/", "/title-same", "/console-only", "/clean-js", "/external-js"}

func renderShop(s *testsite.Site) {
	// The group naming the crawler is the one the browser follows too (it reads robots.txt with the
	// crawl's tokens, not with its own User-Agent): under the * group nothing would be allowed.
	s.Robots("User-agent: CrawlCove-Crawler\nDisallow: /private/\n\nUser-agent: *\nDisallow: /\n")
	var links []string
	for p := range renderDefects {
		links = append(links, p)
	}
	links = append(links, renderCleanPages[1:]...)
	var b strings.Builder
	for _, l := range links {
		b.WriteString(`<a href="` + l + `">` + l + `</a> `)
	}
	// The home page: a script that only styles the page, and an image, which the browser never loads.
	s.HTML("/", jsPage("Home", "Home", `<script src="/js/noop.js"></script>`, b.String()+`<img src="/img/logo.png" alt="">`))
	s.Route("/js/noop.js", script(`document.documentElement.className = "ready";`))
	s.Route("/img/logo.png", testsite.Response{ContentType: "image/png", Body: "png"})

	s.HTML("/title-js", jsPage("Loading", "Tents", "", `<script>document.title = "Tents for the coast";</script>`))
	s.HTML("/title-same", jsPage("Lanterns", "Lanterns", `<link rel="icon" href="/icons/site.png">`, `<script>document.title = "Lanterns";</script>`))
	s.HTML("/canonical-js", jsPage("Kayaks", "Kayaks", "",
		`<script>document.head.insertAdjacentHTML("beforeend", '<link rel="canonical" href="/other">');</script>`))
	s.HTML("/robots-js", jsPage("Stoves", "Stoves", `<meta name="robots" content="index, follow">`,
		`<script>document.querySelector('meta[name=robots]').content = "noindex, follow";</script>`))
	s.HTML("/h1-js", jsPage("Paddles", "Paddles", "", `<script>document.querySelector("h1").textContent = "Paddles on sale";</script>`))
	s.HTML("/links-js", jsPage("Ropes", "Ropes", "",
		`<script>document.body.insertAdjacentHTML("beforeend", '<a href="/hidden-by-js">More ropes</a>');</script>`))
	s.HTML("/hidden-by-js", jsPage("Hidden", "Hidden", "", ""))
	s.HTML("/js-error", jsPage("Maps", "Maps", "", `<script>window.mapWidget.draw();</script>`))
	s.HTML("/console-only", jsPage("Knots", "Knots", "", `<script>console.error("stock service slow");</script>`))
	s.HTML("/xhr-fail", jsPage("Tides", "Tides", "", `<script>fetch("/api/tides").then(r => r.status);</script>`))
	s.Status("/api/tides", 404)
	s.HTML("/blocked-js", jsPage("Charts", "Charts", `<link rel="stylesheet" href="/private/site.css">`, `<script src="/private/app.js"></script>`))
	s.Route("/private/app.js", script(`document.title = "never";`))
	s.Route("/private/site.css", testsite.Response{ContentType: "text/css", Body: "body{}"})
	s.HTML("/clean-js", jsPage("Boots", "Boots", "",
		`<script src="/js/clean.js"></script>`))
	s.Route("/js/clean.js", script(`document.body.insertAdjacentHTML("beforeend", '<p>In stock</p>');`))
	// An external link added by script is not an internal link only seen after rendering.
	s.HTML("/external-js", jsPage("Sails", "Sails", "",
		`<script>document.body.insertAdjacentHTML("beforeend", '<a href="https://sailmaker.example/">Our sailmaker</a>');</script>`))
}

func TestRenderedPass(t *testing.T) {
	requireBrowser(t)
	tmp, err := os.MkdirTemp("", "rp") // the browser's profile goes under $TMPDIR; short, for its socket
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)
	n, e := loopNet(t)
	s := n.Add("shop.test")
	renderShop(s)
	args := append(resolveArgs(n), "-gap", "0", "-render", "50", "http://shop.test/")
	r := audit(t, e, args...)
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Empty(t, processesMentioning(t, tmp), "at the normal end no browser process is left")
	assert.Empty(t, profiles(t, tmp), "and its profile is removed")
	reqs := s.Requests()
	if testing.Verbose() {
		for _, row := range r.strs(t, `SELECT page_url || ' ' || url || ' ' || outcome || ' ' || COALESCE(status,0) || ' ' || COALESCE(error,'') FROM render_requests`) {
			t.Log(row)
		}
	}
	rendered := r.strs(t, `SELECT url FROM render_pages WHERE error IS NULL`)
	require.Len(t, rendered, len(renderDefects)+len(renderCleanPages), "every crawled HTML page is in a sample of 50: %v", rendered)

	t.Run("disallowed script and stylesheet never requested, recorded as blocked with the rule", func(t *testing.T) {
		assert.Zero(t, s.Count("/private/app.js"))
		assert.Zero(t, s.Count("/private/site.css"))
		rows := r.strs(t, `SELECT url || ' ' || resource_type || ' ' || robots_rule FROM render_requests WHERE outcome = 'blocked_robots' ORDER BY url`)
		require.Len(t, rows, 2)
		assert.Contains(t, rows[0], "http://shop.test/private/app.js Script")
		assert.Contains(t, rows[1], "http://shop.test/private/site.css Stylesheet")
		for _, row := range rows {
			assert.Contains(t, row, `Disallow: /private/`)
		}
		assert.Equal(t, 2, r.int(t, `SELECT blocked_robots FROM render_pages WHERE url = 'http://shop.test/blocked-js'`))
	})

	t.Run("images and icons never loaded", func(t *testing.T) {
		assert.Zero(t, s.Count("/img/logo.png"))
		// The browser fetches icons on its own, sometimes outside any tab's interception: the
		// browser-wide interception catches those.
		assert.Zero(t, s.Count("/favicon.ico"))
		assert.Zero(t, s.Count("/icons/site.png"))
		assert.Equal(t, []string{"not_loaded"}, r.strs(t, `SELECT outcome FROM render_requests WHERE url = 'http://shop.test/img/logo.png'`))
	})

	t.Run("browser requests carry the browser's User-Agent, crawler requests keep theirs", func(t *testing.T) {
		var browser, crawler int
		for _, q := range reqs {
			ua := q.Header.Get("User-Agent")
			switch {
			case browserUA(q):
				browser++
				assert.NotContains(t, ua, "CrawlCove-Crawler", q.Path)
			default:
				crawler++
				assert.Equal(t, "CrawlCove-Crawler", ua, q.Path)
			}
			if strings.HasPrefix(q.Path, "/js/") || strings.HasPrefix(q.Path, "/api/") {
				assert.True(t, browserUA(q), "only the browser runs scripts: %s by %q", q.Path, ua)
			}
		}
		assert.Positive(t, crawler)
		for _, p := range rendered {
			path := strings.TrimPrefix(p, "http://shop.test")
			got := paths(reqs, func(q testsite.Request) bool { return q.Path == path })
			assert.Len(t, got, 2, "%s: once by the crawler, once by the browser", path)
			assert.Equal(t, 1, len(paths(reqs, func(q testsite.Request) bool { return q.Path == path && browserUA(q) })), path)
		}
		ua := r.strs(t, `SELECT user_agent FROM render_runs`)
		require.Len(t, ua, 1)
		assert.Contains(t, ua[0], "Chrome")
	})

	t.Run("what reached the site is what the pass recorded", func(t *testing.T) {
		browserReqs := len(paths(reqs, browserUA))
		if !assert.Equal(t, browserReqs, r.int(t, `SELECT SUM(site_requests) FROM render_pages`)) {
			t.Logf("server: %v", paths(reqs, browserUA))
			t.Logf("recorded: %v", r.strs(t, `SELECT url || ' ' || outcome || ' ' || cached || ' ' || COALESCE(error,'') FROM render_requests WHERE same_site = 1 ORDER BY url`))
		}
		assert.Equal(t, browserReqs, r.int(t, `SELECT site_requests FROM render_runs`))
	})

	t.Run("the pass reports, it does not extend the crawl", func(t *testing.T) {
		assert.Zero(t, s.Count("/hidden-by-js"))
		assert.Equal(t, []string{"http://shop.test/hidden-by-js"},
			r.strs(t, `SELECT to_url FROM render_links WHERE only_rendered = 1`))
	})

	byURL := map[string]map[string]bool{}
	for _, row := range r.strs(t, `SELECT url || ' ' || kind FROM findings WHERE kind LIKE 'render_%' OR kind = 'links_only_after_render'`) {
		u, k, _ := strings.Cut(row, " ")
		path := strings.TrimPrefix(u, "http://shop.test")
		if byURL[path] == nil {
			byURL[path] = map[string]bool{}
		}
		byURL[path][k] = true
	}
	for path, kind := range renderDefects {
		t.Run(kind+" on the page built for it, nowhere else", func(t *testing.T) {
			want := map[string]bool{kind: true}
			if kind == findings.KindRenderRobotsMeta {
				want[findings.KindRenderNoindex] = true // the script adds noindex: the robots meta changed, and noindex appeared
			}
			assert.Equal(t, want, byURL[path], "%s has exactly its defect", path)
			for other, kinds := range byURL {
				if other != path {
					assert.False(t, kinds[kind], "%s reported on %s too", kind, other)
				}
			}
		})
	}
	t.Run("no rendered-pass finding on pages without a defect", func(t *testing.T) {
		for _, p := range renderCleanPages {
			assert.Empty(t, byURL[p], p)
		}
		assert.Equal(t, []string{"console_error stock service slow"}, r.strs(t,
			`SELECT kind || ' ' || message FROM render_console WHERE page_url = 'http://shop.test/console-only'`),
			"a console.error is recorded, not reported as an exception")
	})
	t.Run("finding details", func(t *testing.T) {
		detail := func(kind string) string {
			d := r.strs(t, `SELECT detail FROM findings WHERE kind = ?`, kind)
			require.Len(t, d, 1, kind)
			return d[0]
		}
		assert.Equal(t, `title "Loading" in the HTML, "Tents for the coast" after JavaScript`, detail(findings.KindRenderTitle))
		assert.Contains(t, detail(findings.KindRenderRobotsMeta), "JavaScript makes the page noindex")
		assert.Contains(t, detail(findings.KindRenderCanonical), "canonical none in the HTML, http://shop.test/other after JavaScript")
		assert.Equal(t, `first <h1> "Paddles" in the HTML, "Paddles on sale" after JavaScript`, detail(findings.KindRenderH1))
		assert.Contains(t, detail(findings.KindRenderJSError), "TypeError")
		assert.Contains(t, detail(findings.KindRenderFailed), "HTTP 404 http://shop.test/api/tides (xhr)")
		assert.Contains(t, detail(findings.KindRenderBlocked), `script http://shop.test/private/app.js: disallowed by "Disallow: /private/"`)
	})
	t.Run("summary", func(t *testing.T) {
		assert.Contains(t, r.stdout, "Rendered pass: 13 of 13 sampled pages")
		assert.Contains(t, r.stdout, "2 refused by robots.txt")
	})
}
