package redisfrontier_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/frontier/redisfrontier"
	"github.com/politecrawl/polite/frontier/redisfrontier/redistest"
	"github.com/politecrawl/polite/internal/testsite"
)

// TestFenceAfterMasterChange: when the master serving a crawl changes
// (a replica promoted), the admissions the old master made in its last
// moments may never have reached the new one. The new master does not
// know when those requests started, so it admits nothing to any site
// until the site's gap has passed since the change. Here a replica is
// detached (REPLICAOF NO ONE) before the old master admits a second
// request, which the replica therefore never sees; the client then fails
// over to it. Without the fence the third request would be admitted at
// once, right after the second.
func TestFenceAfterMasterChange(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t, redistest.Options{})
	replica := redistest.Start(t, redistest.Options{})
	ctx := shortCtx(t, 30*time.Second)
	rc := redis.NewClient(&redis.Options{Addr: replica.Addr()})
	defer rc.Close()
	mh, mp, _ := net.SplitHostPort(master.Addr())
	require.NoError(t, rc.ReplicaOf(ctx, mh, mp).Err())

	var target atomic.Value
	target.Store(master.Addr())
	rdb := redis.NewClient(&redis.Options{Dialer: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, target.Load().(string))
	}})
	defer rdb.Close()
	const gap = 400 * time.Millisecond
	cfg := redisfrontier.DefaultConfig("fence")
	cfg.Site = redisfrontier.Limits{MaxDepth: 1, InFlight: 1, Gap: gap}
	f, err := redisfrontier.New(ctx, rdb, cfg)
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, "queued", f.Add(ctx, "https://site.example/", 0, "").Outcome.String())
	u, _ := url.Parse("https://site.example/a")
	release, err := f.Acquire(ctx, u)
	require.NoError(t, err)
	release()
	// Everything so far is on the replica; then it is cut off.
	require.NoError(t, waitReplicated(ctx, rdb, master, replica))
	require.NoError(t, rc.ReplicaOf(ctx, "NO", "ONE").Err())

	release, err = f.Acquire(ctx, u) // on the old master only
	require.NoError(t, err)
	second := time.Now()
	release()
	target.Store(replica.Addr())
	master.Crash()

	release, err = f.Acquire(ctx, u) // on the promoted replica
	require.NoError(t, err)
	third := time.Now()
	release()
	assert.GreaterOrEqual(t, third.Sub(second), gap, "a request admitted by the new master less than the gap after one the old master admitted")
	st, err := f.FleetStats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Fences)
}

// waitReplicated waits until the replica has applied every write of the
// master.
func waitReplicated(ctx context.Context, rdb *redis.Client, master, replica *redistest.Server) error {
	mc := redis.NewClient(&redis.Options{Addr: master.Addr()})
	defer mc.Close()
	for {
		n, err := mc.Wait(ctx, 1, time.Second).Result()
		if err == nil && n >= 1 {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("replica %s never caught up: %v", replica.Addr(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// clusterCrawl runs two workers (each its own cluster client and
// Frontier, three fetchers) over sites on c with 6 shards, calling during
// once a third of the pages are fetched, and checks what every crawl on
// any Redis must hold: each page fetched once, every site's in-flight
// limit and gap kept as the site's kernel saw the requests arrive. It
// returns the longest time no page was fetched after during began.
func clusterCrawl(t *testing.T, c *redistest.Cluster, during func(ctx context.Context, f *redisfrontier.Frontier)) (pause time.Duration, st redisfrontier.FleetStats) {
	t.Helper()
	const nSites, gap = 12, 40 * time.Millisecond
	sites := makeSites(t, nSites, 5*time.Millisecond)
	cfg := redisfrontier.DefaultConfig("cl")
	cfg.Shards = 6
	cfg.Lease = 5 * time.Second
	cfg.Site = redisfrontier.Limits{MaxDepth: 5, InFlight: 2, Gap: gap}
	ctx := shortCtx(t, 90*time.Second)
	var mu sync.Mutex
	var got []fetched
	var stamps []time.Time
	triggered := make(chan struct{})
	var once sync.Once
	var workers []*worker
	for range 2 {
		workers = append(workers, newWorker(t, c.Client(), cfg))
	}
	for _, s := range startURLs(sites) {
		workers[0].f.Add(ctx, s, 0, "")
	}
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() {
			assert.NoError(t, w.crawl(ctx, 3, func(p fetched) {
				mu.Lock()
				got = append(got, p)
				stamps = append(stamps, time.Now())
				n := len(got)
				mu.Unlock()
				if n >= nSites*13/3 {
					once.Do(func() { close(triggered) })
				}
			}))
		})
	}
	var began time.Time
	wg.Go(func() {
		select {
		case <-triggered:
		case <-ctx.Done():
			return
		}
		mu.Lock()
		began = time.Now()
		mu.Unlock()
		during(ctx, workers[0].f)
	})
	wg.Wait()
	if len(got) != nSites*13 {
		for i, tg := range workers[0].f.Shards() {
			slot, err := c.Client().ClusterKeySlot(ctx, "polite:{"+tg+"}:g").Result()
			m, merr := c.MasterOf(ctx, slot)
			if err != nil || merr != nil {
				t.Logf("shard %d: %v %v", i, err, merr)
				continue
			}
			nc := redis.NewClient(&redis.Options{Addr: m.Addr()})
			n, err := nc.Exists(ctx, "polite:{"+tg+"}:g").Result()
			keys, _ := nc.DBSize(ctx).Result()
			nc.Close()
			t.Logf("shard %d: slot %d on %s: state hash exists %d (%v), %d keys on the node", i, slot, m.Addr(), n, err, keys)
		}
	}
	require.Len(t, got, nSites*13, "every page fetched")
	keys := pagesBySite(t, sites, got)
	for i := 1; i < len(keys); i++ {
		assert.NotEqual(t, keys[i-1], keys[i], "fetched twice")
	}
	unstamped := 0
	for i, s := range sites {
		assert.LessOrEqual(t, s.MaxInFlight(), 2, "site %d in flight", i)
		unstamped += checkGap(t, i, s, gap)
	}
	if unstamped > 0 {
		t.Logf("%d requests without a kernel arrival time left out of the gap check", unstamped)
	}
	prev := began
	for _, at := range stamps {
		if at.After(began) {
			pause = max(pause, at.Sub(prev))
			prev = at
		}
	}
	st, err := workers[0].f.FleetStats(ctx)
	require.NoError(t, err)
	return pause, st
}

// checkGap checks that requests reached site i's kernel at least gap
// apart. A request the site has no kernel arrival time for (a testsite
// flake, being fixed there) is left out of the check, logged and counted:
// the count is returned, and more than a quarter of the site's requests
// without one fails the test, since the check would then say little.
func checkGap(t *testing.T, i int, s *testsite.Site, gap time.Duration) (unstamped int) {
	t.Helper()
	reqs := s.Requests()
	var stamped []testsite.Request
	for _, r := range reqs {
		if r.Arrived.IsZero() && runtime.GOOS == "linux" {
			t.Logf("site %d: %s has no kernel arrival time; its gaps are not checked", i, r.Path)
			unstamped++
			continue
		}
		stamped = append(stamped, r)
	}
	require.LessOrEqual(t, 4*unstamped, len(reqs), "site %d: too many requests without a kernel arrival time", i)
	at := arrivals(t, stamped)
	for k := 1; k < len(at); k++ {
		assert.GreaterOrEqual(t, at[k].Sub(at[k-1]), gap-startTolerance, "site %d: requests %d and %d arrived closer than the gap", i, k-1, k)
	}
	return unstamped
}

// shardSlot returns the cluster slot of shard i of the crawl f works on.
func shardSlot(t *testing.T, c *redistest.Cluster, f *redisfrontier.Frontier, i int) int64 {
	n, err := c.Client().ClusterKeySlot(t.Context(), "polite:{"+f.Shards()[i]+"}:g").Result()
	require.NoError(t, err)
	return n
}

// TestClusterFailover: kill -9 a master of a 3-master cluster with one
// replica each in the middle of a crawl. Calls to its shards get
// connection errors and then CLUSTERDOWN until the replica is promoted,
// and are retried; the crawl finishes with every page fetched once and
// every site's gap and in-flight limit kept at the site.
func TestClusterFailover(t *testing.T) {
	t.Parallel() // waits on the cluster's failover most of the time (see TestMain for the others)
	c := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3, Replicas: 1, NodeTimeout: time.Second})
	var killedAt time.Time
	pause, st := clusterCrawl(t, c, func(ctx context.Context, f *redisfrontier.Frontier) {
		m, err := c.MasterOf(ctx, shardSlot(t, c, f, 0))
		if !assert.NoError(t, err) {
			return
		}
		killedAt = time.Now()
		m.Crash()
		assert.NoError(t, c.WaitPromoted(ctx, shardSlot(t, c, f, 0), m))
		t.Logf("cluster healthy again %v after the kill", time.Since(killedAt).Round(time.Millisecond))
	})
	t.Logf("longest pause in fetching after the kill: %v; %d re-handed, %d shards fenced", pause.Round(time.Millisecond), st.Rehanded, st.Fences)
	assert.Positive(t, st.Fences, "the promoted replica fenced its shards")
}

// TestClusterFailoverAddressTaken: as TestClusterFailover, but the moment
// the master dies another Redis takes its address (on a shared machine
// another program's server on the freed port; elsewhere a host or
// container that reuses it), and answers, for the dead master's slots,
// without the crawl's keys until the workers' slot maps name the promoted
// replica. Scripts find no state there; that is the cluster converging,
// not the state lost: the workers ask again and the crawl finishes.
func TestClusterFailoverAddressTaken(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3, Replicas: 1, NodeTimeout: time.Second})
	var squatter *redistest.Server
	_, st := clusterCrawl(t, c, func(ctx context.Context, f *redisfrontier.Frontier) {
		slot := shardSlot(t, c, f, 0)
		m, err := c.MasterOf(ctx, slot)
		if !assert.NoError(t, err) {
			return
		}
		m.Crash()
		_, port, _ := net.SplitHostPort(m.Addr())
		p, _ := strconv.Atoi(port)
		squatter = redistest.StartAt(t, p, redistest.Options{})
		assert.NoError(t, c.WaitPromoted(ctx, slot, m))
	})
	require.NotNil(t, squatter)
	assert.Positive(t, st.Fences, "the promoted replica fenced its shards")
}

// TestClusterResharding: a slot holding a shard of the crawl moves to
// another master mid-crawl, and back, step by step (IMPORTING, MIGRATING,
// the keys, NODE), so calls meet ASK and then MOVED redirections; the
// crawl finishes with every page once and every gap kept.
func TestClusterResharding(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3})
	pause, st := clusterCrawl(t, c, func(ctx context.Context, f *redisfrontier.Frontier) {
		for _, shard := range []int{0, 1} {
			slot := shardSlot(t, c, f, shard)
			src, err := c.MasterOf(ctx, slot)
			if !assert.NoError(t, err) {
				return
			}
			dst := c.Masters[0]
			if dst == src {
				dst = c.Masters[1]
			}
			assert.NoError(t, c.MigrateSlot(ctx, slot, dst, 100*time.Millisecond))
			assert.NoError(t, c.MigrateSlot(ctx, slot, src, 100*time.Millisecond))
		}
	})
	t.Logf("longest pause in fetching during the resharding: %v; %d re-handed", pause.Round(time.Millisecond), st.Rehanded)
	assert.Zero(t, st.Rehanded)
}

// quietLogger drops go-redis's log lines: it logs every refused dial to a
// dead master. TestMain sets it once, before any test runs (setting it in a
// test would race with the clients of tests running in parallel).
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// TestScriptRefusedWhileMigratingWritesNothing: while a shard's slot is
// migrating away, its master refuses scripts that touch a missing key of
// the slot — in the middle of the script, after what it wrote before.
// Every script therefore touches a key that never exists first. Here a
// dead worker's lease expires while the slot is migrating: the next
// script on the shard re-queues the item (reap, whose writes come before
// the push onto a queue list that no longer exists). Refused halfway, it
// would have removed the lease and lost the item: the crawl would end
// without it. Refused at once, it runs again on the new master and hands
// the item out.
func TestScriptRefusedWhileMigratingWritesNothing(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 2})
	ctx := shortCtx(t, 30*time.Second)
	cfg := redisfrontier.DefaultConfig("mig")
	cfg.Lease = redisfrontier.MinLease
	cfg.Site = redisfrontier.Limits{MaxDepth: 1, InFlight: 1}
	dead, err := redisfrontier.New(ctx, c.Client(), cfg)
	require.NoError(t, err)
	require.Equal(t, "queued", dead.Add(ctx, "https://site.example/", 0, "").Outcome.String())
	it, err := dead.Next(ctx)
	require.NoError(t, err)
	require.NoError(t, dead.Close()) // its lease is no longer renewed

	live, err := redisfrontier.New(ctx, c.Client(), cfg)
	require.NoError(t, err)
	defer live.Close()
	slot, err := c.Client().ClusterKeySlot(ctx, "polite:{"+live.Shards()[0]+"}:g").Result()
	require.NoError(t, err)
	src, err := c.MasterOf(ctx, slot)
	require.NoError(t, err)
	dst := c.Masters[0]
	if dst == src {
		dst = c.Masters[1]
	}
	got := make(chan frontier.Item, 1)
	c.OnMigrating(func() {
		time.Sleep(2 * cfg.Lease) // the lease expires while the slot is migrating
		go func() {
			it, err := live.Next(ctx)
			assert.NoError(t, err)
			got <- it
		}()
		time.Sleep(300 * time.Millisecond) // its calls meet the migrating slot
	})
	require.NoError(t, c.MigrateSlot(ctx, slot, dst, 50*time.Millisecond))
	select {
	case again := <-got:
		assert.Equal(t, it.URL, again.URL, "the expired item is handed out again")
	case <-ctx.Done():
		t.Fatal("Next never returned")
	}
	st, err := live.FleetStats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Rehanded)
	assert.Equal(t, 1, st.Out)
}
