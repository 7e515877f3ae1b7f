package main

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// Conditional GET and honest timings, at the bottom of the transport stack.
//
// fetch.Client sends the same headers on every request, so the validators of
// one page (If-None-Match, If-Modified-Since) travel in the request's
// context and are added here, under fetch's politeness, only to the request
// for the exact URL whose 200 response gave them. The same layer times each
// request from sending it to the end of its body: the server's time, which
// is what response_ms stores, not the time a request waited at the
// politeness gate or between retries.

// validators are what the page's last 200 response said about itself.
type validators struct {
	URL          string // the URL that answered 200 (the final URL of its chain)
	ETag         string
	LastModified string
}

// exchangeInfo is filled by condTransport for one fetch: the server time of
// the last request sent (robots.txt requests of the fetch come before the
// request they clear, so the last one is the final page request) and
// whether validators were sent with it.
type exchangeInfo struct {
	mu       sync.Mutex
	url      string
	start    time.Time
	ttfb     time.Duration
	done     time.Duration // start to end of body; 0 until the body ends
	sentCond bool
}

// serverTime is the last request's time to first byte plus its body.
func (x *exchangeInfo) serverTime() time.Duration {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done > 0 {
		return x.done
	}
	return x.ttfb
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

// condTransport adds validators and records timings; see above.
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
	start := time.Now()
	resp, err := t.base.RoundTrip(req)
	info := fc.info
	info.mu.Lock()
	info.url, info.start, info.ttfb, info.done, info.sentCond = req.URL.String(), start, time.Since(start), 0, sent
	info.mu.Unlock()
	if err != nil {
		return nil, err
	}
	resp.Body = &timedBody{ReadCloser: resp.Body, info: info, start: start}
	return resp, nil
}

func (t condTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// timedBody records when the body ended (EOF or Close, whichever first).
type timedBody struct {
	io.ReadCloser
	info  *exchangeInfo
	start time.Time
	once  sync.Once
}

func (b *timedBody) end() {
	b.once.Do(func() {
		b.info.mu.Lock()
		if b.info.start.Equal(b.start) {
			b.info.done = time.Since(b.start)
		}
		b.info.mu.Unlock()
	})
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.end()
	}
	return n, err
}

func (b *timedBody) Close() error {
	b.end()
	return b.ReadCloser.Close()
}
