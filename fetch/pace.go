package fetch

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync/atomic"
	"time"
)

// startPacing is the start check of one request through a [Pacer] gate.
// The gate counts its gap from admission; the site sees the moment the
// request's bytes arrive. So on every connection the transport assigns
// the request (httptrace GotConn: after any dial and TLS handshake, in the
// caller's goroutine, before anything is written on it) the request
// waits for the pacer's gap since the last start, and once it has been
// written (WroteRequest) the pacer learns when it left. The wait is
// politeness: callers count it in GateWait and keep it out of the
// server's timings.
type startPacing struct {
	p      Pacer
	u      *url.URL
	ctx    context.Context
	waited atomic.Int64          // ns
	trace  httptrace.ClientTrace // one allocation with the check
}

// paced returns req with the start check of g when g is a Pacer, and
// the check (to read its wait); for other gates req itself and nil.
func paced(req *http.Request, g Gate, u *url.URL) (*http.Request, *startPacing) {
	p, ok := g.(Pacer)
	if !ok {
		return req, nil
	}
	sp := &startPacing{p: p, u: u, ctx: req.Context()}
	sp.trace.GotConn, sp.trace.WroteRequest = sp.gotConn, sp.wroteRequest
	return req.WithContext(httptrace.WithClientTrace(req.Context(), &sp.trace)), sp
}

func (sp *startPacing) gotConn(info httptrace.GotConnInfo) {
	t0 := time.Now()
	err := sp.p.Start(sp.ctx, sp.u)
	sp.waited.Add(int64(time.Since(t0)))
	if err != nil && !isH2(info.Conn) {
		// The context is done, which alone may lose the race with the
		// connection's writer: nothing may be written too soon.
		_ = info.Conn.Close()
	}
}

func (sp *startPacing) wroteRequest(httptrace.WroteRequestInfo) {
	sp.p.Wrote(sp.u)
}

// wait is the time the request waited at its start check (0 for nil).
func (sp *startPacing) wait() time.Duration {
	if sp == nil {
		return 0
	}
	return time.Duration(sp.waited.Load())
}

// isH2 reports whether c negotiated HTTP/2, whose connection carries
// other requests' frames too.
func isH2(c net.Conn) bool {
	tc, ok := c.(*tls.Conn)
	return ok && tc.ConnectionState().NegotiatedProtocol == "h2"
}
