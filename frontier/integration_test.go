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
	"github.com/politecrawl/polite/robots"
)

// checkSlowdown asserts, on what the server saw, that every request
// starting after the trip started with nothing else in flight and at
// least gap after the previous start; it returns how many did.
func checkSlowdown(t *testing.T, reqs []testsite.Request, at time.Time, gap time.Duration) int {
	t.Helper()
	n := 0
	for i, r := range reqs {
		if !r.Time.After(at) {
			continue
		}
		n++
		for j, q := range reqs {
			if j != i && !q.Time.After(r.Time) && q.End.After(r.Time) {
				t.Errorf("%s started at %v while %s was in flight", r.Path, r.Time.Sub(reqs[0].Time), q.Path)
			}
		}
		if i > 0 && r.Time.Sub(reqs[i-1].Time) < gap {
			t.Errorf("%s started %v after the previous request, want >= %v", r.Path, r.Time.Sub(reqs[i-1].Time), gap)
		}
	}
	return n
}

// TestFetchClientSlowdownEndToEnd: real components in a synctest bubble —
// robots.Cache and fetch.Client both behind the frontier's gate. A 429
// makes fetch trip the slowdown and retry; from then on the server sees one
// request at a time, 3 s apart, retries and all.
func TestFetchClientSlowdownEndToEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := testsite.NewNetwork(t, testsite.InMemory)
		site := net.Add("shop.test")
		site.Robots("User-agent: *\nDisallow: /private/\n")
		site.Route("/p*", testsite.Response{Delay: 800 * time.Millisecond, Body: "page"})
		site.Route("/p3",
			testsite.Response{Status: http.StatusTooManyRequests, Delay: 100 * time.Millisecond, Header: http.Header{"Retry-After": {"1"}}},
			testsite.Response{Body: "page"})

		const ua = "CrawlCove-Crawler"
		sd := &backoff.Slowdown{}
		robotsTr := &fetch.Transport{Base: net.Transport(), UserAgent: ua}
		rules := &robots.Cache{Client: &http.Client{Transport: robotsTr}}
		cfg := frontier.DefaultConfig()
		cfg.Robots, cfg.RobotsTokens, cfg.Slowdown = rules, []string{ua}, sd
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		robotsTr.Gate = f
		client := &fetch.Client{UserAgent: ua, Gate: f, Robots: rules, Slowdown: sd, Transport: net.Transport()}

		ctx := t.Context()
		for _, p := range []string{"/p0", "/p1", "/p2", "/p3", "/p4", "/p5", "/p6", "/p7", "/private/a"} {
			f.Add(ctx, site.URL()+p, 0, "")
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for {
					it, err := f.Next(ctx)
					if errors.Is(err, frontier.ErrComplete) {
						return
					}
					if !assert.NoError(t, err) {
						return
					}
					res, err := client.Get(ctx, it.URL)
					if assert.NoError(t, err, it.URL) {
						assert.Equal(t, http.StatusOK, res.Status, it.URL)
					}
					f.Done(it, err)
				}
			})
		}
		wg.Wait()

		ev, tripped := sd.Tripped()
		require.True(t, tripped)
		assert.Equal(t, site.URL()+"/p3", ev.URL)
		reqs := site.Requests()
		assert.Equal(t, 1, site.Count("/robots.txt"))
		assert.Equal(t, 0, site.Count("/private/a"), "disallowed: never requested")
		assert.Equal(t, 2, site.Count("/p3"), "429 retried once")
		require.Len(t, reqs, 1+8+1)
		for i := 1; i < len(reqs); i++ {
			assert.GreaterOrEqual(t, reqs[i].Time.Sub(reqs[i-1].Time), 300*time.Millisecond)
		}
		assert.GreaterOrEqual(t, checkSlowdown(t, reqs, ev.At, 3*time.Second), 4)
		st := f.Stats()
		assert.Equal(t, 10, st.Requests)
		assert.Equal(t, 8, st.Done)
		assert.Equal(t, 1, st.Dropped[frontier.Disallowed])
	})
}
