package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/robots"
)

// Defaults used when the corresponding Client field is zero.
const (
	DefaultTimeout            = 15 * time.Second
	DefaultMaxRedirects       = 10
	DefaultMaxBodyBytes int64 = 10 << 20
)

// maxDrain bounds what is read (and thrown away) from a redirect or retried
// response so its connection can be reused; past it the connection is closed.
const maxDrain = 64 << 10

// Client is a polite HTTP client for GET and HEAD. Every field has a useful
// zero value; set fields before first use and do not change them after. A
// Client is safe for concurrent use and must not be copied after first use.
type Client struct {
	// UserAgent is sent on every request. "" means DefaultUserAgent.
	UserAgent string
	// Header holds extra headers sent on every request, e.g. X-AGENT: 2-UA.
	// Names are sent as written here ("X-AGENT" stays X-AGENT on the wire
	// on HTTP/1.1; HTTP/2 lower-cases every name), so code reading this map
	// must match names case-insensitively: http.Header.Get finds only
	// canonical keys. Do not hold two spellings of one name; which one is
	// sent is then unspecified. User-Agent here is ignored: UserAgent wins.
	Header http.Header
	// RobotsToken is the product token matched against robots.txt groups.
	// "" means robots.ProductToken(UserAgent).
	RobotsToken string
	// Timeout bounds each request (each attempt and each redirect hop):
	// connect, headers and the whole body. 0 means 15s; negative means none.
	Timeout time.Duration
	// MaxRedirects is how many redirects are followed: 0 means 10, so a chain
	// of 10 redirects reaches its page in 11 requests and an 11th redirect
	// fails with ErrTooManyRedirects. Negative: redirects are returned as the
	// result, not followed.
	MaxRedirects int
	// MaxBodyBytes caps the body kept from a response; a longer body is
	// truncated and Result.Truncated set. 0 (or negative) means 10 MiB.
	MaxBodyBytes int64
	// CheckRedirect, when set, is called before each redirect target is
	// checked against robots.txt and requested (next must not be modified);
	// a non-nil error ends the chain, wrapped in *Error with the chain so far.
	// nil follows every redirect allowed by the rules above.
	CheckRedirect func(next *url.URL, via []Hop) error
	// Gate is passed before every request. nil means no limits.
	Gate Gate
	// Robots decides whether a URL may be fetched. nil means a private
	// robots.Cache whose robots.txt requests go through PoliteTransport.
	Robots RobotsChecker
	// Policy decides retries. nil means backoff.Default().
	Policy *backoff.Policy
	// Slowdown is the run-wide latch that responses such as 429 trip.
	// nil means none is tripped.
	Slowdown *backoff.Slowdown
	// Transport is the base transport. nil means a shared NewBaseTransport(nil).
	Transport http.RoundTripper
	// Now is the clock for timings and Retry-After dates. nil means time.Now.
	Now func() time.Time

	once sync.Once
	st   *state
}

// state is what Client derives from its fields on first use.
type state struct {
	ua, token    string
	header       http.Header // User-Agent + extra headers; read-only, shared by requests
	base         http.RoundTripper
	robots       RobotsChecker
	policy       *backoff.Policy
	timeout      time.Duration
	maxRedirects int
	maxBody      int64
}

func (c *Client) init() *state {
	c.once.Do(func() {
		st := &state{
			ua:           userAgent(c.UserAgent),
			token:        c.RobotsToken,
			base:         c.Transport,
			robots:       c.Robots,
			policy:       c.Policy,
			timeout:      c.Timeout,
			maxRedirects: c.MaxRedirects,
			maxBody:      c.MaxBodyBytes,
		}
		if st.token == "" {
			st.token = robots.ProductToken(st.ua)
		}
		st.header = make(http.Header, len(c.Header)+1)
		applyHeader(st.header, st.ua, c.Header)
		if st.base == nil {
			st.base = defaultBase()
		}
		switch {
		case st.timeout == 0:
			st.timeout = DefaultTimeout
		case st.timeout < 0:
			st.timeout = 0
		}
		if st.policy == nil {
			st.policy = backoff.Default()
		}
		if st.maxRedirects == 0 {
			st.maxRedirects = DefaultMaxRedirects
		}
		if st.maxBody <= 0 {
			st.maxBody = DefaultMaxBodyBytes
		}
		if st.robots == nil {
			st.robots = &robots.Cache{Client: &http.Client{Transport: c.PoliteTransport()}}
		}
		c.st = st
	})
	return c.st
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// PoliteTransport returns a [Transport] with this client's identity, headers,
// gate, timeout, base transport, policy and slowdown latch (a 429 on
// robots.txt trips it too): the transport to give the robots.Cache
// (or any other fetcher of the run), so its requests count against the same
// limits. Give its http.Client no Timeout of its own (see [Transport]).
func (c *Client) PoliteTransport() *Transport {
	timeout := c.Timeout
	switch {
	case timeout == 0:
		timeout = DefaultTimeout
	case timeout < 0:
		timeout = 0
	}
	return &Transport{Base: c.Transport, UserAgent: c.UserAgent, Header: c.Header, Gate: c.Gate, Timeout: timeout,
		Slowdown: c.Slowdown, Policy: c.Policy}
}

// Hop is one redirect response of a chain.
type Hop struct {
	URL      string // the URL requested
	Status   int    // its 3xx status
	Location string // its Location header, as sent
}

// Attempt is one request sent: its URL, its status or error, and how long
// the client waited (by the retry policy) before sending it.
type Attempt struct {
	URL    string
	Status int   // 0 when no response arrived
	Err    error // transport, timeout or body error; nil otherwise
	Wait   time.Duration
}

// Result is what Get and Head return: the final response (body capped),
// the redirect chain and every attempt. With an error, it holds what
// happened so far: Status, Header and Body are those of the last response
// received, FinalURL the last URL requested or refused.
type Result struct {
	URL         string // as asked
	FinalURL    string // after redirects
	Status      int
	Header      http.Header
	ContentType string // the Content-Type header, as sent
	Body        []byte // at most MaxBodyBytes; nil for HEAD and redirects
	Truncated   bool   // the body was longer than MaxBodyBytes
	Redirects   []Hop  // oldest first
	Attempts    []Attempt
	TTFB        time.Duration // from sending the final request to its response headers
	Total       time.Duration // the whole call: robots checks, gates, waits, hops
}

// MediaType returns the lower-cased media type of ContentType without
// parameters ("text/html"), or "" when there is none.
func (r *Result) MediaType() string {
	if r == nil || r.ContentType == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(r.ContentType)
	if err != nil {
		mt, _, _ = strings.Cut(r.ContentType, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	return mt
}

// Get fetches rawURL politely: robots.txt first, then the request through
// the gate, redirects (each target checked against robots.txt before it is
// requested) and retries. The Result is never nil; with an error it holds
// the partial chain.
func (c *Client) Get(ctx context.Context, rawURL string) (*Result, error) {
	return c.fetch(ctx, http.MethodGet, rawURL)
}

// Head is Get with the HEAD method; Result.Body is nil.
func (c *Client) Head(ctx context.Context, rawURL string) (*Result, error) {
	return c.fetch(ctx, http.MethodHead, rawURL)
}

func (c *Client) fetch(ctx context.Context, method, rawURL string) (*Result, error) {
	st := c.init()
	start := c.now()
	res := &Result{URL: rawURL, FinalURL: rawURL}
	err := c.follow(ctx, st, method, rawURL, res)
	res.Total = c.now().Sub(start)
	if err != nil {
		return res, err
	}
	return res, nil
}

// follow walks the redirect chain from rawURL, checking robots.txt before
// each request.
func (c *Client) follow(ctx context.Context, st *state, method, rawURL string, res *Result) error {
	u, err := parseTarget(rawURL)
	if err != nil {
		return &Error{Op: method, URL: rawURL, Err: err}
	}
	cur := rawURL
	var seen []string // canonical URLs of this chain, for loop detection
	for {
		res.FinalURL = cur
		if err := c.allowed(ctx, st, method, cur, res.Redirects); err != nil {
			return err
		}
		if err := c.exchange(ctx, st, method, u, cur, res); err != nil {
			return &Error{Op: method, URL: cur, Redirects: res.Redirects, Err: err}
		}
		if st.maxRedirects < 0 || !isRedirect(res.Status) {
			return nil
		}
		loc := res.Header.Get("Location")
		res.Redirects = append(res.Redirects, Hop{URL: cur, Status: res.Status, Location: loc})
		next, err := resolveLocation(u, res.Status, loc)
		if err != nil {
			return &Error{Op: method, URL: cur, Redirects: res.Redirects, Err: err}
		}
		if n := len(res.Redirects); n > st.maxRedirects {
			return &Error{Op: method, URL: cur, Redirects: res.Redirects,
				Err: fmt.Errorf("%w: redirect %d (to %s) not followed, the limit is %d", ErrTooManyRedirects, n, next, st.maxRedirects)}
		}
		if seen == nil {
			seen = append(make([]string, 0, 4), chainKey(u))
		}
		ns, key := next.String(), chainKey(next)
		if slices.Contains(seen, key) {
			return &Error{Op: method, URL: cur, Redirects: res.Redirects,
				Err: fmt.Errorf("%w: redirected to %s, already requested in this chain", ErrRedirectLoop, ns)}
		}
		seen = append(seen, key)
		if c.CheckRedirect != nil {
			if err := c.CheckRedirect(next, res.Redirects); err != nil {
				res.FinalURL = ns
				return &Error{Op: method, URL: ns, Redirects: res.Redirects, Err: err}
			}
		}
		u, cur = next, ns
	}
}

// allowed asks robots.txt about rawURL; a refusal becomes an *Error.
func (c *Client) allowed(ctx context.Context, st *state, method, rawURL string, chain []Hop) error {
	v, err := st.robots.Check(ctx, st.token, rawURL)
	if err != nil {
		return &Error{Op: method, URL: rawURL, Redirects: chain, Err: fmt.Errorf("robots.txt check: %w", err)}
	}
	if v.Outcome == robots.Allowed {
		return nil
	}
	vv := v // only refusals escape to the heap
	return &Error{Op: method, URL: rawURL, Redirects: chain, Verdict: &vv, Err: verdictError(&vv)}
}

// exchange sends one request with retries, filling res with the last
// response. It waits between attempts holding no gate slot.
func (c *Client) exchange(ctx context.Context, st *state, method string, u *url.URL, cur string, res *Result) error {
	var wait time.Duration
	for n := 1; ; n++ {
		resp, release, err := c.attempt(ctx, st, method, u, res)
		if _, refused := err.(*gateError); refused {
			return err // nothing was sent
		}
		a := Attempt{URL: cur, Err: err, Wait: wait}
		if resp != nil {
			a.Status = resp.StatusCode
		}
		res.Attempts = append(res.Attempts, a)
		now := c.now()
		if err != nil && resp != nil {
			// The status arrived but the body failed (timeout, reset): the
			// status still counts for the slowdown; retries go by the error.
			if c.Slowdown != nil && st.policy.Decide(n, resp, nil, now).Slowdown {
				c.Slowdown.Trip(cur, now)
			}
			resp = nil // the policy sees a response or an error, not both
		}
		d := st.policy.Decide(n, resp, err, now)
		if d.Slowdown && c.Slowdown != nil {
			// Before the ctx check: a 429 that arrived is a 429, even if
			// the caller has given up meanwhile.
			c.Slowdown.Trip(cur, now)
		}
		// The slot is freed only now, so a request that was waiting for it
		// already sees a slowdown this response tripped.
		release()
		if ctx.Err() != nil || !d.Retry {
			return err
		}
		if err := sleep(ctx, d.Wait); err != nil {
			return fmt.Errorf("waiting %v to retry: %w", d.Wait, err)
		}
		wait = d.Wait
	}
}

// gateError marks a refusal by the gate, which is not retried.
type gateError struct{ err error }

func (e *gateError) Error() string { return "politeness gate: " + e.err.Error() }
func (e *gateError) Unwrap() error { return e.err }

// attempt sends one request through the gate under the per-request timeout
// and reads its body. It returns the gate slot's release, which the caller
// must call exactly once (after tripping any slowdown), and the response
// (body consumed) even when reading the body failed.
func (c *Client) attempt(ctx context.Context, st *state, method string, u *url.URL, res *Result) (*http.Response, func(), error) {
	release := nop
	if c.Gate != nil {
		rel, err := c.Gate.Acquire(ctx, u)
		if err != nil {
			return nil, nop, &gateError{err}
		}
		if rel != nil {
			release = rel
		}
	}
	rctx := ctx
	if st.timeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, st.timeout)
		defer cancel() // runs before release: the slot is freed last, by the caller
	}
	req := (&http.Request{
		Method:     method,
		URL:        u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     st.header,
		Host:       u.Host,
	}).WithContext(rctx)
	sent := c.now()
	resp, err := st.base.RoundTrip(req)
	if err != nil {
		return nil, release, st.requestError(ctx, rctx, err)
	}
	res.TTFB = c.now().Sub(sent)
	res.Status = resp.StatusCode
	res.Header = resp.Header
	res.ContentType = resp.Header.Get("Content-Type")
	res.Body, res.Truncated = nil, false
	switch {
	case method == http.MethodHead:
	case isRedirect(resp.StatusCode) && st.maxRedirects >= 0:
		_, _ = io.CopyN(io.Discard, resp.Body, maxDrain)
	default:
		res.Body, res.Truncated, err = readCapped(resp.Body, resp.ContentLength, st.maxBody)
	}
	_ = resp.Body.Close()
	if err != nil {
		return resp, release, st.requestError(ctx, rctx, err)
	}
	return resp, release, nil
}

// requestError tells a per-request timeout (rctx) from the caller's own
// cancellation (ctx); both must be checked before rctx is cancelled.
func (st *state) requestError(ctx, rctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		if errors.Is(err, cerr) {
			return err
		}
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	if rctx.Err() == context.DeadlineExceeded {
		return timeoutError(st.timeout)
	}
	return err
}

// readCapped reads at most max bytes of r, reporting whether there was more.
// It never holds more than max+1 bytes, whatever sizeHint claims.
func readCapped(r io.Reader, sizeHint, max int64) ([]byte, bool, error) {
	limit := max + 1 // one byte more tells a body of exactly max from a longer one
	c := int64(4096) // unknown length: most pages are larger than io.ReadAll's 512
	if sizeHint >= 0 {
		c = sizeHint + 1 // +1 so EOF is seen without growing
	}
	c = min(c, limit, 1<<20) // a Content-Length is a claim, not a reason to allocate
	buf := make([]byte, 0, c)
	for int64(len(buf)) < limit {
		if len(buf) == cap(buf) {
			nb := make([]byte, len(buf), min(int64(2*cap(buf)), limit))
			copy(nb, buf)
			buf = nb
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return buf, false, err
		}
	}
	if int64(len(buf)) > max {
		return buf[:max], true, nil
	}
	return buf, false, nil
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// parseTarget accepts absolute http(s) URLs with a host; the fragment is
// dropped, as it is never sent.
func parseTarget(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, ErrBadURL
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// resolveLocation resolves a redirect's Location against the URL that sent it.
func resolveLocation(base *url.URL, status int, loc string) (*url.URL, error) {
	if loc == "" {
		return nil, fmt.Errorf("%w: %d without a Location header", ErrBadRedirect, status)
	}
	ref, err := url.Parse(loc)
	if err != nil {
		return nil, fmt.Errorf("%w: unparseable Location %q", ErrBadRedirect, loc)
	}
	next := base.ResolveReference(ref)
	if (next.Scheme != "http" && next.Scheme != "https") || next.Host == "" {
		return nil, fmt.Errorf("%w: Location %q is not an http(s) URL", ErrBadRedirect, loc)
	}
	next.Fragment, next.RawFragment = "", ""
	return next, nil
}

// chainKey identifies a URL for loop detection: host case and default
// ports do not make a different URL, and an empty path is "/".
func chainKey(u *url.URL) string {
	k := *u
	k.Host = strings.ToLower(k.Host)
	if p := k.Port(); (p == "80" && k.Scheme == "http") || (p == "443" && k.Scheme == "https") {
		k.Host = strings.TrimSuffix(k.Host, ":"+p)
	}
	if k.Path == "" && k.RawPath == "" && k.Opaque == "" {
		k.Path = "/"
	}
	return k.String()
}

// sleep waits d unless ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
