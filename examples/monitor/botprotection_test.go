package main

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// challengePage is Cloudflare's interstitial, as a crawler sees it.
const challengePage = `<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title></head>
<body><div class="main-wrapper"><h1>Verifying you are human. This may take a few seconds.</h1></div></body></html>`

// TestBotProtectionIsNotAChange: the second check of a page is answered by
// a Cloudflare challenge (403, cf-mitigated: challenge, "Just a
// moment..."). It is recorded as blocked by bot protection, with no SEO
// fields and no change; status, report, the dashboard and the history say
// so; and the next real answer is compared with the last good snapshot,
// not with the challenge.
func TestBotProtectionIsNotAChange(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nAllow: /\n")
	var mode atomic.Int32 // 0 the page, 1 the challenge, 2 the page changed
	s.Handle("/pricing", func(w http.ResponseWriter, _ *http.Request) {
		switch mode.Load() {
		case 1:
			w.Header().Set("Cf-Mitigated", "challenge")
			w.Header().Set("Content-Type", "text/html; charset=UTF-8")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(challengePage))
		case 2:
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(htmlPage("Pricing", "Plans start at twelve euros.")))
		default:
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(htmlPage("Pricing", "Plans start at ten euros.")))
		}
	})
	h.track("http://a.test/pricing")
	h.run()

	const banner = "blocked by bot protection (cloudflare, header cf-mitigated: challenge)"
	mode.Store(1)
	h.clk.Advance(6*time.Hour + maxJitter)
	out := h.run()
	assert.Contains(t, out, "bot     http://a.test/pricing: "+banner)
	assert.Contains(t, out, "run: 1 due, 1 snapshots (0 with errors), 0 blocked by robots.txt, 0 waiting for robots.txt, 1 blocked by bot protection")
	snaps := h.snapshots("http://a.test/pricing")
	require.Len(t, snaps, 2)
	bot := snaps[1]
	assert.Equal(t, "cloudflare, header cf-mitigated: challenge", bot.BotProtection)
	assert.Equal(t, 403, bot.Status)
	assert.Empty(t, bot.Title, "no SEO fields of the challenge page")
	assert.Empty(t, bot.ContentHash)
	assert.Equal(t, []string{"bot_protection"}, bot.Changes, "a challenge is its own kind, never a content change")

	code, status, _ := h.cli("status")
	require.Equal(t, exitOK, code)
	assert.Contains(t, status, "http://a.test/pricing  last check: ")
	assert.Contains(t, status, banner)
	code, report, _ := h.cli("report")
	require.Equal(t, exitOK, code)
	assert.Contains(t, report, ": "+banner)
	assert.NotContains(t, report, "title (")
	assert.NotContains(t, report, "status (")

	srv := newTestServer(t, h)
	r := do(t, srv, "GET", "/", nil)
	require.Equal(t, 200, r.code)
	assert.Contains(t, r.body, banner)
	assert.Contains(t, r.body, "bot_protection", "the block is shown as its kind")
	assert.NotContains(t, r.body, "title &#34;", "no content change shown")
	r = do(t, srv, "GET", "/page?url=http%3A%2F%2Fa.test%2Fpricing", nil)
	require.Equal(t, 200, r.code)
	assert.Contains(t, r.body, banner)
	assert.NotContains(t, r.body, `<table class="changes">`, "the challenge is shown as its banner, its fields never compared")
	r = do(t, srv, "GET", "/api/pages", nil)
	require.Equal(t, 200, r.code)
	assert.Contains(t, r.body, `"last_outcome": "bot-protection"`)
	assert.Contains(t, r.body, `"banner": "`+banner+`"`)

	// The page is back, changed: compared with the last good snapshot.
	mode.Store(2)
	h.clk.Advance(6*time.Hour + maxJitter)
	out = h.run()
	assert.Contains(t, out, "ok      http://a.test/pricing: HTTP 200")
	snaps = h.snapshots("http://a.test/pricing")
	require.Len(t, snaps, 3)
	assert.Equal(t, []string{"bot_protection_end", "text"}, snaps[2].Changes, "only the text changed since the last good snapshot: no status change from 403")
	code, report, _ = h.cli("report")
	require.Equal(t, exitOK, code)
	assert.Contains(t, report, "Plans start at [-ten-]{+twelve+} euros.")
	assert.NotContains(t, report, `"403"`)
}

// TestPlain403IsAStatusChange: a 403 without any bot-protection signal is
// the page's answer, recorded as a change of status.
func TestPlain403IsAStatusChange(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nAllow: /\n")
	var forbidden atomic.Bool
	s.Handle("/pricing", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if forbidden.Load() {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte("<html><head><title>403 Forbidden</title></head><body><h1>Forbidden</h1></body></html>"))
			return
		}
		_, _ = w.Write([]byte(htmlPage("Pricing", "Plans start at ten euros.")))
	})
	h.track("http://a.test/pricing")
	h.run()
	forbidden.Store(true)
	h.clk.Advance(6*time.Hour + maxJitter)
	out := h.run()
	assert.NotContains(t, out, "bot protection")
	snaps := h.snapshots("http://a.test/pricing")
	require.Len(t, snaps, 2)
	assert.Empty(t, snaps[1].BotProtection)
	assert.Contains(t, snaps[1].Changes, "status")
	code, report, _ := h.cli("report")
	require.Equal(t, exitOK, code)
	assert.Contains(t, report, `status (high): "200" -> "403"`)
}
