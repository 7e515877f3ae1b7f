package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
// zero value; set fields before first use and do not change them after,
// except that Gate, Robots, Policy, Slowdown and Logger are read at every
// request (so frontier.New may set Gate and Slowdown on a client that
// already handed out its PoliteTransport). A Client is safe for concurrent
// use and must not be copied after first use.
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
	// RobotsTokens are the product tokens matched against robots.txt
	// groups, in order of preference: the first token some group names
	// decides, and only when none is named do the `*` groups apply. Empty
	// means []string{robots.ProductToken(UserAgent)}; robots.Tokens builds
	// a list with fallbacks ("CrawlCove-Crawler" kept whatever UserAgent says).
	RobotsTokens []string
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
	// Gate is passed before every request, robots.txt fetches of the
	// private robots cache and of PoliteTransport included. nil means the
	// client's own [HostGate] with its defaults: one request in flight and
	// 1 s between request starts per host. [NoLimits] means none (tests and
	// benchmarks). frontier.New sets it when the client is its
	// Config.Client.
	Gate Gate
	// Robots decides whether a URL may be fetched. nil means a private
	// robots.Cache (see RobotsCache) whose robots.txt requests go through
	// PoliteTransport, so they pass Gate too.
	Robots RobotsChecker
	// Policy decides retries. nil means backoff.Default().
	Policy *backoff.Policy
	// Slowdown is the latch that responses such as 429 trip. nil means
	// none is tripped. Once tripped, the gate (the frontier) keeps one
	// request in flight and 3 s between starts for the rest of the run
	// (or, with Scope backoff.PerHost, on the host that answered), and
	// that gap applies to the very retry that tripped it: a 429 with
	// "Retry-After: 1" is retried after 3 s, not 1 s. The client's own
	// HostGate (nil Gate) does not apply it.
	Slowdown *backoff.Slowdown
	// Transport is the base transport. nil means a shared NewBaseTransport(nil),
	// or Guard.NewTransport() when Guard is set.
	Transport http.RoundTripper
	// Guard, when set, refuses internal addresses (see [Guard]): every URL
	// and redirect hop is checked by name before robots.txt, the gate or
	// DNS, and every connection at dial time (Guard.NewTransport's dialer,
	// the base when Transport is nil). A Transport of the caller's own is
	// still checked on each connection's remote address before a request
	// is written; build it with Guard.NewTransport so refused addresses
	// are never connected at all. nil means no guard: a crawler of sites
	// it chose may fetch internal ones.
	Guard *Guard
	// Validators, when set, makes every GET conditional: the validators
	// stored for a URL (ETag, Last-Modified of its last 200) are sent as
	// If-None-Match and If-Modified-Since, a 304 comes back as
	// Result.Unchanged (Status 304, no Body, BytesSaved), and each 2xx
	// stores its validators — unless it says Cache-Control: no-store, or
	// has none, which deletes the URL's. Validators are keyed by the URL
	// requested (each redirect hop its own); HEAD never uses them. nil
	// means unconditional requests.
	Validators ValidatorStore
	// Claimer, when set, is asked before each redirect target of a Get is
	// requested (after its robots.txt check; never for the URL passed to
	// Get, which the crawl handed out itself): a target the crawl has
	// already requested or queued is not requested again, and Get returns
	// the redirect response itself with Result.DuplicateTarget set.
	// frontier.New and redisfrontier.New set it to the frontier when this
	// client is their Config.Client, so a crawl requests each normalized
	// URL once, whether a link, a sitemap or a redirect led to it. Head
	// does not claim. nil means every redirect is followed.
	Claimer Claimer
	// Now is the clock for timings and Retry-After dates. nil means time.Now.
	Now func() time.Time
	// Logger receives the decision events fetch.disallowed,
	// fetch.redirect_refused, fetch.retry and slowdown.tripped (see the
	// package doc), and those of the private robots cache (robots.fetch,
	// robots.decision). nil means silent; a logger whose handler is not
	// enabled for a level costs no allocation.
	Logger *slog.Logger

	once sync.Once
	st   *state

	privOnce sync.Once
	priv     *robots.Cache

	gateOnce sync.Once
	ownGate  *HostGate
}

// state is what Client derives from its fields on first use.
type state struct {
	ua           string
	tokens       []string
	header       http.Header // User-Agent + extra headers; read-only, shared by requests
	base         http.RoundTripper
	timeout      time.Duration
	maxRedirects int
	maxBody      int64
}

func (c *Client) init() *state {
	c.once.Do(func() {
		st := &state{
			ua:           userAgent(c.UserAgent),
			tokens:       c.Tokens(),
			base:         c.Transport,
			timeout:      effectiveTimeout(c.Timeout),
			maxRedirects: c.MaxRedirects,
			maxBody:      c.MaxBodyBytes,
		}
		st.header = make(http.Header, len(c.Header)+1)
		applyHeader(st.header, st.ua, c.Header)
		switch {
		case c.Guard != nil:
			st.base = guardBase(c.Guard, st.base)
		case st.base == nil:
			st.base = defaultBase()
		}
		if st.maxRedirects == 0 {
			st.maxRedirects = DefaultMaxRedirects
		}
		if st.maxBody <= 0 {
			st.maxBody = DefaultMaxBodyBytes
		}
		c.st = st
	})
	return c.st
}

// Tokens returns the product tokens the client answers to robots.txt
// with: a copy of RobotsTokens, or robots.ProductToken(UserAgent) alone
// when RobotsTokens is empty.
func (c *Client) Tokens() []string {
	if len(c.RobotsTokens) > 0 {
		return slices.Clone(c.RobotsTokens)
	}
	return []string{robots.ProductToken(userAgent(c.UserAgent))}
}

// RobotsCache returns the robots.txt cache the client checks URLs with:
// Robots when it is a *robots.Cache, else (Robots nil) the client's private
// cache, created on first use, whose requests go through PoliteTransport.
// Share it with the rest of the run (Sitemaps, the frontier) so robots.txt
// is fetched once. It returns nil when Robots is some other RobotsChecker.
func (c *Client) RobotsCache() *robots.Cache {
	switch r := c.Robots.(type) {
	case nil:
		return c.private()
	case *robots.Cache:
		return r
	}
	return nil
}

// private returns the client's own robots cache. Its transport reads the
// client's gate, policy and slowdown at request time, and its events
// (robots.fetch, robots.decision) go to the client's Logger as it is when
// they happen.
func (c *Client) private() *robots.Cache {
	c.privOnce.Do(func() {
		c.priv = &robots.Cache{
			Client: &http.Client{Transport: c.PoliteTransport()},
			Now:    c.Now,
			Logger: slog.New(clientHandler{c}),
		}
	})
	return c.priv
}

// clientHandler hands records to the client's Logger as it is at that
// moment, so the private robots cache logs through a Logger set after the
// cache was made. It is silent while the client has none.
type clientHandler struct{ c *Client }

func (h clientHandler) Enabled(ctx context.Context, level slog.Level) bool {
	l := h.c.Logger
	return l != nil && l.Handler().Enabled(ctx, level)
}

func (h clientHandler) Handle(ctx context.Context, r slog.Record) error {
	if l := h.c.Logger; l != nil {
		return l.Handler().Handle(ctx, r)
	}
	return nil
}

// WithAttrs and WithGroup bind to the Logger of the moment; the cache
// does not use them.
func (h clientHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if l := h.c.Logger; l != nil {
		return l.Handler().WithAttrs(attrs)
	}
	return slog.DiscardHandler
}

func (h clientHandler) WithGroup(name string) slog.Handler {
	if l := h.c.Logger; l != nil {
		return l.Handler().WithGroup(name)
	}
	return slog.DiscardHandler
}

// gate returns the gate in use now: Gate, or the client's own HostGate.
func (c *Client) gate() Gate {
	if g := c.Gate; g != nil {
		return g
	}
	c.gateOnce.Do(func() { c.ownGate = &HostGate{} })
	return c.ownGate
}

// robots returns the checker in use now.
func (c *Client) robots() RobotsChecker {
	if r := c.Robots; r != nil {
		return r
	}
	return c.private()
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// PoliteTransport returns a [Transport] that reads this client's identity,
// headers, gate, timeout, base transport, policy, slowdown latch (a 429 on
// robots.txt trips it too) and logger at request time: the transport to
// give a robots.Cache (or any other fetcher of the run), so its requests
// count against the same limits whenever the gate is set. Give its
// http.Client no Timeout of its own (see [Transport]).
func (c *Client) PoliteTransport() *Transport {
	return &Transport{client: c}
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
// the redirect chain, every attempt, and where the time went. With an
// error, it holds what happened so far: Status, Header and Body are those
// of the last response received, FinalURL the last URL requested or
// refused.
//
// The timings separate what the server took from what politeness cost.
// ResponseTime (TTFB + Download) is the server's time for the final
// request, the figure to store as a page's response time; GateWait,
// RetryWait and RobotsWait are the crawler's own waits, and Total is the
// whole call:
//
//	Total ≈ RobotsWait + GateWait + RetryWait + Σ(each request's TTFB + Download)
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

	// DuplicateTarget is set when the final response is a redirect that
	// was not followed because the crawl had requested or queued its
	// target already (Client.Claimer): the target's URL. Status and Header
	// are the redirect's, FinalURL the redirecting URL, and Redirects the
	// hops before it; the error is nil.
	DuplicateTarget string

	// Challenge is set when the final response is a bot-protection
	// challenge or block (see DetectChallenge), with the signal that
	// matched: the site did not show the page, so it is neither a broken
	// page nor a change. It was not retried.
	Challenge *Challenge
	// RobotsStatus is the HTTP status of the robots.txt that allowed the
	// final URL (0 when it was not fetched: a network error, a custom
	// checker). With Status, it tells a site refusing the crawler
	// (RefusesCrawler) from a broken page.
	RobotsStatus int
	// Conditional reports that the final request carried validators
	// (Client.Validators); Unchanged that it was answered 304 Not
	// Modified: the page is as it was when they were stored, and
	// BytesSaved is the size of the body that response carried.
	Conditional bool
	Unchanged   bool
	BytesSaved  int64

	// TTFB is the final request's time to first byte: from sending it to
	// its response headers (connect and TLS included). 0 when the final
	// request got no response.
	TTFB time.Duration
	// Download is the final request's time from its response headers to
	// the end of its body (as far as it was read: the body cap, a timeout).
	Download time.Duration
	// GateWait is the total time spent waiting at the politeness gate for
	// this call's requests: every attempt and redirect hop. robots.txt
	// fetches wait in RobotsWait instead. In a frontier's crawl loop the
	// first request's wait is mostly spent before Get, in Frontier.Next,
	// which hands an item out only once its request may start: that part
	// is frontier.Item.Wait, and a page's politeness wait is the two summed.
	GateWait time.Duration
	// RetryWait is the total time slept before retries (Retry-After or the
	// policy's backoff), holding no gate slot.
	RetryWait time.Duration
	// RobotsWait is the total time in robots.txt checks, for the URL and
	// every redirect hop: a cache hit costs next to nothing; a miss includes
	// fetching robots.txt, its gate wait included.
	RobotsWait time.Duration
	// Total is the whole call: robots checks, gate waits, retry waits and
	// every request of every hop.
	Total time.Duration
}

// ResponseTime is the server's time for the final request, TTFB +
// Download: what a crawler should report as the page's response time.
// It excludes every wait politeness added (GateWait, RetryWait,
// RobotsWait), which Total includes.
func (r *Result) ResponseTime() time.Duration {
	if r == nil {
		return 0
	}
	return r.TTFB + r.Download
}

// RefusesCrawler reports a plain hard block: the site answered 401 or 403
// both to robots.txt and to this URL, as a user-agent rule in nginx,
// Apache or a CDN does. It is the site refusing this crawler, not a broken
// page; a crawl should stop at the site and say so.
func (r *Result) RefusesCrawler() bool {
	return r != nil && isRefusal(r.RobotsStatus) && isRefusal(r.Status) && r.Challenge == nil
}

func isRefusal(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden
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
	claim := false    // cur is a redirect target to claim before requesting it
	for {
		res.FinalURL = cur
		if err := c.guardURL(ctx, method, u, cur, res.Redirects); err != nil {
			return err
		}
		if err := c.allowed(ctx, st, method, cur, res.Redirects, res); err != nil {
			return err
		}
		if claim {
			if ok, err := c.claimHop(ctx, method, u, cur, res); !ok {
				return err
			}
		}
		hdr, had, known := st.header, Validators{}, false
		if c.Validators != nil && method == http.MethodGet {
			var err error
			if had, known, err = c.Validators.Load(ctx, cur); err != nil {
				return &Error{Op: method, URL: cur, Redirects: res.Redirects, Err: fmt.Errorf("loading validators: %w", err)}
			}
			if known {
				hdr = conditionalHeader(hdr, had)
			}
		}
		res.Conditional = known && (had.ETag != "" || had.LastModified != "")
		if err := c.exchange(ctx, st, method, u, cur, hdr, res); err != nil {
			return &Error{Op: method, URL: cur, Redirects: res.Redirects, Err: err}
		}
		if c.Validators != nil && method == http.MethodGet {
			if err := c.updateValidators(ctx, cur, res, had, known); err != nil {
				return &Error{Op: method, URL: cur, Redirects: res.Redirects, Err: fmt.Errorf("storing validators: %w", err)}
			}
		}
		if st.maxRedirects < 0 || !isRedirect(res.Status) {
			return nil
		}
		loc := res.Header.Get("Location")
		res.Redirects = append(res.Redirects, Hop{URL: cur, Status: res.Status, Location: loc})
		next, err := resolveLocation(u, res.Status, loc)
		if err != nil {
			logRedirectRefused(ctx, c.Logger, cur, loc, err)
			return &Error{Op: method, URL: cur, Redirects: res.Redirects, Err: err}
		}
		ns := next.String()
		if n := len(res.Redirects); n > st.maxRedirects {
			err := fmt.Errorf("%w: redirect %d (to %s) not followed, the limit is %d", ErrTooManyRedirects, n, next, st.maxRedirects)
			logRedirectRefused(ctx, c.Logger, cur, ns, err)
			return &Error{Op: method, URL: cur, Redirects: res.Redirects, Err: err}
		}
		if seen == nil {
			seen = append(make([]string, 0, 4), chainKey(u))
		}
		key := chainKey(next)
		if slices.Contains(seen, key) {
			err := fmt.Errorf("%w: redirected to %s, already requested in this chain", ErrRedirectLoop, ns)
			logRedirectRefused(ctx, c.Logger, cur, ns, err)
			return &Error{Op: method, URL: cur, Redirects: res.Redirects, Err: err}
		}
		seen = append(seen, key)
		if c.CheckRedirect != nil {
			if err := c.CheckRedirect(next, res.Redirects); err != nil {
				logRedirectRefused(ctx, c.Logger, cur, ns, err)
				res.FinalURL = ns
				return &Error{Op: method, URL: ns, Redirects: res.Redirects, Err: err}
			}
		}
		claim = c.Claimer != nil && method == http.MethodGet
		u, cur = next, ns
	}
}

// claimHop asks the Claimer about the redirect target u (the last hop's
// target): true means request it; false means the crawl has it already,
// and res becomes the redirect response that led here.
func (c *Client) claimHop(ctx context.Context, method string, u *url.URL, cur string, res *Result) (bool, error) {
	ok, err := c.Claimer.Claim(ctx, u)
	if err != nil {
		return false, &Error{Op: method, URL: cur, Redirects: res.Redirects, Err: fmt.Errorf("claiming the redirect target: %w", err)}
	}
	if ok {
		return true, nil
	}
	last := res.Redirects[len(res.Redirects)-1]
	res.Redirects = res.Redirects[:len(res.Redirects)-1]
	res.FinalURL = last.URL
	res.DuplicateTarget = cur
	logRedirectRefused(ctx, c.Logger, last.URL, cur, errDuplicateTarget)
	return false, nil
}

// errDuplicateTarget is the reason logged for a redirect not followed
// because its target was claimed.
var errDuplicateTarget = errors.New("target already requested or queued by the crawl")

// guardURL is the Guard's check of a URL by name, before robots.txt, the
// gate or DNS; nil without a Guard.
func (c *Client) guardURL(ctx context.Context, method string, u *url.URL, raw string, chain []Hop) error {
	g := c.Guard
	if g == nil {
		return nil
	}
	if err := g.checkURL(u, raw); err != nil {
		logAddressRefused(ctx, c.Logger, err, len(chain))
		return &Error{Op: method, URL: raw, Redirects: chain, Err: err}
	}
	return nil
}

// allowed asks robots.txt about rawURL, the target of redirect number
// len(chain); a refusal becomes an *Error. It fails closed: only a nil
// error with Outcome robots.Allowed lets the request go. res, when not nil,
// gets the time spent.
func (c *Client) allowed(ctx context.Context, st *state, method, rawURL string, chain []Hop, res *Result) error {
	var t0 time.Time
	if res != nil {
		t0 = c.now()
	}
	v, err := c.robots().CheckAs(ctx, st.tokens, rawURL)
	if res != nil {
		res.RobotsWait += c.now().Sub(t0)
		res.RobotsStatus = v.Status
	}
	if err != nil {
		return &Error{Op: method, URL: rawURL, Redirects: chain, Err: fmt.Errorf("robots.txt check: %w", err)}
	}
	if v.Outcome == robots.Allowed {
		return nil
	}
	vv := v // only refusals escape to the heap
	logDisallowed(ctx, c.Logger, rawURL, &vv, len(chain))
	return &Error{Op: method, URL: rawURL, Redirects: chain, Verdict: &vv, Err: verdictError(&vv)}
}

// exchange sends one request with retries, filling res with the last
// response. It waits between attempts holding no gate slot.
func (c *Client) exchange(ctx context.Context, st *state, method string, u *url.URL, cur string, hdr http.Header, res *Result) error {
	var wait time.Duration
	for n := 1; ; n++ {
		resp, release, err := c.attempt(ctx, st, method, u, hdr, res)
		if _, refused := err.(*gateError); refused {
			return err // nothing was sent
		}
		a := Attempt{URL: cur, Err: err, Wait: wait}
		if resp != nil {
			a.Status = resp.StatusCode
		}
		res.Attempts = append(res.Attempts, a)
		now := c.now()
		policy, slow := c.Policy, c.Slowdown
		if err != nil && resp != nil {
			// The status arrived but the body failed (timeout, reset): the
			// status still counts for the slowdown; retries go by the error.
			if slow != nil && policy.Decide(n, resp, nil, now).Slowdown {
				tripSlowdown(ctx, c.Logger, slow, cur, resp.StatusCode, now)
			}
			resp = nil // the policy sees a response or an error, not both
		}
		d := policy.Decide(n, resp, err, now)
		if d.Slowdown && slow != nil {
			// Before the ctx check: a 429 that arrived is a 429, even if
			// the caller has given up meanwhile.
			tripSlowdown(ctx, c.Logger, slow, cur, a.Status, now)
		}
		// The slot is freed only now, so a request that was waiting for it
		// already sees a slowdown this response tripped.
		release()
		if ctx.Err() != nil || !d.Retry || res.Challenge != nil {
			return err // a challenge is the site's answer, not a transient error
		}
		logRetry(ctx, c.Logger, cur, n, a.Status, err, d.Wait)
		t0 := c.now()
		serr := sleep(ctx, d.Wait)
		res.RetryWait += c.now().Sub(t0)
		if serr != nil {
			return fmt.Errorf("waiting %v to retry: %w", d.Wait, serr)
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
func (c *Client) attempt(ctx context.Context, st *state, method string, u *url.URL, hdr http.Header, res *Result) (*http.Response, func(), error) {
	release := nop
	t0 := c.now()
	g := c.gate()
	rel, err := g.Acquire(ctx, u)
	res.GateWait += c.now().Sub(t0)
	if err != nil {
		return nil, nop, &gateError{err}
	}
	if rel != nil {
		release = rel
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
		Header:     hdr,
		Host:       u.Host,
	}).WithContext(rctx)
	var waits *waitContext
	if reportsWaits(g) {
		// A gate's transport may make the request wait again after it was
		// handed over (ReportGateWait): that is politeness, not the server.
		waits = &waitContext{Context: rctx}
		req = req.WithContext(waits)
	}
	req, pace := paced(req, g, u)
	res.TTFB, res.Download, res.Challenge = 0, 0, nil
	sent := c.now()
	resp, err := st.base.RoundTrip(req)
	if w := pace.wait(); w > 0 {
		res.GateWait += w
		sent = sent.Add(w)
	}
	if waits != nil {
		w := time.Duration(waits.wait.Load())
		res.GateWait += w
		sent = sent.Add(w)
	}
	if err != nil {
		err = st.requestError(ctx, rctx, err)
		return nil, observing(g, u, 0, err, sent, c, release), err
	}
	headers := c.now()
	res.TTFB = headers.Sub(sent)
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
	res.Download = c.now().Sub(headers)
	if err != nil {
		err = st.requestError(ctx, rctx, err)
	}
	if err != nil {
		err = st.requestError(ctx, rctx, err)
	} else {
		res.Challenge = DetectChallenge(resp.StatusCode, resp.Header, res.Body)
	}
	return resp, observing(g, u, resp.StatusCode, err, sent, c, release), err
}

// waitContext carries the waits a transport reports with ReportGateWait.
type waitContext struct {
	context.Context
	wait atomic.Int64 // ns
}

type waitKey struct{}

func (c *waitContext) Value(key any) any {
	if key == (waitKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// ReportGateWait is for transports that enforce politeness themselves after
// a Client has handed them a request (a shared gate that must admit a late
// request again, say): it tells the Client that the request with context
// ctx waited d for politeness, so Result counts d in GateWait and keeps it
// out of TTFB and ResponseTime. Outside a Client's request it does nothing.
func ReportGateWait(ctx context.Context, d time.Duration) {
	if w, ok := ctx.Value(waitKey{}).(*waitContext); ok && d > 0 {
		w.wait.Add(int64(d))
	}
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
// It never holds more than max+1 bytes, whatever sizeHint claims. A body of
// unknown length is read into a pooled scratch buffer and copied out at its
// exact size, so a page costs one allocation of its own length instead of a
// buffer doubled up to twice that; a body past scratchKeep is returned in
// the buffer it was read into, never copied.
func readCapped(r io.Reader, sizeHint, max int64) ([]byte, bool, error) {
	limit := max + 1 // one byte more tells a body of exactly max from a longer one
	if sizeHint >= 0 {
		c := min(sizeHint+1, limit, 1<<20) // +1 so EOF is seen without growing; a Content-Length is a claim, not a reason to allocate
		return readInto(r, make([]byte, 0, c), max)
	}
	sp := scratch.Get().(*[]byte)
	buf, more, err := readInto(r, (*sp)[:0], max)
	if cap(buf) > scratchKeep {
		return buf, more, err // a large body keeps its buffer; the pool's stays small
	}
	*sp = buf
	body := make([]byte, len(buf)) // not bytes.Clone, whose capacity rounds up past the cap
	copy(body, buf)
	scratch.Put(sp)
	return body, more, err
}

// scratch holds the buffers bodies of unknown length are read into.
// scratchKeep is the largest kept: a few MiB of bodies are not worth a copy.
var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}

const scratchKeep = 1 << 20

// readInto appends at most max+1 bytes of r to buf (growing it by doubling,
// never past max+1) and cuts the result to max, reporting whether there was
// more.
func readInto(r io.Reader, buf []byte, max int64) ([]byte, bool, error) {
	limit := max + 1
	for int64(len(buf)) < limit {
		if len(buf) == cap(buf) {
			nb := make([]byte, len(buf), min(int64(2*cap(buf)), limit))
			copy(nb, buf)
			buf = nb
		}
		n, err := r.Read(buf[len(buf):min(int64(cap(buf)), limit)])
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
