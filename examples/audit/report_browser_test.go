package main

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/report"
	"github.com/politecrawl/polite/internal/testbrowser"
)

// The report opened in a real headless Chromium, as a person opens the file: what they see, that the
// page script runs under its own policy, that nothing at all is fetched, that no error reaches the
// console, that it prints, and that long tables page. Screenshots go to the test's temp dir; with
// AUDIT_README_SCREENSHOT=FILE the demo report's screenshot for the README is written there too, and
// with AUDIT_README_SCREENSHOT_CATEGORIES=FILE the screenshot of the findings by category.

// pageWatch records what a tab fetches and what reaches its console.
type pageWatch struct {
	mu       sync.Mutex
	requests []string
	console  []string
	dialogs  []string
}

func watch(t *testing.T, ctx context.Context) *pageWatch {
	t.Helper()
	w := &pageWatch{}
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		w.mu.Lock()
		defer w.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			w.requests = append(w.requests, ev.Request.URL)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, strings.Trim(string(a.Value), `"`)+a.Description)
				}
				w.console = append(w.console, string(ev.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			w.console = append(w.console, "exception: "+ev.ExceptionDetails.Text)
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelError || ev.Entry.Level == cdplog.EntryLevelWarning {
				w.console = append(w.console, fmt.Sprintf("log %s %s: %s", ev.Entry.Level, ev.Entry.Source, ev.Entry.Text))
			}
		case *cdppage.EventJavascriptDialogOpening:
			w.dialogs = append(w.dialogs, ev.Message)
			go chromedp.Call(ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: false})
		}
	}))
	return w
}

func (w *pageWatch) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.requests, w.console, w.dialogs = nil, nil, nil
}

func (w *pageWatch) snapshot() (requests, console, dialogs []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.requests...), append([]string(nil), w.console...), append([]string(nil), w.dialogs...)
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	require.NoError(t, err, js)
	return v
}

// open loads a file in the tab and waits until it is loaded and a moment more, for late requests.
func open(t *testing.T, ctx context.Context, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	u := "file://" + abs
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitReady("body"), chromedp.Sleep(300*time.Millisecond)))
	return u
}

func screenshot(t *testing.T, ctx context.Context, name string, full bool) []byte {
	t.Helper()
	var shot []byte
	var err error
	if full {
		shot, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	} else {
		shot, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
	}
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(shot))
	require.NoError(t, err, "a PNG")
	require.GreaterOrEqual(t, img.Bounds().Dx(), 1000)
	require.NoError(t, os.WriteFile(filepath.Join(t.TempDir(), name), shot, 0o644))
	return shot
}

func TestReportInBrowser(t *testing.T) {
	testbrowser.Path(t) // before the crawl: skip (or fail under CI) early
	_, e := reportShop(t)
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	ctx := testbrowser.New(t)
	w := watch(t, ctx)

	// First a control page that does fetch, log an error and open a dialog: the watch must see all three,
	// or the "nothing" below would prove nothing.
	control := filepath.Join(t.TempDir(), "control.html")
	require.NoError(t, os.WriteFile(control, []byte(`<!doctype html><title>control</title><img src="http://127.0.0.1:9/x.png">`+
		`<script>console.error("control error"); alert("control dialog");</script>`), 0o644))
	open(t, ctx, control)
	reqs, console, dialogs := w.snapshot()
	require.Contains(t, reqs, "http://127.0.0.1:9/x.png", "the watch sees requests")
	require.True(t, strings.Contains(strings.Join(console, "\n"), "control error"), "the watch sees console errors: %v", console)
	require.Equal(t, []string{"control dialog"}, dialogs, "the watch sees dialogs")
	w.reset()

	u := open(t, ctx, reportPath(t, r))
	t.Run("what a person sees", func(t *testing.T) {
		text := eval[string](t, ctx, `document.body.innerText`)
		for _, s := range []string{"Crawl Cove audit: shop.test", "Pages by status class", "Crawl depth", "Response time",
			"Findings by kind and severity", "Sitemap coverage", "Indexability", "Top pages by inlinks", "Orphan pages",
			"Redirect chains", "Blocked URLs", "Politeness record", "Broken internal link", xssTitle} {
			assert.Contains(t, text, s)
		}
		assert.Equal(t, 0, eval[int](t, ctx, `document.images.length`), "the XSS title is text, not an image")
		heights := eval[[]float64](t, ctx, `Array.from(document.querySelectorAll("figure.chart svg")).map(s => s.getBoundingClientRect().height)`)
		require.Len(t, heights, 6+len(categoriesOf(t, r)), "six charts drawn, and one per category with findings")
		for _, h := range heights {
			assert.Greater(t, h, 25.0, "every chart has a size on screen (a category with one kind: one bar)")
		}
		bars := eval[int](t, ctx, `Array.from(document.querySelectorAll("#chart-status rect")).filter(r => r.getBoundingClientRect().width > 1).length`)
		assert.Equal(t, 6, bars, "a visible bar for each status class")
		assert.Equal(t, "18", eval[string](t, ctx, `document.querySelector('[data-tile="URLs in the crawl"] .n').innerText`))
	})

	t.Run("its script runs under its own policy", func(t *testing.T) {
		assert.False(t, eval[bool](t, ctx, `document.getElementById("kind-redirect").open`), "a notice starts collapsed")
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`a[href="#kind-redirect"]`)), chromedp.Sleep(100*time.Millisecond)))
		assert.True(t, eval[bool](t, ctx, `document.getElementById("kind-redirect").open`), "following the overview's link opens the section (the script ran)")
	})

	t.Run("prints", func(t *testing.T) {
		pdf, err := chromedp.Run(ctx, chromedp.PrintToPDF())
		require.NoError(t, err)
		assert.True(t, bytes.HasPrefix(pdf, []byte("%PDF")), "a PDF")
		assert.Greater(t, len(pdf), 20_000)
		require.NoError(t, os.WriteFile(filepath.Join(t.TempDir(), "report.pdf"), pdf, 0o644))
		_, err = chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"})
		require.NoError(t, err)
		assert.Equal(t, "none", eval[string](t, ctx, `getComputedStyle(document.querySelector("nav.toc")).display`), "no navigation on paper")
		assert.Equal(t, "rgb(255, 255, 255)", eval[string](t, ctx, `getComputedStyle(document.body).backgroundColor`))
		_, err = chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
		require.NoError(t, err)
	})

	screenshot(t, ctx, "report.png", true)

	t.Run("nothing fetched, nothing on the console", func(t *testing.T) {
		reqs, console, dialogs := w.snapshot()
		for _, q := range reqs {
			assert.Equal(t, u, q, "the only request is the file itself")
		}
		assert.Empty(t, console)
		assert.Empty(t, dialogs)
	})

	t.Run("findings by category", func(t *testing.T) {
		// The link score pass (after the crawl) scored every page: the report's top list is the database's.
		out := filepath.Join(t.TempDir(), "scored.html")
		var so, se bytes.Buffer
		require.Equal(t, crawl.ExitOK, runEnv(t.Context(), []string{"report", "-db", r.dbPath, "-o", out}, &so, &se, crawl.Env{}), se.String())
		w.reset()
		open(t, ctx, out+"#findings")
		cats := categoriesOf(t, r)
		require.GreaterOrEqual(t, len(cats), 3, "the shop has findings in several categories")
		assert.Equal(t, cats, eval[[]string](t, ctx, `Array.from(document.querySelectorAll("section.category h3.cat")).map(h => h.innerText)`),
			"a heading per category with findings, in the categories' order")
		for _, cat := range cats {
			want := map[string]int{}
			for _, k := range r.strs(t, `SELECT kind FROM findings WHERE crawl_id = (SELECT MAX(id) FROM crawls)`) {
				if info := findings.InfoOf(k); info.Category == cat {
					want[info.Severity.String()]++
				}
			}
			sel := `section.category[data-category="` + cat + `"]`
			for _, sev := range []string{"error", "warning", "notice"} {
				shown := eval[string](t, ctx, `document.querySelector('`+sel+` [data-severity="`+sev+`"]').innerText`)
				assert.True(t, strings.HasPrefix(shown, fmt.Sprint(want[sev])+" "+strings.ToUpper(sev)), "%s: %s reads %q", cat, sev, shown)
			}
			visible := eval[int](t, ctx, `Array.from(document.querySelectorAll('`+sel+` figure.chart rect')).filter(r => r.getBoundingClientRect().width > 1).length`)
			assert.Equal(t, len(kindsIn(t, r, cat)), visible, "%s: a visible bar per kind found", cat)
		}
		broken := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#kind-broken_link-urls tbody tr td:first-child")).map(td => td.innerText)`)
		assert.ElementsMatch(t, []string{"/broken", "/err", "/reset"}, broken, "the broken links' page list")
		top := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#linkscore-table tbody tr")).map(tr => tr.cells[0].innerText + " " + tr.cells[1].innerText)`)
		require.NotEmpty(t, top, "the top pages by link score")
		assert.Equal(t, "/ 100", top[0], "the start page, linked from every page, scores highest")
		assert.Equal(t, r.strs(t, `SELECT REPLACE(url, 'http://shop.test', '') || ' ' || link_score FROM pages
			WHERE crawl_id = (SELECT MAX(id) FROM crawls) AND link_score IS NOT NULL ORDER BY link_score DESC, url LIMIT ?`, len(top)), top,
			"the top pages by link score")
		_, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: 1280, Height: 1300, DeviceScaleFactor: 1})
		require.NoError(t, err)
		require.NoError(t, chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`section.category`))))
		shot := screenshot(t, ctx, "categories.png", false)
		if dst := os.Getenv("AUDIT_README_SCREENSHOT_CATEGORIES"); dst != "" {
			require.NoError(t, os.WriteFile(dst, shot, 0o644))
		}
		_, console, _ := w.snapshot()
		assert.Empty(t, console)
	})

	t.Run("long tables page", func(t *testing.T) {
		defer func(k int) { report.KindRowsMax = k }(report.KindRowsMax)
		report.KindRowsMax = report.TableRowsMax // a kind's list long enough to page
		db := filepath.Join(t.TempDir(), "big.db")
		generatedCrawlCopy(t, db, 300)
		out := filepath.Join(t.TempDir(), "big.html")
		var so, se bytes.Buffer
		require.Equal(t, crawl.ExitOK, runEnv(t.Context(), []string{"report", "-db", db, "-o", out}, &so, &se, crawl.Env{}), se.String())
		total := countFindings(t, db, findings.KindDescMissing)
		require.Greater(t, total, 2*report.TablePageSize)
		w.reset()
		open(t, ctx, out+"#kind-description_missing")
		box := "#kind-description_missing-urls"
		rows := func() int { return eval[int](t, ctx, `document.querySelectorAll("`+box+` tbody tr").length`) }
		first := func() string { return eval[string](t, ctx, `document.querySelector("`+box+` tbody tr td").innerText`) }
		pos := func() string { return eval[string](t, ctx, `document.querySelector("`+box+` .pos").innerText`) }
		assert.True(t, eval[bool](t, ctx, `document.getElementById("kind-description_missing").open`), "opened by its link")
		assert.Equal(t, report.TablePageSize, rows())
		assert.Equal(t, fmt.Sprintf("Rows 1–50 of %d", total), pos())
		assert.Equal(t, report.TablePageSize+1, eval[int](t, ctx, `document.querySelectorAll("`+box+` tr").length`),
			"the head and one page of rows: the later pages are not in the DOM")
		page1 := first()
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(box+` button[data-dir="1"]`))))
		assert.Equal(t, report.TablePageSize, rows())
		assert.Equal(t, fmt.Sprintf("Rows 51–100 of %d", total), pos())
		assert.NotEqual(t, page1, first())
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(box+` button[data-dir="-1"]`))))
		assert.Equal(t, page1, first(), "and back")
		assert.True(t, eval[bool](t, ctx, `document.querySelector("`+box+` button[data-dir='-1']").disabled`))
		screenshot(t, ctx, "paged.png", false)
		_, console, _ := w.snapshot()
		assert.Empty(t, console)
	})

	t.Run("demo report screenshot", func(t *testing.T) {
		demo := demoCrawl(t)
		require.Equal(t, crawl.ExitOK, demo.code, demo)
		_, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: 1280, Height: 1500, DeviceScaleFactor: 1})
		require.NoError(t, err)
		w.reset()
		open(t, ctx, reportPath(t, demo))
		shot := screenshot(t, ctx, "demo.png", false)
		if dst := os.Getenv("AUDIT_README_SCREENSHOT"); dst != "" {
			require.NoError(t, os.WriteFile(dst, shot, 0o644))
		}
		_, console, _ := w.snapshot()
		assert.Empty(t, console)
	})
}

// categoriesOf is the categories of the latest crawl's findings, in findings.Categories order.
func categoriesOf(t *testing.T, r *result) []string {
	t.Helper()
	var out []string
	for _, c := range findings.Categories {
		if len(kindsIn(t, r, c)) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// kindsIn is the kinds of a category the latest crawl found.
func kindsIn(t *testing.T, r *result, cat string) []string {
	t.Helper()
	var out []string
	for _, k := range r.strs(t, `SELECT DISTINCT kind FROM findings WHERE crawl_id = (SELECT MAX(id) FROM crawls)`) {
		if findings.InfoOf(k).Category == cat {
			out = append(out, k)
		}
	}
	return out
}

func countFindings(t *testing.T, db, kind string) int {
	t.Helper()
	r := &result{}
	var err error
	r.db, err = sqlOpen(db)
	require.NoError(t, err)
	defer r.db.Close()
	return r.int(t, `SELECT COUNT(*) FROM findings WHERE kind = ?`, kind)
}
