package frontier_test

import (
	"errors"
	"fmt"
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

// loadedServer is a site whose latency rises with its load: each answer
// takes 50 ms plus 100 ms for every request started in the last 2 s,
// until the recoverAfter-th page, from which on it answers in 10 ms
// whatever the load (the server recovered).
type loadedServer struct {
	mu      sync.Mutex
	starts  []time.Time
	latency []time.Duration // per page request, in arrival order
}

func (s *loadedServer) handler(recoverAfter int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		now := time.Now()
		recent := 0
		for _, t := range s.starts {
			if now.Sub(t) < 2*time.Second {
				recent++
			}
		}
		s.starts = append(s.starts, now)
		d := 50*time.Millisecond + time.Duration(recent)*100*time.Millisecond
		if len(s.starts) > recoverAfter {
			d = 10 * time.Millisecond
		}
		s.latency = append(s.latency, d)
		s.mu.Unlock()
		time.Sleep(d)
		_, _ = w.Write([]byte("page"))
	}
}

const (
	loadPages    = 60
	loadRecovers = 40
	loadGap      = 100 * time.Millisecond
)

func loadCrawl(t *testing.T, adaptive backoff.Adaptive) *loadedServer {
	net := testsite.NewNetwork(t, testsite.InMemory)
	site := net.Add("busy.test")
	site.Robots("")
	srv := &loadedServer{}
	site.Route("/p*", testsite.Response{Handler: srv.handler(loadRecovers)})
	client := &fetch.Client{UserAgent: "LoadBot", Transport: net.Transport()}
	cfg := frontier.DefaultConfig()
	cfg.MaxPages = 0
	cfg.Gap, cfg.PerHostGap = 0, loadGap
	cfg.Adaptive = adaptive
	cfg.Client = client
	f, err := frontier.New(cfg)
	require.NoError(t, err)
	for i := range loadPages {
		require.Equal(t, frontier.Queued, f.Add(t.Context(), fmt.Sprintf("%s/p%d", site.URL(), i), 0, "").Outcome)
	}
	crawlLoop(t, f, client, 4, nil)
	require.Len(t, srv.starts, loadPages)
	return srv
}

func maxOf(ds []time.Duration) time.Duration {
	m := time.Duration(0)
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

func meanGap(ts []time.Time, from, to int) time.Duration {
	return ts[to].Sub(ts[from]) / time.Duration(to-from)
}

// Adaptive politeness on a server whose latency rises with the load: with
// backoff.DefaultAdaptive the crawler's request rate falls as the latency
// rises, the latency stays at a fraction of what the same crawl without it
// causes, the gap never drops below the configured one, and once the
// server recovers the crawl is back at the configured pace. Every figure
// comes from the server's own records, in synctest's fake time.
func TestAdaptiveBacksOffAsLatencyRises(t *testing.T) {
	var fixed, adaptive *loadedServer
	synctest.Test(t, func(t *testing.T) { fixed = loadCrawl(t, nil) })
	synctest.Test(t, func(t *testing.T) { adaptive = loadCrawl(t, backoff.DefaultAdaptive) })

	loaded := func(s *loadedServer) time.Duration { return maxOf(s.latency[:loadRecovers]) }
	t.Logf("max latency under load: fixed gap %v, adaptive %v", loaded(fixed), loaded(adaptive))
	t.Logf("mean gap: fixed %v; adaptive first 5 %v, loaded 20-40 %v, recovered last 5 %v",
		meanGap(fixed.starts, 0, loadRecovers), meanGap(adaptive.starts, 0, 5),
		meanGap(adaptive.starts, 20, loadRecovers), meanGap(adaptive.starts, loadPages-6, loadPages-1))

	assert.LessOrEqual(t, 2*loaded(adaptive), loaded(fixed), "the adaptive crawl keeps the server's latency at half or less")
	// As the load builds, each answer is slower than the one before, and
	// each gap after it longer: the rate falls as the latency rises.
	for i := 1; i < 5; i++ {
		gapAfter := func(i int) time.Duration { return adaptive.starts[i+1].Sub(adaptive.starts[i]) }
		require.Greater(t, adaptive.latency[i], adaptive.latency[i-1], "the server slows under the load (request %d)", i)
		assert.GreaterOrEqual(t, gapAfter(i), gapAfter(i-1), "the gap grows with the latency (request %d)", i)
	}
	first := adaptive.starts[1].Sub(adaptive.starts[0])
	assert.GreaterOrEqual(t, meanGap(adaptive.starts, 20, loadRecovers), 4*first,
		"under load the rate is a quarter or less of the rate at the start")
	assert.GreaterOrEqual(t, meanGap(adaptive.starts, 20, loadRecovers), 2*meanGap(fixed.starts, 20, loadRecovers),
		"the adaptive crawl asks less often than the fixed one under load")
	for i := 1; i < loadPages; i++ {
		assert.GreaterOrEqual(t, adaptive.starts[i].Sub(adaptive.starts[i-1]), loadGap, "never faster than the configured gap (request %d)", i)
	}
	for i := loadPages - 5; i < loadPages; i++ {
		assert.Equal(t, loadGap, adaptive.starts[i].Sub(adaptive.starts[i-1]), "recovered: back at the configured gap (request %d)", i)
	}
}

// 5xx answers and timeouts lengthen the host's gap (at least 1 s, doubling,
// capped at MaxHostGap), good answers bring it back to the configured gap;
// another host is not touched. Observe is what fetch calls after each response.
func TestAdaptiveErrorsAndRecovery(t *testing.T) {
	cfg := frontier.DefaultConfig()
	cfg.Adaptive = backoff.DefaultAdaptive
	cfg.MaxHostGap = 5 * time.Second
	f, err := frontier.New(cfg)
	require.NoError(t, err)
	for _, u := range []string{"http://a.test/1", "http://b.test/1"} {
		require.Equal(t, frontier.Queued, f.Add(t.Context(), u, 0, "").Outcome)
	}
	a := mustURL(t, "http://a.test/1")
	gap := func(h string) time.Duration { return f.Stats().Hosts[h].Gap }
	f.Observe(a, backoff.Observation{Status: 503, Elapsed: 10 * time.Millisecond})
	assert.Equal(t, time.Second, gap("a.test"))
	f.Observe(a, backoff.Observation{Err: errors.New("timeout"), Elapsed: 15 * time.Second})
	assert.Equal(t, 5*time.Second, gap("a.test"), "capped at MaxHostGap")
	assert.Zero(t, gap("b.test"))
	for range 10 {
		f.Observe(a, backoff.Observation{Status: 200, Elapsed: 10 * time.Millisecond})
	}
	assert.Zero(t, gap("a.test"), "back at the configured gap")
}
