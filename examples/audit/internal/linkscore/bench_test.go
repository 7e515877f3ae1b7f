package linkscore

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time the process has used, user and system: on a shared machine the wall time
// of a benchmark includes waiting for a core, the CPU time does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loop runs body b.N times and reports its CPU time per run as cpu-ms/op.
func loop(b *testing.B, body func()) {
	start := cpuTime()
	for b.Loop() {
		body()
	}
	b.ReportMetric(float64(cpuTime()-start)/1e6/float64(b.N), "cpu-ms/op")
}

// The benchmarks rank a generated site of 60 links a page (randomGraph: 20 menu links, the rest to
// nearby and to random pages, one nofollow), read from a generator, so they measure this package and not a database.
//
//	go test -run '^$' -bench 'pages=100000$' -benchmem ./examples/audit/internal/linkscore/
//
// The 1,000,000-page cases take a minute and 300 MB: -bench 'pages=1000000$' -benchtime 1x.
var sizes = []int{100_000, 1_000_000}

const perPage = 60

// BenchmarkLoad builds the compressed rows from the stream (two readings); B/link is the memory
// the loaded graph holds per counted link, pages included.
func BenchmarkLoad(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			var g *Graph
			loop(b, func() {
				g = New(n)
				if err := g.Load(randomGraph(n, perPage, 1)); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(g.Bytes())/float64(g.Links()), "B/link")
			b.ReportMetric(float64(g.Bytes())/1e6, "MB-graph")
		})
	}
}

// BenchmarkRank is PageRank to the default tolerance over a loaded graph.
func BenchmarkRank(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			g := New(n)
			if err := g.Load(randomGraph(n, perPage, 1)); err != nil {
				b.Fatal(err)
			}
			var r *Ranks
			loop(b, func() {
				var err error
				if r, err = g.Rank(context.Background(), Options{}); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(r.Iterations), "iterations")
			reportHeap(b, n)
			runtime.KeepAlive(g)
			runtime.KeepAlive(r)
		})
	}
}

// BenchmarkRankStream is the same ranking with no graph kept: the links are read again on each
// iteration (here from the generator; from SQLite add the cost of the query per iteration).
func BenchmarkRankStream(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			var r *Ranks
			loop(b, func() {
				var err error
				if r, err = New(n).RankStream(context.Background(), randomGraph(n, perPage, 1), Options{}); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(r.Iterations), "iterations")
			reportHeap(b, n)
			runtime.KeepAlive(r)
		})
	}
}

// reportHeap reports the live heap per page at the end of a benchmark (the graph, if kept, and the
// ranks).
func reportHeap(b *testing.B, n int) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/float64(n), "heap-B/page")
}
