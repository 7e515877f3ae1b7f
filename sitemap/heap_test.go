package sitemap

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// newPaddedGen generates n entries with image extension elements, so the
// same number of entries makes a much larger document.
func newPaddedGen(n int) *urlsetGen {
	return &urlsetGen{n: n, entry: func(buf []byte, i int) []byte {
		buf = genEntry(buf, i)
		buf = buf[:len(buf)-len("  </url>\n")]
		for k := range 3 {
			buf = append(buf, `    <image:image><image:loc>https://www.example.com/images/a-fairly-long-image-name-`...)
			buf = append(buf, byte('0'+k))
			buf = append(buf, `.jpg</image:loc><image:caption>An image caption that is long enough to matter here</image:caption></image:image>`+"\n"...)
		}
		return append(buf, "  </url>\n"...)
	}}
}

// peakLiveHeap streams src through a Reader, forcing a collection every
// `every` entries and recording the live heap above the baseline taken
// before the Reader existed. The document is generated on the fly, so the
// figure is the Reader's own.
func peakLiveHeap(t *testing.T, src io.Reader, maxEntries, every int) (peak uint64, entries int, bytes int64) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	baseline := ms.HeapAlloc
	r := NewReader(src, "https://www.example.com/sitemap.xml")
	r.MaxEntries = maxEntries
	sample := func() {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc > baseline && ms.HeapAlloc-baseline > peak {
			peak = ms.HeapAlloc - baseline
		}
	}
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		entries++
		if entries%every == 0 {
			sample()
		}
	}
	sample()
	runtime.KeepAlive(r)
	return peak, entries, r.BytesRead()
}

func TestPeakLiveHeap(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("slow, and the race detector changes what is allocated")
	}
	const limit = 4 << 20
	cases := []struct {
		name       string
		src        io.Reader
		maxEntries int
		n          int
	}{
		{"50,000 entries, ~10 MB", newURLSetGen(50000), 0, 50000},
		{"50,000 entries with image extensions, ~40 MB", newPaddedGen(50000), 0, 50000},
		{"10,000 entries, ~2 MB", newURLSetGen(10000), 0, 10000},
		{"50,000 entries gzip-compressed (compressed bytes allocated before the baseline)", bytes.NewReader(gz(t, genURLSet(50000))), 0, 50000},
		{"200,000 entries, ~45 MB, MaxEntries raised", newURLSetGen(200000), 200000, 200000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			peak, n, size := peakLiveHeap(t, tc.src, tc.maxEntries, 250)
			require.Equal(t, tc.n, n)
			t.Logf("%d entries, %.1f MB: peak live heap %.2f MiB", n, float64(size)/1e6, float64(peak)/(1<<20))
			if tc.maxEntries == 0 {
				require.Less(t, peak, uint64(limit))
			}
		})
	}
}
