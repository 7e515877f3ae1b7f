package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

func runCmd(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(file, []byte("User-agent: *\nDisallow: /\n\nUser-agent: 2-UAcomBot\nDisallow: /\nAllow: /blog/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCmd("-agent", "Mozilla/5.0 (compatible; 2-UAcomBot/1.0; +https://2-ua.com/support/robots)", "-robots", file,
		"https://e.com/blog/post")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "agent 2-UAcomBot\n")
	assert.Contains(t, out, `https://e.com/blog/post: allowed by "Allow: /blog/" (line 6, user-agent 2-UAcomBot)`)

	code, out, _ = runCmd("-agent", "CrawlCove-Crawler", "-robots", file, "https://e.com/blog/post", "/robots.txt")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, `https://e.com/blog/post: disallowed by "Disallow: /" (line 2, user-agent *)`)
	assert.Contains(t, out, `/robots.txt: allowed: /robots.txt is always allowed`)
}

// -h prints the usage and exits 0, as audit -h and monitor -h do.
func TestHelpExitsZero(t *testing.T) {
	for _, h := range []string{"-h", "-help", "--help"} {
		code, stdout, stderr := runCmd(h)
		assert.Equal(t, 0, code, h)
		assert.Empty(t, stdout, h)
		assert.Contains(t, stderr, "usage: robotscheck -agent TOKEN", h)
		assert.Contains(t, stderr, "-agent token", h)
	}
}

// The Crawl Cove page: "The app will keep accepting the old token, so rules
// you write now keep working." With a new User-Agent first and the old
// token as a fallback, a group naming only the old token still decides, and
// the output says which token matched.
func TestSeveralAgentsFirstNamedDecides(t *testing.T) {
	file := filepath.Join(t.TempDir(), "robots.txt")
	body := "User-agent: *\nDisallow: /\n\nUser-agent: CrawlCove-Crawler\nDisallow: /basket/\n\nUser-agent: Googlebot\nDisallow: /g/\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	newUA := "Mozilla/5.0 (compatible; CrawlCove/2.0; +https://crawlcove.example/bot)"
	code, out, _ := runCmd("-agent", newUA, "-agent", "CrawlCove-Crawler", "-robots", file, "https://e.com/basket/1", "https://e.com/shop")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "agent CrawlCove, CrawlCove-Crawler (in order of preference)\n")
	assert.Contains(t, out, `https://e.com/basket/1: disallowed by "Disallow: /basket/" (line 5, user-agent CrawlCove-Crawler) [token CrawlCove-Crawler]`)
	assert.Contains(t, out, "https://e.com/shop: allowed: no rule matches (user-agent CrawlCove-Crawler) [token CrawlCove-Crawler]")

	// The new token alone is named by no group: `*` applies.
	code, out, _ = runCmd("-agent", newUA, "-robots", file, "https://e.com/shop")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "agent CrawlCove\n")
	assert.Contains(t, out, `https://e.com/shop: disallowed by "Disallow: /" (line 2, user-agent *) [token *]`)

	// Order is preference: the first token a group names wins.
	code, out, _ = runCmd("-agent", "Googlebot", "-agent", "CrawlCove-Crawler", "-agent", "googlebot", "-robots", file, "https://e.com/basket/1")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "agent Googlebot, CrawlCove-Crawler (in order of preference)\n", "repeats dropped")
	assert.Contains(t, out, "[token Googlebot]")
}

// TestMissingAgentSaysItIsRequired: without -agent the first line says so
// (the issue: the usage alone left a person guessing), with or without URLs.
func TestMissingAgentSaysItIsRequired(t *testing.T) {
	for _, args := range [][]string{{}, {"https://e.com/"}, {"-robots", "robots.txt", "/x"}} {
		code, stdout, stderr := runCmd(args...)
		assert.Equal(t, 2, code, args)
		assert.Empty(t, stdout, args)
		first, _, _ := strings.Cut(stderr, "\n")
		assert.Equal(t, "robotscheck: -agent is required: the crawler's product token or User-Agent (-agent CrawlCove-Crawler)", first, args)
		assert.Contains(t, stderr, "usage: robotscheck -agent TOKEN", args)
	}
	code, _, stderr := runCmd("-agent", "bot")
	assert.Equal(t, 2, code)
	assert.True(t, strings.HasPrefix(stderr, "robotscheck: at least one URL is required\n"), stderr)
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-agent", "bot"},
		{"https://e.com/"},
		{"-nosuchflag", "-agent", "bot", "https://e.com/"},
		{"-agent", "bot", "-robots", filepath.Join(t.TempDir(), "missing.txt"), "https://e.com/"},
		{"-agent", "(;)", "https://e.com/"},
		{"-agent", "bot", "-agent", "(;)", "https://e.com/"},
		{"-agent", "bot", "-log", filepath.Join(t.TempDir(), "no", "such", "dir", "log.json"), "https://e.com/"},
		{"-agent", "bot", "-timeout", "-1s", "https://e.com/"},
		{"-agent", "bot", "-timeout", "0s", "https://e.com/"},
		{"-agent", "bot", "-timeout", "24h", "https://e.com/"},
	} {
		code, _, stderr := runCmd(args...)
		assert.Equal(t, 2, code, args)
		assert.NotEmpty(t, stderr, args)
	}
}

func TestFetch(t *testing.T) {
	var mu sync.Mutex
	var agents []string
	robotsTxt := "User-agent: CrawlCove-Crawler\nDisallow: /basket/\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents = append(agents, r.UserAgent())
		mu.Unlock()
		fmt.Fprint(w, robotsTxt)
	}))
	defer srv.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer down.Close()
	missing := httptest.NewServer(http.NotFoundHandler())
	defer missing.Close()

	code, out, _ := runCmd("-agent", "CrawlCove-Crawler", srv.URL+"/basket/1", srv.URL+"/shop")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, srv.URL+`/basket/1: disallowed by "Disallow: /basket/" (line 2, user-agent CrawlCove-Crawler) [token CrawlCove-Crawler]`)
	assert.Contains(t, out, srv.URL+`/shop: allowed: no rule matches (user-agent CrawlCove-Crawler) [token CrawlCove-Crawler]`)
	mu.Lock()
	assert.Equal(t, []string{"polite-robotscheck/1.0 (+https://github.com/politecrawl/polite)"}, agents, "one fetch, own User-Agent")
	mu.Unlock()

	code, out, _ = runCmd("-agent", "CrawlCove-Crawler", "-robots", srv.URL+"/robots.txt", "https://other.example/basket/")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "rules from "+srv.URL)

	code, out, _ = runCmd("-agent", "bot", missing.URL+"/x")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "no robots.txt (HTTP 404)")

	code, out, _ = runCmd("-agent", "bot", down.URL+"/x", srv.URL+"/y")
	assert.Equal(t, 2, code)
	assert.Contains(t, out, "unreachable")

	code, _, stderr := runCmd("-agent", "bot", "-robots", down.URL, "/x")
	assert.Equal(t, 2, code)
	assert.True(t, strings.Contains(stderr, "HTTP 503"), stderr)

	code, _, stderr = runCmd("-agent", "bot", "ftp://e.com/x")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "ftp://e.com/x")
}

// -log writes the cache's decision events as JSON lines, so a user can
// answer "why was this URL not crawled?".
func TestLogFile(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: CrawlCove-Crawler\nDisallow: /basket/\n")
	}))
	defer srv.Close()
	log := filepath.Join(t.TempDir(), "events.jsonl")
	for range 2 { // appended, not overwritten
		code, _, _ := runCmd("-agent", "CrawlCove", "-agent", "CrawlCove-Crawler", "-log", log, srv.URL+"/basket/1")
		assert.Equal(t, 1, code)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var events []map[string]any
	for line := range strings.Lines(string(data)) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		events = append(events, m)
	}
	if !assert.Len(t, events, 4) {
		return
	}
	for i := 0; i < 4; i += 2 {
		assert.Equal(t, "robots.fetch", events[i]["msg"])
		assert.Equal(t, srv.URL+"/robots.txt", events[i]["robots_url"])
		assert.Equal(t, "rules", events[i]["outcome"])
		assert.Equal(t, "robots.decision", events[i+1]["msg"])
		assert.Equal(t, "disallowed", events[i+1]["outcome"])
		assert.Equal(t, "CrawlCove-Crawler", events[i+1]["token"])
		assert.Equal(t, "Disallow: /basket/", events[i+1]["rule"])
		assert.Equal(t, 2.0, events[i+1]["line"])
	}
}

// TestRuleTextIsTerminalSafe: a rule is printed as the site wrote it, so an
// escape sequence in robots.txt must reach the terminal as visible text, not
// as a command that retitles the window or clears the screen.
func TestRuleTextIsTerminalSafe(t *testing.T) {
	file := filepath.Join(t.TempDir(), "robots.txt")
	hostile := "User-agent: *\nDisallow: /x\x1b]0;pwned\x07\x1b[2J\n"
	if err := os.WriteFile(file, []byte(hostile), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCmd("-agent", "bot", "-robots", file, "/x\x1b]0;pwned\x07\x1b[2J")
	assert.Equal(t, 1, code)
	assert.NotContains(t, out, "\x1b")
	assert.NotContains(t, out, "\x07")
	assert.Contains(t, out, `\x1b]0;pwned\x07`)
}
