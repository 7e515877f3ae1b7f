package crawl

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The crawl's transport asks for gzip and decodes it itself, so the response keeps the
// Content-Encoding the server sent, which net/http's transparent decoding would drop.
func TestGzipTransportKeepsContentEncoding(t *testing.T) {
	page := bytes.Repeat([]byte("<p>a compressed page</p>"), 100)
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(page)
	zw.Close()
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.Header.Get("Accept-Encoding"))
		switch r.URL.Path {
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(zipped.Bytes())
		case "/broken":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write([]byte("not gzip at all"))
		default:
			w.Write(page)
		}
	}))
	defer srv.Close()
	c := &http.Client{Transport: gzipTransport{http.DefaultTransport}}

	resp, err := c.Get(srv.URL + "/gzip")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, page, body, "decoded")
	assert.Equal(t, "gzip", resp.Header.Get("Content-Encoding"), "as the server sent it")
	assert.True(t, resp.Uncompressed)

	resp, err = c.Get(srv.URL + "/plain")
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, page, body)
	assert.Empty(t, resp.Header.Get("Content-Encoding"))

	resp, err = c.Get(srv.URL + "/broken")
	require.NoError(t, err)
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.ErrorIs(t, err, gzip.ErrHeader, "a broken gzip body is a read error")

	assert.Equal(t, []string{"gzip", "gzip", "gzip"}, asked, "the request net/http would send")

	// Without the wrapper, net/http decodes and drops the header: what the check must not see.
	resp, err = http.Get(srv.URL + "/gzip")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Empty(t, resp.Header.Get("Content-Encoding"))
}

// gzipSite serves /a and /b as two different gzip pages, /broken as a body that is not gzip.
func gzipSite(t *testing.T) (srv *httptest.Server, pages map[string][]byte) {
	pages = map[string][]byte{"/a": bytes.Repeat([]byte("<p>page a</p>"), 800), "/b": bytes.Repeat([]byte("<li>page b, longer</li>"), 900)}
	zipped := map[string][]byte{"/broken": []byte("not gzip at all")}
	for path, page := range pages {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(page)
		zw.Close()
		zipped[path] = z.Bytes()
	}
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(zipped[r.URL.Path])
	}))
	t.Cleanup(srv.Close)
	return srv, pages
}

// The decoders are reused from body to body: each page still decodes to itself, a broken body in between
// changes nothing for the next, and a body read after Close fails instead of reaching a decoder in use.
func TestGzipDecodersReused(t *testing.T) {
	srv, pages := gzipSite(t)
	c := &http.Client{Transport: gzipTransport{http.DefaultTransport}}
	for i := range 12 {
		path := []string{"/a", "/b", "/broken"}[i%3]
		resp, err := c.Get(srv.URL + path)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, resp.Body.Close())
		if path == "/broken" {
			assert.ErrorIs(t, err, gzip.ErrHeader)
			continue
		}
		require.NoError(t, err, path)
		assert.Equal(t, pages[path], body, path)
		_, err = resp.Body.Read(make([]byte, 10))
		assert.ErrorIs(t, err, errBodyClosed, "a read after Close")
	}
}

// A gzip page costs no new decoder (about 45 KB) once one has been used.
func TestGzipBodyAllocatesNoDecoder(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations differ under the race detector")
	}
	srv, _ := gzipSite(t)
	c := &http.Client{Transport: gzipTransport{http.DefaultTransport}}
	get := func() {
		resp, err := c.Get(srv.URL + "/b")
		require.NoError(t, err)
		_, err = io.Copy(io.Discard, resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
	}
	get()
	const runs = 50
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		get()
	}
	runtime.ReadMemStats(&after)
	perGet := float64(after.TotalAlloc-before.TotalAlloc) / runs
	t.Logf("%.0f bytes allocated per gzip GET (client and server)", perGet)
	assert.Less(t, perGet, 30e3)
}
