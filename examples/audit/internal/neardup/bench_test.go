package neardup

import (
	"fmt"
	"runtime"
	"strings"
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

// BenchmarkGroups finds the near-duplicate groups of the generated shop at two sizes; B/page is the
// memory allocated per page by one search, kept-B/page the heap the Index holds per page.
//
//	go test -run '^$' -bench Groups -benchmem ./examples/audit/internal/neardup/
func BenchmarkGroups(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			fps := corpus(n)
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			x := &Index{}
			for p, fp := range fps {
				x.Add(uint32(p), fp)
			}
			runtime.GC()
			runtime.ReadMemStats(&m1)
			kept := float64(m1.HeapAlloc-m0.HeapAlloc) / float64(n)
			b.ResetTimer()
			groups := 0
			cpu := cpuTime()
			for b.Loop() {
				groups = 0
				for range x.Groups() {
					groups++
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu)/1e6/float64(b.N), "cpu-ms/op")
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.TotalAlloc-m1.TotalAlloc)/float64(b.N)/float64(n), "B/page")
			b.ReportMetric(float64(groups), "groups")
			b.ReportMetric(kept, "kept-B/page")
			runtime.KeepAlive(x)
		})
	}
}

// BenchmarkHasher is the cost of fingerprinting one product page of the shop (about 1.5 KB of
// text, 200 words), written in the pieces a tokenizer hands over.
func BenchmarkHasher(b *testing.B) {
	var parts []string
	pageText(7, func(s string) { parts = append(parts, s) })
	b.SetBytes(int64(len(strings.Join(parts, ""))))
	b.ReportAllocs()
	var h Hasher
	cpu := cpuTime()
	for b.Loop() {
		h.Reset()
		for _, s := range parts {
			h.WriteString(s)
		}
		_ = h.Sum()
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkGroupsSynthetic is the search over fingerprints made without text (each value drawn from
// a hash of the page number; every 50th page gets a copy with four values changed, similarity
// 60/64), so a million pages can be measured in seconds:
//
//	go test -run '^$' -bench 'GroupsSynthetic' -benchmem -benchtime 1x ./examples/audit/internal/neardup/
func BenchmarkGroupsSynthetic(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			x := &Index{}
			x.Grow(n)
			var fp Fingerprint
			for p := range n {
				if p%familySize != 1 {
					for i := range fp {
						fp[i] = uint16(mix(uint64(p)<<8 | uint64(i)))
					}
				} else {
					for i := range 4 {
						fp[i*16] ^= 1
					}
				}
				x.Add(uint32(p), fp)
			}
			runtime.GC()
			runtime.ReadMemStats(&m1)
			kept := float64(m1.HeapAlloc-m0.HeapAlloc) / float64(n)
			b.ResetTimer()
			cpu := cpuTime()
			groups := 0
			for b.Loop() {
				groups = 0
				for range x.Groups() {
					groups++
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu)/1e6/float64(b.N), "cpu-ms/op")
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.TotalAlloc-m1.TotalAlloc)/float64(b.N)/float64(n), "B/page")
			b.ReportMetric(kept, "kept-B/page")
			b.ReportMetric(float64(groups), "groups")
			runtime.KeepAlive(x)
		})
	}
}
