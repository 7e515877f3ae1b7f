package backoff

import (
	"fmt"
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

// Slowdown is the run-wide latch a 429 trips: once tripped the whole run
// keeps at most InFlight requests in flight with at least Gap between request
// starts, and it never resets. The zero value is untripped and usable; it is
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

	ev atomic.Pointer[SlowdownEvent] // nil until tripped; set exactly once

	mu sync.Mutex
	ch chan struct{} // created lazily, closed on trip
}

// Trip trips the latch, recording url and at, and reports whether this call
// was the one that tripped it (true the first time only). A nil *Slowdown
// never trips.
func (s *Slowdown) Trip(url string, at time.Time) bool {
	if s == nil || s.ev.Load() != nil {
		return false // already tripped: no event to allocate
	}
	if !s.ev.CompareAndSwap(nil, &SlowdownEvent{At: at, URL: url}) {
		return false
	}
	s.mu.Lock()
	close(s.chanLocked())
	s.mu.Unlock()
	return true
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
