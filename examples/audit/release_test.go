package main

import (
	"bytes"
	"io"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/benchshop"
	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/politecrawl/polite/frontier"
)

// By the time the passes over the crawl start, nothing of the crawler is reachable: not the Crawler,
// not its frontier (the seen set and the queue, the crawl's largest memory at a million pages), so the
// collection Finish runs before the passes frees them. runCrawl is the program's own path from the
// crawl to the report (a new crawl and -resume both take it); the weak pointers are cleared by the
// collection once nothing else points at the crawler, and the check runs inside Finish, right before
// the first pass. Holding the crawler anywhere (main's variables, the Ending, the store's writer hook, a
// goroutine of the crawl) fails it.
func TestTheCrawlerIsGarbageBeforeThePasses(t *testing.T) {
	srv := httptest.NewServer(benchshop.Handler(300))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "release.db")
	var stderr bytes.Buffer
	cfg, err := parseArgs([]string{"-db", path, "-gap", "0", "-concurrency", "8", "-max-pages", "300", "-max-depth", "100",
		"-quiet", "-no-report", "-timings", srv.URL + "/"}, &stderr)
	require.NoError(t, err)
	st, err := store.OpenStore(t.Context(), path)
	require.NoError(t, err)
	defer st.Close()

	var crawler weak.Pointer[crawl.Crawler]
	var front weak.Pointer[frontier.Frontier]
	var checked, crawlerLive, frontLive bool
	env := crawl.Env{Now: time.Now, Terminal: func(io.Writer) bool { return false }, BeforePasses: func() {
		runtime.GC() // Finish collected already; one more makes the check independent of its details
		checked, crawlerLive, frontLive = true, crawler.Value() != nil, front.Value() != nil
	}}
	c, err := crawl.NewCrawler(cfg, env, st, &stderr)
	require.NoError(t, err)
	crawler = weak.Make(c)
	front = weak.Make(c.Front)

	var stdout bytes.Buffer
	code := runCrawl(t.Context(), c, nil, &stdout, &stderr) // c is not used after this call
	require.Equal(t, crawl.ExitOK, code, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	require.True(t, checked, "Finish ran no passes")
	assert.False(t, crawlerLive, "the Crawler is still reachable when the passes start")
	assert.False(t, frontLive, "the crawl's frontier is still reachable when the passes start")
	assert.Contains(t, stderr.String(), "memory before the passes: live heap", "-timings reports the heap the passes start from")
	var pages int
	require.NoError(t, st.Reader().QueryRow(`SELECT COUNT(*) FROM pages`).Scan(&pages))
	assert.Equal(t, 300, pages)
}
