package redisfrontier

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"time"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/urlnorm"
)

// The start window. The gate admits a request at a moment of the Redis
// server's clock, but the request reaches the site only after the reply
// has come back, the worker's goroutines have run and a connection has
// been found: on a loaded machine tens of milliseconds, more for one
// request than for the next, which would bring two requests closer at the
// site than the gap between their admissions. So a request admitted by
// Acquire must start — its first bytes be written — within StartWindow of
// the moment its worker sent the Redis call that admitted it (a local
// duration: no clock is compared with Redis's), or it is not sent and is
// admitted again (readmit). The gate spaces admissions by gap +
// StartWindow, so two requests leave the fleet at least the gap apart.
//
// The check is made by the transport Config.Client gets (Frontier.Transport):
// on HTTP/1.x inside the connection's Write, with the request's first
// bytes, just before write(2); on HTTP/2 when the connection is assigned
// (its writer holds the connection's write lock, where waiting would
// stall its other streams, and a Write carries frames of many requests).
// What no check can reach — the worker descheduled between the check and
// write(2) — is caught when the write returns: a request that left later
// than its window allowed is recorded as a start at that moment
// (afterWrite), before the gate is likely to admit the next request.

// maxLateStarts bounds how often one request is admitted again in a row
// before it fails with ErrLateStart: with a start window shorter than the
// Redis round trip no admission is ever fresh enough.
const maxLateStarts = 32

// admission is one Acquire's admission, waiting for its request.
type admission struct{ call time.Time } // when the admitting Redis call was sent

// noteAdmission records that a request to key (the URL as sent) was
// admitted by a Redis call sent at call.
func (f *Frontier) noteAdmission(key string, call time.Time) {
	f.admitMu.Lock()
	defer f.admitMu.Unlock()
	f.admits[key] = append(f.admits[key], admission{call})
	if f.admitN++; f.admitN%256 == 0 {
		f.sweepAdmissionsLocked()
	}
}

// takeAdmission returns the freshest admission noted for key that is
// still within the start window, and forgets it; ok is false when there
// is none (it went stale, or no Acquire of this Frontier admitted key).
// Admissions of one URL are interchangeable: each stands for one start.
func (f *Frontier) takeAdmission(key string) (time.Time, bool) {
	f.admitMu.Lock()
	defer f.admitMu.Unlock()
	list := f.admits[key]
	best := -1
	keep := list[:0]
	for _, a := range list {
		if time.Since(a.call) > f.startWin {
			continue // stale: it can start nothing any more
		}
		keep = append(keep, a)
		if best < 0 || a.call.After(keep[best].call) {
			best = len(keep) - 1
		}
	}
	if best < 0 {
		delete(f.admits, key)
		return time.Time{}, false
	}
	call := keep[best].call
	keep = append(keep[:best], keep[best+1:]...)
	if len(keep) == 0 {
		delete(f.admits, key)
	} else {
		f.admits[key] = keep
	}
	return call, true
}

// sweepAdmissions forgets admissions whose request never came (it failed
// before connecting) once they are stale.
func (f *Frontier) sweepAdmissions() {
	f.admitMu.Lock()
	f.sweepAdmissionsLocked()
	f.admitMu.Unlock()
}

func (f *Frontier) sweepAdmissionsLocked() {
	for k, list := range f.admits {
		keep := list[:0]
		for _, a := range list {
			if time.Since(a.call) <= f.startWin {
				keep = append(keep, a)
			}
		}
		if len(keep) == 0 {
			delete(f.admits, k)
		} else {
			f.admits[k] = keep
		}
	}
}

// readmit admits again a request to u that holds its in-flight slot but
// could not start within the start window: it waits for the gaps (not
// for a slot) and returns when the request may start now, with the
// moment the admitting call was sent.
func (f *Frontier) readmit(ctx context.Context, u *url.URL, late time.Duration) (time.Time, error) {
	host, err := urlnorm.HostPort(u.Scheme, u.Host)
	if err != nil {
		return time.Time{}, fmt.Errorf("redisfrontier: admitting %s again: %w", u.Redacted(), err)
	}
	unit := unitOf(host)
	shard := f.shardOf(unit)
	debug := f.log != nil && f.log.Enabled(ctx, slog.LevelDebug)
	if debug {
		f.log.LogAttrs(ctx, slog.LevelDebug, "redisfrontier.readmit", slog.String("url", u.Redacted()),
			slog.String("site", unit), slog.Duration("late", late))
	}
	for tries := 1; ; {
		gen := f.wake.snapshot()
		call := time.Now()
		res, err := f.run(ctx, shard, scriptReadmit, unit, f.defIF, f.defGap)
		if err != nil {
			return time.Time{}, fmt.Errorf("redisfrontier: admitting %s again: %w", u.Redacted(), err)
		}
		if res[0] == "OK" {
			if debug {
				f.log.LogAttrs(ctx, slog.LevelDebug, "redisfrontier.admit", slog.String("url", u.Redacted()),
					slog.String("site", unit), slog.Int64("at_us", toInt(res[1])), slog.Bool("again", true))
			}
			age := time.Since(call)
			if age <= f.startWin {
				return call, nil
			}
			if tries++; tries > maxLateStarts {
				return time.Time{}, fmt.Errorf("%w (%v, %d admissions of %s each %v or more late)",
					ErrLateStart, f.startWin, maxLateStarts, u.Redacted(), f.startWin)
			}
			continue // this admission came back too late itself
		}
		d := time.Duration(toInt(res[1])) * time.Microsecond
		if err := f.wake.wait(ctx, gen, d); err != nil {
			return time.Time{}, fmt.Errorf("redisfrontier: admitting %s again: %w", u.Redacted(), err)
		}
	}
}

// lateStart records in Redis that a request to u started late (see
// afterWrite). A failure is logged: the request has left either way.
func (f *Frontier) lateStart(ctx context.Context, u *url.URL, late time.Duration) {
	host, err := urlnorm.HostPort(u.Scheme, u.Host)
	if err != nil {
		return
	}
	unit := unitOf(host)
	res, err := f.run(ctx, f.shardOf(unit), scriptLate, unit)
	if err != nil {
		f.warn("redisfrontier.unavailable", "op", "late_start", "url", u.Redacted(), "err", err)
		return
	}
	if f.log != nil && f.log.Enabled(ctx, slog.LevelWarn) {
		f.log.LogAttrs(ctx, slog.LevelWarn, "redisfrontier.late_start", slog.String("url", u.Redacted()),
			slog.String("site", unit), slog.Duration("late", late), slog.Int64("at_us", toInt(res[1])))
	}
}

// Transport returns base wrapped so that every request it sends starts
// within Config.StartWindow of its admission by this Frontier's Acquire,
// or is admitted again first (see the package doc). Config.Client gets it
// as its Transport from New; a client wired by hand (Client.Gate = f)
// should use it too, or requests start whenever their worker gets to
// them. A request that no Acquire of this Frontier admitted is admitted
// here, by the gaps alone.
//
// base nil means a new fetch.NewBaseTransport(nil). An *http.Transport is
// copied (Clone) with its dialer wrapped, so that on HTTP/1.x the check is
// made inside the connection's Write, just before the request's bytes go
// to the kernel; on HTTP/2, and on connections from DialTLSContext, when
// the connection is assigned to the request. Any other base is checked
// just before it is handed the request. Close closes the copies' idle
// connections.
func (f *Frontier) Transport(base http.RoundTripper) http.RoundTripper {
	var ht *http.Transport
	switch b := base.(type) {
	case nil:
		ht = fetch.NewBaseTransport(nil)
	case *http.Transport:
		ht = b.Clone()
	default:
		return &startTransport{f: f, base: base}
	}
	dial := ht.DialContext
	//lint:ignore SA1019 honour the deprecated field, as http.Transport does when DialContext is nil
	if d := ht.Dial; dial == nil && d != nil {
		dial = func(_ context.Context, network, addr string) (net.Conn, error) { return d(network, addr) }
	}
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	ht.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &startConn{Conn: c}, nil
	}
	f.admitMu.Lock()
	f.ownBase = append(f.ownBase, ht)
	f.admitMu.Unlock()
	return &startTransport{f: f, base: ht, hooks: true}
}

type startTransport struct {
	f     *Frontier
	base  http.RoundTripper
	hooks bool // base is an *http.Transport dialing startConns
}

func (t *startTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	g := &startGuard{f: t.f, u: req.URL, key: req.URL.String(), ctx: req.Context()}
	if !t.hooks {
		// A base we cannot see into: the last check is now.
		if err := g.check(); err != nil {
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return nil, err
		}
		return t.base.RoundTrip(req)
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	g.ctx, g.cancel = ctx, cancel
	trace := &httptrace.ClientTrace{GotConn: g.gotConn}
	resp, err := t.base.RoundTrip(req.WithContext(httptrace.WithClientTrace(ctx, trace)))
	if gerr := g.failure(); gerr != nil {
		if resp != nil {
			_ = resp.Body.Close()
		}
		cancel(nil)
		return nil, gerr
	}
	if err != nil {
		cancel(nil)
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// startGuard follows one request through the base transport.
type startGuard struct {
	f      *Frontier
	u      *url.URL
	key    string
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	admitted time.Time // when the Redis call that admitted the request was sent
	have     bool      // admitted holds an admission not used yet
	used     bool      // an admission was used for a write, which may have reached the site
	err      error     // the request must not be sent
}

// check makes sure the request holds an admission still within the start
// window: its Acquire's, or a new one. g.mu is held (or g is not shared).
func (g *startGuard) check() error {
	if !g.have {
		g.admitted, g.have = g.f.takeAdmission(g.key)
	}
	if g.have && time.Since(g.admitted) <= g.f.startWin {
		return nil
	}
	late := time.Duration(0)
	if g.have {
		late = time.Since(g.admitted)
	}
	t0 := time.Now()
	call, err := g.f.readmit(g.ctx, g.u, late)
	fetch.ReportGateWait(g.ctx, time.Since(t0)) // politeness, not the server's time
	if err != nil {
		return err
	}
	g.admitted, g.have = call, true
	return nil
}

// gotConn runs in the caller's goroutine once a connection is assigned
// and before anything of the request is written on it — on every attempt:
// the transport may retry on another connection.
func (g *startGuard) gotConn(info httptrace.GotConnInfo) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return
	}
	if g.used {
		// A retry after a write that may have reached the site: this
		// attempt is a start of its own.
		g.have, g.used = false, false
	}
	h2 := isHTTP2(info.Conn)
	c := startConnOf(info.Conn)
	if err := g.check(); err != nil {
		g.stop(err)
		// The cancelled context alone may lose the race with an
		// HTTP/1.x writer: make the write itself fail. (HTTP/2 checks
		// the context before it writes a request's headers.)
		switch {
		case c != nil:
			c.arm(g) // its Write refuses
		case !h2:
			_ = info.Conn.Close()
		}
		return
	}
	if c != nil && !h2 {
		// HTTP/1.x on a connection of ours: the final check comes in its
		// Write, the last moment before the request leaves.
		c.arm(g)
		return
	}
	g.used = true // HTTP/2 or a connection we cannot see into: this check is the last
}

// beforeWrite is the final check, called by the connection's Write with
// the request's first bytes: if the admission has gone stale meanwhile,
// the request waits for a new one here (the connection is the request's
// alone); if that fails, nothing is written.
func (g *startGuard) beforeWrite() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return g.err
	}
	if err := g.check(); err != nil {
		g.stop(err)
		return err
	}
	g.have, g.used = false, true
	return nil
}

// afterWrite runs once the request's first bytes were handed to the
// kernel. Between the final check and that moment the worker may have
// been descheduled (a loaded machine); if the bytes left later than the
// start window allowed, the start is recorded in Redis now, before the
// gate is likely to admit the next request to the site.
func (g *startGuard) afterWrite() {
	g.mu.Lock()
	late := time.Since(g.admitted)
	g.mu.Unlock()
	if late > g.f.startWin {
		// The response may be read and the request's context gone by
		// now: the record must still be made.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(g.ctx), max(g.f.outage, 0)+5*time.Second)
		defer cancel()
		g.f.lateStart(ctx, g.u, late)
	}
}

// stop records why the request must not be sent and cancels it, so the
// transport neither writes nor retries it.
func (g *startGuard) stop(err error) {
	g.err = err
	g.cancel(err)
}

func (g *startGuard) failure() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// startConn is a connection dialed by a Transport of the Frontier. On
// HTTP/1.x a request is written with one Write of the transport's buffer
// (more for a large one); the first Write after the request was assigned
// the connection runs the request's final start check.
type startConn struct {
	net.Conn
	mu    sync.Mutex
	guard *startGuard
}

func (c *startConn) arm(g *startGuard) {
	c.mu.Lock()
	c.guard = g
	c.mu.Unlock()
}

func (c *startConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	g := c.guard
	c.guard = nil
	c.mu.Unlock()
	if g == nil {
		return c.Conn.Write(p)
	}
	if err := g.beforeWrite(); err != nil {
		return 0, err
	}
	n, err := c.Conn.Write(p)
	g.afterWrite()
	return n, err
}

// startConnOf finds the startConn under a connection the transport
// reports (a *tls.Conn over one for HTTPS); nil for connections not
// dialed by a Frontier's Transport.
func startConnOf(c net.Conn) *startConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	sc, _ := c.(*startConn)
	return sc
}

// isHTTP2 reports whether c negotiated HTTP/2, whose connection carries
// many requests' frames: no single Write starts this request.
func isHTTP2(c net.Conn) bool {
	tc, ok := c.(*tls.Conn)
	return ok && tc.ConnectionState().NegotiatedProtocol == "h2"
}

// cancelOnClose ends the request's context when the body is done with.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (b *cancelOnClose) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.cancel(nil)
	}
	return n, err
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
}
