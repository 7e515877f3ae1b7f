package frontier_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"runtime"
	"testing"
	"time"

	"github.com/politecrawl/polite/frontier"
)

// benchURL returns an 80-byte URL; host i%hosts.
func benchURL(i, hosts int) string {
	u := fmt.Sprintf("https://host-%04d.example.com/catalogue/item-%09d?colour=blue&size=m&x=", i%hosts, i)
	for len(u) < 80 {
		u += "0"
	}
	return u
}

func benchConfig() frontier.Config {
	cfg := frontier.DefaultConfig()
	cfg.MaxPages, cfg.MaxInFlight, cfg.Gap = 0, 16, 0
	return cfg
}

// cycle adds every URL (the first per host at depth 0, the rest at depth 1)
// and takes them all out again with Next and Done.
func cycle(tb testing.TB, f *frontier.Frontier, urls []string, hosts int) {
	ctx := context.Background()
	for i, u := range urls {
		d := 1
		if i < hosts {
			d = 0
		}
		if r := f.Add(ctx, u, d, ""); r.Outcome != frontier.Queued {
			tb.Fatalf("%s: %v %v", u, r.Outcome, r.Err)
		}
	}
	for n := 0; ; n++ {
		it, err := f.Next(ctx)
		if errors.Is(err, frontier.ErrComplete) {
			if n != len(urls) {
				tb.Fatalf("handed out %d of %d", n, len(urls))
			}
			return
		}
		if err != nil {
			tb.Fatal(err)
		}
		f.Done(it, nil)
	}
}

// BenchmarkAddNextDone: 100,000 URLs on 1,000 hosts, no gap, through
// Add, Next and Done; reports URLs/s.
func BenchmarkAddNextDone(b *testing.B) {
	const n, hosts = 100_000, 1_000
	urls := make([]string, n)
	for i := range urls {
		urls[i] = benchURL(i, hosts)
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		f, err := frontier.New(benchConfig())
		if err != nil {
			b.Fatal(err)
		}
		cycle(b, f, urls, hosts)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "URLs/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n)/float64(b.N), "ns/URL")
	// The machine is shared: CPU time says what the frontier costs when
	// wall time is inflated by other processes.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(n)/float64(b.N), "cpu-ns/URL")
}

// BenchmarkAcquireRelease: the gate alone, no gap, 1,000 hosts.
func BenchmarkAcquireRelease(b *testing.B) {
	f, err := frontier.New(benchConfig())
	if err != nil {
		b.Fatal(err)
	}
	hosts := make([]string, 1000)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("host-%04d.example.com", i)
	}
	now := time.Now()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		rel, _ := f.TryAcquireAt(hosts[i%len(hosts)], now)
		if rel == nil {
			b.Fatal("not admitted")
		}
		rel()
		i++
	}
}

// BenchmarkMemory1M reports the heap held per queued URL (80-byte URLs,
// string included) and per done URL, at 1,000,000 URLs on 1,000 hosts.
func BenchmarkMemory1M(b *testing.B) {
	for b.Loop() {
		queued, done := memoryPerURL(b, 1_000_000, 1_000)
		b.ReportMetric(queued, "B/queued-URL")
		b.ReportMetric(done, "B/done-URL")
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// memoryPerURL adds n freshly built 80-byte URLs (so the frontier holds the
// only reference to each string) and measures the heap growth per URL
// while queued, then again once all are handed out and Done.
func memoryPerURL(tb testing.TB, n, hosts int) (queued, done float64) {
	before := heapInUse()
	f, err := frontier.New(benchConfig())
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	for i := range n {
		d := 1
		if i < hosts {
			d = 0
		}
		if r := f.Add(ctx, benchURL(i, hosts), d, ""); r.Outcome != frontier.Queued {
			tb.Fatalf("%v", r.Outcome)
		}
	}
	queued = float64(heapInUse()-before) / float64(n)
	for {
		it, err := f.Next(ctx)
		if errors.Is(err, frontier.ErrComplete) {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		f.Done(it, nil)
	}
	done = float64(heapInUse()-before) / float64(n)
	if st := f.Stats(); st.Done != n {
		tb.Fatalf("done %d of %d", st.Done, n)
	}
	runtime.KeepAlive(f)
	return queued, done
}

// TestMemoryTargets checks the memory targets at 1,000,000 URLs: at most
// 200 bytes per queued 80-byte URL, at most 16 bytes per done URL.
func TestMemoryTargets(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds a million URLs; skipped with -short and -race")
	}
	queued, done := memoryPerURL(t, 1_000_000, 1_000)
	t.Logf("1,000,000 URLs on 1,000 hosts: %.1f B per queued URL, %.1f B per done URL", queued, done)
	if queued > 200 {
		t.Errorf("%.1f bytes per queued URL, want <= 200", queued)
	}
	if done > 16 {
		t.Errorf("%.1f bytes per done URL, want <= 16", done)
	}
}

// BenchmarkLogger measures the hot paths with no Logger and with one whose
// handler is disabled: Add+Next+Done of 10,000 URLs on 100 hosts, and
// Acquire + release.
func BenchmarkLogger(b *testing.B) {
	const n, hosts = 10_000, 100
	urls := make([]string, n)
	for i := range urls {
		urls[i] = benchURL(i, hosts)
	}
	for _, lg := range []struct {
		name string
		l    *slog.Logger
	}{{"nil", nil}, {"disabled", slog.New(slog.DiscardHandler)}} {
		b.Run("op=AddNextDone/log="+lg.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				cfg := benchConfig()
				cfg.Logger = lg.l
				f, err := frontier.New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				cycle(b, f, urls, hosts)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "URLs/s")
		})
		b.Run("op=Acquire/log="+lg.name, func(b *testing.B) {
			cfg := benchConfig()
			cfg.Logger = lg.l
			f, err := frontier.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			u, _ := url.Parse("https://host-0001.example.com/a")
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				rel, err := f.Acquire(ctx, u)
				if err != nil {
					b.Fatal(err)
				}
				rel()
			}
		})
	}
}
