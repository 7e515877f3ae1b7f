package crawl

import (
	"context"
	"io"
	"math"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/benchshop"
	"github.com/politecrawl/polite/examples/audit/internal/store"
)

// heapGrowthMax is the most the crawl's live heap may grow per page: the frontier's known cost (about
// 132 B a queued URL, 13.8 B a seen one), the crawler's sets of URLs done (urlSet) and the writer's
// bounded URL-id cache, with slack for the noise of sampling. Measured: about 170 B a page; with the
// sets of URL strings of before (some 100 B a URL each) 282 B, which fails it, and a crawl that keeps
// anything of a page's size (its links, its record: several KB) fails it by far.
const heapGrowthMax = 240 // bytes per page

// The crawl's memory stays flat in the size of the site: the peak live heap of a crawl of a generated
// 8,000-page shop (60 links and 22.7 KB a page) is at most heapGrowthMax a page above that of a 2,000-page
// one. It compares growth, not time; it is skipped under -race and -short, which make it slow.
//
// A peak is one sample, and on a loaded machine (CI runs the linters beside it) a burst of pages in
// flight can lift either size's peak by a megabyte. So it takes the least peak of each size over up to
// three rounds and stops at the first round that passes: noise only ever adds to a peak, while a crawl
// that kept anything of a page's size would fail every round by far.
func TestCrawlHeapGrowsOnlyByTheFrontier(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("crawls 10,000 pages: run without -race and -short")
	}
	small, large := uint64(math.MaxUint64), uint64(math.MaxUint64)
	var perPage float64
	for round := 1; round <= 3; round++ {
		small = min(small, peakHeapOfCrawl(t, 2000))
		large = min(large, peakHeapOfCrawl(t, 8000))
		perPage = float64(int64(large)-int64(small)) / 6000
		t.Logf("round %d: least peak live heap: %.1f MB at 2,000 pages, %.1f MB at 8,000: %.0f B a page",
			round, float64(small)/1e6, float64(large)/1e6, perPage)
		if perPage < heapGrowthMax {
			break
		}
	}
	assert.Less(t, perPage, float64(heapGrowthMax), "the crawl's memory grows with the site")
}

// peakHeapOfCrawl crawls an n-page benchshop into a fresh database, as the audit does (16 in flight, no
// gap), and returns the highest live heap the runtime reported during the crawl.
func peakHeapOfCrawl(t *testing.T, n int) uint64 {
	srv := httptest.NewServer(benchshop.Handler(n))
	defer srv.Close()
	st, err := store.OpenStore(t.Context(), filepath.Join(t.TempDir(), "heap.db"))
	require.NoError(t, err)
	defer st.Close()
	cfg := &Config{DB: "heap.db", URL: srv.URL + "/", UserAgent: DefaultUserAgent, MaxPages: n, MaxDepth: 100,
		Concurrency: 16, Gap: 0, Timeout: 30 * time.Second, Quiet: true, NoReport: true}
	c, err := NewCrawler(cfg, Env{Now: time.Now, Terminal: func(io.Writer) bool { return false }}, st, io.Discard)
	require.NoError(t, err)

	runtime.GC()
	ctx, stop := context.WithCancel(t.Context())
	var peak uint64
	var wg sync.WaitGroup
	wg.Go(func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}} // live heap as of the last GC
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	res := c.Crawl(t.Context())
	require.NoError(t, st.Flush())
	stop()
	wg.Wait()
	require.NoError(t, res.Err)
	var pages int
	require.NoError(t, st.Reader().QueryRow(`SELECT COUNT(*) FROM pages`).Scan(&pages))
	require.Equal(t, n, pages, "the whole shop crawled")
	return peak
}
