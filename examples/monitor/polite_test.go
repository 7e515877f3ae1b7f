package main

import (
	"fmt"
	"io"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/testsite"
)

// TestPerHostPoliteness runs in a synctest bubble over in-memory sites, so
// the gaps the server sees are exact fake time: one request at a time per
// host, at least -gap between two request starts to one host (robots.txt
// included), hosts in parallel.
func TestPerHostPoliteness(t *testing.T) {
	for _, gap := range []time.Duration{time.Second, 2500 * time.Millisecond} {
		t.Run(gap.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := testsite.NewNetwork(t, testsite.InMemory)
				var sites []*testsite.Site
				var urls []string
				// Each page is slower than the gap, so only the one-at-a-time
				// rule keeps two requests to one host from overlapping.
				for _, host := range []string{"a.test", "b.test", "c.test"} {
					s := n.Add(host)
					s.Robots("User-agent: *\nAllow: /\n")
					for i := range 4 {
						p := fmt.Sprintf("/%d", i)
						s.Route(p, testsite.Response{ContentType: "text/html", Body: htmlPage(p, "x"), Delay: gap + 500*time.Millisecond})
						urls = append(urls, "http://"+host+p)
					}
					sites = append(sites, s)
				}
				db := tempDB(t)
				e := env{transport: n.Transport()}
				code, _, errOut := cli(t, e, append([]string{"track", "-db", db}, urls...)...)
				require.Equal(t, exitOK, code, errOut)

				start := time.Now()
				code, out, errOut := cli(t, e, "run", "-db", db, "-gap", gap.String())
				require.Equal(t, exitOK, code, errOut)
				elapsed := time.Since(start)
				assert.Contains(t, out, "run: 12 due, 12 snapshots (0 with errors)")

				for _, s := range sites {
					reqs := s.Requests()
					require.Len(t, reqs, 5, "robots.txt and four pages")
					assert.Equal(t, "/robots.txt", reqs[0].Path)
					assert.Equal(t, 1, s.MaxInFlight(), "one request at a time per host")
					for i := 1; i < len(reqs); i++ {
						assert.GreaterOrEqual(t, reqs[i].Time.Sub(reqs[i-1].Time), gap, "%s %s", s.Host(), reqs[i].Path)
						assert.False(t, reqs[i].Time.Before(reqs[i-1].End), "%s %s overlaps", s.Host(), reqs[i].Path)
					}
				}
				assert.Equal(t, 3, n.MaxInFlight(), "the three hosts in parallel")
				// Per host: robots.txt, a gap, then four slow pages one after
				// the other; the hosts side by side, not one after another.
				assert.Less(t, elapsed, 5*gap+3*time.Second)
			})
		})
	}
}

// TestTimeoutIsRecorded: -timeout bounds a request; a page slower than it is
// a snapshot with an error, and the run goes on.
func TestTimeoutIsRecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		s := n.Add("a.test")
		s.Robots("User-agent: *\nAllow: /\n")
		s.Route("/slow", testsite.Response{ContentType: "text/html", Body: htmlPage("slow", "x"), Delay: time.Minute})
		s.HTML("/fast", htmlPage("fast", "x"))
		db := tempDB(t)
		e := env{transport: n.Transport()}
		code, _, errOut := cli(t, e, "track", "-db", db, "http://a.test/slow", "http://a.test/fast")
		require.Equal(t, exitOK, code, errOut)

		start := time.Now()
		code, out, errOut := cli(t, e, "run", "-db", db, "-timeout", "2s")
		require.Equal(t, exitOK, code, errOut)
		assert.Contains(t, out, "run: 2 due, 2 snapshots (1 with errors)")
		assert.Less(t, time.Since(start), 10*time.Second)

		st := openTestStore(t, db)
		snaps, err := st.Snapshots(t.Context())
		require.NoError(t, err)
		require.Len(t, snaps, 2)
		assert.Equal(t, "http://a.test/fast", snaps[0].PageURL)
		assert.Equal(t, "fast", snaps[0].Title)
		assert.Equal(t, "http://a.test/slow", snaps[1].PageURL)
		assert.Contains(t, snaps[1].Error, "timed out")
		assert.Empty(t, snaps[1].Title)
	})
}

// In one process (serve -watch) the free tool and the scheduler share one
// per-host limit: a check typed while a run is taking snapshots of the same
// host never lands closer than -gap to the run's requests.
func TestFreeToolAndSchedulerShareTheHostGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		s := n.Add("a.test")
		s.Robots("User-agent: *\nAllow: /\n")
		for _, p := range []string{"/1", "/2", "/3", "/tool"} {
			s.Route(p, testsite.Response{ContentType: "text/html", Body: htmlPage(p, "x"), Delay: 100 * time.Millisecond})
		}
		db := tempDB(t)
		e := env{transport: n.Transport()}
		code, _, errOut := cli(t, e, "track", "-db", db, "http://a.test/1", "http://a.test/2", "http://a.test/3")
		require.Equal(t, exitOK, code, errOut)

		st := openTestStore(t, db)
		o := options{db: db, userAgent: defaultUserAgent, timeout: 5 * time.Second, gap: 2 * time.Second, parallel: 4}
		m, err := newMonitor(st, o, e)
		require.NoError(t, err)
		defer m.close()
		tool, err := newFreeTool(m)
		require.NoError(t, err)

		var wg sync.WaitGroup
		wg.Go(func() {
			_, err := m.runner().RunOnce(t.Context(), io.Discard)
			assert.NoError(t, err)
		})
		wg.Go(func() {
			time.Sleep(2500 * time.Millisecond) // mid-run
			c := tool.check(t.Context(), "http://a.test/tool")
			assert.Equal(t, 200, c.Status, c.Error)
		})
		wg.Wait()

		reqs := s.Requests()
		require.GreaterOrEqual(t, len(reqs), 5, "robots.txt, three pages, the checked page")
		assert.Equal(t, 1, s.Count("/tool"))
		for i := 1; i < len(reqs); i++ {
			assert.GreaterOrEqual(t, reqs[i].Time.Sub(reqs[i-1].Time), 2*time.Second, "%s after %s", reqs[i].Path, reqs[i-1].Path)
		}
		assert.Equal(t, 1, s.MaxInFlight())
	})
}
