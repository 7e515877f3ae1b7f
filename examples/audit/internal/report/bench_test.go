package report

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchSizes are the pages of the generated crawls: 10,000, or AUDIT_BENCH_PAGES (comma-separated), e.g.
// AUDIT_BENCH_PAGES=100000 for the figures of the README (generating two such crawls takes minutes).
func benchSizes(b *testing.B) []int {
	env := os.Getenv("AUDIT_BENCH_PAGES")
	if env == "" {
		return []int{10_000}
	}
	var out []int
	for _, f := range strings.Split(env, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 100 {
			b.Fatalf("AUDIT_BENCH_PAGES=%q: want page counts of 100 and more", env)
		}
		out = append(out, n)
	}
	return out
}

// cpuTime is the process's user plus system CPU time: on a shared machine the wall time (ns/op) is what
// the load leaves over, the CPU time is the work.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkGenerated measures the HTML report, the CSV and JSON exports and compare on two generated
// crawls of n pages each (60 links a page, findings of every kind; see genCrawl), the second with a
// twentieth of its pages new, as many gone and a tenth retitled. It reports CPU time per run, the peak
// heap of one run and the report's size.
//
//	go test -run '^$' -bench BenchmarkGenerated -benchtime 3x ./examples/audit/internal/report
//	AUDIT_BENCH_PAGES=100000 go test -run '^$' -bench BenchmarkGenerated -benchtime 1x -timeout 60m ./examples/audit/internal/report
func BenchmarkGenerated(b *testing.B) {
	for _, n := range benchSizes(b) {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "gen.db")
			t0 := time.Now()
			newGenDB(b, path, "")
			a := genCrawl(b, path, genSite{N: n})
			c := genCrawl(b, path, genSite{First: n / 20, N: n, Retitled: true})
			b.Logf("generated 2 × %d pages in %s: %.0f MB", n, time.Since(t0).Round(time.Second), float64(fileSize(b, path))/1e6)
			ctx := context.Background()
			db := openGen(b, path)
			run := func(name string, fn func(w io.Writer) error, size bool) {
				b.Run(name, func(b *testing.B) {
					var out string
					if size {
						out = filepath.Join(b.TempDir(), "out")
					}
					write := func() {
						if out == "" {
							if err := fn(io.Discard); err != nil {
								b.Fatal(err)
							}
							return
						}
						if err := WriteAtomic(out, fn); err != nil {
							b.Fatal(err)
						}
					}
					peak := peakHeap(write)
					c0, runs := cpuTime(), 0
					b.ResetTimer()
					for b.Loop() {
						write()
						runs++
					}
					b.StopTimer()
					b.ReportMetric(float64((cpuTime()-c0).Milliseconds())/float64(runs), "cpu-ms/op")
					b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
					if out != "" {
						b.ReportMetric(float64(fileSize(b, out))/1e6, "MB")
					}
				})
			}
			run("report", func(w io.Writer) error {
				d, err := LoadReport(ctx, db, c, NeedAll)
				if err != nil {
					return err
				}
				return WriteHTML(w, d, genNow)
			}, true)
			run("compare", func(w io.Writer) error {
				da, err := LoadReport(ctx, db, a, NeedCrawl)
				if err != nil {
					return err
				}
				dc, err := LoadReport(ctx, db, c, NeedCrawl)
				if err != nil {
					return err
				}
				cmp, err := CompareCrawls(ctx, db, da.Crawl, dc.Crawl)
				if err != nil {
					return err
				}
				cmp.PrintText(w)
				return cmp.WriteHTML(w, genNow)
			}, false)
			run("json", func(w io.Writer) error {
				d, err := LoadReport(ctx, db, c, NeedSummary)
				if err != nil {
					return err
				}
				return WriteJSON(ctx, w, db, d)
			}, false)
			run("csv", func(w io.Writer) error {
				for _, t := range []string{"pages", "links", "findings"} {
					if err := WriteCSV(ctx, w, db, c, t); err != nil {
						return err
					}
				}
				return nil
			}, false)
		})
	}
}

// TestGenerateDB writes generated crawls into the database AUDIT_GEN_DB (which must not exist) for
// measuring the built binary and the passes on it (findings' BenchmarkPassesFile): AUDIT_GEN_PAGES pages
// (default 100,000) in one crawl, or two with AUDIT_GEN_CRAWLS=2 (the second as BenchmarkGenerated's).
// Skipped without AUDIT_GEN_DB.
//
//	AUDIT_GEN_DB=/tmp/gen.db AUDIT_GEN_PAGES=1000000 go test -run TestGenerateDB -timeout 60m ./examples/audit/internal/report
func TestGenerateDB(t *testing.T) {
	path := os.Getenv("AUDIT_GEN_DB")
	if path == "" {
		t.Skip("AUDIT_GEN_DB names no database to write")
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatalf("AUDIT_GEN_DB=%s exists", path)
	}
	n := 100_000
	if env := os.Getenv("AUDIT_GEN_PAGES"); env != "" {
		var err error
		if n, err = strconv.Atoi(env); err != nil || n < 100 {
			t.Fatalf("AUDIT_GEN_PAGES=%q: want a page count of 100 and more", env)
		}
	}
	t0 := time.Now()
	newGenDB(t, path, "")
	genCrawl(t, path, genSite{N: n})
	if os.Getenv("AUDIT_GEN_CRAWLS") == "2" {
		genCrawl(t, path, genSite{First: n / 20, N: n, Retitled: true})
	}
	t.Logf("generated %d pages a crawl in %s: %.0f MB", n, time.Since(t0).Round(time.Second), float64(fileSize(t, path))/1e6)
}
