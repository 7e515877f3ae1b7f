package redisfrontier

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/politecrawl/polite/frontier"
)

// FleetStats are the crawl's counters, summed over every worker and shard.
type FleetStats struct {
	frontier.Stats
	// Rehanded counts items handed out again because their lease expired
	// (a worker died or stalled): such an item may have been fetched twice.
	Rehanded int
	// SlotsExpired counts in-flight slots freed by expiry instead of release.
	SlotsExpired int
	// Readmitted counts requests admitted again because their worker could
	// not start them within Config.StartWindow of their admission (a
	// loaded machine, a slow connection); the late admission is never
	// used. Requests counts first admissions only.
	Readmitted int
	// LateStarts counts requests that passed their last start check in
	// time but whose bytes left more than StartWindow after their
	// admission (the worker was descheduled between the check and the
	// write): each was recorded as a start at the moment its worker
	// reported it, so later admissions keep the gap from it.
	LateStarts int
	// Fences counts shards whose serving master changed under the crawl
	// (a replica promoted, a restart): each admitted nothing more until
	// every site's gap had passed since the change, since requests the old
	// master admitted just before may not have reached the new one.
	Fences int
	// Sites is the number of sites started.
	Sites int
	// SlowdownURL and SlowdownAt say what tripped the crawl-wide slowdown,
	// and when (Redis server time); SlowedSites counts sites slowed alone
	// (Config.SlowSiteOnly).
	SlowdownURL string
	SlowdownAt  time.Time
	SlowedSites int
}

// Stats returns the fleet-wide counters, Hosts included (keyed by site
// unit: a host with its www twin folded in), or zero Stats if Redis cannot
// be reached (logged). It reads every unit: O(hosts); use FleetStats for a
// cheap progress line.
func (f *Frontier) Stats() frontier.Stats {
	ctx, cancel := context.WithTimeout(context.Background(), max(f.outage, 0)+10*time.Second)
	defer cancel()
	s, err := f.fleetStats(ctx, true)
	if err != nil {
		f.logAt(slog.LevelWarn, "redisfrontier.unavailable", "op", "stats", "err", err)
	}
	return s.Stats
}

// FleetStats returns the fleet-wide counters without the per-host map:
// one small call per shard.
func (f *Frontier) FleetStats(ctx context.Context) (FleetStats, error) {
	return f.fleetStats(ctx, false)
}

func (f *Frontier) fleetStats(ctx context.Context, hosts bool) (FleetStats, error) {
	fs := FleetStats{Stats: frontier.Stats{Dropped: make(map[frontier.Outcome]int)}}
	if hosts {
		fs.Hosts = make(map[string]frontier.HostStats)
	}
	flag := "0"
	if hosts {
		flag = "1"
	}
	for i := range f.tags {
		res, err := f.run(ctx, i, scriptStats, flag)
		if err != nil {
			return fs, err
		}
		g := pairs(res[1])
		fs.Queued += atoi(g["queued"])
		fs.Out += atoi(g["out"])
		fs.InFlight += atoi(g["inflight"])
		fs.Done += atoi(g["done"])
		fs.Failed += atoi(g["failed"])
		fs.Requests += atoi(g["requests"])
		fs.Rehanded += atoi(g["rehanded"])
		fs.SlotsExpired += atoi(g["slotsexpired"])
		fs.Readmitted += atoi(g["readmits"])
		fs.LateStarts += atoi(g["latestarts"])
		fs.Fences += atoi(g["fences"])
		fs.SlowedSites += atoi(g["slowedunits"])
		fs.Sites += atoi(g["sites"])
		if g["slowed"] == "1" {
			fs.Slowdown = true
			at := time.UnixMicro(int64(atoi(g["sdat"])))
			if fs.SlowdownAt.IsZero() || at.Before(fs.SlowdownAt) {
				fs.SlowdownAt, fs.SlowdownURL = at, g["sdurl"]
			}
		}
		for k, v := range g {
			if c, ok := strings.CutPrefix(k, "drop:"); ok {
				if n := atoi(v); n != 0 {
					fs.Dropped[frontier.Outcome(atoi(c))] += n
				}
			}
		}
		for j := 2; j+1 < len(res); j += 2 {
			name, _ := res[j].(string)
			v, _ := res[j+1].([]any)
			if len(v) < 11 {
				continue
			}
			str := func(k int) string { s, _ := v[k].(string); return s }
			hs := frontier.HostStats{
				Queued: atoi(str(0)), Out: atoi(str(1)), InFlight: atoi(str(2)), Done: atoi(str(3)),
				Failed: atoi(str(4)), Requests: atoi(str(5)), Blocked: atoi(str(6)), Stopped: str(7) == "1",
			}
			if hs != (frontier.HostStats{}) {
				fs.Hosts[name] = hs
			}
		}
	}
	fs.Blocked = fs.Dropped[frontier.Disallowed] + fs.Dropped[frontier.RobotsUnreachable]
	return fs, nil
}

func pairs(v any) map[string]string {
	l, _ := v.([]any)
	m := make(map[string]string, len(l)/2)
	for i := 0; i+1 < len(l); i += 2 {
		k, _ := l[i].(string)
		s, _ := l[i+1].(string)
		m[k] = s
	}
	return m
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
