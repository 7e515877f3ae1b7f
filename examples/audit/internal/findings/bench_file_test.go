package findings

import (
	"os"
	"sort"
	"testing"

	"github.com/politecrawl/polite/examples/audit/internal/store"
)

// BenchmarkPassesFile runs the whole analysis (Run) on the latest crawl of the database AUDIT_PASSES_DB,
// e.g. the one a real crawl left (`KEEP=dir bench/scale.sh 100000`: dir/scale.db). The passes replace
// their own findings and scores, so the file may be measured again. It logs each pass's time.
//
//	AUDIT_PASSES_DB=/tmp/scale.db go test -run '^$' -bench PassesFile -benchtime 1x ./examples/audit/internal/findings/
func BenchmarkPassesFile(b *testing.B) {
	path := os.Getenv("AUDIT_PASSES_DB")
	if path == "" {
		b.Skip("AUDIT_PASSES_DB names no database")
	}
	st, err := store.OpenStore(b.Context(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	row, err := store.LoadCrawl(b.Context(), st.Reader(), 0)
	if err != nil {
		b.Fatal(err)
	}
	st.CrawlID = row.ID
	var sum Summary
	var peak uint64
	for b.Loop() {
		peak = max(peak, peakHeap(func() {
			if sum, err = Run(b.Context(), st, Extra{}); err != nil {
				b.Fatal(err)
			}
		}))
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	names := make([]string, 0, len(sum.Took))
	for name := range sum.Took {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return sum.Took[names[i]] > sum.Took[names[j]] })
	for _, name := range names {
		b.Logf("%-24s %s", name, sum.Took[name])
	}
}
