package frontier

import (
	"time"

	"github.com/politecrawl/polite/backoff"
)

// Stats is a snapshot of a Frontier's counters.
type Stats struct {
	Queued   int // URLs queued, not yet handed out
	Adding   int // URLs accepted by Add and waiting for the robots.txt answer
	Out      int // items handed out by Next, not yet Done
	InFlight int // requests admitted by Acquire, not yet released
	Waiting  int // Acquire calls blocked, waiting for their turn
	Done     int // items Done without error
	Failed   int // items Done with an error
	Requests int // requests admitted by Acquire in all
	Blocked  int // URLs refused because of robots.txt (Disallowed + RobotsUnreachable)
	// Dropped counts the URLs Add did not queue, by reason.
	Dropped map[Outcome]int
	// Slowdown is true once a run-wide (backoff.PerRun) slowdown applies;
	// a PerHost one shows in HostStats.Slowdown.
	Slowdown bool
	// Hosts has the counters of every host with a URL or request counted.
	Hosts map[string]HostStats
}

// HostStats are the counters of one host.
type HostStats struct {
	Queued, Out, InFlight, Done, Failed, Requests, Blocked int
	Stopped                                                bool
	// Slowdown is true once a PerHost slowdown applies to the host.
	Slowdown bool
	// Gap is the host's own least time between request starts, when
	// longer than PerHostGap: its PerHost slowdown, Crawl-delay or
	// adaptive gap, whichever is longest. 0 otherwise.
	Gap time.Duration
}

// Stats returns the current counters.
func (f *Frontier) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checkSlowdownLocked()
	s := Stats{
		Queued: f.queued, Adding: f.pending, Out: len(f.out), InFlight: f.inFlight, Waiting: len(f.waiters),
		Done: f.done, Failed: f.failed, Requests: f.requests,
		Blocked:  f.dropped[Disallowed] + f.dropped[RobotsUnreachable],
		Dropped:  make(map[Outcome]int),
		Slowdown: f.sdSeen > 0 && f.cfg.Slowdown.Scope != backoff.PerHost,
		Hosts:    make(map[string]HostStats, len(f.hosts)),
	}
	for o, n := range f.dropped {
		if n > 0 {
			s.Dropped[Outcome(o)] = n
		}
	}
	for name, h := range f.hosts {
		hs := HostStats{
			Queued: h.queued, Out: h.out, InFlight: h.inFlight, Done: h.done, Failed: h.failed,
			Requests: h.requests, Blocked: h.blocked, Stopped: h.stopped,
		}
		if p := h.own; p != nil {
			hs.Slowdown = p.slowGap > 0
			if p.gap > f.perHostGap {
				hs.Gap = time.Duration(p.gap)
			}
		}
		if hs != (HostStats{}) { // skip twins known only for scope
			s.Hosts[name] = hs
		}
	}
	return s
}
