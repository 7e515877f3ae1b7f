package main

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/monitor/internal/schedule"
	"github.com/politecrawl/polite/internal/testsite"
)

// pacedSites adds hosts serving any path as a small HTML page and returns
// their sites and nPerHost page URLs on each.
func pacedSites(n *testsite.Network, hosts, perHost int) ([]*testsite.Site, []string) {
	var sites []*testsite.Site
	var urls []string
	for h := range hosts {
		host := fmt.Sprintf("h%03d.test", h)
		s := n.Add(host)
		s.Robots("User-agent: *\nAllow: /\n")
		s.NotFound(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, htmlPage(r.URL.Path, "words"))
		})
		for p := range perHost {
			urls = append(urls, fmt.Sprintf("http://%s/p%d", host, p))
		}
		sites = append(sites, s)
	}
	return sites, urls
}

// watchFor runs `watch` (the real scheduler, its real flags and defaults)
// for d of fake time. These tests are about pacing: -allow-private keeps the
// address guard's name lookups out of the bubble (the resolver's
// configuration is process-wide state that one synctest bubble must not
// create for another; the guard has its own tests).
func watchFor(t *testing.T, e env, db string, d time.Duration, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	code, out, errOut := cliCtx(t, ctx, e, append([]string{"watch", "-db", db, "-allow-private"}, args...)...)
	require.Equal(t, exitOK, code, errOut)
	return out
}

// startsPerWindow returns the most request starts (robots.txt left out) in
// any window of length w.
func startsPerWindow(reqs []testsite.Request, w time.Duration) int {
	var ts []time.Time
	for _, r := range reqs {
		if r.Path != "/robots.txt" {
			ts = append(ts, r.Time)
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	most := 0
	for i, j := 0, 0; i < len(ts); i++ {
		for ts[i].Sub(ts[j]) >= w {
			j++
		}
		most = max(most, i-j+1)
	}
	return most
}

// assertHostGaps checks the per-host promise on every site: one request at
// a time, at least gap between two starts.
func assertHostGaps(t *testing.T, sites []*testsite.Site, gap time.Duration) {
	t.Helper()
	for _, s := range sites {
		assert.Equal(t, 1, s.MaxInFlight(), "%s: one request at a time", s.Host())
		reqs := s.Requests()
		for i := 1; i < len(reqs); i++ {
			if d := reqs[i].Time.Sub(reqs[i-1].Time); d < gap {
				t.Errorf("%s: %s then %s only %v apart", s.Host(), reqs[i-1].Path, reqs[i].Path, d)
				return
			}
		}
	}
}

// TestCatchUpAfterDowntimeIsBounded: 1,000 pages, caught up once, then the
// monitor is down for three days. When watch starts again every page is
// overdue; they are checked at most schedule.DefaultCatchUp a minute (after
// a burst of schedule.CatchUpBurst), never all at once, and the per-host
// gap holds throughout.
func TestCatchUpAfterDowntimeIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		sites, urls := pacedSites(n, 40, 25)
		db := tempDB(t)
		e := env{transport: n.Transport()}
		code, _, errOut := cli(t, e, append([]string{"track", "-db", db, "-allow-private"}, urls...)...)
		require.Equal(t, exitOK, code, errOut)
		watchFor(t, e, db, 20*time.Minute)
		first := len(n.Requests())
		require.Equal(t, 1000+40, first, "every page once, robots.txt once per host")

		time.Sleep(72 * time.Hour) // the downtime
		restart := time.Now()
		out := watchFor(t, e, db, 30*time.Minute)
		after := n.Requests()[first:]
		var pages []testsite.Request
		for _, r := range after {
			if r.Path != "/robots.txt" {
				pages = append(pages, r)
			}
		}
		require.Len(t, pages, 1000, "every overdue page caught up within 30 minutes:\n%s", tail(out))
		bound := schedule.CatchUpBurst + schedule.DefaultCatchUp
		assert.LessOrEqual(t, startsPerWindow(after, time.Minute), bound, "at most the burst plus one minute's rate in any minute")
		assert.LessOrEqual(t, startsPerWindow(after, 10*time.Minute), schedule.CatchUpBurst+10*schedule.DefaultCatchUp)
		// Not a burst, and not slower than the bound either: 1,000 pages
		// at 60 a minute take about 16 minutes.
		took := pages[len(pages)-1].Time.Sub(restart)
		t.Logf("after 72 h down: 1,000 pages caught up in %v; most starts in a minute %d, in ten minutes %d",
			took.Round(time.Second), startsPerWindow(after, time.Minute), startsPerWindow(after, 10*time.Minute))
		assert.Greater(t, took, 15*time.Minute)
		assert.Less(t, took, 18*time.Minute)
		assertHostGaps(t, sites, time.Second)
		assert.Contains(t, out, "overdue left for later (catch-up: at most 60 a minute)")
	})
}

func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}

// TestTenThousandTrackedAtOnceAreSpread: 10,000 pages tracked in one
// command are due at once, but their first checks start at the catch-up
// rate, and the checks after them are due spread over hours (the pace they
// were taken at, plus each page's jitter): never more in one minute than
// the bound in the first round, and about as few in the next.
func TestTenThousandTrackedAtOnceAreSpread(t *testing.T) {
	if testing.Short() || raceOn {
		t.Skip("10,000 snapshots (about 100 s): skipped with -short and under -race")
	}
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		sites, urls := pacedSites(n, 100, 100)
		db := tempDB(t)
		e := env{transport: n.Transport()}
		code, _, errOut := cli(t, e, append([]string{"track", "-db", db, "-allow-private"}, urls...)...)
		require.Equal(t, exitOK, code, errOut)
		tracked := time.Now()
		watchFor(t, e, db, 3*time.Hour)
		reqs := n.Requests()
		require.Equal(t, 10000+100, len(reqs))
		bound := schedule.CatchUpBurst + schedule.DefaultCatchUp
		assert.LessOrEqual(t, startsPerWindow(reqs, time.Minute), bound)
		assertHostGaps(t, sites, time.Second)

		st := openTestStore(t, db)
		pages, err := st.Pages(context.Background())
		require.NoError(t, err)
		perMinute := map[int64]int{}
		for _, p := range pages {
			require.False(t, p.NextDue.Before(tracked.Add(6*time.Hour)), "%s due again before six hours", p.URL)
			perMinute[p.NextDue.Unix()/60]++
		}
		most := 0
		for _, c := range perMinute {
			most = max(most, c)
		}
		// Jitter moves pages between neighbouring minutes, so a minute may
		// hold a few more than the rate that took them; never a clump.
		assert.LessOrEqual(t, most, bound*3/2, "the next round is due spread too")
		assert.Greater(t, len(perMinute), 150, "over more than 150 distinct minutes")
		t.Logf("10,000 tracked at once: first checks took %v, most starts in a minute %d; next round due over %d minutes, at most %d in one",
			reqs[len(reqs)-1].Time.Sub(tracked).Round(time.Second), startsPerWindow(reqs, time.Minute), len(perMinute), most)
	})
}
