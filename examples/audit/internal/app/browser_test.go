package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/demo"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/politecrawl/polite/internal/testbrowser"
)

// screenshot saves the tab's viewport to the test's temp dir as name, and to $AUDIT_APP_SCREENSHOTS/name
// when that is set (the README's pictures: AUDIT_APP_SCREENSHOTS=$PWD/examples/audit go test -run
// TestBrowserFlows ./examples/audit/internal/app).
func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), shot, 0o644))
	if d := os.Getenv("AUDIT_APP_SCREENSHOTS"); d != "" {
		require.NoError(t, os.WriteFile(filepath.Join(d, name), shot, 0o644))
	}
}

// waitJS polls a JavaScript condition until it holds (or the test's tab times out).
func waitJS(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(90*time.Second)))
	require.NoError(t, err, "waiting for %s", cond)
}

func textOf(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(sel))
	require.NoError(t, err, sel)
	return strings.TrimSpace(s)
}

// TestBrowserFlows drives the app in headless Chromium as a person would, on the built-in demo shop:
// type the address and press go, watch the counters move and the crawl finish; open the broken-links tab,
// click a URL and read its inlinks; stop a crawl and resume it (the same pages as the uninterrupted
// crawl); compare two crawls. The crawls set a short gap in the form's settings (the default's 300 ms
// would make the demo's 122 pages take 40 s each): 100 ms keeps the first running long enough to watch it
// move, 150 ms the second long enough to stop it before the end.
func TestBrowserFlows(t *testing.T) {
	ctx := testbrowser.New(t, chromedp.WindowSize(1200, 800))
	shop, err := demo.StartDemo()
	require.NoError(t, err)
	t.Cleanup(shop.Stop)
	s := serve(t, shop)
	dir := t.TempDir()

	t.Run("crawl the demo shop", func(t *testing.T) {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(s.url), chromedp.WaitVisible(`#go`)))
		require.NoError(t, chromedp.Do(ctx, chromedp.Clear(`#url`), chromedp.SendKeys(`#url`, shop.URL()),
			chromedp.Click(`summary`), chromedp.Clear(`#gap`), chromedp.SendKeys(`#gap`, "100ms"), chromedp.Click(`#go`)))
		require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`#live`)))
		// The counters move while it runs: a first value, then a larger one, pushed without a reload.
		waitJS(t, ctx, `document.getElementById("phase").textContent === "running" && Number(document.getElementById("pages").textContent) >= 2`)
		first, _ := strconv.Atoi(textOf(t, ctx, `#pages`))
		waitJS(t, ctx, `Number(document.getElementById("pages").textContent) > `+strconv.Itoa(first)+` || !!document.getElementById("explore-link")`)
		waitJS(t, ctx, `document.getElementById("latest") && document.getElementById("latest").children.length > 0 || !!document.getElementById("explore-link")`)
		screenshot(t, ctx, dir, "app-live.png")
		require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`#explore-link`)))
		assert.Equal(t, "finished", textOf(t, ctx, `#phase`))
		assert.Equal(t, "122", textOf(t, ctx, `#pages`), "the shop's 15, the 71 check pages under /lab/ and the 36 of the site checks")
		assert.Contains(t, textOf(t, ctx, `#robots`), "http://cove-shop.test/robots.txt: HTTP 200")
		assert.Contains(t, textOf(t, ctx, `#summary`), "broken_link")
	})

	t.Run("links tab, broken links, and detail pane", func(t *testing.T) {
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(`#explore-link`), chromedp.WaitVisible(`#tabs`)))
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(`#tabs a.tab[data-category="Links"]`), chromedp.WaitVisible(`#kinds`)))
		assert.Contains(t, textOf(t, ctx, `#kinds`), "Broken internal link", "the category lists its kinds")
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(`#kinds a.kind[data-kind="broken_link"]`), chromedp.WaitVisible(`#advice`)))
		assert.Contains(t, textOf(t, ctx, `#advice`), "Broken internal link")
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(`#url-table a.detail-link`), chromedp.WaitVisible(`#detail`)))
		assert.Equal(t, "http://cove-shop.test/products/paddle", textOf(t, ctx, `#detail-url`))
		assert.Equal(t, "404", textOf(t, ctx, `#detail-status`))
		inlinks := textOf(t, ctx, `#detail-inlinks`)
		assert.Contains(t, inlinks, "http://cove-shop.test/products/kayak")
		assert.Contains(t, inlinks, "Matching paddle", "the anchor text")
		assert.Contains(t, textOf(t, ctx, `#detail-findings`), "Visitors and crawlers following these links", "the advice")
		screenshot(t, ctx, dir, "app-explore.png")
	})

	t.Run("stop and resume", func(t *testing.T) {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(s.base+"/"), chromedp.WaitVisible(`#go`)))
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(`summary`), chromedp.Clear(`#gap`), chromedp.SendKeys(`#gap`, "150ms"), chromedp.Click(`#go`)))
		require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`#stop`)))
		waitJS(t, ctx, `Number(document.getElementById("pages").textContent) >= 3`)
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(`#stop`)))
		require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`#resume`)))
		assert.Equal(t, "interrupted", textOf(t, ctx, `#phase`))
		stopped, _ := strconv.Atoi(textOf(t, ctx, `#pages`))
		assert.Less(t, stopped, 15, "stopped before the end")
		screenshot(t, ctx, dir, "app-stopped.png")
		// The stopped crawl's page has an explore link too: wait for the running page first (no resume
		// button), then for the end.
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(`#resume`), chromedp.WaitNotPresent(`#resume`), chromedp.WaitVisible(`#explore-link`)))
		assert.Equal(t, "finished", textOf(t, ctx, `#phase`))
		// The resumed crawl holds the same page set as the uninterrupted one.
		assert.Equal(t, urlsOf(t, s, 1), urlsOf(t, s, 2))
		row, err := store.LoadCrawl(t.Context(), s.app.db, 2)
		require.NoError(t, err)
		assert.Equal(t, "finished", row.Outcome)
	})

	t.Run("compare two crawls", func(t *testing.T) {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(s.base+"/"), chromedp.WaitVisible(`#compare-go`)))
		require.NoError(t, chromedp.Do(ctx, chromedp.SetValue(`#compare-a`, "1"), chromedp.SetValue(`#compare-b`, "2"), chromedp.Click(`#compare-go`), chromedp.WaitVisible(`#compare-summary`)))
		title, err := chromedp.Run(ctx, chromedp.Title())
		require.NoError(t, err)
		assert.Contains(t, title, "crawl 1 → 2 of cove-shop.test")
		sum := strings.Join(strings.Fields(textOf(t, ctx, `#compare-summary`)), "")
		assert.Contains(t, sum, "0newURLs0removedURLs", "the resumed crawl has the same URLs as the uninterrupted one")
		// The page's own style applies (served with its own CSP: the app's would refuse inline style).
		margin, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.body).margin`))
		require.NoError(t, err)
		assert.Equal(t, "0px", margin, "the compare page's inline style applies")
		screenshot(t, ctx, dir, "app-compare.png")
	})
}

// urlsOf is the URL set of a crawl, as the app's table lists it.
func urlsOf(t *testing.T, s *served, id int64) []string {
	t.Helper()
	rows, _, err := store.ListURLs(t.Context(), s.app.db, id, store.URLQuery{Limit: 500})
	require.NoError(t, err)
	var out []string
	for _, r := range rows {
		out = append(out, r.URL)
	}
	return out
}

// TestBrowserHostileSite loads every view of a crawl of a hostile site in Chromium: its title, URL and
// anchor text show as text, and none of their scripts runs.
func TestBrowserHostileSite(t *testing.T) {
	ctx := testbrowser.New(t)
	st := newSite(t, map[string]string{
		"/":    `<html><head><title><script>window.pwned=1</script></title></head><body><a href="/img">&lt;img src=x onerror="window.pwned=2"&gt;</a></body></html>`,
		"/img": `<html><head><title>&lt;img src=x onerror="window.pwned=3"&gt;</title></head></html>`,
	})
	s := serve(t, nil)
	c := s.client(t)
	_, _ = s.post(t, c, "/crawl", crawlForm(st.URL+"/", "gap", "0s"))
	s.app.Wait()
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(s.url), chromedp.WaitVisible(`#crawls`)))
	for _, path := range []string{"/", "/live", "/crawls/1", "/crawls/1?url=" + st.URL + "/img", "/crawls/1?url=" + st.URL + "/"} {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(s.base+path), chromedp.WaitReady(`body`)))
		pwned, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.pwned !== undefined || document.querySelectorAll("main img, main script").length > 0`))
		require.NoError(t, err)
		assert.False(t, pwned, "a script of the site ran, or its markup became elements, on %s", path)
	}
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(s.base+"/crawls/1?url="+st.URL+"/"), chromedp.WaitVisible(`#detail`)))
	assert.Contains(t, textOf(t, ctx, `#detail-outlinks`), `<img src=x onerror="window.pwned=2">`, "the anchor text shows as text")
	assert.Contains(t, textOf(t, ctx, `#url-table`), `<script>window.pwned=1</script>`, "the title shows as text")
}

// TestBrowserLiveKeepsUp crawls a fast loopback site (no gap, 16 in flight) with the live view open and
// measures what the page got: how many updates per second (the hub's bound is ten), and the longest time
// between two animation frames (a page that froze would show it). The figures are logged; the page
// must show the final count.
func TestBrowserLiveKeepsUp(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls thousands of pages")
	}
	const n = liveKeepsUpPages
	ctx := testbrowser.New(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		i, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<title>Page %d</title>", i)
		for k := 1; k <= 10; k++ {
			fmt.Fprintf(w, `<a href="/p/%d">next</a>`, (i*10+k)%n)
		}
	}))
	defer site.Close()
	s := serve(t, nil)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(s.url), chromedp.WaitVisible(`#go`)))
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`summary`),
		chromedp.Clear(`#url`), chromedp.SendKeys(`#url`, site.URL+"/p/0"),
		chromedp.Clear(`#gap`), chromedp.SendKeys(`#gap`, "0s"),
		chromedp.Clear(`#concurrency`), chromedp.SendKeys(`#concurrency`, "16"),
		chromedp.Clear(`#max_pages`), chromedp.SendKeys(`#max_pages`, strconv.Itoa(n)),
		chromedp.Click(`#go`), chromedp.WaitVisible(`#live`)))
	// Count the page's updates of the counter and the longest frame gap, kept across the reload at the end.
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](`(() => {
		let updates = 0, last = performance.now(), worst = 0;
		new MutationObserver(() => { updates++; sessionStorage.setItem("updates", String(updates)); })
			.observe(document.getElementById("pages"), {childList: true, characterData: true, subtree: true});
		const frame = (now) => { worst = Math.max(worst, now - last); last = now;
			sessionStorage.setItem("worstFrame", String(Math.round(worst))); requestAnimationFrame(frame); };
		requestAnimationFrame(frame);
		sessionStorage.setItem("t0", String(Date.now()));
		return null; })()`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`#explore-link`)))
	end := time.Now()
	assert.Equal(t, strconv.Itoa(n), textOf(t, ctx, `#pages`))
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`({updates: sessionStorage.getItem("updates"), worst: sessionStorage.getItem("worstFrame"), t0: sessionStorage.getItem("t0")})`))
	require.NoError(t, err)
	updates, _ := strconv.Atoi(got["updates"])
	t0, _ := strconv.ParseInt(got["t0"], 10, 64)
	secs := end.Sub(time.UnixMilli(t0)).Seconds()
	row, err := store.LoadCrawl(t.Context(), s.app.db, 1)
	require.NoError(t, err)
	crawlSecs := row.Duration().Seconds()
	t.Logf("crawl: %d pages in %.2fs = %.0f pages/s; the page: %d counter updates in %.2fs = %.1f/s, longest frame gap %s ms; hub: %+v",
		row.Pages, crawlSecs, float64(row.Pages)/crawlSecs, updates, secs, float64(updates)/secs, got["worst"], s.app.hub.Stats())
	assert.Greater(t, updates, 1, "the counter moved while the crawl ran")
	assert.LessOrEqual(t, float64(updates)/secs, 12.0, "at most ten updates a second, whatever the crawl's rate")
}
