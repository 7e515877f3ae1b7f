package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/testsite"
)

const robotscheckUA = "polite-robotscheck/1.0 (+https://github.com/politecrawl/polite)"

// TestRobotscheck: the README's commands on the built binary: each URL's
// own robots.txt (fetched once, with the tool's user agent), a local file
// with a token and its fallback, -log, and the exit statuses.
func TestRobotscheck(t *testing.T) {
	t.Parallel()
	s := testsite.New(t)
	s.Robots("User-agent: CrawlCove-Crawler\nDisallow: /basket/\n")
	down := testsite.New(t)
	down.Status("/robots.txt", http.StatusServiceUnavailable)
	none := testsite.New(t) // robots.txt: 404
	dir := t.TempDir()

	r := run(t, "robotscheck", opts{dir: dir}, "-agent", "CrawlCove-Crawler", "-log", "decisions.jsonl", s.URL()+"/basket/42", s.URL()+"/about")
	assert.Equal(t, 1, r.code, "some URL disallowed: %s", r)
	assert.Contains(t, r.stdout, "agent CrawlCove-Crawler\n")
	assert.Contains(t, r.stdout, s.URL()+`/basket/42: disallowed by "Disallow: /basket/" (line 2, user-agent CrawlCove-Crawler) [token CrawlCove-Crawler]`)
	assert.Contains(t, r.stdout, s.URL()+`/about: allowed: no rule matches (user-agent CrawlCove-Crawler) [token CrawlCove-Crawler]`)
	assert.Equal(t, []string{"/robots.txt"}, paths(s.Requests()), "robots.txt once per site, and nothing else")
	assertIdentity(t, s.Requests(), robotscheckUA, "")
	log, err := os.ReadFile(filepath.Join(dir, "decisions.jsonl"))
	require.NoError(t, err)
	assert.Contains(t, string(log), `"msg":"robots.fetch"`)
	assert.Contains(t, string(log), `"msg":"robots.decision","url":"`+s.URL()+`/basket/42","outcome":"disallowed","token":"CrawlCove-Crawler","rule":"Disallow: /basket/","line":2`)

	r = run(t, "robotscheck", opts{dir: dir}, "-agent", "bot", none.URL()+"/x")
	assert.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, none.URL()+"/x: allowed: no robots.txt (HTTP 404), no rules")
	r = run(t, "robotscheck", opts{dir: dir}, "-agent", "bot", down.URL()+"/x")
	assert.Equal(t, 2, r.code, r)
	assert.Contains(t, r.stdout, down.URL()+"/x: unreachable: robots.txt could not be fetched, the site is off limits")

	// The README's example, output and all.
	writeFile(t, dir, "robots.txt", "User-agent: *\nDisallow: /\n\nUser-agent: CrawlCove-Crawler\nDisallow: /basket/\nAllow: /basket/public\n")
	r = run(t, "robotscheck", opts{dir: dir}, "-agent", "Mozilla/5.0 (compatible; CrawlCove/2.0; +https://crawlcove.example/bot)",
		"-agent", "CrawlCove-Crawler", "-robots", "robots.txt",
		"https://shop.example/basket/42", "https://shop.example/basket/public/x", "https://shop.example/", "/robots.txt")
	assert.Equal(t, 1, r.code, r)
	assert.Equal(t, `agent CrawlCove, CrawlCove-Crawler (in order of preference)
rules from robots.txt
https://shop.example/basket/42: disallowed by "Disallow: /basket/" (line 5, user-agent CrawlCove-Crawler) [token CrawlCove-Crawler]
https://shop.example/basket/public/x: allowed by "Allow: /basket/public" (line 6, user-agent CrawlCove-Crawler) [token CrawlCove-Crawler]
https://shop.example/: allowed: no rule matches (user-agent CrawlCove-Crawler) [token CrawlCove-Crawler]
/robots.txt: allowed: /robots.txt is always allowed
`, r.stdout)

	r = run(t, "robotscheck", opts{dir: dir}, "-h")
	assert.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stderr, "usage: robotscheck -agent TOKEN")
	for _, args := range [][]string{{s.URL() + "/x"}, {}} {
		r = run(t, "robotscheck", opts{dir: dir}, args...)
		assert.Equal(t, 2, r.code, r)
		first, _, _ := strings.Cut(r.stderr, "\n")
		assert.Regexp(t, `-agent is required`, first, "the first line names the mistake")
	}
	r = run(t, "robotscheck", opts{dir: dir}, "-agent", "bot", "-robots", "missing.txt", "/x")
	assert.Equal(t, 2, r.code, r)
}
