package redisfrontier_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/frontier/redisfrontier"
	"github.com/politecrawl/polite/internal/testsite"
	"github.com/politecrawl/polite/robots"
)

// TestFiftyWorkersOneRobotsFetch: fifty workers (each its own Frontier
// and robots.Cache, as fifty processes would have) start on one host at
// the same moment; the site sees exactly one robots.txt request, and every
// worker gets its rules.
func TestFiftyWorkersOneRobotsFetch(t *testing.T) {
	_, rdb := startRedis(t)
	site := testsite.New(t)
	site.Route("/robots.txt", testsite.Response{Delay: 200 * time.Millisecond, ContentType: "text/plain",
		Body: "User-agent: *\nDisallow: /private/\n"})
	site.HTML("/", "home")
	cfg := redisfrontier.DefaultConfig("fifty")
	var workers []*worker
	for range 50 {
		workers = append(workers, newWorker(t, rdb, cfg))
	}
	ctx := shortCtx(t, 30*time.Second)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, w := range workers {
		wg.Go(func() {
			<-start
			r := w.f.Add(ctx, site.URL()+"/", 0, "")
			assert.Contains(t, []frontier.Outcome{frontier.Queued, frontier.Duplicate}, r.Outcome, "%v", r.Err)
			v, err := w.rules.Check(ctx, ua, site.URL()+"/private/a")
			assert.NoError(t, err)
			assert.Equal(t, robots.Disallowed, v.Outcome)
		})
	}
	close(start)
	wg.Wait()
	assert.Equal(t, 1, site.Count("/robots.txt"))
}

// TestRobotsStoreRoundTrip: an entry saved by one worker is loaded by
// another as saved.
func TestRobotsStoreRoundTrip(t *testing.T) {
	_, rdb := startRedis(t)
	a := newWorker(t, rdb, redisfrontier.DefaultConfig("store"))
	b := newWorker(t, rdb, redisfrontier.DefaultConfig("store"))
	ctx := t.Context()
	now := time.Now().Truncate(time.Millisecond)
	e := robots.Entry{Authority: "https://shop.example", URL: "https://shop.example/robots.txt", Status: 200,
		Body: []byte("User-agent: *\nDisallow: /x\n"), FetchedAt: now, ExpiresAt: now.Add(time.Hour)}
	require.NoError(t, a.f.RobotsStore().Save(ctx, e))
	got, ok, err := b.f.RobotsStore().Load(ctx, "https://shop.example")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, e.Body, got.Body)
	assert.Equal(t, e.Status, got.Status)
	assert.True(t, e.ExpiresAt.Equal(got.ExpiresAt))
	_, ok, err = b.f.RobotsStore().Load(ctx, "https://other.example")
	require.NoError(t, err)
	assert.False(t, ok)
	ttl, err := rdb.TTL(ctx, "polite:{store}:robots:https://shop.example").Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, 24*time.Hour, "kept past ExpiresAt as a stale copy")
}

// TestRobotsLockWaitsForHolder: a second worker's Lock waits until the
// first unlocks (woken at once, not polling), and a dead holder's lock
// expires.
func TestRobotsLockWaitsForHolder(t *testing.T) {
	_, rdb := startRedis(t)
	a := newWorker(t, rdb, redisfrontier.DefaultConfig("lock"))
	b := newWorker(t, rdb, redisfrontier.DefaultConfig("lock"))
	ctx := shortCtx(t, 10*time.Second)
	unlock, err := a.f.RobotsStore().Lock(ctx, "https://shop.example")
	require.NoError(t, err)
	got := make(chan time.Time)
	go func() {
		u, err := b.f.RobotsStore().Lock(ctx, "https://shop.example")
		assert.NoError(t, err)
		got <- time.Now()
		u()
	}()
	time.Sleep(200 * time.Millisecond)
	released := time.Now()
	unlock()
	at := <-got
	// Without the wake-up B would wait for the lock's expiry (30 s).
	assert.Less(t, at.Sub(released), 3*time.Second, "woken by the unlock")

	dead := b.f.RobotsStore()
	dead.LockTTL = 300 * time.Millisecond
	_, err = dead.Lock(ctx, "https://other.example") // never unlocked
	require.NoError(t, err)
	t0 := time.Now()
	u, err := a.f.RobotsStore().Lock(ctx, "https://other.example")
	require.NoError(t, err)
	u()
	assert.GreaterOrEqual(t, time.Since(t0), 200*time.Millisecond)
}
