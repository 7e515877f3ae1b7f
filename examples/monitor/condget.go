package main

import (
	"context"
	"net/http"
	"sync"
)

// Conditional GET, at the bottom of the transport stack.
//
// fetch.Client sends the same headers on every request, so the validators of
// one page (If-None-Match, If-Modified-Since) travel in the request's
// context and are added here, under fetch's politeness, only to the request
// for the exact URL whose 200 response gave them.

// validators are what the page's last 200 response said about itself.
type validators struct {
	URL          string // the URL that answered 200 (the final URL of its chain)
	ETag         string
	LastModified string
}

// exchangeInfo is filled by condTransport for one fetch: whether validators
// were sent with the last request (robots.txt requests of the fetch come
// before the request they clear, so the last one is the final page request).
type exchangeInfo struct {
	mu       sync.Mutex
	sentCond bool
}

func (x *exchangeInfo) sent() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.sentCond
}

type ctxKey struct{}

type fetchCtx struct {
	cond *validators
	info *exchangeInfo
}

// withFetchInfo returns a context carrying cond (may be nil) and a fresh
// exchangeInfo that condTransport fills.
func withFetchInfo(ctx context.Context, cond *validators) (context.Context, *exchangeInfo) {
	info := &exchangeInfo{}
	return context.WithValue(ctx, ctxKey{}, &fetchCtx{cond: cond, info: info}), info
}

// condTransport adds validators; see above.
type condTransport struct {
	base http.RoundTripper
}

func (t condTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	fc, _ := req.Context().Value(ctxKey{}).(*fetchCtx)
	if fc == nil {
		return t.base.RoundTrip(req)
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
	return t.base.RoundTrip(req)
}

func (t condTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
