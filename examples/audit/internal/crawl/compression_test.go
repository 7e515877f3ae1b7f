package crawl

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
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
