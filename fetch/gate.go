package fetch

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/politecrawl/polite/backoff"
)

// The politeness of a Client or Transport whose Gate is nil: its own
// [HostGate] with these limits. See the package doc for why these values.
const (
	DefaultHostInFlight = 1           // requests in flight to one host
	DefaultHostGap      = time.Second // least time between two request starts to one host
)

// HostGate is a standalone politeness gate: at most InFlight requests in
// flight to one host and at least Gap between two request starts to it,
// each host on its own (a slow host never holds back another); a start is
// when the request is written, not when it was admitted (see [Pacer]). It is what
// a Client or Transport with a nil Gate uses; set it as Client.Gate to
// choose other limits without building a frontier.
//
// The zero value is ready to use with the defaults (1 in flight, 1 s). A
// HostGate is safe for concurrent use; set its fields before first use.
// Hosts are compared as their lower-cased host[:port], a default port
// left out, and a host idle for longer than Gap is forgotten, so memory
// stays bounded by the hosts in use.
type HostGate struct {
	// InFlight is the most requests in flight to one host. 0 (or
	// negative) means DefaultHostInFlight.
	InFlight int
	// Gap is the least time between two request starts to one host. 0
	// means DefaultHostGap; negative means none.
	Gap time.Duration

	mu     sync.Mutex
	hosts  map[string]*hostSlot
	pruneN int // prune idle hosts when the map reaches this size
}

// hostSlot is one host's state.
type hostSlot struct {
	inFlight  int
	waiting   int
	lastStart time.Time     // last admission
	lastWrite time.Time     // last request start on the wire (see Pacer)
	wake      chan struct{} // closed on a release; nil when nobody waits
}

// NoLimits is a Gate that admits every request at once: the explicit "no
// politeness limits" of tests and benchmarks that measure something else.
// A crawler talking to other people's servers never uses it.
type NoLimits struct{}

// Acquire returns at once with a release that does nothing.
func (NoLimits) Acquire(context.Context, *url.URL) (func(), error) { return nop, nil }

func (g *HostGate) limits() (int, time.Duration) {
	n, gap := g.InFlight, g.Gap
	if n <= 0 {
		n = DefaultHostInFlight
	}
	switch {
	case gap == 0:
		gap = DefaultHostGap
	case gap < 0:
		gap = 0
	}
	return n, gap
}

// Acquire blocks until a request to u's host may start under the limits,
// or ctx ends, and returns the release to call once the response body is
// finished; extra calls of it do nothing.
func (g *HostGate) Acquire(ctx context.Context, u *url.URL) (func(), error) {
	if u == nil || u.Host == "" {
		return nil, fmt.Errorf("%w: no host to gate", ErrBadURL)
	}
	key := hostKey(u)
	maxIn, gap := g.limits()
	g.mu.Lock()
	s := g.slotLocked(key, gap)
	s.waiting++
	for {
		now := time.Now()
		var wait time.Duration
		if s.inFlight < maxIn {
			if wait = s.lastStart.Add(gap).Sub(now); wait <= 0 || s.lastStart.IsZero() {
				s.waiting--
				s.inFlight++
				s.lastStart = now
				g.mu.Unlock()
				return g.releaser(s), nil
			}
		}
		if s.wake == nil {
			s.wake = make(chan struct{})
		}
		ch := s.wake
		g.mu.Unlock()
		err := sleepOrWake(ctx, ch, wait)
		g.mu.Lock()
		if err != nil {
			s.waiting--
			g.mu.Unlock()
			return nil, fmt.Errorf("politeness gate: waiting to request %s: %w", u.Redacted(), err)
		}
	}
}

// Start implements [Pacer]: it blocks until Gap has passed since the
// last request to u's host left (as Wrote reported it, or as a Start
// reserved it), or ctx ends, and reserves this start.
func (g *HostGate) Start(ctx context.Context, u *url.URL) error {
	if u == nil || u.Host == "" {
		return fmt.Errorf("%w: no host to gate", ErrBadURL)
	}
	key := hostKey(u)
	_, gap := g.limits()
	g.mu.Lock()
	s := g.slotLocked(key, gap)
	s.waiting++ // kept while it waits: not pruned
	for {
		now := time.Now()
		wait := s.lastWrite.Add(gap).Sub(now)
		if wait <= 0 || s.lastWrite.IsZero() {
			s.waiting--
			s.lastWrite = now
			g.mu.Unlock()
			return nil
		}
		g.mu.Unlock()
		err := sleepOrWake(ctx, nil, wait)
		g.mu.Lock()
		if err != nil {
			s.waiting--
			g.mu.Unlock()
			return fmt.Errorf("politeness gate: waiting to start %s: %w", u.Redacted(), err)
		}
	}
}

// Wrote implements [Pacer]: the request to u that Start let go has just
// been written.
func (g *HostGate) Wrote(u *url.URL) {
	if u == nil || u.Host == "" {
		return
	}
	g.mu.Lock()
	if s := g.hosts[hostKey(u)]; s != nil {
		s.lastWrite = time.Now()
	}
	g.mu.Unlock()
}

func (g *HostGate) releaser(s *hostSlot) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			s.inFlight--
			if s.wake != nil {
				close(s.wake)
				s.wake = nil
			}
			g.mu.Unlock()
		})
	}
}

// slotLocked returns key's slot, creating it, and forgets idle hosts once
// the map has doubled since the last sweep.
func (g *HostGate) slotLocked(key string, gap time.Duration) *hostSlot {
	if s := g.hosts[key]; s != nil {
		return s
	}
	if g.hosts == nil {
		g.hosts = make(map[string]*hostSlot)
	}
	if len(g.hosts) >= max(g.pruneN, 256) {
		cutoff := time.Now().Add(-gap)
		for k, s := range g.hosts {
			if s.inFlight == 0 && s.waiting == 0 && !s.lastStart.After(cutoff) && !s.lastWrite.After(cutoff) {
				delete(g.hosts, k)
			}
		}
		g.pruneN = 2 * len(g.hosts)
	}
	s := &hostSlot{}
	g.hosts[key] = s
	return s
}

// hostKey is u's lower-cased host[:port] without a default port.
func hostKey(u *url.URL) string {
	h := strings.ToLower(u.Host)
	if p := u.Port(); (p == "80" && u.Scheme == "http") || (p == "443" && u.Scheme == "https") {
		h = strings.TrimSuffix(h, ":"+p)
	}
	return h
}

// sleepOrWake waits for ch, d (when > 0) or ctx.
func sleepOrWake(ctx context.Context, ch <-chan struct{}, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var timer <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ch:
	case <-timer:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// Pacer is a Gate that spaces requests where the site sees them. A
// request Acquire admitted may leave much later (a new connection's dial
// and TLS handshake, a loaded machine), and then closer to the next one
// than the gap between their admissions; so Client and Transport call
// Start on every connection a request gets, just before its bytes are
// written, and Wrote once they have been. [HostGate] and
// frontier.Frontier implement it.
type Pacer interface {
	// Start blocks until a request to u, admitted by Acquire, may be
	// written now without coming too soon after the last request start
	// (per host, or run-wide, as the gate enforces), or ctx ends; it
	// records the start as happening now.
	Start(ctx context.Context, u *url.URL) error
	// Wrote is called once the request to u that Start let go has been
	// written: its start is now, later than Start when the writer was
	// delayed, and the next start is counted from it.
	Wrote(u *url.URL)
}

// reportsWaits reports whether g may be one whose transport reports waits
// with ReportGateWait: any gate but this package's own (nil: the
// client's HostGate).
func reportsWaits(g Gate) bool {
	switch g.(type) {
	case nil, NoLimits, *HostGate:
		return false
	}
	return true
}

// Observer is a Gate that paces hosts by how they answer (an adaptive
// gate, such as a frontier with Config.Adaptive). Client and Transport
// call Observe once for every request the gate admitted, when its
// response is finished (body read or closed) or it failed, just before
// the release.
type Observer interface {
	Observe(u *url.URL, o backoff.Observation)
}

// observing wraps release so that an Observer g hears how the request to
// u sent at sent ended (status, or err) first; for other gates it returns
// release itself, allocating nothing.
func observing(g Gate, u *url.URL, status int, err error, sent time.Time, c clock, release func()) func() {
	ob, ok := g.(Observer)
	if !ok {
		return release
	}
	return func() {
		ob.Observe(u, backoff.Observation{Status: status, Err: err, Elapsed: c.now().Sub(sent)})
		release()
	}
}

// clock is a *Client or *Transport: passing one, unlike a method value,
// allocates nothing on the hot path.
type clock interface{ now() time.Time }

var _ Pacer = (*HostGate)(nil)
