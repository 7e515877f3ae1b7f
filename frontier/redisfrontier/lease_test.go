package redisfrontier_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier/redisfrontier"
)

// TestKilledWorkerLeasesComeBack: a worker killed with SIGKILL mid-crawl
// holds items and in-flight slots; they come back when their leases
// expire (not before), another worker finishes the crawl, and nothing is
// lost: every page is fetched by one worker or the other.
func TestKilledWorkerLeasesComeBack(t *testing.T) {
	t.Parallel()
	srv, rdb := startRedis(t)
	const lease = 2 * time.Second
	lim := redisfrontier.Limits{MaxDepth: 5, InFlight: 2}
	sites := makeSites(t, 3, 300*time.Millisecond)
	dir := t.TempDir()
	a := startProc(t, workerSpec{
		Redis: srv.URL(), Crawl: "kill", Starts: startURLs(sites), Goroutines: 6, Lease: lease, Limits: lim,
		Out: filepath.Join(dir, "a.jsonl"),
	})
	// Wait until the worker has requests in flight after its first pages.
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, inFlight := 0, 0
		for _, s := range sites {
			n += s.Total()
			inFlight += s.InFlight()
		}
		if n >= 8 && inFlight >= 2 {
			break
		}
		require.True(t, time.Now().Before(deadline), "worker A never got going: %s", a.stderr)
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGKILL))
	killed := time.Now()
	_ = a.wait(t, 10*time.Second)

	cfg := redisfrontier.DefaultConfig("kill")
	cfg.Site, cfg.Lease = lim, lease
	b := newWorker(t, rdb, cfg)
	st, err := b.f.FleetStats(t.Context())
	require.NoError(t, err)
	require.Positive(t, st.Out, "A held items when killed")
	require.Positive(t, st.InFlight, "A held slots when killed")

	ctx := shortCtx(t, 60*time.Second)
	var mu sync.Mutex
	var got []fetched
	require.NoError(t, b.crawl(ctx, 4, func(p fetched) { mu.Lock(); got = append(got, p); mu.Unlock() }))
	got = append(got, readJSONLines[fetched](t, filepath.Join(dir, "a.jsonl"))...)

	want := pagesBySite(t, sites, nil)
	for i := range sites {
		for _, p := range []string{"/", "/p1", "/p1/a", "/p1/b", "/p2", "/p2/a", "/p2/b", "/p3", "/p3/a", "/p3/b", "/p4", "/p4/a", "/p4/b"} {
			want = append(want, fmt.Sprintf("%02d%s", i, p))
		}
	}
	slices.Sort(want)
	assert.Equal(t, want, slices.Compact(pagesBySite(t, sites, got)), "nothing lost")

	st, err = b.f.FleetStats(t.Context())
	require.NoError(t, err)
	assert.Positive(t, st.Rehanded, "A's items were handed out again")
	assert.Positive(t, st.SlotsExpired, "A's slots expired")
	assert.Zero(t, st.Out)
	assert.Zero(t, st.InFlight)
	// A page fetched twice was A's, taken back only when its lease (renewed
	// every lease/3) ran out.
	twice := 0
	for _, s := range sites {
		byPath := map[string][]time.Time{}
		for _, r := range s.Requests() {
			byPath[r.Path] = append(byPath[r.Path], r.Time)
		}
		for path, at := range byPath {
			if len(at) > 1 && path != "/robots.txt" {
				twice++
				assert.Len(t, at, 2, path)
				assert.GreaterOrEqual(t, at[1].Sub(killed), lease*2/3-50*time.Millisecond, "%s re-fetched before the lease ran out", path)
			}
		}
	}
	t.Logf("rehanded %d items, %d slots expired, %d pages fetched twice (in flight at the kill)", st.Rehanded, st.SlotsExpired, twice)
}

// TestDoneAfterLeaseExpiredIsReported: a worker that stalls past its
// lease loses the item to another worker, and its Done says so.
func TestDoneAfterLeaseExpiredIsReported(t *testing.T) {
	_, rdb := startRedis(t)
	site := makeSites(t, 1, 0)[0]
	cfg := redisfrontier.DefaultConfig("stall")
	cfg.Site = redisfrontier.Limits{MaxDepth: 5, InFlight: 4}
	cfg.Lease = 300 * time.Millisecond
	a := newWorker(t, rdb, cfg)
	b := newWorker(t, rdb, cfg)
	ctx := shortCtx(t, 20*time.Second)
	a.f.Add(ctx, site.URL()+"/", 0, "")
	it, err := a.f.Next(ctx)
	require.NoError(t, err)
	// A stalls: its renewals stop (Close), as when a process freezes.
	require.NoError(t, a.f.Close())
	it2, err := b.f.Next(ctx) // waits for the lease, then gets the same item
	require.NoError(t, err)
	assert.Equal(t, it.URL, it2.URL)
	assert.ErrorIs(t, a.f.Done(it, nil), redisfrontier.ErrLeaseLost)
	require.NoError(t, b.f.Done(it2, nil))
	st, err := b.f.FleetStats(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, st.Rehanded)
	assert.Equal(t, 1, st.Done)
}
