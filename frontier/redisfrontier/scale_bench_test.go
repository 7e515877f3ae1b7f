package redisfrontier_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier/redisfrontier"
	"github.com/politecrawl/polite/frontier/redisfrontier/redistest"
)

// redisCPU returns the CPU seconds (user + sys) a node has used.
func redisCPU(b *testing.B, ctx context.Context, addr string) float64 {
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	info, err := redistest.Info(ctx, c, "cpu")
	require.NoError(b, err)
	u, _ := strconv.ParseFloat(info["used_cpu_user"], 64)
	s, _ := strconv.ParseFloat(info["used_cpu_sys"], 64)
	return u + s
}

// BenchmarkClusterScaling crawls 120 loopback sites of 17 pages that
// answer at once (gap 0, 16 in flight per site) with 6 workers of 4
// fetchers, each worker its own cluster client, on a Redis Cluster of 1,
// 2 and 3 masters in the same run, the crawl split over 12 shards. It
// reports pages/s, the Redis CPU (user + sys, every master) and the
// round trips per page, and the busiest master's share of the CPU. On a
// machine with fewer free cores than masters plus workers, pages/s
// cannot show the scaling; the CPU per page and its spread over the
// masters do.
func BenchmarkClusterScaling(b *testing.B) {
	for _, masters := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("masters=%d", masters), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				c := redistest.StartCluster(b, redistest.ClusterOptions{Masters: masters})
				sites := manyPageSites(b, 120, 16, 0)
				cfg := redisfrontier.DefaultConfig("scale")
				cfg.Shards = 36
				cfg.Site = redisfrontier.Limits{MaxDepth: 5, InFlight: 16}
				var ws []*worker
				for range 6 {
					ws = append(ws, newWorker(b, c.Client(), cfg))
				}
				ctx := context.Background()
				for _, s := range sites {
					ws[0].f.Add(ctx, s.URL()+"/", 0, "")
				}
				cpu0 := make([]float64, masters)
				for i, m := range c.Masters {
					cpu0[i] = redisCPU(b, ctx, m.Addr())
				}
				var rt0 int64
				for _, w := range ws {
					rt0 += w.f.RoundTrips()
				}
				b.StartTimer()
				start := time.Now()
				var n atomic.Int64
				var wg sync.WaitGroup
				for _, w := range ws {
					wg.Go(func() { require.NoError(b, w.crawl(ctx, 4, func(fetched) { n.Add(1) })) })
				}
				wg.Wait()
				el := time.Since(start)
				b.StopTimer()
				var cpu, busiest float64
				for i, m := range c.Masters {
					d := redisCPU(b, ctx, m.Addr()) - cpu0[i]
					cpu += d
					busiest = max(busiest, d)
				}
				var rt int64
				for _, w := range ws {
					rt += w.f.RoundTrips()
				}
				pages := float64(n.Load())
				b.ReportMetric(pages/el.Seconds(), "pages/s")
				b.ReportMetric(cpu/pages*1e6, "redis-cpu-µs/page")
				b.ReportMetric(float64(rt-rt0)/pages, "roundtrips/page")
				b.ReportMetric(busiest/cpu, "busiest-master-share")
				b.StartTimer()
			}
		})
	}
}

// BenchmarkFrontierMemory generates a frontier of 100,000 sites straight
// through the API — AddSite per site, then AddAll of its other URLs (10
// per site: 1,000,000 URLs; POLITE_BENCH_URLS=10000000 for 100 per site)
// — and reports Redis memory per site (used_memory after the sites with
// their start URLs), per URL in all, and per seen and per queued URL
// (MEMORY USAGE of the seen sets and the queues of 2,000 sites sampled).
func BenchmarkFrontierMemory(b *testing.B) {
	const sitesN = 100_000
	urls := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("POLITE_BENCH_URLS")); err == nil && v > 0 {
		urls = v
	}
	per := urls / sitesN
	for b.Loop() {
		b.StopTimer()
		_, rdb := startRedis(b)
		ctx := context.Background()
		f, err := redisfrontier.New(ctx, rdb, redisfrontier.Config{Crawl: "mem", Site: redisfrontier.Limits{MaxDepth: 5, InFlight: 4}})
		require.NoError(b, err)
		mem := func() int64 {
			info, err := redistest.Info(ctx, rdb, "memory")
			require.NoError(b, err)
			return atoi64(info["used_memory"])
		}
		host := func(s int) string { return fmt.Sprintf("https://site%06d.example", s) }
		parallel := func(do func(s int)) {
			var next atomic.Int64
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for s := int(next.Add(1) - 1); s < sitesN; s = int(next.Add(1) - 1) {
						do(s)
					}
				})
			}
			wg.Wait()
		}
		m0 := mem()
		b.StartTimer()
		start := time.Now()
		parallel(func(s int) {
			if r := f.AddSite(ctx, host(s)+"/", redisfrontier.Limits{MaxDepth: 5, InFlight: 4, Gap: 300 * time.Millisecond}); r.Err != nil {
				b.Error(r.Err)
			}
		})
		m1 := mem()
		parallel(func(s int) {
			links := make([]string, 0, per-1)
			for i := 1; i < per; i++ {
				links = append(links, fmt.Sprintf("%s/section-%d/article-%06d.html", host(s), i%17, i))
			}
			for _, r := range f.AddAll(ctx, links, 1, host(s)+"/") {
				if r.Err != nil {
					b.Error(r.Err)
				}
			}
		})
		el := time.Since(start)
		b.StopTimer()
		m2 := mem()
		st, err := f.FleetStats(ctx)
		require.NoError(b, err)
		require.Equal(b, sitesN*per, st.Queued)
		var seen, queued int64
		const sample = 2000
		usage := func(k string) int64 {
			n, err := rdb.MemoryUsage(ctx, k).Result()
			if err == redis.Nil {
				return 0
			}
			require.NoError(b, err)
			return n
		}
		for s := 0; s < sitesN; s += sitesN / sample {
			unit := strings.TrimPrefix(host(s), "https://")
			// Seen buckets are numbered from 0 (linear hashing); queues
			// are per depth, 0 and 1 here.
			for k := 0; k < per/32+8; k++ {
				seen += usage(fmt.Sprintf("polite:{mem}:s:%s:%d", unit, k))
			}
			queued += usage("polite:{mem}:q:" + unit + ":0")
			queued += usage("polite:{mem}:q:" + unit + ":1")
		}
		sampled := float64(sample * per)
		b.ReportMetric(float64(m1-m0)/sitesN, "B/site")
		b.ReportMetric(float64(m2-m0)/float64(st.Queued), "B/URL-total")
		b.ReportMetric(float64(seen)/sampled, "B/seen-URL")
		b.ReportMetric(float64(queued)/sampled, "B/queued-URL")
		b.ReportMetric(float64(st.Queued)/el.Seconds(), "URLs/s")
		f.Close()
		b.StartTimer()
	}
}
