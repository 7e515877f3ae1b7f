package fetch

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpproxy"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/robots"
)

// Gate admits requests under the run's politeness limits (in flight, gap
// between request starts, per host, slowdown); frontier.Frontier implements
// it. fetch calls Acquire before every request it sends and calls release
// exactly once, when that response's body is finished or the request failed.
type Gate interface {
	// Acquire blocks until a request to u may start now, or ctx ends, and
	// returns release, to be called once the response body is finished.
	Acquire(ctx context.Context, u *url.URL) (release func(), err error)
}

// Claimer records that a crawl is about to request a URL a redirect led
// to, so that each URL is requested once per crawl; frontier.Frontier and
// redisfrontier.Frontier implement it (see Client.Claimer).
type Claimer interface {
	// Claim reports whether target may be requested: true records it as
	// requested by the crawl (a later Add of it is a Duplicate); false
	// means the crawl has requested or queued it already. A target
	// outside the crawl's scope is not the crawl's to record: true.
	Claim(ctx context.Context, target *url.URL) (bool, error)
}

// RobotsChecker answers whether a crawler answering to tokens (product
// tokens in order of preference, see robots.Rules.AllowedAs) may fetch
// rawURL; *robots.Cache implements it. Its error is non-nil only for a bad
// URL or a done context: refusals are Verdicts. fetch fails closed: a
// request is sent only for a nil error and Outcome robots.Allowed; any other
// outcome (robots.Unknown, the zero Verdict, included) refuses the URL.
type RobotsChecker interface {
	CheckAs(ctx context.Context, tokens []string, rawURL string) (robots.Verdict, error)
}

// DefaultUserAgent is sent when no User-Agent is configured.
const DefaultUserAgent = "polite-crawler/0.1 (+https://github.com/politecrawl/polite)"

// defaultBase is the base transport shared by every Client and Transport
// that leaves its own unset, so connections are pooled like
// http.DefaultTransport's.
var defaultBase = sync.OnceValue(func() *http.Transport { return NewBaseTransport(nil) })

// Transport is a polite http.RoundTripper without robots.txt: it refuses
// methods other than GET and HEAD before any I/O, sets the User-Agent and
// extra headers on every request, and passes Gate before each one, releasing
// the slot when the response body reaches EOF or is closed. robots.Cache uses
// it as the transport of its *http.Client, so robots.txt fetches are polite
// too. The zero value uses DefaultUserAgent, its own HostGate (one request
// in flight and 1 s between starts per host), no timeout and a shared
// NewBaseTransport(nil).
//
// A Transport returned by [Client.PoliteTransport] reads every field left
// zero from its Client at request time, so a Gate, Slowdown, Policy or
// Logger set on the Client after the Transport was made still applies.
//
// Prefer Timeout to http.Client.Timeout: the client's timeout also runs
// while the gate makes the request wait its turn, so a busy run would time
// out requests that were never sent.
type Transport struct {
	Base      http.RoundTripper // nil = shared NewBaseTransport(nil)
	UserAgent string            // "" = DefaultUserAgent; replaces the request's own
	// Header holds extra headers set on every request, replacing the
	// request's values. Names are sent as written here ("X-AGENT" stays
	// X-AGENT on the wire on HTTP/1.1; HTTP/2 lower-cases every name), so
	// code reading this map must match names case-insensitively:
	// http.Header.Get finds only canonical keys. Do not hold two spellings
	// of one name; which one is sent is then unspecified. User-Agent here
	// is ignored: UserAgent wins.
	Header http.Header
	// Gate is passed before every request. nil means the Client's gate for
	// a Transport from Client.PoliteTransport, else the Transport's own
	// HostGate with its defaults (one in flight, 1 s between starts per
	// host); NoLimits means none.
	Gate Gate
	// Timeout bounds each request from the moment the gate admits it:
	// connect, headers and body. 0 means none.
	Timeout time.Duration
	// Slowdown, when set, is tripped by every response that Policy says
	// must slow the run (429 by default), so that a 429 on robots.txt slows
	// the run like one on a page. Transport itself never retries.
	Slowdown *backoff.Slowdown
	// Policy classifies responses for Slowdown. nil means backoff.Default().
	Policy *backoff.Policy
	// Logger receives the slowdown.tripped event (see the package doc's
	// event table). nil means silent.
	Logger *slog.Logger

	client *Client // set by Client.PoliteTransport: zero fields are read from it per request

	gateOnce sync.Once
	ownGate  *HostGate
}

func (t *Transport) gate() Gate {
	switch {
	case t.Gate != nil:
		return t.Gate
	case t.client != nil:
		return t.client.gate()
	}
	t.gateOnce.Do(func() { t.ownGate = &HostGate{} })
	return t.ownGate
}

func (t *Transport) slowdown() *backoff.Slowdown {
	if t.Slowdown == nil && t.client != nil {
		return t.client.Slowdown
	}
	return t.Slowdown
}

func (t *Transport) policy() *backoff.Policy {
	if t.Policy == nil && t.client != nil {
		return t.client.Policy
	}
	return t.Policy
}

func (t *Transport) logger() *slog.Logger {
	if t.Logger == nil && t.client != nil {
		return t.client.Logger
	}
	return t.Logger
}

func (t *Transport) userAgent() string {
	if t.UserAgent == "" && t.client != nil {
		return userAgent(t.client.UserAgent)
	}
	return userAgent(t.UserAgent)
}

func (t *Transport) header() http.Header {
	if t.Header == nil && t.client != nil {
		return t.client.Header
	}
	return t.Header
}

func (t *Transport) base() http.RoundTripper {
	b := t.Base
	if b == nil && t.client != nil {
		b = t.client.init().base // with the client's Guard, when it has one
	}
	if b == nil {
		b = defaultBase()
	}
	return b
}

func (t *Transport) timeout() time.Duration {
	if t.Timeout == 0 && t.client != nil {
		return effectiveTimeout(t.client.Timeout)
	}
	return t.Timeout
}

func (t *Transport) now() time.Time {
	if t.client != nil {
		return t.client.now()
	}
	return time.Now()
}

// RoundTrip sends req politely. It does not modify req.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	ctx := req.Context()
	if t.client != nil && t.Base == nil {
		if err := t.client.guardURL(ctx, req.Method, req.URL, req.URL.Redacted(), nil); err != nil {
			closeReqBody(req)
			return nil, err
		}
	}
	r2 := req.Clone(ctx)
	applyHeader(r2.Header, t.userAgent(), t.header())
	release := nop
	g := t.gate()
	rel, err := g.Acquire(ctx, req.URL)
	if err != nil {
		closeReqBody(req)
		return nil, &Error{Op: req.Method, URL: req.URL.Redacted(), Err: fmt.Errorf("politeness gate: %w", err)}
	}
	if rel != nil {
		release = rel
	}
	timeout := t.timeout()
	rctx, cancel := ctx, context.CancelFunc(nop)
	if timeout > 0 {
		rctx, cancel = context.WithTimeout(ctx, timeout)
		r2 = r2.WithContext(rctx)
	}
	r2, pace := paced(r2, g, req.URL)
	sent := t.now()
	resp, err := t.base().RoundTrip(r2)
	sent = sent.Add(pace.wait())
	if err != nil {
		if ctx.Err() == nil && rctx.Err() == context.DeadlineExceeded {
			err = timeoutError(timeout)
		}
		err = &Error{Op: req.Method, URL: req.URL.Redacted(), Err: err} // name the URL, as every error here does
		cancel()
		observing(g, req.URL, 0, err, sent, t, release)()
		return nil, err
	}
	release = observing(g, req.URL, resp.StatusCode, nil, sent, t, release)
	if s := t.slowdown(); s != nil {
		now := t.now()
		if t.policy().Decide(1, resp, nil, now).Slowdown {
			tripSlowdown(ctx, t.logger(), s, req.URL.Redacted(), resp.StatusCode, now)
		}
	}
	resp.Body = &timeoutBody{
		releaseBody: releaseBody{rc: resp.Body, release: release, cancel: cancel},
		op:          req.Method,
		url:         req.URL.Redacted(),
		ctx:         ctx,
		rctx:        rctx,
		timeout:     timeout,
	}
	return resp, nil
}

// effectiveTimeout maps Client.Timeout to a per-request bound: 0 means
// DefaultTimeout, negative means none (0).
func effectiveTimeout(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultTimeout
	case d < 0:
		return 0
	}
	return d
}

func nop() {}

func userAgent(ua string) string {
	if ua == "" {
		return DefaultUserAgent
	}
	return ua
}

// applyHeader sets ua and the extra headers on h, replacing earlier values:
// the crawler's identity is not negotiable per request. Extra header names
// are kept as written, because net/http sends a map key verbatim on
// HTTP/1.1 and a site owner may grep their logs for the spelling a bot's
// page promises ("X-AGENT: 2-UA"). Any other spelling of the same name
// already on h is dropped first, so each name is sent once.
func applyHeader(h http.Header, ua string, extra http.Header) {
	for k, vs := range extra {
		dropOtherSpellings(h, k)
		h[k] = append([]string(nil), vs...)
	}
	dropOtherSpellings(h, "User-Agent")
	h.Set("User-Agent", ua)
}

// dropOtherSpellings deletes every key of h equal to name up to case but
// spelled differently.
func dropOtherSpellings(h http.Header, name string) {
	for k := range h {
		if k != name && strings.EqualFold(k, name) {
			delete(h, k)
		}
	}
}

// checkRequest refuses what fetch never sends, before any I/O.
func checkRequest(req *http.Request) error {
	if req.URL == nil {
		closeReqBody(req)
		return &Error{Op: req.Method, URL: "", Err: ErrBadURL}
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead:
		return nil
	}
	closeReqBody(req)
	return &Error{Op: req.Method, URL: req.URL.Redacted(), Err: ErrMethod}
}

// closeReqBody honours the RoundTripper contract: the request body is closed
// even on errors.
func closeReqBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// releaseBody releases the gate slot (and cancels the request's timeout
// context, when it has one) once, at EOF, on a read error or on Close.
type releaseBody struct {
	rc      io.ReadCloser
	release func()
	cancel  context.CancelFunc
	done    atomic.Bool
}

func (b *releaseBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		b.finish()
	}
	return n, err
}

func (b *releaseBody) Close() error {
	err := b.rc.Close()
	b.finish()
	return err
}

func (b *releaseBody) finish() {
	if b.done.CompareAndSwap(false, true) {
		if b.cancel != nil {
			b.cancel()
		}
		b.release()
	}
}

// NewBaseTransport returns the default base transport: like
// http.DefaultTransport, with the proxy taken from HTTP_PROXY, HTTPS_PROXY
// and NO_PROXY (read when it is called), and with resolve mapping dial
// addresses like curl's --resolve. Keys are "host:port" (or "host" for every
// port), values "addr:port" (or "addr" to keep the port); matching ignores
// case. TLS still verifies the original host name. Malformed entries are
// ignored; use [ParseResolve] to validate user input.
func NewBaseTransport(resolve map[string]string) *http.Transport {
	m := make(map[string]string, len(resolve))
	for k, v := range resolve {
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		if k == "" || v == "" {
			continue
		}
		m[k] = v
	}
	proxy := httpproxy.FromEnvironment().ProxyFunc()
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy: func(req *http.Request) (*url.URL, error) { return proxy(req.URL) },
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, mapAddr(m, addr))
		},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   16, // the gate allows at most 16 in flight
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 1 * time.Second,
	}
}

// Resolve maps dial addresses like curl's --resolve: keys are "host:port"
// or "host" in lower case, values "addr:port" or "addr" (the port kept), as
// [ParseResolve] returns them and [NewBaseTransport] applies them.
type Resolve map[string]string

// Addr returns the address a dial to addr ("host:port") goes to: its
// mapping, or addr itself. Code that checks an address before dialing
// (an SSRF guard, say) looks where the dial will really go.
func (r Resolve) Addr(addr string) string { return mapAddr(r, addr) }

// mapAddr applies a resolve map to a dial address "host:port".
func mapAddr(m map[string]string, addr string) string {
	if len(m) == 0 {
		return addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	host = strings.ToLower(host)
	to, ok := m[net.JoinHostPort(host, port)]
	if !ok {
		if to, ok = m[host]; !ok {
			return addr
		}
	}
	if _, _, err := net.SplitHostPort(to); err == nil {
		return to
	}
	return net.JoinHostPort(strings.Trim(to, "[]"), port)
}

// ParseResolve parses curl --resolve style entries "host:port:addr" into a map
// for [NewBaseTransport]; addr may be a bracketed IPv6 address, and may carry
// its own port ("host:443:127.0.0.1:8443") to reach a local test server.
func ParseResolve(entries ...string) (map[string]string, error) {
	m := make(map[string]string, len(entries))
	for _, e := range entries {
		host, rest, ok := strings.Cut(e, ":")
		port, addr, ok2 := strings.Cut(rest, ":")
		if !ok || !ok2 || host == "" || addr == "" || !isPort(port) {
			return nil, fmt.Errorf("fetch: bad resolve entry %q: want host:port:addr", e)
		}
		to := addr
		if h, p, err := net.SplitHostPort(addr); err == nil && isPort(p) { // addr:port, an extension
			to = net.JoinHostPort(h, p)
		} else {
			a := strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]")
			if net.ParseIP(a) == nil && strings.ContainsAny(a, "/[]: ") {
				return nil, fmt.Errorf("fetch: bad resolve entry %q: bad address %q", e, addr)
			}
			to = net.JoinHostPort(a, port)
		}
		m[strings.ToLower(net.JoinHostPort(host, port))] = to
	}
	return m, nil
}

func isPort(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n > 0 && n < 65536
}
