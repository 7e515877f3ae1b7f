package crawl

import (
	"time"
)

// Live is the state of a running crawl, for a view that shows it as it goes (the app's live view): the
// same figures as the progress line, read without locking the crawl.
type Live struct {
	Pages, Fetched, Blocked, Errors, Requests int64
	Queued, InFlight                          int
	// MaxInFlight and Gap are the politeness limits in force now: the settings, or 1 and 3 s once a 429
	// slowed the run down (SlowedAt, SlowedBy: when, and which URL answered it).
	MaxInFlight int
	Gap         time.Duration
	SlowedAt    time.Time
	SlowedBy    string
}

// Live returns the crawl's state now. It may be called from any goroutine while the crawl runs.
func (c *Crawler) Live() Live {
	st := c.Front.Stats()
	l := Live{Pages: c.Count.pages.Load(), Fetched: c.Count.fetched.Load(), Blocked: c.Count.blocked.Load(),
		Errors: c.Count.errors.Load(), Requests: c.Count.requests.Load(), Queued: st.Queued, InFlight: st.InFlight,
		MaxInFlight: c.Cfg.Concurrency, Gap: c.Cfg.Gap}
	if ev, ok := c.Slow.Tripped(); ok && st.Slowdown {
		l.MaxInFlight, l.Gap = c.Slow.Limits()
		l.SlowedAt, l.SlowedBy = ev.At, ev.URL
	}
	return l
}
