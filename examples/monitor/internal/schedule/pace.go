package schedule

import (
	"cmp"
	"slices"
	"time"

	"golang.org/x/time/rate"

	"github.com/politecrawl/polite/examples/monitor/internal/store"
)

// Catch-up: after downtime every page is overdue at once, and pages tracked
// together are all due at once. Such a backlog is never taken in a burst:
// its checks start at most CatchUp a minute (a token bucket,
// golang.org/x/time/rate, with a burst of CatchUpBurst), oldest due first,
// and a pass takes at most what the bucket gives in about a minute, leaving
// the rest due for the next pass. Pages due within the last CatchUpGrace
// are on schedule: their due times are already spread (jitter, and the
// pace they were caught up at), so they are not held back. Each page's
// next check is one interval (plus its jitter, store.Jitter) after this
// one, so the spread the bound makes is the spread of the days after.
const (
	// DefaultCatchUp is the backlog's default rate, checks per minute:
	// 10,000 overdue pages are caught up in under three hours, well inside
	// the six-hour minimum interval.
	DefaultCatchUp = 60
	// CatchUpBurst is how many backlog checks may start at once before
	// the rate applies (a few pages tracked by hand are checked at once).
	CatchUpBurst = 10
	// CatchUpGrace is how late a page may be and still be on schedule: a
	// cron `run` every few minutes finds its pages a few minutes late.
	CatchUpGrace = 15 * time.Minute
)

// catchUpRate is the configured bound, per minute.
func (r *Runner) catchUpRate() float64 { return cmp.Or(r.CatchUp, DefaultCatchUp) }

// catchUpLimiter is the runner's one bucket, kept across the passes of
// Watch so a backlog is paced however many passes it takes.
func (r *Runner) catchUpLimiter() *rate.Limiter {
	r.catchUpOnce.Do(func() {
		r.catchUp = rate.NewLimiter(rate.Limit(r.catchUpRate()/60), CatchUpBurst)
	})
	return r.catchUp
}

// InBacklog reports whether a due page is backlog at now: never checked,
// or overdue by more than CatchUpGrace.
func InBacklog(p store.Page, now time.Time) bool {
	return p.LastAttempt.IsZero() || p.Due().Before(now.Add(-CatchUpGrace))
}

// pace splits the due pages of one pass: every page on schedule, then the
// backlog, oldest due first, as much of it as one pass may take. backlog
// names the pages that wait for the bucket; later counts those left due.
func (r *Runner) pace(due []store.Page, now time.Time) (take []store.Page, backlog map[string]bool, later int) {
	var onTime, back []store.Page
	for _, p := range due {
		if InBacklog(p, now) {
			back = append(back, p)
		} else {
			onTime = append(onTime, p)
		}
	}
	slices.SortStableFunc(back, func(a, b store.Page) int { return a.Due().Compare(b.Due()) })
	// One pass takes what the bucket gives in a minute (MaxWatchSleep),
	// so pages coming due meanwhile wait at most that long for the next.
	budget := CatchUpBurst + int(r.catchUpRate()*MaxWatchSleep.Minutes())
	if len(back) > budget {
		later = len(back) - budget
		back = back[:budget]
	}
	backlog = make(map[string]bool, len(back))
	for _, p := range back {
		backlog[p.URL] = true
	}
	return append(onTime, back...), backlog, later
}
