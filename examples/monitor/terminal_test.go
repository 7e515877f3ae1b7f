package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/testsite"
)

// hostile is text a site may send to take over a terminal: retitle the
// window, clear the screen, a C1 CSI, a right-to-left override.
const hostile = "\x1b]0;pwned\x07\x1b[2J\u009b31m\u202e"

func assertTerminalSafe(t *testing.T, out, what string) {
	t.Helper()
	for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u202e"} {
		assert.NotContains(t, out, bad, "%s printed a raw %q:\n%q", what, bad, out)
	}
}

// TestEveryCommandPrintsSiteTextTerminalSafe: robots.txt rules, titles and
// error texts reach run, watch, status, report and check escaped.
func TestEveryCommandPrintsSiteTextTerminalSafe(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nDisallow: /private"+hostile+"\n")
	s.Route("/p", testsite.Response{ContentType: "text/html", Body: htmlPage("Title "+hostile, "one")},
		testsite.Response{ContentType: "text/html", Body: htmlPage("Other "+hostile, "two")})
	s.HTML("/private"+hostile, htmlPage("x", "y"))
	s.Route("/gone", testsite.Response{Status: http.StatusInternalServerError, Body: hostile})
	h.track("http://a.test/p", "http://a.test/private"+hostile, "http://a.test/gone")
	out := h.run()
	require.Contains(t, out, "blocked ")
	assertTerminalSafe(t, out, "run")
	assert.Contains(t, out, `\x1b]0;pwned\x07`, "the escape is shown, not dropped")

	h.clk.Advance(6*time.Hour + maxJitter)
	out = h.run()
	assertTerminalSafe(t, out, "second run")
	for _, cmd := range []string{"status", "report"} {
		code, out, errOut := h.cli(cmd)
		require.Equal(t, exitOK, code, errOut)
		assertTerminalSafe(t, out, cmd)
	}
	code, out, _ := h.cli("check", "http://a.test/p")
	require.Equal(t, exitOK, code)
	assertTerminalSafe(t, out, "check")
	code, out, _ = h.cli("check", "http://a.test/private"+hostile)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "Latest check was skipped")
	assertTerminalSafe(t, out, "check (blocked)")
}

// TestStatusSaysWhenTheRedirectTargetIsDisallowed: the dashboard names the
// redirect; status does too.
func TestStatusSaysWhenTheRedirectTargetIsDisallowed(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nDisallow: /private/\n", "/private/report")
	s.Redirect("/old", "/private/report", http.StatusMovedPermanently)
	h.track("http://a.test/old")
	h.run()
	code, out, errOut := h.cli("status")
	require.Equal(t, exitOK, code, errOut)
	line := strings.Split(out, "\n")[0]
	assert.Contains(t, line, "Latest check was skipped — robots.txt disallows 2-UAcomBot on this path.")
	assert.Contains(t, line, "(after redirect to http://a.test/private/report)")
	assert.Contains(t, line, `"Disallow: /private/"`)
}
