package redisfrontier

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier/redisfrontier/redistest"
)

// BenchmarkIdleVisit: the cost an idle worker pays visiting every shard
// before it sleeps, at 16, 64 and 256 shards: one scan of Next that finds
// nothing to hand out anywhere (the crawl's only item is out with another
// worker). The time per op is the visit's wall time on loopback; it
// reports round trips and Redis script time per visit.
func BenchmarkIdleVisit(b *testing.B) {
	for _, shards := range []int{16, 64, 256} {
		b.Run(fmt.Sprintf("shards=%d", shards), func(b *testing.B) {
			srv := redistest.Start(b, redistest.Options{})
			rdb := srv.Client()
			ctx := context.Background()
			cfg := DefaultConfig("idle")
			cfg.Shards = shards
			cfg.Site = Limits{MaxDepth: 1, InFlight: 1}
			busy, err := New(ctx, rdb, cfg)
			require.NoError(b, err)
			defer busy.Close()
			busy.Add(ctx, "https://only.example/", 0, "")
			_, err = busy.Next(ctx) // held: the crawl is neither complete nor has work
			require.NoError(b, err)
			idle, err := New(ctx, rdb, cfg)
			require.NoError(b, err)
			defer idle.Close()
			us := func() int64 {
				info, err := redistest.Info(ctx, rdb, "commandstats")
				require.NoError(b, err)
				_, rest, _ := strings.Cut(info["cmdstat_evalsha"], "usec=")
				n, _ := strconv.ParseInt(strings.Split(rest, ",")[0], 10, 64)
				return n
			}
			us0, rt0 := us(), idle.RoundTrips()
			for b.Loop() {
				_, _, err := idle.nextScan(ctx)
				require.ErrorIs(b, err, errWait)
			}
			b.ReportMetric(float64(idle.RoundTrips()-rt0)/float64(b.N), "roundtrips/visit")
			b.ReportMetric(float64(us()-us0)/float64(b.N), "redis-µs/visit")
		})
	}
}
