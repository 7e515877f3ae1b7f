package testsite

import (
	"context"
	"net"
	"sync"
	"time"
)

// connKey is the request-context key of the connection a request came on.
type connKey struct{}

func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// arrivalOf returns when the first bytes of r's request reached the
// server's kernel, or the zero time where that is not known.
func arrivalOf(r interface{ Context() context.Context }) time.Time {
	if c, ok := r.Context().Value(connKey{}).(interface{ arrival() time.Time }); ok {
		return c.arrival()
	}
	return time.Time{}
}

// stampConn remembers when the current request's first bytes arrived:
// the kernel's receive time of the first read after the server last
// wrote (HTTP/1.1 clients send a request only after the previous
// response, so those bytes start a request).
type stampConn struct {
	net.Conn
	mu      sync.Mutex
	fresh   bool // the next read with data starts a request
	arrived time.Time
}

func (c *stampConn) arrival() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.arrived
}

// read records a read of some bytes the kernel received at stamp (zero:
// unknown).
func (c *stampConn) read(stamp time.Time) {
	c.mu.Lock()
	if c.fresh {
		c.arrived, c.fresh = stamp, false
	}
	c.mu.Unlock()
}

func (c *stampConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.fresh = true
	c.mu.Unlock()
	return c.Conn.Write(p)
}
