package main

import (
	"bytes"
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

func TestUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-agent", "bot"},
		{"https://e.com/"},
		{"-nosuchflag", "-agent", "bot", "https://e.com/"},
		{"-agent", "bot", "-robots", filepath.Join(t.TempDir(), "missing.txt"), "https://e.com/"},
		{"-agent", "(;)", "https://e.com/"},
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
	assert.Contains(t, out, srv.URL+`/basket/1: disallowed by "Disallow: /basket/" (line 2, user-agent CrawlCove-Crawler)`)
	assert.Contains(t, out, srv.URL+`/shop: allowed: no rule matches (user-agent CrawlCove-Crawler)`)
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
