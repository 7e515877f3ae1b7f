package redisfrontier_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/frontier/redisfrontier"
	"github.com/politecrawl/polite/internal/testsite"
)

// TestCrawlOneSite crawls a small site in one worker: robots.txt first,
// a disallowed link never requested, an external one never followed.
func TestCrawlOneSite(t *testing.T) {
	_, rdb := startRedis(t)
	site := testsite.New(t)
	site.Robots("User-agent: *\nDisallow: /private/\n")
	site.HTML("/", `<a href="/a">A</a> <a href="/b">B</a> <a href="https://elsewhere.example/">x</a>`)
	site.HTML("/a", `<a href="/private/x">secret</a> <a href="/b#top">B again</a> <a href="/c">C</a>`)
	site.HTML("/b", `<a href="/a/../">home</a>`)
	site.HTML("/c", `c`)

	cfg := redisfrontier.DefaultConfig("one")
	cfg.Site.Gap = 10 * time.Millisecond
	w := newWorker(t, rdb, cfg)
	ctx := shortCtx(t, 30*time.Second)
	r := w.f.Add(ctx, site.URL()+"/", 0, "")
	require.Equal(t, frontier.Queued, r.Outcome, "%v", r.Err)
	var mu sync.Mutex
	var got []string
	require.NoError(t, w.crawl(ctx, 3, func(p fetched) {
		mu.Lock()
		got = append(got, p.URL)
		mu.Unlock()
		assert.Equal(t, 200, p.Status, p.URL)
	}))
	assert.ElementsMatch(t, []string{site.URL() + "/", site.URL() + "/a", site.URL() + "/b", site.URL() + "/c"}, got)
	assert.Equal(t, 1, site.Count("/robots.txt"))
	assert.Equal(t, 0, site.Count("/private/x"))
	st := w.f.Stats()
	fmt.Printf("%+v\n", st)
	assert.Equal(t, 4, st.Done)
	assert.Equal(t, 5, st.Requests)
	assert.Equal(t, 1, st.Blocked)
	assert.Equal(t, 0, st.Queued)
	assert.Equal(t, 0, st.Out)
}
