package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
	"github.com/politecrawl/polite/examples/monitor/internal/store"
	"github.com/politecrawl/polite/internal/testsite"
)

// TestRunNowTakesOneSnapshotAndKeepsTheSixHourMinimum: run -now snapshots
// a tracked page at once, is refused (exit 3, with the time it becomes
// allowed) within six hours of the page's last snapshot, and is allowed
// again at six hours even though the next scheduled check is later.
func TestRunNowTakesOneSnapshotAndKeepsTheSixHourMinimum(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nAllow: /\n", "/")
	h.track("-interval", "24h", "http://a.test/")

	code, out, errOut := h.cli("run", "-gap", "0s", "-now", "http://a.test/")
	require.Equal(t, exitOK, code, errOut)
	next := snapshot.When(store.NextDue("http://a.test/", h.clk.Now(), 24*time.Hour))
	assert.Equal(t, "ok      http://a.test/: HTTP 200\nnext scheduled check of http://a.test/ at "+next+"\n", out)
	assert.Equal(t, 1, s.Count("/"))

	h.clk.Advance(6*time.Hour - time.Second)
	code, out, errOut = h.cli("run", "-gap", "0s", "-now", "http://a.test/")
	assert.Equal(t, exitRefused, code)
	assert.Empty(t, out)
	assert.Equal(t, "monitor run: check now of http://a.test/ refused: its last snapshot was taken at 2026-11-29 12:00:00Z, "+
		"and two snapshots of a page are at least 6h apart; allowed from 2026-11-29 18:00:00Z\n", errOut)
	assert.Equal(t, 1, s.Count("/"), "nothing fetched")

	h.clk.Advance(time.Second)
	code, _, errOut = h.cli("run", "-gap", "0s", "-now", "http://a.test/")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, 2, s.Count("/"))
	assert.Len(t, h.snapshots("http://a.test/"), 2)

	code, _, errOut = h.cli("run", "-gap", "0s", "-now", "http://b.test/")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "not tracked: http://b.test/")
	code, _, errOut = h.cli("run", "-gap", "0s", "-now", "notaurl")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "-now: bad URL")
}

// TestRunNowRefusedInTheRobotsRecheckWindow: robots.txt answering 5xx is a
// temporary disallow re-checked after about five minutes (the 2-UAcomBot
// page); run -now inside that window is refused without asking robots.txt
// again, and asks it once the window has passed.
func TestRunNowRefusedInTheRobotsRecheckWindow(t *testing.T) {
	h := newHarness(t)
	s := h.site("down.test", "", "/")
	s.Status("/robots.txt", http.StatusServiceUnavailable)
	h.track("http://down.test/")

	code, _, errOut := h.cli("run", "-gap", "0s", "-now", "http://down.test/")
	assert.Equal(t, exitRefused, code)
	assert.Contains(t, errOut, "refused: robots.txt of its host did not answer; it is asked again after the re-check wait, not before; allowed from 2026-11-29 12:05:00Z")
	robots := s.Count("/robots.txt")
	require.GreaterOrEqual(t, robots, 1)
	assert.Equal(t, 0, s.Count("/"), "the page is never fetched")

	h.clk.Advance(4 * time.Minute)
	code, _, errOut = h.cli("run", "-gap", "0s", "-now", "http://down.test/")
	assert.Equal(t, exitRefused, code)
	assert.Contains(t, errOut, "robots.txt of its host did not answer (robots.txt unreachable (HTTP 503)")
	assert.Contains(t, errOut, "allowed from 2026-11-29 12:05:00Z")
	assert.Equal(t, robots, s.Count("/robots.txt"), "not asked again inside the window")

	h.clk.Advance(time.Minute)
	code, _, _ = h.cli("run", "-gap", "0s", "-now", "http://down.test/")
	assert.Equal(t, exitRefused, code, "still 503")
	assert.Greater(t, s.Count("/robots.txt"), robots, "asked again after the window")
	assert.Equal(t, 0, s.Count("/"))
}

// TestOneHostGateForSchedulerFreeToolAndCheckNow: in one process (serve
// -watch), the scheduler's snapshots, free-tool checks and a check now of
// pages on one host all pass the same per-host gate: one request at a time,
// at least -gap apart, whoever sent it.
func TestOneHostGateForSchedulerFreeToolAndCheckNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		s := n.Add("a.test")
		s.Robots("User-agent: *\nAllow: /\n")
		s.NotFound(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(300 * time.Millisecond) // a slow page: overlaps would show
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, htmlPage(r.URL.Path, "words"))
		})
		db := tempDB(t)
		ctx := context.Background()
		st, err := store.Open(ctx, db, store.CreateIfMissing)
		require.NoError(t, err)
		defer st.Close()
		var urls []string
		for i := range 15 {
			urls = append(urls, fmt.Sprintf("http://a.test/s%d", i))
		}
		require.NoError(t, st.Track(ctx, urls, 6*time.Hour, time.Now()))
		// A page checked seven hours ago, next due tomorrow: only check
		// now takes it.
		require.NoError(t, st.Track(ctx, []string{"http://a.test/now"}, 24*time.Hour, time.Now()))
		require.NoError(t, st.SaveSnapshot(ctx, &snapshot.Snapshot{PageURL: "http://a.test/now", TakenAt: time.Now().Add(-7 * time.Hour), Status: 200}))

		o := options{db: db, userAgent: defaultUserAgent, timeout: 15 * time.Second, gap: time.Second, parallel: 8,
			allowPrivate: true, catchUp: 60, resolve: resolveFlag{}}
		m, err := newMonitor(st, o, env{transport: n.Transport()})
		require.NoError(t, err)
		tool, err := newFreeTool(m)
		require.NoError(t, err)

		wctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { m.runner().Watch(wctx, io.Discard, env{}.sleeper()) })
		var nowLine string
		var nowErr error
		wg.Go(func() {
			time.Sleep(1500 * time.Millisecond)
			_, nowLine, nowErr = m.runner().RunNow(ctx, "http://a.test/now")
		})
		for i := range 4 {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * 700 * time.Millisecond)
				c := tool.check(ctx, fmt.Sprintf("http://a.test/free%d", i))
				assert.Empty(t, c.Error)
			})
		}
		time.Sleep(2 * time.Minute)
		stop()
		wg.Wait()

		require.NoError(t, nowErr)
		assert.Equal(t, "ok      http://a.test/now: HTTP 200", nowLine)
		for _, p := range append(urls, "http://a.test/now", "http://a.test/free0", "http://a.test/free3") {
			path := p[len("http://a.test"):]
			assert.Equal(t, 1, s.Count(path), path)
		}
		assertHostGaps(t, []*testsite.Site{s}, time.Second)
	})
}
