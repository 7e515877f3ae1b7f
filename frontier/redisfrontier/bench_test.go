package redisfrontier_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier/redisfrontier"
	"github.com/politecrawl/polite/frontier/redisfrontier/redistest"
	"github.com/politecrawl/polite/internal/testsite"
)

// commandCalls sums the server's command counts (scripts' inner commands
// included) from INFO commandstats.
func commandCalls(b *testing.B, ctx context.Context, rdb redisUniversal) (ops, scriptUS int64) {
	info, err := redistest.Info(ctx, rdb, "commandstats")
	require.NoError(b, err)
	for k, v := range info {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		calls, rest, _ := strings.Cut(strings.TrimPrefix(v, "calls="), ",")
		n, _ := strconv.ParseInt(calls, 10, 64)
		switch name {
		case "evalsha", "eval":
			usec, _, _ := strings.Cut(strings.TrimPrefix(rest, "usec="), ",")
			us, _ := strconv.ParseInt(usec, 10, 64)
			scriptUS += us
		case "info", "ping", "client|setinfo", "config|get", "subscribe", "hello":
			continue
		}
		ops += n
	}
	return ops, scriptUS
}

// BenchmarkCrawlPage crawls a 20-site fleet (13 pages each, robots.txt
// disallowing one link, a link to the next site) with one worker of 4
// goroutines and reports Redis round trips, operations (commands run,
// those inside scripts included) and server time in scripts per page, and
// how many requests per page missed their start window (admitted again or
// recorded late, each one more round trip). Sites have no gap, or 20 ms.
func BenchmarkCrawlPage(b *testing.B) {
	for _, gap := range []time.Duration{0, 20 * time.Millisecond, 300 * time.Millisecond} {
		b.Run("gap="+gap.String(), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				_, rdb := startRedis(b)
				sites := makeSites(b, 20, 0)
				cfg := redisfrontier.DefaultConfig("bench")
				cfg.Site = redisfrontier.Limits{MaxDepth: 5, InFlight: 4, Gap: gap}
				w := newWorker(b, rdb, cfg)
				ctx := context.Background()
				for _, s := range startURLs(sites) {
					w.f.Add(ctx, s, 0, "")
				}
				ops0, us0 := commandCalls(b, ctx, rdb)
				rt0 := w.f.RoundTrips()
				// Count the wake-ups: 'n' ones send Next's waiters back to
				// Redis, the others only Acquire's and lock waiters.
				ps := rdb.Subscribe(ctx, "polite:bench:wake")
				_, err := ps.Receive(ctx)
				require.NoError(b, err)
				var wakeN, wakeOther atomic.Int64
				counted := make(chan struct{})
				go func() {
					defer close(counted)
					for m := range ps.Channel() {
						if m.Payload == "n" {
							wakeN.Add(1)
						} else {
							wakeOther.Add(1)
						}
					}
				}()
				b.StartTimer()
				var n int
				var mu sync.Mutex
				require.NoError(b, w.crawl(ctx, 4, func(fetched) { mu.Lock(); n++; mu.Unlock() }))
				b.StopTimer()
				ops1, us1 := commandCalls(b, ctx, rdb)
				st, err := w.f.FleetStats(ctx)
				require.NoError(b, err)
				b.ReportMetric(float64(us1-us0)/float64(n), "redis-µs/page")
				b.ReportMetric(float64(w.f.RoundTrips()-rt0)/float64(n), "roundtrips/page")
				b.ReportMetric(float64(ops1-ops0)/float64(n), "redis-ops/page")
				b.ReportMetric(float64(st.Readmitted+st.LateStarts)/float64(n), "late/page")
				b.ReportMetric(float64(n), "pages")
				time.Sleep(20 * time.Millisecond) // the last messages
				ps.Close()
				<-counted
				b.ReportMetric(float64(wakeN.Load())/float64(n), "next-wakeups/page")
				b.ReportMetric(float64(wakeOther.Load())/float64(n), "other-wakeups/page")
				b.StartTimer()
			}
		})
	}
}

// BenchmarkThroughput: 20 loopback sites answering in 50 ms, gap 0, per
// site 4 in flight; pages/s with 1, 2 and 4 workers (each its own
// Frontier, client and robots cache, 4 goroutines), all on one Redis.
func BenchmarkThroughput(b *testing.B) {
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				_, rdb := startRedis(b)
				sites := manyPageSites(b, 20, 30, 50*time.Millisecond)
				cfg := redisfrontier.DefaultConfig("tp")
				cfg.Site = redisfrontier.Limits{MaxDepth: 5, InFlight: 4}
				var ws []*worker
				for range workers {
					ws = append(ws, newWorker(b, rdb, cfg))
				}
				ctx := context.Background()
				for _, s := range sites {
					ws[0].f.Add(ctx, s.URL()+"/", 0, "")
				}
				b.StartTimer()
				start := time.Now()
				var n int
				var mu sync.Mutex
				var wg sync.WaitGroup
				for _, w := range ws {
					wg.Go(func() {
						require.NoError(b, w.crawl(ctx, 4, func(fetched) { mu.Lock(); n++; mu.Unlock() }))
					})
				}
				wg.Wait()
				b.StopTimer()
				b.ReportMetric(float64(n)/time.Since(start).Seconds(), "pages/s")
				b.StartTimer()
			}
		})
	}
}

// manyPageSites starts n sites whose home page links pages leaf pages.
func manyPageSites(b *testing.B, n, pages int, delay time.Duration) []*testsite.Site {
	var sites []*testsite.Site
	for range n {
		s := testsite.New(b)
		var links strings.Builder
		for i := range pages {
			fmt.Fprintf(&links, `<a href="/p%d">%d</a>`, i, i)
		}
		s.Route("/robots.txt", testsite.Response{Delay: delay, Body: "User-agent: *\nAllow: /\n"})
		s.Route("/", testsite.Response{Delay: delay, ContentType: "text/html", Body: links.String()})
		s.Route("/p*", testsite.Response{Delay: delay, ContentType: "text/html", Body: "leaf"})
		sites = append(sites, s)
	}
	return sites
}

// BenchmarkMemory adds 1,000,000 URLs (1,000 sites of 1,000 URLs, no
// page limit) in batches and reports Redis memory per seen URL (the seen
// sets' MEMORY USAGE) and per queued URL (the queues'), and used_memory
// growth per URL overall.
func BenchmarkMemory(b *testing.B) {
	const sitesN, perSite = 1000, 1000
	for b.Loop() {
		b.StopTimer()
		_, rdb := startRedis(b)
		ctx := context.Background()
		f, err := redisfrontier.New(ctx, rdb, redisfrontier.Config{Crawl: "mem", Site: redisfrontier.Limits{MaxDepth: 5, InFlight: 4}})
		require.NoError(b, err)
		defer f.Close()
		before, err := redistest.Info(ctx, rdb, "memory")
		require.NoError(b, err)
		b.StartTimer()
		for s := range sitesN {
			host := fmt.Sprintf("https://site%04d.example", s)
			f.Add(ctx, host+"/", 0, "")
			var links []string
			for i := 1; i < perSite; i++ {
				links = append(links, fmt.Sprintf("%s/section-%d/article-%06d.html", host, i%17, i))
			}
			for _, r := range f.AddAll(ctx, links, 1, host+"/") {
				if r.Err != nil {
					b.Fatal(r.Err)
				}
			}
		}
		b.StopTimer()
		after, err := redistest.Info(ctx, rdb, "memory")
		require.NoError(b, err)
		var seen, queued int64
		for _, pattern := range []string{"polite:{mem}:s:*", "polite:{mem}:q:*"} {
			iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
			for iter.Next(ctx) {
				n, err := rdb.MemoryUsage(ctx, iter.Val()).Result()
				require.NoError(b, err)
				if strings.Contains(pattern, ":s:") {
					seen += n
				} else {
					queued += n
				}
			}
			require.NoError(b, iter.Err())
		}
		st, err := f.FleetStats(ctx)
		require.NoError(b, err)
		require.Equal(b, sitesN*perSite, st.Queued)
		used := atoi64(after["used_memory"]) - atoi64(before["used_memory"])
		b.ReportMetric(float64(seen)/float64(st.Queued), "B/seen-URL")
		b.ReportMetric(float64(queued)/float64(st.Queued), "B/queued-URL")
		b.ReportMetric(float64(used)/float64(st.Queued), "B/URL-total")
		b.StartTimer()
	}
}

func atoi64(s string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return n
}

// BenchmarkAddAll adds the links of one page per op (new URLs, one site), reporting URLs added per second and the server's time per URL.
func BenchmarkAddAll(b *testing.B) {
	for _, n := range []int{10, 100, 999} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchAddAll(b, n) })
	}
}

func benchAddAll(b *testing.B, per int) {
	_, rdb := startRedis(b)
	ctx := context.Background()
	f, err := redisfrontier.New(ctx, rdb, redisfrontier.Config{Crawl: "addall", Site: redisfrontier.Limits{MaxDepth: 5, InFlight: 4}})
	require.NoError(b, err)
	defer f.Close()
	f.Add(ctx, "https://site.example/", 0, "")
	page := 0
	for b.Loop() {
		b.StopTimer()
		links := make([]string, per)
		for i := range links {
			links[i] = fmt.Sprintf("https://site.example/section-%d/article-%06d-%d.html", i%17, i, page)
		}
		page++
		b.StartTimer()
		f.AddAll(ctx, links, 1, "https://site.example/")
	}
	b.ReportMetric(float64(b.N*per)/b.Elapsed().Seconds(), "URLs/s")
	info, err := redistest.Info(ctx, rdb, "commandstats")
	require.NoError(b, err)
	b.Logf("evalsha: %s", info["cmdstat_evalsha"])
	var buckets, biggest int64
	iter := rdb.Scan(ctx, 0, "polite:{addall}:s:*", 1000).Iterator()
	for iter.Next(ctx) {
		buckets++
		biggest = max(biggest, rdb.SCard(ctx, iter.Val()).Val())
	}
	b.Logf("%d seen buckets, the largest holds %d", buckets, biggest)
}
