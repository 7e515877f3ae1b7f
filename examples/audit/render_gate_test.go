package main

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/internal/testsite"
)

// The run's politeness limits hold for crawler and browser requests together, measured from the
// server's side. These tests run a real browser against loopback sites in real time, so a gap between
// two request starts is allowed gateSlack less than the limit: the time from the gate letting a request
// go to the server seeing it (a DevTools round trip for the browser) varies a little between requests.
const gateSlack = 100 * time.Millisecond

// scriptedPages serves / linking to pages /p0..p(n-1); every page (the home page too) loads k scripts,
// each answered after delay.
func scriptedPages(s *testsite.Site, n, k int, delay time.Duration) {
	tags := func(page string) string {
		var b strings.Builder
		for j := range k {
			path := fmt.Sprintf("/s/%s-%d.js", strings.Trim(page, "/"), j)
			s.Route(path, testsite.Response{ContentType: "text/javascript", Body: "window.x = 1;", Delay: delay})
			b.WriteString(`<script src="` + path + `"></script>`)
		}
		return b.String()
	}
	var links strings.Builder
	for i := range n {
		p := fmt.Sprintf("/p%d", i)
		links.WriteString(`<a href="` + p + `">` + p + `</a> `)
		s.HTML(p, jsPage(p, p, tags(p), ""))
	}
	s.HTML("/", jsPage("Home", "Home", tags("home"), links.String()))
}

// byStart sorts requests by the time the server saw them start.
func byStart(reqs []testsite.Request) []testsite.Request {
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].Time.Before(reqs[j].Time) })
	return reqs
}

func TestRenderInFlightLimitHoldsForBrowserAndCrawler(t *testing.T) {
	requireBrowser(t)
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("User-agent: *\nDisallow:\n")
	// Two tabs each wanting four slow scripts at once: eight in flight if the browser went around the gate.
	scriptedPages(s, 3, 4, 150*time.Millisecond)
	args := append(resolveArgs(n), "-gap", "0", "-concurrency", "2", "-render", "4", "http://shop.test/")
	r := audit(t, e, args...)
	require.Equal(t, crawl.ExitOK, r.code, r)

	reqs := s.Requests()
	require.Len(t, paths(reqs, func(q testsite.Request) bool { return strings.HasPrefix(q.Path, "/s/") }), 16, "every script of the four pages was loaded")
	assert.Equal(t, 2, n.MaxInFlight(), "never more than -concurrency in flight, crawler and browser together")
	assert.Equal(t, 2, maxOverlap(reqs))
}

func TestRenderGapHoldsForBrowserAndCrawler(t *testing.T) {
	requireBrowser(t)
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("User-agent: *\nDisallow:\n")
	scriptedPages(s, 2, 2, 0)
	const gap = 400 * time.Millisecond
	args := append(resolveArgs(n), "-gap", gap.String(), "-render", "3", "http://shop.test/")
	r := audit(t, e, args...)
	require.Equal(t, crawl.ExitOK, r.code, r)

	reqs := byStart(s.Requests())
	require.Len(t, paths(reqs, browserUA), 9, "three pages and their two scripts each, by the browser")
	for i := 1; i < len(reqs); i++ {
		d := reqs[i].Time.Sub(reqs[i-1].Time)
		assert.GreaterOrEqual(t, d, gap-gateSlack, "%s then %s only %s apart", reqs[i-1].Path, reqs[i].Path, d)
	}
}

func TestRender429FromBrowserSlowsTheWholeRun(t *testing.T) {
	requireBrowser(t)
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("User-agent: *\nDisallow:\n")
	// The home page's script is rate limited; when it fails, the page loads another script. One tab, so
	// the other page and its script come after the 429 too.
	s.HTML("/", jsPage("Home", "Home", `<script src="/s/limited.js" onerror="var s=document.createElement('script');s.src='/s/after.js';document.head.appendChild(s)"></script>`,
		`<a href="/a">A</a>`))
	s.Route("/s/limited.js", testsite.Response{Status: 429}, testsite.Response{ContentType: "text/javascript", Body: "window.x = 1;"})
	s.Route("/s/after.js", script("window.y = 1;"))
	s.HTML("/a", jsPage("A", "A", `<script src="/s/a1.js"></script>`, ""))
	s.Route("/s/a1.js", script("window.a1 = 1;"))
	args := append(resolveArgs(n), "-gap", "0", "-concurrency", "1", "-render", "2", "http://shop.test/")
	r := audit(t, e, args...)
	require.Equal(t, crawl.ExitOK, r.code, r)

	assert.Equal(t, []string{"http://shop.test/s/limited.js"}, r.strs(t, `SELECT slowed_by FROM crawls`), "the browser's 429 tripped the run-wide slowdown")
	assert.Equal(t, 1, r.kinds(t)[findings.KindSlowedDown])
	assert.Contains(t, r.stdout, "Slowed down after 429 from http://shop.test/s/limited.js")
	assert.Equal(t, 1, s.Count("/s/limited.js"), "a browser does not retry; the page records it as failed")

	reqs := byStart(s.Requests())
	var tripped time.Time
	for _, q := range reqs {
		if q.Path == "/s/limited.js" {
			tripped = q.End
		}
	}
	require.False(t, tripped.IsZero())
	after := 0
	for i := 1; i < len(reqs); i++ {
		if !reqs[i].Time.After(tripped.Add(200 * time.Millisecond)) {
			continue // let go before the 429 was seen
		}
		after++
		d := reqs[i].Time.Sub(reqs[i-1].Time)
		assert.GreaterOrEqual(t, d, 3*time.Second-gateSlack, "after the 429: %s then %s only %s apart", reqs[i-1].Path, reqs[i].Path, d)
		assert.False(t, reqs[i].Time.Before(reqs[i-1].End), "after the 429: %s started while %s was in flight", reqs[i].Path, reqs[i-1].Path)
	}
	if !assert.GreaterOrEqual(t, after, 3, "requests came after the 429, one at a time, 3 s apart") {
		for _, q := range reqs {
			t.Logf("%s %s-%s %s", q.Path, q.Time.Format("05.000"), q.End.Format("05.000"), q.Header.Get("User-Agent"))
		}
	}
}
