package fetch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// RoundTripper returns the client's whole politeness as an
// http.RoundTripper: GET/HEAD only, identity headers, a robots.txt check of
// every request's URL, the gate, the per-request timeout (body included),
// retries, and a body that fails with ErrBodyTooLarge past MaxBodyBytes.
// Redirects are left to the caller, which sends each hop through it again.
func (c *Client) RoundTripper() http.RoundTripper { return roundTripper{c} }

// HTTPClient returns an *http.Client over RoundTripper whose CheckRedirect
// follows up to MaxRedirects (10) redirects, refuses loops and non-http(s)
// targets and applies Client.CheckRedirect; each target is checked against
// robots.txt by RoundTripper before it is requested. (Not in CheckRedirect:
// there the previous response still holds its gate slot, and fetching a new
// host's robots.txt could wait forever for it.)
func (c *Client) HTTPClient() *http.Client {
	return &http.Client{Transport: c.RoundTripper(), CheckRedirect: c.checkRedirect}
}

type roundTripper struct{ c *Client }

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	c := rt.c
	st := c.init()
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	raw := req.URL.String()
	if (req.URL.Scheme != "http" && req.URL.Scheme != "https") || req.URL.Host == "" {
		closeReqBody(req)
		return nil, &Error{Op: method, URL: raw, Err: ErrBadURL}
	}
	ctx := req.Context()
	if err := c.guardURL(ctx, method, req.URL, raw, hopsOf(req)); err != nil {
		closeReqBody(req)
		return nil, err
	}
	if err := c.allowed(ctx, st, method, raw, hopsOf(req), nil); err != nil {
		closeReqBody(req)
		return nil, err
	}
	// A request body (unusual on GET) can be resent only with GetBody.
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	for n := 1; ; n++ {
		release := nop
		g := c.gate()
		rel, err := g.Acquire(ctx, req.URL)
		if err != nil {
			closeReqBody(req)
			return nil, &Error{Op: method, URL: raw, Err: &gateError{err}}
		}
		if rel != nil {
			release = rel
		}
		rctx, cancel := ctx, context.CancelFunc(nop)
		if st.timeout > 0 {
			rctx, cancel = context.WithTimeout(ctx, st.timeout)
		}
		r2 := req.Clone(rctx)
		applyHeader(r2.Header, st.ua, c.Header)
		if n > 1 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				cancel()
				release()
				return nil, &Error{Op: method, URL: raw, Err: fmt.Errorf("request body for retry: %w", err)}
			}
			r2.Body = body
		}
		r2, pace := paced(r2, g, req.URL)
		sent := c.now()
		resp, err := st.base.RoundTrip(r2)
		sent = sent.Add(pace.wait())
		if err != nil {
			err = st.requestError(ctx, rctx, err)
			resp = nil
			release = observing(g, req.URL, 0, err, sent, c, release)
		} else {
			release = observing(g, req.URL, resp.StatusCode, nil, sent, c, release)
		}
		now := c.now()
		d := c.Policy.Decide(n, resp, err, now)
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		if s := c.Slowdown; d.Slowdown && s != nil {
			tripSlowdown(ctx, c.Logger, s, raw, status, now)
		}
		if cerr := ctx.Err(); cerr != nil {
			// The caller gave up: no retry, and a response that did arrive
			// is closed here, since the caller will never see it.
			if resp != nil {
				_ = resp.Body.Close()
			}
			if err == nil {
				err = cerr
			}
			cancel()
			release()
			return nil, &Error{Op: method, URL: raw, Err: err}
		}
		if d.Retry && replayable {
			logRetry(ctx, c.Logger, raw, n, status, err, d.Wait)
			if resp != nil {
				_, _ = io.CopyN(io.Discard, resp.Body, maxDrain)
				_ = resp.Body.Close()
			}
			cancel()
			release() // never hold a slot while waiting
			if werr := sleep(ctx, d.Wait); werr != nil {
				return nil, &Error{Op: method, URL: raw, Err: fmt.Errorf("waiting %v to retry: %w", d.Wait, werr)}
			}
			continue
		}
		if err != nil {
			cancel()
			release()
			return nil, &Error{Op: method, URL: raw, Err: err}
		}
		resp.Body = &capBody{
			timeoutBody: timeoutBody{
				releaseBody: releaseBody{rc: resp.Body, release: release, cancel: cancel},
				op:          method,
				url:         raw,
				ctx:         ctx,
				rctx:        rctx,
				timeout:     st.timeout,
			},
			left: st.maxBody,
		}
		return resp, nil
	}
}

// capBody is the body of a RoundTripper response: a timeoutBody that fails
// with ErrBodyTooLarge past the cap.
type capBody struct {
	timeoutBody
	left int64
}

func (b *capBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var probe [1]byte
		n, err := b.timeoutBody.Read(probe[:])
		if n == 0 && err != nil {
			return 0, err
		}
		b.finish()
		return 0, &Error{Op: b.op, URL: b.url, Err: ErrBodyTooLarge}
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.timeoutBody.Read(p)
	b.left -= int64(n)
	return n, err
}

// timeoutBody releases the slot when finished and names a per-request
// timeout as such (ErrTimeout and context.DeadlineExceeded) in read errors.
type timeoutBody struct {
	releaseBody
	op, url   string
	ctx, rctx context.Context
	timeout   time.Duration
}

func (b *timeoutBody) Read(p []byte) (int, error) {
	n, err := b.releaseBody.Read(p)
	return n, b.mapErr(err)
}

func (b *timeoutBody) mapErr(err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	if b.ctx.Err() == nil && b.rctx.Err() == context.DeadlineExceeded {
		return &Error{Op: b.op, URL: b.url, Err: timeoutError(b.timeout)}
	}
	return &Error{Op: b.op, URL: b.url, Err: err}
}

// checkRedirect is HTTPClient's redirect policy.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	st := c.init()
	if st.maxRedirects < 0 {
		return http.ErrUseLastResponse
	}
	prev := via[len(via)-1]
	method := prev.Method
	if method == "" {
		method = http.MethodGet
	}
	from := prev.URL.String()
	if r := req.Response; r != nil {
		// http.Client resolved Location with net/url; request what a
		// browser would instead, the URL RoundTripper then checks.
		next, err := resolveLocation(prev.URL, r.StatusCode, r.Header.Get("Location"))
		if err != nil {
			logRedirectRefused(req.Context(), c.Logger, from, r.Header.Get("Location"), err)
			return &Error{Op: method, URL: from, Err: err}
		}
		retarget(req, next, via[0].URL)
	}
	target := req.URL.String()
	refuse := func(url string, err error) error {
		logRedirectRefused(req.Context(), c.Logger, from, target, err)
		return &Error{Op: method, URL: url, Err: err}
	}
	if len(via) > st.maxRedirects {
		return refuse(from, fmt.Errorf("%w: redirect %d (to %s) not followed, the limit is %d", ErrTooManyRedirects, len(via), target, st.maxRedirects))
	}
	if (req.URL.Scheme != "http" && req.URL.Scheme != "https") || req.URL.Host == "" {
		return refuse(from, fmt.Errorf("%w: target %q is not an http(s) URL", ErrBadRedirect, target))
	}
	key := chainKey(req.URL)
	for _, v := range via {
		if chainKey(v.URL) == key {
			return refuse(from, fmt.Errorf("%w: redirected to %s, already requested in this chain", ErrRedirectLoop, target))
		}
	}
	if c.CheckRedirect != nil {
		if err := c.CheckRedirect(req.URL, viaHops(req, via)); err != nil {
			return refuse(target, err)
		}
	}
	return nil
}

// hopsOf rebuilds, for a request http.Client sends after redirects, the
// chain of redirect responses that led to it (nil for a first request), so
// errors and events name the hop.
func hopsOf(req *http.Request) []Hop {
	var hops []Hop
	for r := req.Response; r != nil && r.Request != nil; r = r.Request.Response {
		hops = append(hops, Hop{URL: r.Request.URL.String(), Status: r.StatusCode, Location: r.Header.Get("Location")})
	}
	slices.Reverse(hops)
	return hops
}

// viaHops rebuilds the chain as Hops from http.Client's view of it: each
// request after the first carries the redirect response that caused it.
func viaHops(req *http.Request, via []*http.Request) []Hop {
	hops := make([]Hop, len(via))
	for i, v := range via {
		hops[i].URL = v.URL.String()
		next := req
		if i+1 < len(via) {
			next = via[i+1]
		}
		if r := next.Response; r != nil {
			hops[i].Status = r.StatusCode
			hops[i].Location = r.Header.Get("Location")
		}
	}
	return hops
}

// retarget points the next request of a redirect at u. When that changes
// the host http.Client judged by, credentials it copied for that host are
// dropped unless u is on the first request's host.
func retarget(req *http.Request, u, first *url.URL) {
	if !strings.EqualFold(u.Host, req.URL.Host) && !strings.EqualFold(u.Host, first.Host) {
		for _, h := range []string{"Authorization", "Www-Authenticate", "Cookie", "Cookie2", "Proxy-Authorization"} {
			req.Header.Del(h)
		}
	}
	req.URL = u
}
