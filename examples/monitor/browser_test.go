package main

import (
	"context"
	"flag"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/testbrowser"
)

// -update-screenshot writes the screenshots the README shows (dashboard.png,
// history.png and alerts.png in this directory) from the browser tests below:
//
//	go test -run 'TestDashboardInRealBrowser|TestAlertFailureInRealBrowser' ./examples/monitor -update-screenshot
var updateScreenshot = flag.Bool("update-screenshot", false, "write dashboard.png, history.png and alerts.png for the README from the browser tests")

// consoleRecorder keeps every console message and browser-log entry of the
// tab.
type consoleRecorder struct {
	mu   sync.Mutex
	msgs []chromedp.ConsoleMessage
}

func recordConsole(ctx context.Context) *consoleRecorder {
	r := &consoleRecorder{}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			r.mu.Lock()
			r.msgs = append(r.msgs, m)
			r.mu.Unlock()
		}
	}()
	return r
}

func (r *consoleRecorder) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, m := range r.msgs {
		if (m.Type == chromedp.ConsoleError || m.IsException()) && !strings.Contains(m.Text, "recorder-probe") {
			out = append(out, m.String()+" at "+m.URL)
		}
	}
	return out
}

func (r *consoleRecorder) sawProbe() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.msgs {
		if strings.Contains(m.Text, "recorder-probe") {
			return true
		}
	}
	return false
}

// TestDashboardInRealBrowser loads the dashboard, a page's history and the
// free tool in headless Chromium, from a database prepared by real runs
// against loopback sites, and reads what a person sees.
func TestDashboardInRealBrowser(t *testing.T) {
	ctx := testbrowser.New(t, chromedp.WindowSize(1360, 900))
	h := newHarness(t)
	site := demoSites(t, h)
	base, _, serveErr, stop := startServe(t, h.e, "-db", h.db, "-gap", "0s")
	console := recordConsole(ctx)

	// The dashboard: the banner is visible for the blocked page, with its
	// rule and the link to the policy page.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`table.pages`),
		chromedp.WaitVisible(`tr.o-blocked .banner`),
	))
	banner, err := chromedp.Run(ctx, chromedp.Text(`tr.o-blocked .banner strong`))
	require.NoError(t, err)
	assert.Equal(t, "Latest check was skipped — robots.txt disallows 2-UAcomBot on this path.", banner)
	rule, err := chromedp.Run(ctx, chromedp.Text(`tr.o-blocked .banner .rule`))
	require.NoError(t, err)
	assert.Equal(t, `disallowed by "Disallow: /private/" (line 2, user-agent 2-UAcomBot)`, rule)
	link, err := chromedp.Run(ctx, chromedp.AttributeValue(`tr.o-blocked .banner a`, "href"))
	require.NoError(t, err)
	assert.Equal(t, "https://2-ua.com/support/robots", link.Value)
	evil, err := chromedp.Run(ctx, chromedp.Text(`a[href="/page?url=http%3a%2f%2fshop.test%2fevil"]`))
	require.NoError(t, err)
	assert.Equal(t, "http://shop.test/evil", evil)
	saved, err := chromedp.Run(ctx, chromedp.Text(`#bytes-saved`))
	require.NoError(t, err)
	assert.Equal(t, "4.8 KB not downloaded again thanks to conditional GET", saved, "the 304 of /about")
	// The recorder works: a deliberate console message arrives.
	_, err = chromedp.Run(ctx, chromedp.Evaluate[any](`console.error("recorder-probe")`))
	require.NoError(t, err)

	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(t.TempDir(), "dashboard.png"), shot, 0o644))
	if *updateScreenshot {
		require.NoError(t, os.WriteFile("dashboard.png", shot, 0o644))
		t.Logf("wrote dashboard.png (%d bytes)", len(shot))
	}

	// The history page shows the word diff of the visible text.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/page?url="+url.QueryEscape("http://shop.test/pricing")),
		chromedp.WaitVisible(`.worddiff`),
	))
	del, err := chromedp.Run(ctx, chromedp.Text(`.worddiff del`))
	require.NoError(t, err)
	ins, err := chromedp.Run(ctx, chromedp.Text(`.worddiff ins`))
	require.NoError(t, err)
	assert.Equal(t, "ten", del, "the first deletion")
	assert.Equal(t, "plans", strings.TrimSpace(ins), "the first insertion")
	diff, err := chromedp.Run(ctx, chromedp.Text(`.worddiff`))
	require.NoError(t, err)
	assert.Contains(t, diff, "Plans start at tentwelve euros a")
	hist, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(t.TempDir(), "history.png"), hist, 0o644))
	if *updateScreenshot {
		require.NoError(t, os.WriteFile("history.png", hist, 0o644))
	}

	// The free tool, for an allowed URL: the response card.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/check"),
		chromedp.WaitVisible(`form.check input[name=url]`),
		chromedp.SetValue(`form.check input[name=url]`, "http://shop.test/pricing"),
		chromedp.Click(`form.check button`),
		chromedp.WaitVisible(`article.card`),
	))
	title, err := chromedp.Run(ctx, chromedp.Text(`article.card dd.title`))
	require.NoError(t, err)
	assert.Equal(t, "Pricing plans", title)

	// ...and for a disallowed one: the banner instead of the card.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(`form.check input[name=url]`, "http://shop.test/private/new"),
		chromedp.Click(`form.check button`),
		chromedp.WaitVisible(`div.banner#result`),
	))
	banner, err = chromedp.Run(ctx, chromedp.Text(`div.banner#result strong`))
	require.NoError(t, err)
	assert.Equal(t, "Latest check was skipped — robots.txt disallows 2-UAcomBot on this path.", banner)
	cards, err := chromedp.Run(ctx, chromedp.Nodes(`article.card`, chromedp.AtLeast(0)))
	require.NoError(t, err)
	assert.Empty(t, cards, "no response card")
	link, err = chromedp.Run(ctx, chromedp.AttributeValue(`div.banner#result a`, "href"))
	require.NoError(t, err)
	assert.Equal(t, "https://2-ua.com/support/robots", link.Value)
	assert.Equal(t, 0, site.Count("/private/new"), "nothing but robots.txt was fetched")

	assert.True(t, console.sawProbe(), "the console recorder saw the probe")
	assert.Empty(t, console.errors(), "console errors")
	require.Equal(t, exitOK, stop(), serveErr.String())
}

// TestAlertFailureInRealBrowser configures an alert in the browser (a
// webhook to a loopback receiver that answers 500; -allow-private is the
// test's explicit flag), a change is found and its delivery fails, and the
// dashboard and the alerts page say so. It saves alerts.png for the README.
func TestAlertFailureInRealBrowser(t *testing.T) {
	ctx := testbrowser.New(t, chromedp.WindowSize(1360, 900))
	h := newHarness(t)
	var stage atomic.Bool
	kindSite(t, h, &stage)
	h.track("http://a.test/noindex")
	h.run()
	rc := newReceiver(t)
	rc.status.Store(http.StatusInternalServerError)
	base, _, serveErr, stop := startServe(t, h.e, "-db", h.db, "-gap", "0s", "-allow-private")
	console := recordConsole(ctx)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/alerts"),
		chromedp.WaitVisible(`form.alert-add`),
		chromedp.SetValue(`#alert-url`, rc.srv.URL+"/hook"),
		chromedp.Click(`#alert-add`),
		chromedp.WaitVisible(`p.flash.ok`),
	))
	flash, err := chromedp.Run(ctx, chromedp.Text(`p.flash.ok`))
	require.NoError(t, err)
	assert.Equal(t, "Alert channel added: matching changes are delivered to it from now on.", flash)
	row, err := chromedp.Run(ctx, chromedp.Text(`table.channels tbody tr`))
	require.NoError(t, err)
	assert.Contains(t, row, "webhook http://127.0.0.1:")
	assert.Contains(t, row, "every page; every kind at least info")

	// The page gets a noindex; the run queues the alert and its drain
	// fails against the 500.
	stage.Store(true)
	h.clk.Advance(6*time.Hour + maxJitter + time.Minute)
	code, out, errOut := h.cli("run", "-gap", "0s", "-allow-private")
	require.Equal(t, exitOK, code, out+errOut)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`p.alert-failed`),
	))
	banner, err := chromedp.Run(ctx, chromedp.Text(`p.alert-failed`))
	require.NoError(t, err)
	assert.Equal(t, "1 alert delivery failed. See the alerts page.", banner)
	last, err := chromedp.Run(ctx, chromedp.Text(`table.pages td:nth-child(6)`))
	require.NoError(t, err)
	assert.Contains(t, last, "[critical] noindex_added")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`p.alert-failed a`),
		chromedp.WaitVisible(`table.deliveries`),
	))
	state, err := chromedp.Run(ctx, chromedp.Text(`table.deliveries tbody tr td.state`))
	require.NoError(t, err)
	assert.Equal(t, "pending", state, "retried later with backoff")
	lastErr, err := chromedp.Run(ctx, chromedp.Text(`table.deliveries tbody tr td.error`))
	require.NoError(t, err)
	assert.Contains(t, lastErr, "answered 500 Internal Server Error")
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(t.TempDir(), "alerts.png"), shot, 0o644))
	if *updateScreenshot {
		require.NoError(t, os.WriteFile("alerts.png", shot, 0o644))
		t.Logf("wrote alerts.png (%d bytes)", len(shot))
	}
	assert.Empty(t, console.errors(), "console errors")
	require.Equal(t, exitOK, stop(), serveErr.String())
}
