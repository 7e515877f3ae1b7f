// Package condget makes a snapshot a conditional GET, at the bottom of the
// transport stack. fetch.Client sends the same headers on every request, so
// the validators of one page (If-None-Match, If-Modified-Since) travel in the
// request's context and Transport adds them, under fetch's politeness, only
// to the request for the exact URL whose 200 response gave them.
//
// It never decides what a 304 means (the snapshot does) and never stores
// anything; it will give way to the library's conditional GET in fetch.
package condget

import (
	"context"
	"net/http"
	"sync"
)

// Validators are what the page's last 200 response said about itself.
type Validators struct {
	URL          string // the URL that answered 200 (the final URL of its chain)
	ETag         string
	LastModified string
}

// Exchange is filled by Transport for one fetch: whether validators
// were sent with the last request (robots.txt requests of the fetch come
// before the request they clear, so the last one is the final page request).
type Exchange struct {
	mu       sync.Mutex
	sentCond bool
}

// Sent reports whether validators went with the fetch's last request.
func (x *Exchange) Sent() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.sentCond
}

type ctxKey struct{}

type fetchCtx struct {
	cond *Validators
	info *Exchange
}

// With returns a context carrying cond (may be nil) and a fresh
// Exchange that Transport fills.
func With(ctx context.Context, cond *Validators) (context.Context, *Exchange) {
	info := &Exchange{}
	return context.WithValue(ctx, ctxKey{}, &fetchCtx{cond: cond, info: info}), info
}

// Transport adds the validators of a request's context to it; see the
// package doc. Base does the request.
type Transport struct {
	Base http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	fc, _ := req.Context().Value(ctxKey{}).(*fetchCtx)
	if fc == nil {
		return t.Base.RoundTrip(req)
	}
	sent := false
	if c := fc.cond; c != nil && req.Method == http.MethodGet && req.URL.String() == c.URL && (c.ETag != "" || c.LastModified != "") {
		req = req.Clone(req.Context()) // a RoundTripper must not modify its request
		if c.ETag != "" {
			req.Header.Set("If-None-Match", c.ETag)
		}
		if c.LastModified != "" {
			req.Header.Set("If-Modified-Since", c.LastModified)
		}
		sent = true
	}
	fc.info.mu.Lock()
	fc.info.sentCond = sent
	fc.info.mu.Unlock()
	return t.Base.RoundTrip(req)
}

// CloseIdleConnections closes Base's idle connections.
func (t Transport) CloseIdleConnections() {
	if c, ok := t.Base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
