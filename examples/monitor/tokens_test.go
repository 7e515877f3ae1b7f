package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const otherUA = "Mozilla/5.0 (compatible; OtherBot/2.0; +https://x.example/bot)"

// Rules written for the published bot keep working whatever -user-agent
// says: the monitor answers to its own token first, then 2-UAcomBot, and
// only then to the * groups. Checked for the first URL and for a redirect
// hop (fetch's own check), in run and in the free tool.
func TestPublishedTokenIsAlwaysAFallback(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: 2-UAcomBot\nDisallow: /private/\n\nUser-agent: *\nAllow: /\n", "/private/x", "/private/y", "/open")
	s.Redirect("/old", "/private/y", http.StatusMovedPermanently)
	own := h.site("b.test", "User-agent: OtherBot\nAllow: /\n\nUser-agent: 2-UAcomBot\nDisallow: /\n", "/page")
	h.track("http://a.test/private/x", "http://a.test/old", "http://a.test/open", "http://b.test/page")
	code, out, errOut := h.cli("run", "-gap", "0s", "-user-agent", otherUA)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `blocked http://a.test/private/x: disallowed by "Disallow: /private/" (line 2, user-agent 2-UAcomBot)`)
	assert.Contains(t, out, "blocked http://a.test/old: ")
	assert.Contains(t, out, "run: 4 due, 2 snapshots (0 with errors), 2 blocked by robots.txt")
	assert.Equal(t, 0, s.Count("/private/x"))
	assert.Equal(t, 0, s.Count("/private/y"), "the redirect hop is checked with the same tokens")
	assert.Equal(t, 1, s.Count("/open"))
	assert.Equal(t, 1, own.Count("/page"), "a group naming the user agent's own token comes first")
	for _, r := range s.Requests() {
		assert.Equal(t, otherUA, r.Header.Get("User-Agent"))
	}

	code, out, _ = cli(t, h.e, "check", "-gap", "0s", "-user-agent", otherUA, "http://a.test/private/z")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "Latest check was skipped — robots.txt disallows OtherBot on this path.")
	assert.Contains(t, out, "user-agent 2-UAcomBot")
	assert.Contains(t, out, "why:  https://x.example/bot")
}

// -log FILE: every component's decision events as JSON lines, enough to
// answer "why was this URL not fetched?".
func TestLogFileHasEveryComponentsDecisions(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nDisallow: /private/\n", "/open", "/private/new")
	s.Redirect("/old", "/private/new", http.StatusMovedPermanently)
	h.track("http://a.test/open", "http://a.test/old", "http://a.test/private/x")
	logFile := filepath.Join(t.TempDir(), "decisions.jsonl")
	code, _, errOut := h.cli("run", "-gap", "0s", "-log", logFile)
	require.Equal(t, exitOK, code, errOut)

	f, err := os.Open(logFile)
	require.NoError(t, err)
	defer f.Close()
	events := map[string][]map[string]any{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev), sc.Text())
		msg, _ := ev["msg"].(string)
		events[msg] = append(events[msg], ev)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, events["robots.fetch"], "robots.Cache")
	assert.Equal(t, "http://a.test/robots.txt", events["robots.fetch"][0]["robots_url"])
	require.NotEmpty(t, events["robots.decision"], "robots.Cache, Debug")
	require.NotEmpty(t, events["frontier.add"], "frontier")
	require.NotEmpty(t, events["fetch.disallowed"], "fetch: the redirect hop into /private/")
	assert.Equal(t, "http://a.test/private/new", events["fetch.disallowed"][0]["url"])
	var sawBlocked bool
	for _, ev := range events["robots.decision"] {
		if ev["url"] == "http://a.test/private/x" && ev["outcome"] == "disallowed" {
			sawBlocked = true
		}
	}
	assert.True(t, sawBlocked, "the decision that blocked /private/x: %v", events["robots.decision"])
}
