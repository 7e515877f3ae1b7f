package testsite

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
)

// maxPendingHead bounds what a Wire keeps of one connection's unfinished
// request head, so a client that never ends its head cannot grow memory.
const maxPendingHead = 1 << 20

// Wire is a loopback HTTP/1.1 server that keeps every request head exactly
// as the client sent it. Go's server (so Site too) canonicalises header
// names, so a test that must tell X-AGENT from X-Agent on the wire reads
// Heads instead of the parsed request.
type Wire struct {
	srv   *httptest.Server
	mu    sync.Mutex
	heads []string
}

// NewWire starts a Wire serving h on 127.0.0.1; tb's Cleanup closes it.
func NewWire(tb TB, h http.Handler) *Wire {
	w := &Wire{}
	w.srv = httptest.NewUnstartedServer(h)
	w.srv.Listener = &wireListener{Listener: w.srv.Listener, w: w}
	w.srv.Start()
	tb.Cleanup(w.srv.Close)
	return w
}

// URL is the server's base URL, "http://127.0.0.1:port".
func (w *Wire) URL() string { return w.srv.URL }

// Heads returns the request heads in arrival order, each from the request
// line to the blank line that ends it, byte for byte.
func (w *Wire) Heads() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.heads...)
}

type wireListener struct {
	net.Listener
	w *Wire
}

func (l *wireListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &wireConn{Conn: c, w: l.w}, nil
}

// wireConn tees what the server reads into request heads. Requests here
// are GET and HEAD, so whatever follows a head's blank line is the next
// head.
type wireConn struct {
	net.Conn
	w       *Wire
	mu      sync.Mutex
	pending []byte
}

func (c *wireConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, p[:n]...)
	for {
		i := bytes.Index(c.pending, []byte("\r\n\r\n"))
		if i < 0 {
			break
		}
		head := string(c.pending[:i+4])
		c.pending = c.pending[i+4:]
		c.w.mu.Lock()
		c.w.heads = append(c.w.heads, head)
		c.w.mu.Unlock()
	}
	if len(c.pending) > maxPendingHead {
		c.pending = nil
	}
	return n, err
}
