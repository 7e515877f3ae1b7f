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
// worker B from that moment: after the trip the gate admits one request
// at a time with the slowdown gap between starts (Redis clock), and the
// server sees B's requests that far apart, none overlapping.
func TestSlowdownSharedAcrossWorkers(t *testing.T) {
	srv, rdb := startRedis(t)
	const sdGap = 150 * time.Millisecond
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
			Lease: 10 * time.Second, Limits: lim, SlowdownGap: sdGap, Header: map[string]string{"X-Worker": name},
			Out: filepath.Join(dir, name+".jsonl"), Admits: filepath.Join(dir, name+".admits"),
		}))
	}
	for _, p := range procs {
		require.NoError(t, p.wait(t, 60*time.Second), "%s", p.stderr)
	}
	require.Equal(t, int32(1), tripped.Load(), "A got its 429")

	cfg := redisfrontier.DefaultConfig("slow")
	cfg.Site, cfg.Slowdown = lim, &backoff.Slowdown{Gap: sdGap}
	w := newWorker(t, rdb, cfg)
	st, err := w.f.FleetStats(t.Context())
	require.NoError(t, err)
	require.True(t, st.Slowdown)
	assert.Contains(t, st.SlowdownURL, site.URL()+"/p")

	// Gate side: every admission after the trip is sdGap after the one before.
	var at []int64
	for _, name := range []string{"A", "B"} {
		for _, a := range readJSONLines[admit](t, filepath.Join(dir, name+".admits")) {
			at = append(at, a.AtUS)
		}
	}
	slices.Sort(at)
	trip := st.SlowdownAt.UnixMicro()
	after := 0
	for k := 1; k < len(at); k++ {
		if at[k] > trip {
			after++
			assert.GreaterOrEqual(t, time.Duration(at[k]-at[k-1])*time.Microsecond, sdGap, "admission %d after the trip", k)
		}
	}
	assert.GreaterOrEqual(t, after, 4)

	// HTTP server side: after the trip (and after anything admitted
	// before it could still arrive) one request at a time, and no more
	// requests than the slowdown gap allows in that window (the workers'
	// delivery jitter on a loaded machine moves single requests, not the
	// rate; without the shared latch B alone would make dozens).
	reqs := site.Requests()
	from := st.SlowdownAt.Add(150 * time.Millisecond)
	var bAfter []testsite.Request
	var last time.Time
	n := 0
	for i, r := range reqs {
		if !r.Time.After(from) {
			continue
		}
		n++
		last = r.Time
		for j, q := range reqs {
			if j != i && !q.Time.After(r.Time) && q.End.After(r.Time) {
				t.Errorf("%s (%s) started while %s (%s) was in flight", r.Path, r.Header.Get("X-Worker"), q.Path, q.Header.Get("X-Worker"))
			}
		}
		if r.Header.Get("X-Worker") == "B" {
			bAfter = append(bAfter, r)
		}
	}
	assert.LessOrEqual(t, n, int(last.Sub(from)/sdGap)+2, "%d requests in %v after the trip", n, last.Sub(from))
	assert.GreaterOrEqual(t, len(bAfter), 2, "B made requests after A's 429")
	t.Logf("trip by %s; %d admissions after it, %d of B's requests checked server-side", st.SlowdownURL, after, len(bAfter))
}
