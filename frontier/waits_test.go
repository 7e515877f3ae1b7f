package frontier_test

import (
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/internal/testsite"
)

// In the documented loop every wait is accounted for: from before Next to
// the return of Get, the time is exactly Item.Wait + Result.Total, and
// for a page fetched in one request Total is the robots, gate and retry
// waits plus the server's time. Under the slowdown most of the 3 s gap is
// waited in Next (the "gate=0s"), and now shows in Item.Wait.
func TestLoopWaitsAddUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := testsite.NewNetwork(t, testsite.InMemory)
		site := net.Add("shop.test")
		site.Robots("")
		site.Route("/p*", testsite.Response{Delay: 200 * time.Millisecond, Body: "page"})
		site.Route("/p2", testsite.Response{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}}, testsite.Response{Body: "page"})
		client := &fetch.Client{UserAgent: "CrawlCove-Crawler", Transport: net.Transport()}
		cfg := frontier.DefaultConfig()
		cfg.Client = client
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		addPages(t, f, site.URL(), 10, "p")
		var mu sync.Mutex
		var slowInNext int
		crawlLoop(t, f, client, 4, func(it frontier.Item, res *fetch.Result, start time.Time) {
			mu.Lock()
			defer mu.Unlock()
			elapsed := time.Since(start)
			assert.Equal(t, elapsed, it.Wait+res.Total, "%s: Next to Get", it.URL)
			if len(res.Attempts) == 1 {
				assert.Equal(t, res.Total, res.RobotsWait+res.GateWait+res.RetryWait+res.ResponseTime(), "%s: Total", it.URL)
			}
			if it.Wait >= 2*time.Second && res.GateWait == 0 {
				slowInNext++
			}
		})
		assert.Positive(t, slowInNext, "pages that waited the slowdown's gap in Next")
	})
}

// A wait for work (nothing queued yet) is not a politeness wait.
func TestItemWaitLeavesOutWaitingForWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := frontier.DefaultConfig()
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		require.Equal(t, frontier.Queued, f.Add(t.Context(), "http://a.test/1", 0, "").Outcome)
		it, err := f.Next(t.Context())
		require.NoError(t, err)
		assert.Zero(t, it.Wait)
		rel, err := f.Acquire(t.Context(), mustURL(t, it.URL))
		require.NoError(t, err)
		rel()
		go func() {
			time.Sleep(5 * time.Second)
			f.Add(t.Context(), "http://a.test/2", 1, it.URL)
		}()
		it2, err := f.Next(t.Context())
		require.NoError(t, err)
		assert.Zero(t, it2.Wait, "5 s without work, then no gap left to wait")
		require.Equal(t, frontier.Queued, f.Add(t.Context(), "http://a.test/3", 1, it.URL).Outcome)
		rel, err = f.Acquire(t.Context(), mustURL(t, it2.URL))
		require.NoError(t, err)
		rel()
		it3, err := f.Next(t.Context())
		require.NoError(t, err)
		assert.Equal(t, frontier.DefaultGap, it3.Wait, "queued, held back by the 300 ms gap")
	})
}
