package redisfrontier_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier/redisfrontier"
	"github.com/politecrawl/polite/frontier/redisfrontier/redistest"
	"github.com/politecrawl/polite/internal/testsite"
)

// restartMidCrawl runs two worker processes and restarts Redis (SIGKILL,
// start again) once the sites have seen some requests. It returns the
// workers and the sites.
func restartMidCrawl(t *testing.T, srv *redistest.Server) ([]*proc, []*testsite.Site) {
	sites := makeSites(t, 3, 100*time.Millisecond)
	dir := t.TempDir()
	var procs []*proc
	for i := range 2 {
		procs = append(procs, startProc(t, workerSpec{
			Redis: srv.URL(), Crawl: "restart", Starts: startURLs(sites), Goroutines: 3,
			Lease: 10 * time.Second, Outage: 20 * time.Second, Limits: redisfrontier.Limits{MaxDepth: 5, InFlight: 2},
			Out: filepath.Join(dir, fmt.Sprintf("w%d.jsonl", i)),
		}))
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := 0
		for _, s := range sites {
			n += s.Total()
		}
		if n >= 10 {
			break
		}
		require.True(t, time.Now().Before(deadline), "workers never got going")
		time.Sleep(5 * time.Millisecond)
	}
	srv.Crash()
	time.Sleep(300 * time.Millisecond) // workers see the outage
	srv.Restart()
	return procs, sites
}

func assertNoDoubleFetch(t *testing.T, sites []*testsite.Site) {
	for i, s := range sites {
		counts := map[string]int{}
		for _, r := range s.Requests() {
			counts[r.Path]++
		}
		for path, n := range counts {
			if path != "/robots.txt" {
				assert.Equal(t, 1, n, "site %d: %s fetched %d times", i, path, n)
			}
		}
	}
}

// TestRedisRestartWithoutPersistence: Redis restarts empty mid-crawl. The
// workers ride out the outage, then find the crawl's state gone and stop
// with ErrStateLost, saying so, instead of crawling the sites again.
func TestRedisRestartWithoutPersistence(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	procs, sites := restartMidCrawl(t, srv)
	for i, p := range procs {
		err := p.wait(t, 60*time.Second)
		require.Error(t, err, "worker %d must stop", i)
		assert.Contains(t, p.stderr.String(), "crawl state lost", "worker %d", i)
	}
	assertNoDoubleFetch(t, sites)
}

// TestRedisRestartWithPersistence: with the append-only file, the state
// survives a restart; the workers wait through the outage, resume and
// finish the crawl, every page fetched once.
func TestRedisRestartWithPersistence(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	procs, sites := restartMidCrawl(t, srv)
	for i, p := range procs {
		require.NoError(t, p.wait(t, 60*time.Second), "worker %d: %s", i, p.stderr)
	}
	assertNoDoubleFetch(t, sites)
	for i, s := range sites {
		assert.Equal(t, 13, s.Total()-s.Count("/robots.txt"), "site %d: 13 pages", i)
		assert.Equal(t, 1, s.Count("/robots.txt"), "site %d: one robots.txt for both workers", i)
	}
}

// TestClusterStateLostStaysLost: on a cluster a script that finds no state
// is asked again while the cluster may be converging
// (TestClusterFailoverAddressTaken), but a state that stays missing for
// all of Outage is lost, and said so, as on one server.
func TestClusterStateLostStaysLost(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{Cluster: true})
	rdb := srv.Client()
	ctx := shortCtx(t, 30*time.Second)
	cfg := redisfrontier.DefaultConfig("gone")
	cfg.Shards, cfg.Outage = 2, time.Second
	f, err := redisfrontier.New(ctx, rdb, cfg)
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, "queued", f.Add(ctx, "https://site.example/", 0, "").Outcome.String())
	require.NoError(t, rdb.(*redis.ClusterClient).ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		return c.FlushAll(ctx).Err()
	}))
	_, err = f.Next(ctx)
	require.ErrorIs(t, err, redisfrontier.ErrStateLost)
}
