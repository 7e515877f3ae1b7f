package frontier_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/internal/testsite"
)

// The slowdown is run-wide, not per host: once a 429 from one host trips
// it, starts on every host are 3 s apart and one request is in flight in
// the whole run.
func TestSlowdownIsRunWideAcrossHosts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := testsite.NewNetwork(t, testsite.InMemory)
		a := net.Add("a.test")
		a.Route("/*", testsite.Response{Delay: 5 * time.Second, Body: "a"})
		a.Route("/a0", testsite.Response{Delay: 100 * time.Millisecond, Status: http.StatusTooManyRequests})
		b := net.Add("b.test")
		b.Route("/*", testsite.Response{Delay: 100 * time.Millisecond, Body: "b"})
		sd := &backoff.Slowdown{}
		cfg := frontier.DefaultConfig()
		cfg.Gap = 0
		cfg.Slowdown = sd
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		addPages(t, f, a.URL(), 5, "a")
		addPages(t, f, b.URL(), 5, "b")

		crawl(t, f, net.Transport(), 4, func(it frontier.Item, resp *http.Response) {
			if resp.StatusCode == http.StatusTooManyRequests {
				sd.Trip(it.URL, time.Now())
			}
		})

		ev, tripped := sd.Tripped()
		require.True(t, tripped)
		reqs := net.Requests()
		require.Len(t, reqs, 10)
		require.Equal(t, 4, net.MaxInFlight(), "before the trip four were in flight")
		var prev *testsite.Request
		hosts := map[string]bool{}
		for i := range reqs {
			r := &reqs[i]
			// A start at the trip's very instant counts as before it: the
			// 429's slot is released just before the latch is tripped.
			if !r.Time.After(ev.At) {
				prev = r // the last start before the trip
				continue
			}
			hosts[r.Site] = true
			assert.GreaterOrEqual(t, r.Time.Sub(prev.Time), 3*time.Second, "start of %s%s after %s%s", r.Site, r.Path, prev.Site, prev.Path)
			for j, q := range reqs {
				if j != i && !q.Time.After(r.Time) && q.End.After(r.Time) {
					t.Errorf("%s%s started while %s%s was in flight", r.Site, r.Path, q.Site, q.Path)
				}
			}
			prev = r
		}
		assert.Len(t, hosts, 2, "both hosts were crawled after the trip")
	})
}

// The documented consequence of the slowdown for the retry that tripped
// it: "Retry-After: 1" on a 429 means a retry 3 s later, the slowdown's
// gap, not 1 s.
func TestRetryAfterA429WaitsTheSlowdownGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := testsite.NewNetwork(t, testsite.InMemory)
		site := net.Add("shop.test")
		site.Robots("")
		site.Route("/p", testsite.Response{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}},
			testsite.Response{Body: "ok"})
		client := &fetch.Client{UserAgent: "CrawlCove-Crawler", Transport: net.Transport()}
		cfg := frontier.DefaultConfig()
		cfg.Client = client
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		require.Equal(t, frontier.Queued, f.Add(t.Context(), site.URL()+"/p", 0, "").Outcome)
		it, err := f.Next(t.Context())
		require.NoError(t, err)
		res, err := client.Get(t.Context(), it.URL)
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, res.Status)
		require.Len(t, res.Attempts, 2)
		assert.Equal(t, time.Second, res.Attempts[1].Wait, "the wait Retry-After asked for")
		reqs := site.Requests()
		require.Len(t, reqs, 3)
		assert.Equal(t, 3*time.Second, reqs[2].Time.Sub(reqs[1].Time), "the retry started 3 s after the 429")
		assert.Equal(t, 2*time.Second, res.GateWait, "1 s of Retry-After, then 2 s more at the gate")
	})
}
