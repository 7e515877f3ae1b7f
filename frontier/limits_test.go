package frontier_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
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

// crawl runs workers that take items with Next, GET them through a
// fetch.Transport gated by f, and call Done, until the crawl is complete.
// onResp, if set, sees every response.
func crawl(t *testing.T, f *frontier.Frontier, tr http.RoundTripper, workers int, onResp func(frontier.Item, *http.Response)) {
	t.Helper()
	client := &http.Client{Transport: &fetch.Transport{Base: tr, Gate: f}}
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for {
				it, err := f.Next(ctx)
				if errors.Is(err, frontier.ErrComplete) {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				resp, err := client.Get(it.URL)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if onResp != nil {
						onResp(it, resp)
					}
				}
				f.Done(it, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func addPages(t *testing.T, f *frontier.Frontier, base string, n int, prefix string) {
	t.Helper()
	for i := range n {
		r := f.Add(t.Context(), fmt.Sprintf("%s/%s%d", base, prefix, i), 0, "")
		require.Equal(t, frontier.Queued, r.Outcome, "%v", r.Err)
	}
}

// starts returns each request's start as an offset from the first one.
func starts(reqs []testsite.Request) []time.Duration {
	var out []time.Duration
	for _, r := range reqs {
		out = append(out, r.Time.Sub(reqs[0].Time))
	}
	return out
}

// TestGapAndInFlightExact: 4 in flight, 300 ms gap, each response taking
// 1.5 s. The server sees starts exactly 300 ms apart in groups of four, the
// fifth waiting for the first to finish: never closer than the gap, never
// more than four at once.
func TestGapAndInFlightExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := testsite.NewNetwork(t, testsite.InMemory)
		site := net.Add("shop.test")
		site.Route("/p*", testsite.Response{Delay: 1500 * time.Millisecond, Body: "page"})
		f, err := frontier.New(frontier.DefaultConfig())
		require.NoError(t, err)
		addPages(t, f, site.URL(), 20, "p")

		crawl(t, f, net.Transport(), 8, nil)

		reqs := net.Requests()
		require.Len(t, reqs, 20)
		var want []time.Duration
		for i := range 20 {
			want = append(want, time.Duration(i/4)*1500*time.Millisecond+time.Duration(i%4)*300*time.Millisecond)
		}
		assert.Equal(t, want, starts(reqs))
		assert.Equal(t, 4, net.MaxInFlight())
		st := f.Stats()
		assert.Equal(t, 20, st.Done)
		assert.Equal(t, 20, st.Requests)
		assert.Zero(t, st.InFlight)
	})
}

// TestGapBoundsFastResponses: with instant responses the gap alone paces
// the crawl: start i is at exactly i x gap.
func TestGapBoundsFastResponses(t *testing.T) {
	for _, gap := range []time.Duration{0, time.Millisecond, 300 * time.Millisecond, 7 * time.Second} {
		t.Run(gap.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				net := testsite.NewNetwork(t, testsite.InMemory)
				site := net.Add("shop.test")
				site.Route("/p*", testsite.Response{Body: "page"})
				cfg := frontier.DefaultConfig()
				cfg.Gap = gap
				f, err := frontier.New(cfg)
				require.NoError(t, err)
				addPages(t, f, site.URL(), 12, "p")
				crawl(t, f, net.Transport(), 4, nil)
				got := starts(net.Requests())
				require.Len(t, got, 12)
				for i, d := range got {
					assert.Equal(t, time.Duration(i)*gap, d, "start %d", i)
				}
			})
		})
	}
}

// TestSlowdownMidRun: a 429 trips the slowdown while four requests are in
// flight; from that moment no request starts while another is in flight and
// starts are at least 3 s apart (exactly 3 s here, responses being faster).
func TestSlowdownMidRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := testsite.NewNetwork(t, testsite.InMemory)
		site := net.Add("shop.test")
		site.Route("/p*", testsite.Response{Delay: time.Second, Body: "page"})
		site.Route("/p6", testsite.Response{Delay: time.Second, Status: http.StatusTooManyRequests})
		sd := &backoff.Slowdown{}
		cfg := frontier.DefaultConfig()
		cfg.Slowdown = sd
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		addPages(t, f, site.URL(), 16, "p")

		crawl(t, f, net.Transport(), 4, func(it frontier.Item, resp *http.Response) {
			if resp.StatusCode == http.StatusTooManyRequests {
				sd.Trip(it.URL, time.Now())
			}
		})

		ev, tripped := sd.Tripped()
		require.True(t, tripped)
		reqs := net.Requests()
		require.Len(t, reqs, 16)
		assert.Equal(t, 4, net.MaxInFlight(), "before the trip four were in flight")
		var after int
		for i, r := range reqs {
			if i > 0 {
				assert.GreaterOrEqual(t, r.Time.Sub(reqs[i-1].Time), 300*time.Millisecond)
			}
			// A start at the trip's very instant counts as before it: the
			// 429's slot is released just before this loop trips the latch.
			if !r.Time.After(ev.At) {
				continue
			}
			after++
			for j, q := range reqs {
				if j != i && !q.Time.After(r.Time) && q.End.After(r.Time) {
					t.Errorf("request %s started at %v while %s (%v..%v) was in flight",
						r.Path, r.Time.Sub(reqs[0].Time), q.Path, q.Time.Sub(reqs[0].Time), q.End.Sub(reqs[0].Time))
				}
			}
			assert.Equal(t, 3*time.Second, r.Time.Sub(reqs[i-1].Time), "start of %s", r.Path)
		}
		assert.Equal(t, 6, after, "p10..p15 ran slowed down")
		assert.True(t, f.Stats().Slowdown)
	})
}

// TestSlowHostNeverBlocksReadyHost: one host answers in a minute, another
// in 100 ms; with one request per host in flight the fast host is crawled
// back to back while the slow one holds its slot.
func TestSlowHostNeverBlocksReadyHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := testsite.NewNetwork(t, testsite.InMemory)
		slow := net.Add("slow.test")
		slow.Route("/*", testsite.Response{Delay: time.Minute, Body: "slow"})
		fast := net.Add("fast.test")
		fast.Route("/*", testsite.Response{Delay: 100 * time.Millisecond, Body: "fast"})
		cfg := frontier.DefaultConfig()
		cfg.Gap = 0
		cfg.PerHostInFlight = 1
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		addPages(t, f, slow.URL(), 3, "s")
		addPages(t, f, fast.URL(), 10, "f")

		crawl(t, f, net.Transport(), 4, nil)

		t0 := net.Requests()[0].Time
		var slowStarts, fastStarts []time.Duration
		for _, r := range net.Requests() {
			if r.Site == "slow.test" {
				slowStarts = append(slowStarts, r.Time.Sub(t0))
			} else {
				fastStarts = append(fastStarts, r.Time.Sub(t0))
			}
		}
		assert.Equal(t, []time.Duration{0, time.Minute, 2 * time.Minute}, slowStarts)
		var want []time.Duration
		for i := range 10 {
			want = append(want, time.Duration(i)*100*time.Millisecond)
		}
		assert.Equal(t, want, fastStarts)
		assert.Equal(t, 1, slow.MaxInFlight())
		assert.Equal(t, 1, fast.MaxInFlight())
	})
}

// TestAcquireCountsEveryRequest: requests that are not pages (robots.txt,
// sitemaps, retries) share the in-flight and gap budget with pages.
func TestAcquireCountsEveryRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := testsite.NewNetwork(t, testsite.InMemory)
		site := net.Add("shop.test")
		site.Route("/*", testsite.Response{Delay: time.Second, Body: "x"})
		cfg := frontier.DefaultConfig()
		cfg.MaxInFlight = 2
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		client := &http.Client{Transport: &fetch.Transport{Base: net.Transport(), Gate: f}}
		var wg sync.WaitGroup
		for _, p := range []string{"/robots.txt", "/sitemap.xml", "/a", "/b", "/c"} {
			wg.Go(func() {
				resp, err := client.Get(site.URL() + p)
				if assert.NoError(t, err) {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		got := starts(net.Requests())
		want := []time.Duration{0, 300 * time.Millisecond, time.Second, 1300 * time.Millisecond, 2 * time.Second}
		assert.Equal(t, want, got)
		assert.Equal(t, 2, net.MaxInFlight())
		assert.Equal(t, 5, f.Stats().Hosts["shop.test"].Requests)
	})
}

// TestGapBoundEfficiency reports how close a gap-bound crawl comes to the
// ideal n x gap (gap 300 ms, one in flight, 1,000 requests).
func TestGapBoundEfficiency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n, gap = 1000, 300 * time.Millisecond
		net := testsite.NewNetwork(t, testsite.InMemory)
		site := net.Add("shop.test")
		site.Route("/p*", testsite.Response{Body: "page"})
		cfg := frontier.DefaultConfig()
		cfg.MaxPages, cfg.MaxInFlight = 0, 1
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		addPages(t, f, site.URL(), n, "p")
		begin := time.Now()
		crawl(t, f, net.Transport(), 4, nil)
		// The n-th request starts at (n-1) x gap; count its gap too.
		total := time.Since(begin) + gap
		ratio := float64(total) / float64(n*gap)
		t.Logf("gap-bound efficiency: %d requests, gap %v: total %v, ideal %v, ratio %.6f", n, gap, total, n*gap, ratio)
		assert.InDelta(t, 1.0, ratio, 0.01)
		assert.Equal(t, n, len(net.Requests()))
	})
}

func TestBreadthFirstWithinHost(t *testing.T) {
	cfg := frontier.DefaultConfig()
	f, err := frontier.New(cfg)
	require.NoError(t, err)
	ctx := context.Background()
	base := "https://shop.example"
	for _, a := range []struct {
		p string
		d int
	}{{"/", 0}, {"/c1", 2}, {"/b1", 1}, {"/d1", 3}, {"/b2", 1}, {"/c2", 2}} {
		require.Equal(t, frontier.Queued, f.Add(ctx, base+a.p, a.d, "").Outcome)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var got []string
	for {
		it, retry, err := f.NextAt(now)
		if errors.Is(err, frontier.ErrComplete) {
			break
		}
		if errors.Is(err, frontier.ErrNotReady) {
			require.False(t, retry.IsZero())
			assert.Equal(t, 300*time.Millisecond, retry.Sub(now), "hand-outs are paced by the gap")
			now = retry
			continue
		}
		require.NoError(t, err)
		got = append(got, strings.TrimPrefix(it.URL, base))
		f.Done(it, nil)
	}
	assert.Equal(t, []string{"/", "/b1", "/b2", "/c1", "/c2", "/d1"}, got)
}

// TestNextPicksHostThatMayStartSoonest: with a per-host gap, a host that
// just started waits while another host is handed out.
func TestNextPicksHostThatMayStartSoonest(t *testing.T) {
	cfg := frontier.DefaultConfig()
	cfg.Gap, cfg.PerHostGap = 0, 10*time.Second
	f, err := frontier.New(cfg)
	require.NoError(t, err)
	ctx := context.Background()
	for _, u := range []string{"https://a.example/", "https://a.example/2", "https://b.example/", "https://b.example/2"} {
		require.Equal(t, frontier.Queued, f.Add(ctx, u, 0, "").Outcome)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	take := func(at time.Time) string {
		t.Helper()
		it, _, err := f.NextAt(at)
		require.NoError(t, err)
		rel, _ := f.TryAcquireAt(it.Host, at)
		require.NotNil(t, rel)
		rel()
		f.Done(it, nil)
		return it.URL
	}
	assert.Equal(t, "https://a.example/", take(now))
	assert.Equal(t, "https://b.example/", take(now))
	_, retry, err := f.NextAt(now.Add(time.Second))
	assert.ErrorIs(t, err, frontier.ErrNotReady)
	assert.Equal(t, now.Add(10*time.Second), retry)
	assert.Equal(t, "https://a.example/2", take(now.Add(10*time.Second)))
	assert.Equal(t, "https://b.example/2", take(now.Add(10*time.Second)))
}

func TestTryAcquireAt(t *testing.T) {
	cfg := frontier.DefaultConfig()
	cfg.MaxInFlight = 2
	f, err := frontier.New(cfg)
	require.NoError(t, err)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r1, _ := f.TryAcquireAt("a.example", t0)
	require.NotNil(t, r1)
	r, retry := f.TryAcquireAt("b.example", t0.Add(299*time.Millisecond))
	assert.Nil(t, r, "gap is run-wide, across hosts")
	assert.Equal(t, t0.Add(300*time.Millisecond), retry)
	r2, _ := f.TryAcquireAt("b.example", t0.Add(300*time.Millisecond))
	require.NotNil(t, r2)
	r, retry = f.TryAcquireAt("c.example", t0.Add(time.Hour))
	assert.Nil(t, r, "two in flight")
	assert.True(t, retry.IsZero(), "only a release helps")
	r1()
	r1() // a second call does nothing
	assert.Equal(t, 1, f.Stats().InFlight)
	r3, _ := f.TryAcquireAt("c.example", t0.Add(time.Hour))
	require.NotNil(t, r3)
	r2()
	r3()
	assert.Equal(t, 0, f.Stats().InFlight)
	assert.Equal(t, 3, f.Stats().Requests)
}

func TestAcquireHonoursContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := frontier.DefaultConfig()
		cfg.MaxInFlight, cfg.Gap = 1, 0
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		u := mustURL(t, "https://shop.example/")
		start := time.Now()
		rel, err := f.Acquire(t.Context(), u)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		_, err = f.Acquire(ctx, u)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		rel()
		_, err = f.Acquire(t.Context(), nil)
		assert.ErrorIs(t, err, frontier.ErrInvalidURL)
		require.Equal(t, frontier.Queued, f.Add(ctx, "https://shop.example/a", 0, "").Outcome)
		require.Equal(t, frontier.Queued, f.Add(ctx, "https://shop.example/b", 0, "").Outcome)
		_, err = f.Next(ctx)
		require.NoError(t, err)
		_, err = f.Next(ctx) // one in flight at most: blocks until ctx ends
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 5*time.Second, time.Since(start))
	})
}

func TestDoneIgnoresUnknownItems(t *testing.T) {
	f, err := frontier.New(frontier.DefaultConfig())
	require.NoError(t, err)
	require.Equal(t, frontier.Queued, f.Add(context.Background(), "https://shop.example/", 0, "").Outcome)
	it, _, err := f.NextAt(time.Now())
	require.NoError(t, err)
	f.Done(frontier.Item{URL: it.URL, Host: it.Host}, nil) // not the handed-out item
	assert.Equal(t, 1, f.Stats().Out)
	f.Done(it, errors.New("boom"))
	f.Done(it, nil)
	st := f.Stats()
	assert.Equal(t, 0, st.Out)
	assert.Equal(t, 1, st.Failed)
	assert.Equal(t, 0, st.Done)
	_, _, err = f.NextAt(time.Now())
	assert.ErrorIs(t, err, frontier.ErrComplete)
}

// TestConcurrentAddNextDone: many goroutines crawl a generated link graph;
// every in-scope URL is handed out exactly once.
func TestConcurrentAddNextDone(t *testing.T) {
	cfg := frontier.DefaultConfig()
	cfg.MaxPages, cfg.MaxInFlight, cfg.Gap, cfg.MaxDepth = 0, 16, 0, 1000
	f, err := frontier.New(cfg)
	require.NoError(t, err)
	ctx := t.Context()
	const pages, hosts = 2000, 5
	page := func(i int) string { return fmt.Sprintf("https://h%d.example/p/%d", i%hosts, i) }
	for h := range hosts {
		require.Equal(t, frontier.Queued, f.Add(ctx, page(h), 0, "").Outcome)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for {
				it, err := f.Next(ctx)
				if errors.Is(err, frontier.ErrComplete) {
					return
				}
				if !assert.NoError(t, err) {
					return
				}
				rel, err := f.Acquire(ctx, mustURL(t, it.URL))
				if !assert.NoError(t, err) {
					return
				}
				var n int
				_, _ = fmt.Sscanf(it.URL[strings.LastIndexByte(it.URL, '/')+1:], "%d", &n)
				for _, c := range []int{2*n + 1, 2*n + 2, n / 2, 3 * n} {
					if c < pages {
						f.Add(ctx, page(c)+"#frag", it.Depth+1, it.URL)
					}
				}
				f.Stats()
				rel()
				mu.Lock()
				seen[it.URL]++
				mu.Unlock()
				f.Done(it, nil)
			}
		})
	}
	wg.Wait()
	assert.Len(t, seen, pages)
	for u, n := range seen {
		if n != 1 {
			t.Errorf("%s handed out %d times", u, n)
		}
	}
	st := f.Stats()
	assert.Equal(t, pages, st.Done)
	assert.Zero(t, st.Queued+st.Out+st.InFlight+st.Adding)
	var perHost []int
	for _, h := range st.Hosts {
		perHost = append(perHost, h.Done)
	}
	slices.Sort(perHost)
	assert.Equal(t, []int{pages / hosts, pages / hosts, pages / hosts, pages / hosts, pages / hosts}, perHost)
}

// TestNextNeverHandsOutMoreThanTheInFlightLimit: items handed out count
// against MaxInFlight across hosts, before any request is made: with three
// allowed, ten hosts of ready work and no Done, Next hands out three, and
// one more per Done.
func TestNextNeverHandsOutMoreThanTheInFlightLimit(t *testing.T) {
	t.Run("NextAt", func(t *testing.T) {
		cfg := frontier.DefaultConfig()
		cfg.MaxInFlight, cfg.Gap = 3, 0
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		for h := range 10 {
			for p := range 2 {
				require.Equal(t, frontier.Queued, f.Add(t.Context(), fmt.Sprintf("https://h%d.example/%d", h, p), 0, "").Outcome)
			}
		}
		now := time.Now()
		var out []frontier.Item
		for {
			it, retry, err := f.NextAt(now)
			if errors.Is(err, frontier.ErrNotReady) {
				assert.True(t, retry.IsZero(), "only a Done can make progress")
				break
			}
			require.NoError(t, err)
			out = append(out, it)
		}
		require.Len(t, out, 3)
		hosts := map[string]bool{}
		for _, it := range out {
			hosts[it.Host] = true
		}
		assert.Len(t, hosts, 3, "three different hosts, all ready")
		f.Done(out[0], nil)
		_, _, err = f.NextAt(now)
		require.NoError(t, err)
		_, _, err = f.NextAt(now)
		assert.ErrorIs(t, err, frontier.ErrNotReady)
		assert.Equal(t, 3, f.Stats().Out)
	})
	t.Run("concurrent Next", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cfg := frontier.DefaultConfig()
			cfg.MaxInFlight, cfg.Gap = 3, 0
			f, err := frontier.New(cfg)
			require.NoError(t, err)
			for h := range 10 {
				for p := range 5 {
					f.Add(t.Context(), fmt.Sprintf("https://h%d.example/%d", h, p), 0, "")
				}
			}
			var mu sync.Mutex
			out, most, total := 0, 0, 0
			var wg sync.WaitGroup
			for range 8 { // more workers than the limit
				wg.Go(func() {
					for {
						it, err := f.Next(t.Context())
						if err != nil {
							return
						}
						mu.Lock()
						out++
						total++
						most = max(most, out)
						mu.Unlock()
						time.Sleep(time.Second) // the work, holding the item
						mu.Lock()
						out--
						mu.Unlock()
						f.Done(it, nil)
					}
				})
			}
			wg.Wait()
			assert.Equal(t, 50, total)
			assert.Equal(t, 3, most, "never more than MaxInFlight items out at once")
		})
	})
}

// The crawl loop of Example ends when its context does, even with URLs
// still queued: Next returns the context's error at once, so the loop
// never spins.
func TestCrawlLoopEndsWhenCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := testsite.NewNetwork(t, testsite.InMemory)
		site := net.Add("shop.test")
		site.Route("/*", testsite.Response{Body: "page"})
		client := &fetch.Client{UserAgent: "CrawlCove-Crawler", Transport: net.Transport()}
		cfg := frontier.DefaultConfig()
		cfg.Client = client
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		addPages(t, f, site.URL(), 100, "p")
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		loops := 0
		for {
			loops++
			it, err := f.Next(ctx)
			if err != nil {
				assert.ErrorIs(t, err, context.DeadlineExceeded)
				break
			}
			_, err = client.Get(ctx, it.URL)
			f.Done(it, err)
		}
		assert.Equal(t, 4, loops, "robots.txt at 0 (by Add), pages at 0.3, 0.6 and 0.9 s, then the deadline")
		assert.Equal(t, 4, site.Total())
		assert.Positive(t, f.Stats().Queued)
	})
}
