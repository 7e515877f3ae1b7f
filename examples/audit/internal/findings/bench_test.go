package findings

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/store"
)

// BenchmarkPasses runs the passes over a generated crawl in the database (genShop: 60 links a page) of
// 10,000 pages, or of each size of AUDIT_BENCH_PAGES (comma-separated, e.g. 100000,1000000: not in CI): the link score pass (numbering, Load+Rank, writing every page's score), the near-duplicate
// pass (fingerprints streamed, groups written) and the whole analysis. load+rank-ms is the link score's
// Load and Rank from the database; peak-heap-MB the most heap the pass held above what was live before.
//
//	go test -run '^$' -bench 'Passes$' -benchtime 1x -benchmem ./examples/audit/internal/findings/
//	AUDIT_BENCH_PAGES=100000 go test -run '^$' -bench 'Passes$' -benchtime 1x -timeout 60m ./examples/audit/internal/findings/
func BenchmarkPasses(b *testing.B) {
	for _, n := range benchSizes(b) {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			st := newCrawl(b)
			genShop(b, st, n, 60)
			for _, pass := range []struct {
				name string
				run  func(*run) error
			}{
				{"link-score", (*run).linkScore},
				{"near-duplicates", (*run).nearDuplicates},
				{"all", nil},
			} {
				b.Run(pass.name, func(b *testing.B) {
					var sum Summary
					var peak uint64
					for b.Loop() {
						peak = max(peak, peakHeap(func() {
							var err error
							if pass.run == nil {
								sum, err = Run(b.Context(), st, Extra{})
							} else {
								sum = Summary{Counts: map[string]int{}, Examples: map[string]store.FindingRecord{}, Took: map[string]time.Duration{}}
								err = st.ReplaceFindings(b.Context(), func(p *store.Pass) error { return pass.run(&run{p: p, sum: &sum}) })
							}
							if err != nil {
								b.Fatal(err)
							}
						}))
					}
					b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
					b.ReportMetric(float64(peak)/float64(n), "peak-heap-B/page")
					if d, ok := sum.Took["link score: load+rank"]; ok {
						b.ReportMetric(float64(d.Microseconds())/1000, "load+rank-ms")
					}
					if pass.run == nil {
						for _, name := range []string{"prepare", "pages", "documents", "duplicates", "near-duplicates", "link score"} {
							b.Logf("%s: %s", name, sum.Took[name])
						}
					}
				})
			}
		})
	}
}

// benchSizes are the pages of the generated crawls: 10,000, or AUDIT_BENCH_PAGES (comma-separated).
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
