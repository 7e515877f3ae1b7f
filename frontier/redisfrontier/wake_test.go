package redisfrontier_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/frontier/redisfrontier"
)

// TestWaiterWokenByDoneInAnotherWorker: a worker blocked in Next because
// the site's one slot is out gets the next item as soon as another worker
// is done, without waiting for a poll or the lease (30 s).
func TestWaiterWokenByDoneInAnotherWorker(t *testing.T) {
	_, rdb := startRedis(t)
	site := makeSites(t, 1, 0)[0]
	cfg := redisfrontier.DefaultConfig("wake")
	cfg.Site = redisfrontier.Limits{MaxDepth: 5, InFlight: 1}
	a := newWorker(t, rdb, cfg)
	b := newWorker(t, rdb, cfg)
	ctx := shortCtx(t, 20*time.Second)
	require.Equal(t, frontier.Queued, a.f.Add(ctx, site.URL()+"/", 0, "").Outcome)
	it, err := a.f.Next(ctx)
	require.NoError(t, err)
	_, err = a.f.Finish(ctx, it, nil, []string{site.URL() + "/p1", site.URL() + "/p2"})
	require.NoError(t, err)
	it, err = a.f.Next(ctx) // the one slot is out now
	require.NoError(t, err)

	got := make(chan time.Time, 1)
	go func() {
		_, err := b.f.Next(ctx)
		assert.NoError(t, err)
		got <- time.Now()
	}()
	time.Sleep(300 * time.Millisecond)
	select {
	case <-got:
		t.Fatal("B got an item while the site's only slot was out")
	default:
	}
	done := time.Now()
	require.NoError(t, a.f.Done(it, nil))
	at := <-got
	// Without the wake-up B would sleep until the lease expires (30 s):
	// the bound leaves room for a loaded machine's scheduling only.
	assert.Less(t, at.Sub(done), 3*time.Second, "woken by the Done")
}

// TestStopHost drops a host's queued URLs fleet-wide and refuses later ones.
func TestStopHost(t *testing.T) {
	_, rdb := startRedis(t)
	site := makeSites(t, 1, 0)[0]
	cfg := redisfrontier.DefaultConfig("stop")
	a := newWorker(t, rdb, cfg)
	b := newWorker(t, rdb, cfg)
	ctx := shortCtx(t, 20*time.Second)
	a.f.Add(ctx, site.URL()+"/", 0, "")
	res := a.f.AddAll(ctx, []string{site.URL() + "/p1", site.URL() + "/p2"}, 1, site.URL()+"/")
	require.Equal(t, frontier.Queued, res[1].Outcome)
	n, err := b.f.StopHost(site.Host())
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	r := a.f.Add(ctx, site.URL()+"/p3", 1, "")
	assert.Equal(t, frontier.Stopped, r.Outcome)
	assert.ErrorIs(t, r.Err, frontier.ErrStopped)
	_, err = b.f.Next(ctx)
	assert.True(t, errors.Is(err, frontier.ErrComplete), "%v", err)
	st := b.f.Stats()
	assert.Equal(t, 4, st.Dropped[frontier.Stopped])
	assert.True(t, st.Hosts[site.Host()].Stopped)
}

// TestConfigMismatch: a worker whose run-wide settings differ from the
// crawl's is refused.
func TestConfigMismatch(t *testing.T) {
	_, rdb := startRedis(t)
	newWorker(t, rdb, redisfrontier.DefaultConfig("cfg"))
	cfg := redisfrontier.DefaultConfig("cfg")
	cfg.Shards = 2
	_, err := redisfrontier.New(t.Context(), rdb, cfg)
	assert.ErrorIs(t, err, redisfrontier.ErrConfigMismatch)
	// The start window spaces every worker's admissions: one per crawl.
	cfg = redisfrontier.DefaultConfig("cfg")
	cfg.StartWindow = 20 * time.Millisecond
	_, err = redisfrontier.New(t.Context(), rdb, cfg)
	assert.ErrorIs(t, err, redisfrontier.ErrConfigMismatch)
	cfg.StartWindow = redisfrontier.DefaultStartWindow // the same as 0
	w, err := redisfrontier.New(t.Context(), rdb, cfg)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	var ce *frontier.ConfigError
	_, err = redisfrontier.New(t.Context(), rdb, redisfrontier.Config{Crawl: "bad name"})
	assert.ErrorAs(t, err, &ce)
	cfg.StartWindow = time.Microsecond
	_, err = redisfrontier.New(t.Context(), rdb, cfg)
	if assert.ErrorAs(t, err, &ce) {
		assert.Equal(t, "StartWindow", ce.Field)
	}
}

// TestShardCountMismatch: workers started with different shard counts
// would use different keys; the second one is refused, whichever order.
func TestShardCountMismatch(t *testing.T) {
	_, rdb := startRedis(t)
	cfg := redisfrontier.DefaultConfig("sharded")
	cfg.Shards = 3
	newWorker(t, rdb, cfg)
	cfg.Shards = 1
	_, err := redisfrontier.New(t.Context(), rdb, cfg)
	assert.ErrorIs(t, err, redisfrontier.ErrConfigMismatch)
}

// TestRoundTripsWithGap: with gaps, a worker's idle fetchers do not each
// ask Redis again at every wake-up: one asks and waits, the hand-out's
// reply says when the next item may go, and releases do not wake Next.
// A page then costs about three round trips (Next, Acquire, Finish), as
// it does with no gap; before, the idle fetchers made it 5 or more.
func TestRoundTripsWithGap(t *testing.T) {
	_, rdb := startRedis(t)
	sites := makeSites(t, 6, 0)
	cfg := redisfrontier.DefaultConfig("rt")
	cfg.Site = redisfrontier.Limits{MaxDepth: 5, InFlight: 4, Gap: 30 * time.Millisecond}
	w := newWorker(t, rdb, cfg)
	ctx := shortCtx(t, 60*time.Second)
	for _, s := range startURLs(sites) {
		w.f.Add(ctx, s, 0, "")
	}
	rt0 := w.f.RoundTrips()
	var n atomic.Int64
	require.NoError(t, w.crawl(ctx, 6, func(fetched) { n.Add(1) }))
	require.EqualValues(t, 6*13, n.Load())
	perPage := float64(w.f.RoundTrips()-rt0) / float64(n.Load())
	t.Logf("%.2f round trips per page", perPage)
	assert.LessOrEqual(t, perPage, 3.5)
}
