package backoff

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Default values used when the corresponding [Policy] field is zero.
const (
	DefaultMaxRetries       = 2
	DefaultBase             = 500 * time.Millisecond
	DefaultMultiplier       = 2.0
	DefaultCap              = 30 * time.Second
	DefaultSlowdownInFlight = 1
	DefaultSlowdownGap      = 3 * time.Second
)

// NoRetries, assigned to [Policy.MaxRetries], turns retrying off entirely.
// (A zero MaxRetries means the default of two retries.)
const NoRetries = -1

var (
	defaultRetryStatuses    = []int{http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}
	defaultSlowdownStatuses = []int{http.StatusTooManyRequests}
)

// CheckRetry classifies one finished attempt: whether it may be retried
// (MaxRetries still applies), whether it must trip the run-wide slowdown, and
// a short human reason. resp is nil when err is not; p is never nil.
type CheckRetry func(p *Policy, resp *http.Response, err error) (retry, slowdown bool, reason string)

// Backoff returns how long to wait before the next attempt, given that
// attempt attempts (at least 1) have been made and the last one ended with
// resp (nil on a transport error). The policy clamps the result to [0, Cap].
type Backoff func(p *Policy, attempt int, resp *http.Response, now time.Time) time.Duration

// Policy is a retry policy for one HTTP request. Every field has a useful zero
// value, so Policy{} (and a nil *Policy) behaves exactly like [Default];
// a Policy must not be modified while in use, and is then safe for concurrent use.
type Policy struct {
	// MaxRetries is the number of retries after the first attempt.
	// 0 means DefaultMaxRetries (2); a negative value (NoRetries) means none.
	MaxRetries int
	// Base is the first exponential wait. 0 (or negative) means 500ms.
	Base time.Duration
	// Multiplier grows the exponential wait per retry. 0, values below 1 and NaN mean 2.
	Multiplier float64
	// Cap bounds every single wait, Retry-After included. 0 (or negative) means 30s.
	Cap time.Duration
	// Jitter, in [0, 1], lengthens each exponential wait by a random fraction of
	// up to Jitter of itself (never shortens it, and never past Cap). 0 = off, so
	// the schedule is exact. Waits taken from Retry-After are never jittered.
	Jitter float64
	// RetryTransportErrors retries transport errors (refused, reset, timeout)
	// on the same schedule. Off by default: the crawler gives up after its
	// timeout. A cancelled context is never retried.
	RetryTransportErrors bool
	// RetryStatuses lists the retryable HTTP statuses. nil means 429, 502, 503
	// and 504; an empty non-nil slice means none.
	RetryStatuses []int
	// SlowdownStatuses lists the statuses that trip the run-wide slowdown,
	// whether or not they are retried. nil means 429; empty non-nil means none.
	SlowdownStatuses []int
	// CheckRetry classifies attempts. nil means DefaultCheckRetry.
	CheckRetry CheckRetry
	// Backoff computes waits. nil means DefaultBackoff.
	Backoff Backoff
	// SlowdownInFlight is the number of requests allowed in flight once the
	// slowdown has tripped. 0 (or negative) means 1.
	SlowdownInFlight int
	// SlowdownGap is the least time between request starts once the slowdown
	// has tripped. 0 (or negative) means 3s.
	SlowdownGap time.Duration
	// SlowdownScope is what a trip slows: PerRun (the zero value, the
	// whole run) or PerHost (only the host that answered).
	SlowdownScope SlowdownScope
}

// zeroPolicy stands in for a nil *Policy without allocating one per call;
// it is never modified.
var zeroPolicy Policy

// Default returns the audit crawler's promised policy with every value
// spelled out: 2 retries, 500ms base, x2, 30s cap, no jitter, 429/502/503/504
// retryable, 429 trips a slowdown of 1 in flight with a 3s gap.
func Default() *Policy {
	return &Policy{
		MaxRetries:       DefaultMaxRetries,
		Base:             DefaultBase,
		Multiplier:       DefaultMultiplier,
		Cap:              DefaultCap,
		RetryStatuses:    slices.Clone(defaultRetryStatuses),
		SlowdownStatuses: slices.Clone(defaultSlowdownStatuses),
		CheckRetry:       DefaultCheckRetry,
		Backoff:          DefaultBackoff,
		SlowdownInFlight: DefaultSlowdownInFlight,
		SlowdownGap:      DefaultSlowdownGap,
	}
}

// Decision is the outcome of [Policy.Decide] for one finished attempt.
type Decision struct {
	// Retry reports whether another attempt should be made after Wait.
	Retry bool
	// Wait is how long to wait before the next attempt (0 when Retry is false).
	Wait time.Duration
	// Slowdown reports that the run-wide slowdown must trip (see [Slowdown.Trip]),
	// even when Retry is false.
	Slowdown bool
	// Reason says why, for logs and reports.
	Reason string
}

// Decide decides what follows an attempt that ended with resp or err, where
// attempt is the number of attempts already made (1 after the first
// response; values below 1 count as 1). It neither sleeps nor trips the
// slowdown: the caller waits Wait under its context and trips the latch
// when Slowdown is set.
func (p *Policy) Decide(attempt int, resp *http.Response, err error, now time.Time) Decision {
	if p == nil {
		p = &zeroPolicy
	}
	if attempt < 1 {
		attempt = 1
	}
	check := p.CheckRetry
	if check == nil {
		check = DefaultCheckRetry
	}
	retry, slow, reason := check(p, resp, err)
	d := Decision{Slowdown: slow, Reason: reason}
	if !retry {
		return d
	}
	max := p.maxRetries()
	if attempt > max {
		d.Reason = reason + ": gave up after " + strconv.Itoa(max) + " retries"
		if max == 0 {
			d.Reason = reason + ": retries disabled"
		}
		return d
	}
	bo := p.Backoff
	if bo == nil {
		bo = DefaultBackoff
	}
	d.Retry = true
	d.Wait = min(max0(bo(p, attempt, resp, now)), p.cap())
	// Plain concatenation: Decide runs for every response, fmt would double its cost.
	d.Reason = reason + ": retry " + strconv.Itoa(attempt) + " of " + strconv.Itoa(max) + " after " + d.Wait.String()
	return d
}

func max0(d time.Duration) time.Duration { return max(d, 0) }

// Exponential returns the exponential wait before retry number attempt
// (attempt >= 1): Base * Multiplier^(attempt-1), jittered if Jitter is set,
// capped at Cap. With the defaults: 500ms, 1s, 2s, ...
func (p *Policy) Exponential(attempt int) time.Duration {
	if p == nil {
		p = &zeroPolicy
	}
	if attempt < 1 {
		attempt = 1
	}
	limit := float64(p.cap())
	w := float64(p.base()) * math.Pow(p.multiplier(), float64(attempt-1))
	if j := p.Jitter; j > 0 && w < limit { // NaN fails j > 0
		w += w * min(j, 1) * rand.Float64()
	}
	if !(w < limit) { // also catches +Inf
		return p.cap()
	}
	return time.Duration(w)
}

// DefaultCheckRetry is the default [CheckRetry]: a cancelled context is
// final; a transport error is retried only with RetryTransportErrors; a
// response is retried when its status is in RetryStatuses and slows the run
// when it is in SlowdownStatuses.
func DefaultCheckRetry(p *Policy, resp *http.Response, err error) (retry, slowdown bool, reason string) {
	if p == nil {
		p = &zeroPolicy
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return false, false, "cancelled: " + err.Error()
		}
		if p.RetryTransportErrors {
			return true, false, "transport error: " + err.Error()
		}
		return false, false, "transport error (not retried): " + err.Error()
	}
	if resp == nil {
		return false, false, "no response"
	}
	code := resp.StatusCode
	slowdown = slices.Contains(p.slowdownStatuses(), code)
	reason = statusText(code)
	if slices.Contains(p.retryStatuses(), code) {
		return true, slowdown, reason
	}
	return false, slowdown, reason + " (not retried)"
}

// DefaultBackoff is the default [Backoff]: the response's Retry-After when
// the status is 429 or 503 and the header is valid (see [ParseRetryAfter]),
// otherwise [Policy.Exponential].
func DefaultBackoff(p *Policy, attempt int, resp *http.Response, now time.Time) time.Duration {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if d, ok := ParseRetryAfter(resp.Header.Values("Retry-After"), now); ok {
			return d
		}
	}
	return p.Exponential(attempt)
}

// NewSlowdown returns a fresh, untripped run-wide latch carrying this
// policy's slowdown settings.
func (p *Policy) NewSlowdown() *Slowdown {
	if p == nil {
		p = &zeroPolicy
	}
	return &Slowdown{InFlight: p.slowdownInFlight(), Gap: p.slowdownGap(), Scope: p.SlowdownScope}
}

func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return strconv.Itoa(code) + " " + t
	}
	return "status " + strconv.Itoa(code)
}

func (p *Policy) maxRetries() int {
	switch {
	case p.MaxRetries < 0:
		return 0
	case p.MaxRetries == 0:
		return DefaultMaxRetries
	}
	return p.MaxRetries
}

func (p *Policy) base() time.Duration {
	if p.Base <= 0 {
		return DefaultBase
	}
	return p.Base
}

func (p *Policy) multiplier() float64 {
	if !(p.Multiplier >= 1) { // NaN fails too

		return DefaultMultiplier
	}
	return p.Multiplier
}

func (p *Policy) cap() time.Duration {
	if p.Cap <= 0 {
		return DefaultCap
	}
	return p.Cap
}

func (p *Policy) retryStatuses() []int {
	if p.RetryStatuses == nil {
		return defaultRetryStatuses
	}
	return p.RetryStatuses
}

func (p *Policy) slowdownStatuses() []int {
	if p.SlowdownStatuses == nil {
		return defaultSlowdownStatuses
	}
	return p.SlowdownStatuses
}

func (p *Policy) slowdownInFlight() int {
	if p.SlowdownInFlight <= 0 {
		return DefaultSlowdownInFlight
	}
	return p.SlowdownInFlight
}

func (p *Policy) slowdownGap() time.Duration {
	if p.SlowdownGap <= 0 {
		return DefaultSlowdownGap
	}
	return p.SlowdownGap
}
