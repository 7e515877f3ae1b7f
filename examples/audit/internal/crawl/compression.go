package crawl

import (
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
)

// gzipTransport asks for gzip itself and decodes it, so that the response keeps the Content-Encoding
// the server sent: net/http's transparent gzip (used when a request names no Accept-Encoding) drops
// the header once it has decoded the body, which would make every compressed page look uncompressed
// to the html_not_compressed check. The request is the one net/http would send (Accept-Encoding: gzip);
// a decoded response has Uncompressed set, its Content-Length removed and Content-Encoding kept as
// received. The body cap applies to the decoded bytes, as before.
type gzipTransport struct{ rt http.RoundTripper }

func (t gzipTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Accept-Encoding") != "" || req.Header.Get("Range") != "" || req.Method == http.MethodHead {
		return t.rt.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.Header.Set("Accept-Encoding", "gzip")
	resp, err := t.rt.RoundTrip(r)
	if err != nil || resp == nil {
		return resp, err
	}
	if strings.EqualFold(strings.TrimSpace(resp.Header.Get("Content-Encoding")), "gzip") && resp.Body != nil && resp.Body != http.NoBody {
		resp.Body = &gzipBody{body: resp.Body}
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
		resp.Uncompressed = true
	}
	return resp, nil
}

// gzipBody decodes a gzip response body, reading its header on the first Read (as net/http does),
// so an error in it is a read error of the body, not of the round trip. Its decoder comes from
// gzipReaders and goes back there on Close: a new one costs about 45 KB (the window and tables).
type gzipBody struct {
	body io.ReadCloser
	zr   *gzip.Reader
	err  error
}

var gzipReaders sync.Pool // of *gzip.Reader, each Reset to the next body

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if g.zr == nil {
		if zr, ok := gzipReaders.Get().(*gzip.Reader); ok {
			if g.err = zr.Reset(g.body); g.err == nil {
				g.zr = zr
			} else {
				gzipReaders.Put(zr)
			}
		} else {
			g.zr, g.err = gzip.NewReader(g.body)
		}
		if g.err != nil {
			return 0, g.err
		}
	}
	return g.zr.Read(p)
}

func (g *gzipBody) Close() error {
	if g.zr != nil {
		gzipReaders.Put(g.zr)
		g.zr = nil
	}
	if g.err == nil {
		g.err = errBodyClosed // a Read after Close must not reach a decoder another body now uses
	}
	return g.body.Close()
}

var errBodyClosed = errors.New("read of a closed response body")
