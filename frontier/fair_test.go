package frontier_test

import (
	"context"
	"fmt"
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

// admission is when a waiter got through the gate.
type admission struct {
	name string
	at   time.Duration
}

// waitFor starts a goroutine that Acquires rawURL and records its
// admission; it returns once the call is blocked in the gate (so calls
// started one after the other arrive in that order). The slot is held
// until hold has passed, then released.
func waitFor(t *testing.T, wg *sync.WaitGroup, f *frontier.Frontier, ctx context.Context, t0 time.Time,
	mu *sync.Mutex, got *[]admission, name, rawURL string, hold time.Duration) {
	t.Helper()
	before := f.Stats().Waiting
	wg.Go(func() {
		rel, err := f.Acquire(ctx, mustURL(t, rawURL))
		if err != nil {
			mu.Lock()
			*got = append(*got, admission{name + " " + err.Error(), time.Since(t0)})
			mu.Unlock()
			return
		}
		mu.Lock()
		*got = append(*got, admission{name, time.Since(t0)})
		mu.Unlock()
		time.Sleep(hold) // the request's duration, in the bubble's fake time
		rel()
	})
	synctest.Wait()
	require.Equal(t, before+1, f.Stats().Waiting, "%s is blocked in Acquire", name)
}

// TestFairAcquireAdmitsWaitersInArrivalOrder: five calls queue behind a busy
// gate (one in flight, 300 ms gap); they get through in the order they
// came, one gap apart, whatever order the scheduler wakes them in.
func TestFairAcquireAdmitsWaitersInArrivalOrder(t *testing.T) {
	for run := range 5 { // the scheduler's wake-up order differs between runs
		t.Run(fmt.Sprint(run), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := frontier.DefaultConfig()
				cfg.MaxInFlight = 1
				f, err := frontier.New(cfg)
				require.NoError(t, err)
				t0 := time.Now()
				first, err := f.Acquire(t.Context(), mustURL(t, "https://a.example/"))
				require.NoError(t, err)

				var (
					wg  sync.WaitGroup
					mu  sync.Mutex
					got []admission
				)
				names := []string{"w0", "w1", "w2", "w3", "w4"}
				for i, name := range names {
					waitFor(t, &wg, f, t.Context(), t0, &mu, &got, name, fmt.Sprintf("https://h%d.example/", i%3), 0)
				}
				time.Sleep(time.Second)
				first()
				wg.Wait()

				want := []admission{
					{"w0", time.Second},
					{"w1", 1300 * time.Millisecond},
					{"w2", 1600 * time.Millisecond},
					{"w3", 1900 * time.Millisecond},
					{"w4", 2200 * time.Millisecond},
				}
				assert.Equal(t, want, got)
				assert.Zero(t, f.Stats().Waiting)
			})
		})
	}
}

// TestFairBusyHostWaiterDoesNotHoldBackReadyHost: a call waiting for a host
// that is at its per-host limit lets later calls for other hosts through,
// and once its host is free it is first in line again.
func TestFairBusyHostWaiterDoesNotHoldBackReadyHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := frontier.DefaultConfig()
		cfg.MaxInFlight, cfg.PerHostInFlight, cfg.Gap = 2, 1, 100*time.Millisecond
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		ctx := t.Context()
		t0 := time.Now()
		a1, err := f.Acquire(ctx, mustURL(t, "https://a.example/1"))
		require.NoError(t, err)
		time.Sleep(100 * time.Millisecond)
		b1, err := f.Acquire(ctx, mustURL(t, "https://b.example/1"))
		require.NoError(t, err)

		var (
			wg  sync.WaitGroup
			mu  sync.Mutex
			got []admission
		)
		// Both slots are taken. a2 waits for its host (and a slot), c and
		// d only for a slot.
		waitFor(t, &wg, f, ctx, t0, &mu, &got, "a2", "https://a.example/2", time.Hour)
		waitFor(t, &wg, f, ctx, t0, &mu, &got, "c", "https://c.example/", time.Hour)
		waitFor(t, &wg, f, ctx, t0, &mu, &got, "d", "https://d.example/", time.Hour)

		time.Sleep(time.Second)
		b1() // a slot, but a.example is still busy: c, not a2, and not d
		synctest.Wait()
		mu.Lock()
		assert.Equal(t, []admission{{"c", 1100 * time.Millisecond}}, got)
		mu.Unlock()

		time.Sleep(time.Second)
		a1() // a.example is free: a2 came before d
		synctest.Wait()
		mu.Lock()
		assert.Equal(t, []admission{{"c", 1100 * time.Millisecond}, {"a2", 2100 * time.Millisecond}}, got)
		mu.Unlock()
		assert.Equal(t, 1, f.Stats().Waiting, "d waits for a slot")
		// The rest ends when the bubble's fake hour is over.
		wg.Wait()
		assert.Equal(t, "d", got[2].name)
	})
}

// TestFairCancelledWaiterLeavesTheLine: a waiter whose context ends leaves its
// place, and the one behind it is admitted at the next release.
func TestFairCancelledWaiterLeavesTheLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := frontier.DefaultConfig()
		cfg.MaxInFlight, cfg.Gap = 1, 0
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		t0 := time.Now()
		first, err := f.Acquire(t.Context(), mustURL(t, "https://a.example/"))
		require.NoError(t, err)
		var (
			wg  sync.WaitGroup
			mu  sync.Mutex
			got []admission
		)
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		waitFor(t, &wg, f, ctx, t0, &mu, &got, "impatient", "https://b.example/", 0)
		waitFor(t, &wg, f, t.Context(), t0, &mu, &got, "patient", "https://c.example/", 0)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		assert.Equal(t, 1, f.Stats().Waiting)
		first()
		wg.Wait()
		require.Len(t, got, 2)
		assert.Equal(t, time.Second, got[0].at)
		assert.Contains(t, got[0].name, "impatient frontier: waiting to request https://b.example/: context deadline exceeded")
		assert.Equal(t, admission{"patient", 2 * time.Second}, got[1])
		assert.Zero(t, f.Stats().Waiting)
	})
}

// TestFairRetryWaitsItsBackoffPlusAtMostOneGap: a crawl under load (four
// workers, pages starting every 300 ms) where one page answers 503, 502,
// then 504. fetch retries it after 0.5 s and 1 s (backoff.Default); the
// server sees each retry at most one gap later than its backoff, however
// busy the gate is: the retry is first in line, ahead of the pages handed
// out while it waited.
func TestFairRetryWaitsItsBackoffPlusAtMostOneGap(t *testing.T) {
	for _, delay := range []time.Duration{0, 50 * time.Millisecond, 700 * time.Millisecond} {
		t.Run("pages take "+delay.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const gap = 300 * time.Millisecond
				net := testsite.NewNetwork(t, testsite.InMemory)
				site := net.Add("shop.test")
				site.Robots("")
				site.Route("/p*", testsite.Response{Delay: delay, Body: "page"})
				site.Route("/p0", testsite.Response{Status: http.StatusServiceUnavailable},
					testsite.Response{Status: http.StatusBadGateway}, testsite.Response{Status: http.StatusGatewayTimeout})
				cfg := frontier.DefaultConfig()
				f, err := frontier.New(cfg)
				require.NoError(t, err)
				client := &fetch.Client{UserAgent: "CrawlCove-Crawler", Gate: f, Transport: net.Transport()}
				addPages(t, f, site.URL(), 40, "p")

				ctx := t.Context()
				var wg sync.WaitGroup
				for range 4 {
					wg.Go(func() {
						for {
							it, err := f.Next(ctx)
							if err != nil {
								assert.ErrorIs(t, err, frontier.ErrComplete)
								return
							}
							_, err = client.Get(ctx, it.URL)
							f.Done(it, err)
						}
					})
				}
				wg.Wait()

				var p0 []testsite.Request
				reqs := site.Requests()
				for _, r := range reqs {
					if r.Path == "/p0" {
						p0 = append(p0, r)
					}
				}
				require.Len(t, p0, 3, "503, 502, 504: retried twice")
				require.Len(t, reqs, 1+40+2)
				for i, backoff := range []time.Duration{500 * time.Millisecond, time.Second} {
					wait := p0[i+1].Time.Sub(p0[i].End)
					t.Logf("retry %d: wait %v (backoff %v)", i+1, wait, backoff)
					assert.GreaterOrEqual(t, wait, backoff, "retry %d", i+1)
					assert.LessOrEqual(t, wait, backoff+gap, "retry %d waited more than its backoff plus one gap", i+1)
				}
				// The politeness is untouched: no two starts closer than the gap,
				// never more than four in flight.
				for i := 1; i < len(reqs); i++ {
					assert.GreaterOrEqual(t, reqs[i].Time.Sub(reqs[i-1].Time), gap)
				}
				assert.LessOrEqual(t, net.MaxInFlight(), 4)
				assert.Zero(t, f.Stats().Waiting)
			})
		})
	}
}
