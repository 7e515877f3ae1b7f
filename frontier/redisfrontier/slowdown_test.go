package redisfrontier_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/frontier/redisfrontier"
	"github.com/politecrawl/polite/internal/testsite"
)

// TestSlowdownSharedAcrossWorkers: a 429 answered to worker A slows
// worker B from that moment. On the Redis clock every admission after the
// trip is the slowdown gap plus the start window after the one before; at
// the site's kernel every request admitted after the trip arrives at least
// the slowdown gap (less startTolerance) after the request before it, and
// every request that took its in-flight slot after the trip had the site
// to itself (Slowdown.InFlight 1). B makes several of those requests.
func TestSlowdownSharedAcrossWorkers(t *testing.T) {
	srv, rdb := startRedis(t)
	const sdGap, window = 150 * time.Millisecond, 10 * time.Millisecond
	site := testsite.New(t)
	site.Robots("User-agent: *\nAllow: /\n")
	var links strings.Builder
	for i := range 24 {
		fmt.Fprintf(&links, `<a href="/p%d">%d</a>`, i, i)
	}
	site.HTML("/", links.String())
	var tripped atomic.Int32
	site.Route("/p*", testsite.Response{Handler: func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(50 * time.Millisecond)
		// A's first page gets the 429, early in the crawl.
		if r.Header.Get("X-Worker") == "A" && tripped.CompareAndSwap(0, 1) {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("page"))
	}})
	dir := t.TempDir()
	lim := redisfrontier.Limits{MaxDepth: 2, InFlight: 4}
	var procs []*proc
	for _, name := range []string{"A", "B"} {
		procs = append(procs, startProc(t, workerSpec{
			Redis: srv.URL(), Crawl: "slow", Starts: []string{site.URL() + "/"}, Goroutines: 4,
			Lease: 10 * time.Second, Limits: lim, StartWindow: window, SlowdownGap: sdGap,
			Header: map[string]string{"X-Worker": name},
			Out:    filepath.Join(dir, name+".jsonl"), Admits: filepath.Join(dir, name+".admits"),
		}))
	}
	for _, p := range procs {
		require.NoError(t, p.wait(t, 60*time.Second), "%s", p.stderr)
	}
	require.Equal(t, int32(1), tripped.Load(), "A got its 429")

	cfg := redisfrontier.DefaultConfig("slow")
	cfg.Site, cfg.Slowdown, cfg.StartWindow = lim, &backoff.Slowdown{Gap: sdGap}, window
	w := newWorker(t, rdb, cfg)
	st, err := w.f.FleetStats(t.Context())
	require.NoError(t, err)
	require.True(t, st.Slowdown)
	assert.Contains(t, st.SlowdownURL, site.URL()+"/p")
	trip := st.SlowdownAt.UnixMicro()

	// Gate side: every admission after the trip is sdGap + window after
	// the one before.
	var at []int64
	byURL := map[string][]admit{}
	for _, name := range []string{"A", "B"} {
		for _, a := range readJSONLines[admit](t, filepath.Join(dir, name+".admits")) {
			if a.Msg == "redisfrontier.admit" {
				at = append(at, a.AtUS)
				byURL[a.URL] = append(byURL[a.URL], a)
			}
		}
	}
	slices.Sort(at)
	after := 0
	for k := 1; k < len(at); k++ {
		if at[k] > trip {
			after++
			assert.GreaterOrEqual(t, time.Duration(at[k]-at[k-1])*time.Microsecond, sdGap+window, "admission %d after the trip", k)
		}
	}
	assert.GreaterOrEqual(t, after, 4)

	// Site side, at its kernel. A request's admission is the last one of
	// its URL before it arrived; its slot came with the last admission
	// that was not a re-admission.
	admittedBefore := func(u string, arrived time.Time, slotOnly bool) int64 {
		var best int64
		for _, a := range byURL[u] {
			if a.AtUS <= arrived.UnixMicro() && (!slotOnly || !a.Again) {
				best = max(best, a.AtUS)
			}
		}
		return best
	}
	reqs := site.Requests()
	slices.SortFunc(reqs, func(a, b testsite.Request) int { return a.Arrived.Compare(b.Arrived) })
	arrivals(t, reqs) // kernel times present (or skip)
	bAfter, minGap := 0, time.Hour
	for k, r := range reqs {
		u := site.URL() + r.Path
		if k > 0 && admittedBefore(u, r.Arrived, false) > trip {
			d := r.Arrived.Sub(reqs[k-1].Arrived)
			minGap = min(minGap, d)
			assert.GreaterOrEqual(t, d, sdGap-startTolerance, "%s (%s) arrived %v after %s", r.Path, r.Header.Get("X-Worker"), d, reqs[k-1].Path)
			if r.Header.Get("X-Worker") == "B" {
				bAfter++
			}
		}
		if admittedBefore(u, r.Arrived, true) > trip {
			for j, q := range reqs {
				if j != k && q.Time.Before(r.End) && r.Time.Before(q.End) {
					t.Errorf("%s (%s) overlapped %s (%s) at the site", r.Path, r.Header.Get("X-Worker"), q.Path, q.Header.Get("X-Worker"))
				}
			}
		}
	}
	assert.GreaterOrEqual(t, bAfter, 2, "B made requests after A's 429")
	t.Logf("trip by %s; %d admissions after it; %d of B's requests admitted after it; least arrival gap among those %v",
		st.SlowdownURL, after, bAfter, minGap)
}
