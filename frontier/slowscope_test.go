package frontier_test

import (
	"errors"
	"net/http"
	"sync"
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

// crawlLoop runs the package doc's crawl loop with client (wired to f by
// Config.Client) in workers goroutines, calling each for every result.
func crawlLoop(t *testing.T, f *frontier.Frontier, client *fetch.Client, workers int, each func(it frontier.Item, res *fetch.Result, start time.Time)) {
	t.Helper()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				start := time.Now()
				it, err := f.Next(t.Context())
				if errors.Is(err, frontier.ErrComplete) {
					return
				}
				if !assert.NoError(t, err) {
					return
				}
				res, err := client.Get(t.Context(), it.URL)
				if each != nil {
					each(it, res, start)
				}
				f.Done(it, err)
			}
		})
	}
	wg.Wait()
}

// threeHosts serves a.test, b.test and c.test with n pages each; /p1 on
// a.test answers 429 once.
func threeHosts(t *testing.T, n int) (*testsite.Network, []*testsite.Site) {
	net := testsite.NewNetwork(t, testsite.InMemory)
	var sites []*testsite.Site
	for _, h := range []string{"a.test", "b.test", "c.test"} {
		s := net.Add(h)
		s.Robots("")
		s.Route("/p*", testsite.Response{Delay: 100 * time.Millisecond, Body: "page"})
		sites = append(sites, s)
	}
	sites[0].Route("/p1", testsite.Response{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"0"}}}, testsite.Response{Body: "page"})
	return net, sites
}

func slowCrawl(t *testing.T, scope backoff.SlowdownScope) (*frontier.Frontier, []*testsite.Site) {
	net, sites := threeHosts(t, 6)
	client := &fetch.Client{UserAgent: "ThreeHostBot", Transport: net.Transport(), Policy: &backoff.Policy{SlowdownScope: scope}}
	cfg := frontier.DefaultConfig()
	cfg.Gap, cfg.PerHostInFlight, cfg.PerHostGap = 0, 1, 500*time.Millisecond
	cfg.Client = client
	f, err := frontier.New(cfg)
	require.NoError(t, err)
	for _, s := range sites {
		addPages(t, f, s.URL(), 6, "p")
	}
	crawlLoop(t, f, client, 4, nil)
	return f, sites
}

// PerHost: one 429 on a.test slows a.test only (one in flight, 3 s between
// its starts from then on); b.test and c.test keep their 500 ms.
func TestSlowdownPerHostSlowsOnlyThatHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, sites := slowCrawl(t, backoff.PerHost)
		a := sites[0].Requests()
		require.Len(t, a, 8, "robots.txt, six pages, the retry")
		tripAt := -1
		for i, r := range a {
			if r.Path == "/p1" {
				tripAt = i
				break
			}
		}
		require.GreaterOrEqual(t, tripAt, 0)
		for i := tripAt + 1; i < len(a); i++ {
			assert.GreaterOrEqual(t, a[i].Time.Sub(a[i-1].Time), 3*time.Second, "a.test %s after %s", a[i].Path, a[i-1].Path)
		}
		for _, s := range sites[1:] {
			rs := s.Requests()
			require.Len(t, rs, 7)
			for i := 2; i < len(rs); i++ { // robots.txt to the first page is not gated by PerHostGap
				assert.Equal(t, 500*time.Millisecond, rs[i].Time.Sub(rs[i-1].Time), "%s %s after %s", s.Host(), rs[i].Path, rs[i-1].Path)
			}
		}
		st := f.Stats()
		assert.False(t, st.Slowdown, "no run-wide slowdown")
		assert.True(t, st.Hosts["a.test"].Slowdown)
		assert.Equal(t, 3*time.Second, st.Hosts["a.test"].Gap)
		assert.False(t, st.Hosts["b.test"].Slowdown)
		assert.False(t, st.Hosts["c.test"].Slowdown)
	})
}

// PerRun (the default, Crawl Cove's promise): the same 429 slows every
// host: after it, no two request starts anywhere are less than 3 s apart.
func TestSlowdownPerRunSlowsEveryHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, sites := slowCrawl(t, backoff.PerRun)
		var trip time.Time
		for _, r := range sites[0].Requests() {
			if r.Path == "/p1" {
				trip = r.Time
			}
		}
		require.False(t, trip.IsZero())
		var after []time.Time
		hosts := map[string]bool{}
		for _, s := range sites {
			for _, r := range s.Requests() {
				if r.Time.After(trip) {
					after = append(after, r.Time)
					hosts[s.Host()] = true
				}
			}
		}
		assert.Len(t, hosts, 3, "every host had requests after the trip")
		sortTimes(after)
		for i := 1; i < len(after); i++ {
			assert.GreaterOrEqual(t, after[i].Sub(after[i-1]), 3*time.Second, "start %d after the trip", i)
		}
		assert.True(t, f.Stats().Slowdown)
	})
}

func sortTimes(ts []time.Time) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j].Before(ts[j-1]); j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}
