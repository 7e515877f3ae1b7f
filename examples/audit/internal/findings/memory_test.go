package findings

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// passBytesPerPage is the heap the passes may hold per page: the neardup index (about 140 B a page:
// ids and fingerprints) and the link score graph (4 B a link, 32 B a page) at linksPerPage links,
// with room for the garbage collector's lag. Everything else streams from the database.
const (
	linksPerPage     = 10
	passBytesPerPage = 2 * (140 + 32 + 4*linksPerPage)
)

// peakHeap runs fn and returns the highest heap in use while it ran, above the heap before it, sampled
// every 200 µs (runtime/metrics: heap object bytes), with the garbage collector kept tight so the heap
// follows what is live.
func peakHeap(fn func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	base := read()
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			peak = max(peak, read())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	fn()
	close(done)
	wg.Wait()
	peak = max(peak, read())
	if peak < base {
		return 0
	}
	return peak - base
}

// The whole analysis holds no more per page than the documented arrays of neardup and linkscore: the
// peak heap at 8,000 pages exceeds that at 2,000 by less than passBytesPerPage for each page more. (The
// in-memory analysis it replaced held every page and link row: several KB a page.)
func TestRunMemoryFlatInPages(t *testing.T) {
	if testing.Short() {
		t.Skip("generates two crawls")
	}
	if raceEnabled {
		t.Skip("a heap measure, with SQLite many times slower under -race: run it without (go test -run TestRunMemoryFlatInPages ./examples/audit/internal/findings; .ci/run does)")
	}
	peaks := map[int]uint64{}
	for _, n := range []int{2_000, 8_000} {
		st := newCrawl(t)
		genShop(t, st, n, linksPerPage)
		var sum Summary
		peaks[n] = peakHeap(func() {
			var err error
			sum, err = Run(t.Context(), st, Extra{})
			require.NoError(t, err)
		})
		require.Positive(t, sum.Counts[KindTitleDuplicate], "the generated shop has duplicate groups")
		require.Positive(t, sum.Counts[KindNearDuplicate])
	}
	growth := float64(peaks[8_000]) - float64(peaks[2_000])
	perPage := growth / 6_000
	t.Logf("peak heap: %d B at 2,000 pages, %d B at 8,000: %.0f B a page more (budget %d)", peaks[2_000], peaks[8_000], perPage, passBytesPerPage)
	assert.Less(t, perPage, float64(passBytesPerPage), "the passes' heap grows with the pages beyond neardup's and linkscore's arrays")
}
