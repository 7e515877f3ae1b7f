package redisfrontier

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
)

// Limits are one site's limits. A site is a start URL's host with its
// www/apex twin (frontier.Twin); its in-flight limit and gap hold for the
// two hosts together, across every worker of the fleet.
type Limits struct {
	// MaxPages is the most URLs of the site ever queued (its start URL
	// included); 0 means no limit.
	MaxPages int
	// MaxDepth is the deepest link depth queued; start URLs are 0.
	// 0..frontier.MaxDepth.
	MaxDepth int
	// InFlight is the most requests in flight to the site at once, fleet
	// wide. 1..16.
	InFlight int
	// Gap is the least time between two request starts to the site, fleet
	// wide, measured on the Redis server's clock. 0..60s.
	Gap time.Duration
}

// DefaultLimits are the audit crawler's published promise, per site:
// 500 pages, depth 5, 4 requests in flight, 300 ms between request starts.
func DefaultLimits() Limits {
	return Limits{
		MaxPages: frontier.DefaultMaxPages,
		MaxDepth: frontier.DefaultMaxDepth,
		InFlight: frontier.DefaultMaxInFlight,
		Gap:      frontier.DefaultGap,
	}
}

// Defaults of Config fields left zero.
const (
	DefaultPrefix = "polite"
	DefaultLease  = 30 * time.Second
	DefaultOutage = 30 * time.Second
	MinLease      = 200 * time.Millisecond
	MaxShards     = 1024
)

// Config.StartWindow: the default (0) and the accepted range.
const (
	DefaultStartWindow = 10 * time.Millisecond
	MinStartWindow     = time.Millisecond
	MaxStartWindow     = 10 * time.Second
)

// Config holds a Frontier's settings. Every worker of a crawl must use the
// same Crawl, Prefix, Shards, MaxInFlight, Gap, StartWindow and Slowdown
// limits (New refuses a mismatch); Site, Robots, Lease and Logger are per
// worker.
type Config struct {
	// Crawl names the crawl; workers with the same name share it. Letters,
	// digits and "-_." only.
	Crawl string
	// Prefix starts every key; "" means DefaultPrefix ("polite").
	Prefix string
	// Shards splits the crawl over that many hash tags (Redis Cluster
	// slots) by site; 0 means 1. Run-wide limits (MaxInFlight, Gap, the
	// crawl-wide slowdown) then hold per shard. 1..1024.
	Shards int
	// MaxInFlight is the most requests in flight at once in the whole
	// crawl (per shard); 0 means no run-wide limit, only per site.
	MaxInFlight int
	// Gap is the least time between two request starts in the whole crawl
	// (per shard); 0..60s.
	Gap time.Duration
	// Site holds the limits of sites whose start URL is added with Add
	// (AddSite takes its own). The zero value means DefaultLimits(). Hosts
	// of no site (a redirect target elsewhere) get its InFlight and Gap.
	Site Limits
	// Client, if set, is this worker's polite HTTP client, wired in one
	// step as with frontier.Config.Client: New makes the Frontier its Gate
	// (Client.Gate must be nil), sets its Transport to
	// Frontier.Transport(Client.Transport) so that requests start within
	// StartWindow of their admission (a nil Transport with Client.Guard set
	// becomes Guard.NewTransport(), so the SSRF guard stays in the
	// dialer), makes the Frontier its Claimer when it has none (a
	// redirect target seen by the fleet is not requested again), shares one Slowdown latch between
	// the two, asks the client's robots checker when Robots is nil, takes
	// its tokens when RobotsTokens is empty and its Logger when Logger is
	// nil, and gives the client's robots cache this crawl's RobotsStore
	// when it has no Store, so the fleet fetches each robots.txt once.
	// Call New before the client's first request: a fetch.Client reads
	// its Transport once.
	Client *fetch.Client
	// Robots, if set, is asked about every URL of a site before it is
	// queued, for the product tokens RobotsTokens, which must then be set
	// (robots.Tokens(userAgent)) unless Client is; *robots.Cache
	// implements it.
	Robots       frontier.Robots
	RobotsTokens []string
	// Slowdown is this worker's latch (share it with fetch.Client). When it
	// trips, the trip is written to Redis: from then on the whole crawl
	// (every shard) — or only the tripping site when SlowSiteOnly is set —
	// keeps at most Slowdown.InFlight requests in flight with Slowdown.Gap
	// between starts, for every worker. Its limits must match across
	// workers. nil means the defaults (1, 3s) when another worker trips.
	Slowdown *backoff.Slowdown
	// SlowSiteOnly limits a trip to the site whose response tripped it.
	SlowSiteOnly bool
	// Lease is how long an item handed out, or an in-flight slot, stays
	// with a worker that stops renewing it (renewal runs every Lease/3):
	// after it a dead worker's items are handed out again and its slots
	// free themselves. 0 means 30s; at least 200ms.
	Lease time.Duration
	// StartWindow is the longest a worker may take from the moment it
	// asked the gate for a request (the Redis call that admitted it) to
	// the moment the request's first bytes are written; a request that
	// could not start in time is not sent but admitted again. The gate
	// spaces admissions by every nonzero gap plus StartWindow, so that
	// requests start — leave the fleet — at least the gap apart (see the
	// package doc). It must exceed this worker's Redis round trip. 0 means
	// DefaultStartWindow (10ms); MinStartWindow..MaxStartWindow.
	StartWindow time.Duration
	// Outage is how long calls keep retrying while Redis is unreachable
	// before they fail with ErrUnavailable; 0 means 30s, negative means no
	// retry.
	Outage time.Duration
	// Logger receives decision events (frontier.add, frontier.gate_wait,
	// redisfrontier.admit — each admission with its Redis time at_us, and
	// again=true for a request admitted again — and
	// redisfrontier.readmit at Debug), requests that left later than
	// StartWindow after their admission (redisfrontier.late_start at
	// Warn) and Redis trouble (redisfrontier.unavailable,
	// redisfrontier.lease_lost at Warn, redisfrontier.state_lost at
	// Error). nil means silent.
	Logger *slog.Logger
}

// DefaultConfig returns the Config of a crawl named crawl with the
// default per-site limits and no run-wide limit.
func DefaultConfig(crawl string) Config {
	return Config{Crawl: crawl, Site: DefaultLimits()}
}

func (c *Config) validate() error {
	bad := func(field string, v any, r string) error {
		return &frontier.ConfigError{Field: field, Value: v, Range: r}
	}
	if c.Crawl == "" || strings.Trim(c.Crawl, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != "" {
		return bad("Crawl", fmt.Sprintf("%q", c.Crawl), "letters, digits and -_. (not empty)")
	}
	if strings.ContainsAny(c.Prefix, "{}") {
		return bad("Prefix", fmt.Sprintf("%q", c.Prefix), "no braces")
	}
	if c.Shards < 0 || c.Shards > MaxShards {
		return bad("Shards", c.Shards, fmt.Sprintf("0 (= 1) or 1..%d", MaxShards))
	}
	if c.MaxInFlight < 0 {
		return bad("MaxInFlight", c.MaxInFlight, "0 (no run-wide limit) or more")
	}
	if c.Gap < 0 || c.Gap > frontier.MaxGap {
		return bad("Gap", c.Gap, "0s.."+frontier.MaxGap.String())
	}
	if err := c.Site.validate("Site."); err != nil {
		return err
	}
	if c.Robots != nil && len(c.RobotsTokens) == 0 {
		return &frontier.ConfigError{Field: "RobotsTokens", Value: "none (required when Robots is set)"}
	}
	if c.StartWindow != 0 && (c.StartWindow < MinStartWindow || c.StartWindow > MaxStartWindow) {
		return bad("StartWindow", c.StartWindow, "0 (= "+DefaultStartWindow.String()+") or "+MinStartWindow.String()+".."+MaxStartWindow.String())
	}
	if c.Lease != 0 && c.Lease < MinLease {
		return bad("Lease", c.Lease, "0 (= 30s) or at least "+MinLease.String())
	}
	if s := c.Slowdown; s != nil {
		if s.InFlight > frontier.MaxHostInFlight {
			return bad("Slowdown.InFlight", s.InFlight, fmt.Sprintf("0 (= 1) or 1..%d", frontier.MaxHostInFlight))
		}
		if s.Gap > frontier.MaxGap {
			return bad("Slowdown.Gap", s.Gap, "0 (= 3s) or up to "+frontier.MaxGap.String())
		}
	}
	return nil
}

func (l *Limits) validate(prefix string) error {
	bad := func(field string, v any, r string) error {
		return &frontier.ConfigError{Field: prefix + field, Value: v, Range: r}
	}
	switch {
	case l.MaxPages < 0:
		return bad("MaxPages", l.MaxPages, "0 (no limit) or more")
	case l.MaxDepth < 0 || l.MaxDepth > frontier.MaxDepth:
		return bad("MaxDepth", l.MaxDepth, fmt.Sprintf("0..%d", frontier.MaxDepth))
	case l.InFlight < frontier.MinInFlight || l.InFlight > frontier.MaxHostInFlight:
		return bad("InFlight", l.InFlight, fmt.Sprintf("%d..%d", frontier.MinInFlight, frontier.MaxHostInFlight))
	case l.Gap < 0 || l.Gap > frontier.MaxGap:
		return bad("Gap", l.Gap, "0s.."+frontier.MaxGap.String())
	}
	return nil
}
