package backoff

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// SlowdownEvent records what tripped a [Slowdown]: when, and which URL's
// response asked for it.
type SlowdownEvent struct {
	At  time.Time
	URL string
}

// String renders the event for logs, e.g. "slowdown tripped at 2026-11-29T20:30:00Z by https://example.com/a".
func (e SlowdownEvent) String() string {
	return fmt.Sprintf("slowdown tripped at %s by %s", e.At.UTC().Format(time.RFC3339Nano), e.URL)
}

// SlowdownScope says what one trip of a [Slowdown] slows.
type SlowdownScope int

const (
	// PerRun: the first trip slows the whole run, every host (the
	// default, and Crawl Cove's public promise).
	PerRun SlowdownScope = iota
	// PerHost: each trip slows only the host (host[:port], lower case, a
	// default port left out) of the URL whose response tripped it; every
	// host trips once, and the others keep their pace.
	PerHost
)

// String returns "run" or "host".
func (s SlowdownScope) String() string {
	if s == PerHost {
		return "host"
	}
	return "run"
}

// Slowdown is the latch a 429 trips: once tripped the whole run (or, with
// Scope PerHost, the host that answered 429) keeps at most InFlight
// requests in flight with at least Gap between request starts, and it
// never resets. The zero value is untripped and usable; it is
// safe for concurrent use, but InFlight and Gap must be set before first use.
// The latch only records the state; the politeness gate (the frontier) applies it.
//
// The gap binds the retry of the very response that tripped it: a 429 with
// "Retry-After: 1" is retried 3 s after the previous request start, not
// 1 s, since Gap (3 s) is longer than the wait the server asked for.
type Slowdown struct {
	// InFlight is the most requests in flight once tripped. 0 (or negative) means 1.
	InFlight int
	// Gap is the least time between request starts once tripped. 0 (or negative) means 3s.
	Gap time.Duration
	// Scope is what a trip slows: PerRun (the zero value) or PerHost.
	Scope SlowdownScope

	ev atomic.Pointer[SlowdownEvent] // nil until tripped; set exactly once

	mu sync.Mutex
	ch chan struct{} // created lazily, closed on trip

	trips  atomic.Int64        // len(events), read without the lock
	events []SlowdownEvent     // every trip, in order (one with PerRun)
	hosts  map[string]struct{} // PerHost: hosts tripped
}

// Trip trips the latch, recording url and at, and reports whether this call
// was the one that tripped it (true the first time only). A nil *Slowdown
// never trips.
//
// With Scope PerHost it trips url's host: true the first time for that
// host, and Tripped, C and the first of Trips report the first trip of
// any host.
func (s *Slowdown) Trip(url string, at time.Time) bool {
	if s == nil {
		return false
	}
	if s.Scope == PerHost {
		return s.tripHost(url, at)
	}
	if s.ev.Load() != nil {
		return false // already tripped: no event to allocate
	}
	ev := &SlowdownEvent{At: at, URL: url}
	if !s.ev.CompareAndSwap(nil, ev) {
		return false
	}
	s.mu.Lock()
	s.events = append(s.events, *ev)
	s.trips.Store(1)
	close(s.chanLocked())
	s.mu.Unlock()
	return true
}

func (s *Slowdown) tripHost(rawURL string, at time.Time) bool {
	key := HostOf(rawURL)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.hosts[key]; ok {
		return false
	}
	if s.hosts == nil {
		s.hosts = make(map[string]struct{})
	}
	s.hosts[key] = struct{}{}
	ev := SlowdownEvent{At: at, URL: rawURL}
	s.events = append(s.events, ev)
	s.trips.Store(int64(len(s.events)))
	if s.ev.CompareAndSwap(nil, &ev) {
		close(s.chanLocked())
	}
	return true
}

// Trips returns how many trips the latch has recorded: 0 or 1 with
// PerRun, one per host with PerHost. It is one atomic load, so a gate
// can check it before every request and read the new ones with TripsSince.
func (s *Slowdown) Trips() int {
	if s == nil {
		return 0
	}
	return int(s.trips.Load())
}

// TripsSince returns a copy of the trips after the first n, oldest first.
func (s *Slowdown) TripsSince(n int) []SlowdownEvent {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 0 || n >= len(s.events) {
		return nil
	}
	return append([]SlowdownEvent(nil), s.events[n:]...)
}

// Slows reports whether a request to rawURL is slowed now: with PerRun
// once the latch has tripped, with PerHost once rawURL's host has.
func (s *Slowdown) Slows(rawURL string) bool {
	if s == nil || s.trips.Load() == 0 {
		return false
	}
	if s.Scope != PerHost {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.hosts[HostOf(rawURL)]
	return ok
}

// HostOf is the host key of a PerHost trip: rawURL's host[:port] in lower
// case, without the scheme's default port; rawURL itself when it has no
// host.
func HostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return rawURL
	}
	h := strings.ToLower(u.Host)
	if p := u.Port(); (p == "80" && u.Scheme == "http") || (p == "443" && u.Scheme == "https") {
		h = strings.TrimSuffix(h, ":"+p)
	}
	return h
}

// Tripped reports whether the latch has tripped and, if so, the event that
// tripped it. It is a single atomic load, cheap enough for every request.
func (s *Slowdown) Tripped() (SlowdownEvent, bool) {
	if s == nil {
		return SlowdownEvent{}, false
	}
	if e := s.ev.Load(); e != nil {
		return *e, true
	}
	return SlowdownEvent{}, false
}

// C returns a channel that is closed when the latch trips (already closed if
// it has). For a nil *Slowdown it returns nil, which never becomes ready.
func (s *Slowdown) C() <-chan struct{} {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chanLocked()
}

func (s *Slowdown) chanLocked() chan struct{} {
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// Limits returns the effective in-flight bound and gap that apply once the
// latch has tripped (the defaults, 1 and 3s, when the fields are zero). A
// nil *Slowdown reports the defaults.
func (s *Slowdown) Limits() (inFlight int, gap time.Duration) {
	inFlight, gap = DefaultSlowdownInFlight, DefaultSlowdownGap
	if s == nil {
		return inFlight, gap
	}
	if s.InFlight > 0 {
		inFlight = s.InFlight
	}
	if s.Gap > 0 {
		gap = s.Gap
	}
	return inFlight, gap
}
