package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/internal/testsite"
)

// -log FILE: every component's decision events as JSON lines, enough to answer "why was this URL not
// crawled?" and "why did the crawl slow down?". A second run (a resume, say) appends.
func TestLogFileHasEveryComponentsDecisions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, e := memNet(t)
		s := n.Add("shop.test")
		s.Robots("User-agent: *\nDisallow: /private/\n")
		s.HTML("/", page("Home", "/private/x", "/busy", "/limited", "/a"))
		s.Route("/busy", testsite.Response{Status: http.StatusServiceUnavailable}, testsite.Response{Body: page("Busy"), ContentType: "text/html"})
		s.Route("/limited", testsite.Response{Status: http.StatusTooManyRequests}, testsite.Response{Body: page("Limited"), ContentType: "text/html"})
		s.HTML("/a", page("A"))
		logPath := filepath.Join(t.TempDir(), "decisions.jsonl")
		r := audit(t, e, "-gap", "0", "-concurrency", "1", "-log", logPath, "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)

		events := readEvents(t, logPath)
		find := func(msg string, match map[string]any) map[string]any {
			t.Helper()
			for _, ev := range events {
				if ev["msg"] != msg {
					continue
				}
				ok := true
				for k, v := range match {
					if ev[k] != v {
						ok = false
					}
				}
				if ok {
					return ev
				}
			}
			t.Errorf("no %s event with %v in %d events", msg, match, len(events))
			return nil
		}
		find("robots.fetch", map[string]any{"robots_url": "http://shop.test/robots.txt", "status": float64(200), "outcome": "rules"})
		find("robots.decision", map[string]any{"url": "http://shop.test/a", "outcome": "allowed"})
		blocked := find("frontier.add", map[string]any{"url": "http://shop.test/private/x", "outcome": "disallowed"})
		if blocked != nil {
			assert.Equal(t, "Disallow: /private/", blocked["rule"], "why it was not crawled: the rule")
			assert.Equal(t, float64(2), blocked["line"], "and its line")
			assert.Equal(t, "DEBUG", blocked["level"])
		}
		find("frontier.add", map[string]any{"url": "http://shop.test/a", "outcome": "queued", "from": "http://shop.test/"})
		find("fetch.retry", map[string]any{"url": "http://shop.test/busy", "status": float64(503)})
		find("slowdown.tripped", map[string]any{"url": "http://shop.test/limited", "status": float64(429), "level": "WARN"})

		before := len(events)
		r = audit(t, e, "-gap", "0", "-log", logPath, "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		assert.Greater(t, len(readEvents(t, logPath)), before, "appended")
	})
}

func readEvents(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev), "one JSON object per line: %s", sc.Text())
		out = append(out, ev)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out)
	return out
}

func TestLogFileThatCannotBeOpened(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "log.jsonl")
	r := audit(t, crawl.Env{}, "-log", path, "http://shop.test/")
	assert.Equal(t, crawl.ExitFailure, r.code)
	assert.Equal(t, "audit: -log: open "+path+": no such file or directory\n", r.stderr)
}
