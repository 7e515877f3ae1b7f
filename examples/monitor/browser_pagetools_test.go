package main

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/testbrowser"
)

// TestPageToolsInRealBrowser: on a page's history in headless Chromium a
// person opens "What is compared", saves a selector and an ignore rule,
// presses Check now and sees the new snapshot, then presses it again and
// reads why it is refused and from when it is allowed.
func TestPageToolsInRealBrowser(t *testing.T) {
	ctx := testbrowser.New(t, chromedp.WindowSize(1360, 900))
	h := newHarness(t)
	demoSites(t, h)
	news := h.site("news.test", "User-agent: *\nAllow: /\n", "/story")
	h.track("http://news.test/story")
	base, _, serveErr, stop := startServe(t, h.e, "-db", h.db, "-gap", "0s")
	console := recordConsole(ctx)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/page?url="+url.QueryEscape("http://news.test/story")),
		chromedp.WaitVisible(`section.tools details.rules summary`),
		chromedp.Click(`details.rules summary`),
		chromedp.WaitVisible(`form.rules input[name=select]`),
		chromedp.SetValue(`form.rules input[name=select]`, "body > p"),
		chromedp.SetValue(`form.rules textarea[name=ignore]`, `\d+ people`),
		chromedp.Click(`form.rules button`),
		chromedp.WaitVisible(`p.flash.ok`),
	))
	flash, err := chromedp.Run(ctx, chromedp.Text(`p.flash.ok`))
	require.NoError(t, err)
	assert.Equal(t, "Rules saved: the next snapshot compares only what they select.", flash)
	sel, err := chromedp.Run(ctx, chromedp.Text(`details.rules summary code.rule-select`))
	require.NoError(t, err)
	assert.Equal(t, "body > p", sel)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`form.checknow button`),
		chromedp.WaitVisible(`ol.timeline li.snap`),
		chromedp.WaitVisible(`p.flash.ok`),
	))
	flash, err = chromedp.Run(ctx, chromedp.Text(`p.flash.ok`))
	require.NoError(t, err)
	assert.Equal(t, "Checked now: the new snapshot is at the top.", flash)
	line, err := chromedp.Run(ctx, chromedp.Text(`ol.timeline li.snap .line`))
	require.NoError(t, err)
	assert.Contains(t, line, "HTTP 200")
	assert.Equal(t, 1, news.Count("/story"))

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`form.checknow button`),
		chromedp.WaitVisible(`p.flash.err`),
	))
	refusal, err := chromedp.Run(ctx, chromedp.Text(`p.flash.err`))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(refusal, "check now of http://news.test/story refused: its last snapshot was taken at "), refusal)
	assert.Contains(t, refusal, "; allowed from 2026-11-30 00:30:00Z", "six hours after the snapshot just taken")
	assert.Equal(t, 1, news.Count("/story"), "the refused check fetched nothing")

	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(t.TempDir(), "pagetools.png"), shot, 0o644))
	if *updateScreenshot {
		require.NoError(t, os.WriteFile("pagetools.png", shot, 0o644))
	}
	// The refusal is answered 409 Conflict on purpose; Chromium logs
	// every non-2xx document as an error. Anything else is a defect.
	var unexpected []string
	for _, e := range console.errors() {
		if !strings.Contains(e, "status of 409 (Conflict) at "+base+"/page/check-now") {
			unexpected = append(unexpected, e)
		}
	}
	assert.Empty(t, unexpected, "console errors")
	require.Equal(t, exitOK, stop(), serveErr.String())
}
