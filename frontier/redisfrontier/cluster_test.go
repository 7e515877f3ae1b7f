package redisfrontier_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier/redisfrontier"
	"github.com/politecrawl/polite/frontier/redisfrontier/redistest"
)

// TestClusterShards crawls five sites split over four shards on a Redis
// Cluster node (cluster mode refuses any script touching keys of two
// slots with CROSSSLOT, as a real cluster does), with two workers.
func TestClusterShards(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Cluster: true})
	rdb := srv.Client()
	sites := makeSites(t, 5, 0)
	cfg := redisfrontier.DefaultConfig("cluster")
	cfg.Shards = 4
	cfg.Site = redisfrontier.Limits{MaxDepth: 5, InFlight: 2}
	ctx := shortCtx(t, 60*time.Second)
	var mu sync.Mutex
	var got []fetched
	var wg sync.WaitGroup
	for range 2 {
		w := newWorker(t, rdb, cfg)
		for _, s := range startURLs(sites) {
			w.f.Add(ctx, s, 0, "")
		}
		wg.Go(func() {
			assert.NoError(t, w.crawl(ctx, 3, func(p fetched) { mu.Lock(); got = append(got, p); mu.Unlock() }))
		})
	}
	wg.Wait()
	assert.Len(t, got, 5*13)
	keys := pagesBySite(t, sites, got)
	for i := 1; i < len(keys); i++ {
		assert.NotEqual(t, keys[i-1], keys[i], "fetched twice")
	}
	w := newWorker(t, rdb, cfg)
	st, err := w.f.FleetStats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 5*13, st.Done)
	assert.Equal(t, 5, st.Sites)
	// The keys really are spread over several slots, one per quarter of
	// the slot space (so over the masters of a cluster made by redis-cli
	// --cluster create, which gives them equal ranges), and the server
	// computes the same slots as the Frontier.
	tags := w.f.Shards()
	require.Len(t, tags, 4)
	for i, tg := range tags {
		n, err := rdb.ClusterKeySlot(ctx, "polite:{"+tg+"}:g").Result()
		require.NoError(t, err)
		assert.True(t, int64(i)*4096 <= n && n < int64(i+1)*4096, "shard %d (%s) in slot %d", i, tg, n)
		keys, err := rdb.ClusterGetKeysInSlot(ctx, int(n), 10).Result()
		require.NoError(t, err)
		assert.NotEmpty(t, keys, "shard %d's keys are in slot %d", i, n)
	}
}

// TestNewWaitsForTheCluster: a worker started while the cluster is not
// up yet (just created, the nodes still agreeing: CLUSTERDOWN) waits for
// it within Outage instead of failing.
func TestNewWaitsForTheCluster(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{Cluster: true})
	node := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer node.Close()
	ctx := shortCtx(t, 30*time.Second)
	// The node waits its node timeout (at most 5 s) before it says the
	// cluster is up again: keep that short.
	require.NoError(t, node.ConfigSet(ctx, "cluster-node-timeout", "500").Err())
	// No slot served: CLUSTERDOWN for every key until they are added.
	require.NoError(t, node.Do(ctx, "CLUSTER", "DELSLOTSRANGE", 0, 16383).Err())
	time.AfterFunc(300*time.Millisecond, func() { node.Do(context.Background(), "CLUSTER", "ADDSLOTSRANGE", 0, 16383) })
	f, err := redisfrontier.New(ctx, srv.Client(), redisfrontier.DefaultConfig("early"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
}
