package redisfrontier_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/frontier/redisfrontier"
	"github.com/politecrawl/polite/frontier/redisfrontier/redistest"
	"github.com/politecrawl/polite/internal/testsite"
)

// TestRedirectTargetRequestedOnceFleet: two workers on one Redis crawl a
// site where /a is linked directly and reached through /redir and
// /redir-chain (and a sitemap lists /redir): the site sees /a once, and
// the links of /a are attributed to /a.
func TestRedirectTargetRequestedOnceFleet(t *testing.T) {
	_, rdb := startRedis(t)
	cfg := redisfrontier.DefaultConfig("claims")
	cfg.Site.Gap = 0
	redirectTargetOnce(t, rdb, cfg)
}

// TestRedirectTargetRequestedOnceCluster: the same on a Redis Cluster with
// the crawl split in shards, where Claim runs on the site's shard's
// master like every other script.
func TestRedirectTargetRequestedOnceCluster(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 2})
	cfg := redisfrontier.DefaultConfig("claims")
	cfg.Site.Gap = 0
	cfg.Shards = 4
	redirectTargetOnce(t, c.Client(), cfg)
}

func redirectTargetOnce(t *testing.T, rdb redisUniversal, cfg redisfrontier.Config) {
	site := testsite.New(t)
	site.Robots("User-agent: *\nAllow: /\n")
	site.HTML("/", `<a href="/redir-chain">c</a> <a href="/redir">r</a> <a href="/a">a</a>`)
	site.Redirect("/redir", "/a", http.StatusMovedPermanently)
	site.Redirect("/redir-chain", "/redir", http.StatusFound)
	site.HTML("/a", `<a href="/missing">m</a> <a href="/">home</a>`)
	site.Status("/missing", http.StatusNotFound)

	w1, w2 := newWorker(t, rdb, cfg), newWorker(t, rdb, cfg)
	require.Same(t, w1.f, w1.client.Claimer)
	ctx := shortCtx(t, 30*time.Second)
	require.Equal(t, frontier.Queued, w1.f.Add(ctx, site.URL()+"/", 0, "").Outcome)
	w2.f.Add(ctx, site.URL()+"/redir", 1, site.URL()+"/sitemap.xml")

	var mu sync.Mutex
	from := map[string]string{}
	var wg sync.WaitGroup
	for _, w := range []*worker{w1, w2, w1, w2} {
		wg.Go(func() {
			for {
				it, err := w.f.Next(ctx)
				if err != nil {
					if !errors.Is(err, frontier.ErrComplete) {
						t.Error(err)
					}
					return
				}
				mu.Lock()
				from[it.URL] = it.From
				mu.Unlock()
				res, ferr := w.client.Get(ctx, it.URL)
				var links []string
				if p, perr := res.Page(); perr == nil {
					for _, l := range p.Links {
						links = append(links, l.URL)
					}
				}
				if _, err := w.f.FinishFrom(ctx, it, res.FinalURL, ferr, links); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 1, site.Count("/a"), "%v", site.Paths())
	assert.Equal(t, 1, site.Count("/redir"), "%v", site.Paths())
	assert.Equal(t, 1, site.Count("/redir-chain"), "%v", site.Paths())
	assert.Equal(t, site.URL()+"/a", from[site.URL()+"/missing"])
}

// TestClaimRedis: Claim's answers on Redis, seen by every worker.
func TestClaimRedis(t *testing.T) {
	_, rdb := startRedis(t)
	site := testsite.New(t)
	site.Robots("User-agent: *\nAllow: /\n")
	cfg := redisfrontier.DefaultConfig("claim-direct")
	w1, w2 := newWorker(t, rdb, cfg), newWorker(t, rdb, cfg)
	ctx := context.Background()
	base := site.URL()
	require.Equal(t, frontier.Queued, w1.f.Add(ctx, base+"/", 0, "").Outcome)
	ok, err := w1.f.Claim(ctx, mustURL(t, base+"/a"))
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = w2.f.Claim(ctx, mustURL(t, base+"/a#frag"))
	require.NoError(t, err)
	assert.False(t, ok, "another worker's claim")
	assert.Equal(t, frontier.Duplicate, w2.f.Add(ctx, base+"/a", 1, base+"/").Outcome)
	ok, _ = w2.f.Claim(ctx, mustURL(t, base+"/"))
	assert.False(t, ok, "a queued URL")
	ok, _ = w1.f.Claim(ctx, mustURL(t, "https://other.example/x"))
	assert.True(t, ok, "no site of the crawl: followed, not recorded")
	assert.Zero(t, site.Count("/a"), "Claim requests nothing")
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}
