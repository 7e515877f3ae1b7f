package fetch_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
)

// chunkedSite answers /n/SIZE with SIZE bytes (a pattern of the size, so two bodies differ) written in
// 1 KiB writes with no Content-Length: the body arrives chunked and its length is unknown until the end,
// as from most dynamic sites.
func chunkedSite(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var size int
		if _, err := fmt.Sscanf(r.URL.Path, "/n/%d", &size); err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		body := chunkedBody(size)
		for len(body) > 0 {
			k := min(len(body), 1024)
			_, _ = w.Write(body[:k])
			body = body[k:]
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// chunkedBody is the body of /n/size: a window of a fixed text that starts at an offset of the size, so
// that it costs the server no allocation and two sizes' bodies differ.
func chunkedBody(size int) []byte {
	off := size % 97
	return chunkedText[off : off+size]
}

var chunkedText = func() []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < 3<<20; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte(' ')
	}
	return b.Bytes()
}()

// Bodies of unknown length come back whole and each in its own memory: the scratch buffer they are read
// into is reused by the next response, never handed out.
func TestChunkedBodiesAreWholeAndOwnTheirBytes(t *testing.T) {
	srv := chunkedSite(t)
	c := &fetch.Client{Gate: fetch.NoLimits{}, MaxBodyBytes: 300 << 10}
	ctx := context.Background()
	sizes := []int{0, 1, 1000, 32 << 10, 32<<10 + 1, 100 << 10, 300 << 10, 300<<10 + 1, 2 << 20, 7}
	var kept [][]byte
	for _, n := range sizes {
		res, err := c.Get(ctx, fmt.Sprintf("%s/n/%d", srv.URL, n))
		require.NoError(t, err, n)
		want := chunkedBody(n)[:min(n, 300<<10)]
		assert.Equal(t, want, res.Body, "body of %d bytes", n)
		assert.Equal(t, n > 300<<10, res.Truncated, "body of %d bytes", n)
		kept = append(kept, res.Body)
	}
	for i, n := range sizes { // none was overwritten by a later response
		assert.Equal(t, chunkedBody(n)[:min(n, 300<<10)], kept[i], "body of %d bytes after the others", n)
	}
}

// A body of unknown length costs about its own size in allocations, not a buffer doubled from 4 KiB
// (4+8+...+128 KiB: 2.5 times a 100 KiB page).
func TestChunkedBodyAllocatesItsSize(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations differ under the race detector")
	}
	srv := chunkedSite(t)
	c := &fetch.Client{Gate: fetch.NoLimits{}}
	ctx := context.Background()
	const size = 100 << 10
	u := fmt.Sprintf("%s/n/%d", srv.URL, size)
	get := func() {
		res, err := c.Get(ctx, u)
		require.NoError(t, err)
		require.Len(t, res.Body, size)
	}
	get() // robots.txt cached, connection open
	const runs = 50
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		get()
	}
	runtime.ReadMemStats(&after)
	// The whole process counts (the server's side too): its handler allocates nothing per byte.
	perGet := float64(after.TotalAlloc-before.TotalAlloc) / runs
	t.Logf("%.0f bytes allocated per Get of a %d-byte chunked body", perGet, size)
	assert.Less(t, perGet, 1.5*size)
}

// BenchmarkGetChunkedPage is one GET of a page of scale.sh's size (22.7 KB) sent chunked over loopback.
func BenchmarkGetChunkedPage(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		body := chunkedBody(22700)
		for len(body) > 0 {
			k := min(len(body), 4096)
			_, _ = w.Write(body[:k])
			body = body[k:]
		}
	}))
	defer srv.Close()
	c := &fetch.Client{Gate: fetch.NoLimits{}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.Get(ctx, srv.URL+"/page")
		if err != nil || len(res.Body) != 22700 {
			b.Fatal(err, len(res.Body))
		}
	}
}
