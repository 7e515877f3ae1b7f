package frontier

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/fetch"
)

// Limits accepted by New. Values outside them are rejected, not clamped.
const (
	MinInFlight = 1 // least MaxInFlight and PerHostInFlight
	// MaxInFlight is the most MaxInFlight: requests to different hosts
	// in flight at once, bounded by the machine, not by a promise to any
	// one site (a change monitor keeping a million pages on schedule needs
	// more than a hundred).
	MaxInFlight = 256
	// MaxHostInFlight is the most PerHostInFlight: what one site is asked
	// at once.
	MaxHostInFlight = 16
	MaxGap          = 60 * time.Second // most Gap and PerHostGap (least is 0)
	MaxDepth        = 1000             // most Config.MaxDepth
	// MaxURLLength is the longest URL Add accepts, before and after
	// normalization (8 KiB).
	MaxURLLength = 8 << 10
	// DefaultMaxHostGap is the most a Crawl-delay or the Adaptive policy
	// may stretch one host's gap (Config.MaxHostGap 0): Nutch's and
	// StormCrawler's cap (fetcher.max.crawl.delay, 30 s). Heritrix allows
	// 300 s, but at 30 s a 500-page site already takes over four hours.
	DefaultMaxHostGap = 30 * time.Second
)

// Default limits: the audit crawler's published promise.
const (
	DefaultMaxPages    = 500
	DefaultMaxDepth    = 5
	DefaultMaxInFlight = 4
	DefaultGap         = 300 * time.Millisecond
)

// Config holds a Frontier's settings. Start from DefaultConfig and change
// fields; New validates every limit.
type Config struct {
	// MaxPages is the most URLs ever queued (the start pages included);
	// 0 means no limit.
	MaxPages int
	// MaxDepth is the deepest link depth queued; start URLs are depth 0.
	// 0..MaxDepth.
	MaxDepth int
	// MaxInFlight is the most requests in flight at once, run-wide. 1..256.
	MaxInFlight int
	// Gap is the least time between two request starts, run-wide. 0..60s.
	Gap time.Duration
	// PerHostInFlight is the most requests in flight to one host; 0 means
	// MaxInFlight, at most MaxHostInFlight (16). 1..16 otherwise.
	PerHostInFlight int
	// PerHostGap is the least time between two request starts to one host,
	// on top of Gap. 0..60s.
	PerHostGap time.Duration

	// HonorCrawlDelay makes each host's Crawl-delay (from the robots.txt
	// group that applies to the crawler's tokens) its least time between
	// request starts, capped at MaxHostGap and never below PerHostGap; it
	// is read when a URL of the host is queued, from the robots answer
	// that allowed it. Off by default: Crawl Cove promises not to read
	// Crawl-delay. Requires Robots (or Client) to be a *robots.Cache, or
	// any Robots with a Rules(ctx, rawURL) (*robots.Rules, error) method.
	HonorCrawlDelay bool
	// Adaptive, when set, paces each host by how it answers: after every
	// response the host's gap becomes Adaptive(PerHostGap or Gap,
	// MaxHostGap, the current gap, what happened), so a host that slows
	// down or answers 5xx or times out is asked less often, and one that
	// recovers gets its configured pace back. nil (the default) is off;
	// backoff.DefaultAdaptive is a good policy. It needs the requests to
	// come through a fetch.Client (or Transport), which reports each
	// response to the gate.
	Adaptive backoff.Adaptive
	// MaxHostGap caps the gap a Crawl-delay or Adaptive may give one host.
	// 0 means DefaultMaxHostGap (30 s); 0..60s otherwise. PerHostGap and a
	// slowdown's gap are never capped by it.
	MaxHostGap time.Duration

	// Scope says which URLs belong to the crawl; nil means each start URL's
	// host and its www/apex twin (see SameSite), the start URLs being those
	// added at depth 0. Out-of-scope URLs are reported, never queued.
	Scope Scope
	// Client, if set, is the run's polite HTTP client, wired in one step:
	// New makes the Frontier its Gate (Client.Gate must be nil), shares one
	// Slowdown latch between the two (Client.Slowdown, Slowdown, or a new
	// one from Client.Policy when both are nil; both set and different is
	// a ConfigError), and when Robots is nil asks the client's robots
	// checker (Client.Robots, or its private cache: Client.RobotsCache)
	// with the client's tokens, and (when Client.Claimer is nil) makes the
	// Frontier its Claimer, so a redirect's target already seen by the
	// crawl is not requested again (see Frontier.Claim). The client's
	// robots.txt requests then pass this Frontier's gate too. New writes Client.Gate and Client.Slowdown:
	// call it before the client's first request.
	Client *fetch.Client
	// Robots, if set, is asked about every URL before it is queued;
	// *robots.Cache implements it. Only an Allowed verdict queues a URL.
	Robots Robots
	// RobotsTokens are the product tokens Robots is asked for, in order of
	// preference (see robots.Tokens). Empty means Client.Tokens() when
	// Client is set; otherwise they are required when Robots is set.
	RobotsTokens []string
	// Slowdown is the run-wide latch; once it trips, at most its InFlight
	// requests are in flight and its Gap separates starts, if stricter than
	// the limits above. nil means no slowdown (or the Client's, see Client).
	Slowdown *backoff.Slowdown
	// Queue stores queued items and seen URLs; nil means an in-memory
	// store (NewMemoryQueue). A Queue that also implements PersistentQueue
	// is resumed by New (see PersistentQueue).
	Queue Queue
	// Logger receives the decision events frontier.add (Debug) and
	// frontier.gate_wait (Debug); see the package doc. nil means the
	// Client's Logger when Client is set, else silent.
	Logger *slog.Logger
	// Now returns the current time; nil means time.Now. Blocking calls
	// (Next, Acquire) wait on real timers, so tests of them run inside a
	// testing/synctest bubble; NextAt and TryAcquireAt take the time as an
	// argument instead.
	Now func() time.Time
}

// DefaultConfig returns the audit crawler's limits: 500 pages, depth 5,
// 4 requests in flight, 300 ms between request starts.
func DefaultConfig() Config {
	return Config{
		MaxPages:    DefaultMaxPages,
		MaxDepth:    DefaultMaxDepth,
		MaxInFlight: DefaultMaxInFlight,
		Gap:         DefaultGap,
	}
}

// ConfigError reports a Config field outside its accepted range.
type ConfigError struct {
	Field string // e.g. "MaxInFlight"
	Value any    // the rejected value
	Range string // the accepted range, e.g. "1..16"
}

// Error names the setting, the rejected value and the accepted range.
func (e *ConfigError) Error() string {
	if e.Range == "" {
		return fmt.Sprintf("frontier: %s: %v", e.Field, e.Value)
	}
	return fmt.Sprintf("frontier: %s %v out of range %s", e.Field, e.Value, e.Range)
}

func (c *Config) validate() error {
	inRange := fmt.Sprintf("%d..%d", MinInFlight, MaxInFlight)
	gapRange := "0s.." + MaxGap.String()
	switch {
	case c.MaxPages < 0:
		return &ConfigError{"MaxPages", c.MaxPages, "0 (no limit) or more"}
	case c.MaxDepth < 0 || c.MaxDepth > MaxDepth:
		return &ConfigError{"MaxDepth", c.MaxDepth, fmt.Sprintf("0..%d", MaxDepth)}
	case c.MaxInFlight < MinInFlight || c.MaxInFlight > MaxInFlight:
		return &ConfigError{"MaxInFlight", c.MaxInFlight, inRange}
	case c.Gap < 0 || c.Gap > MaxGap:
		return &ConfigError{"Gap", c.Gap, gapRange}
	case c.PerHostInFlight != 0 && (c.PerHostInFlight < MinInFlight || c.PerHostInFlight > MaxHostInFlight):
		return &ConfigError{"PerHostInFlight", c.PerHostInFlight, fmt.Sprintf("0 (= MaxInFlight) or %d..%d", MinInFlight, MaxHostInFlight)}
	case c.PerHostGap < 0 || c.PerHostGap > MaxGap:
		return &ConfigError{"PerHostGap", c.PerHostGap, gapRange}
	case c.MaxHostGap < 0 || c.MaxHostGap > MaxGap:
		return &ConfigError{"MaxHostGap", c.MaxHostGap, "0 (= 30s) or up to " + MaxGap.String()}
	case c.HonorCrawlDelay && c.Robots == nil:
		return &ConfigError{Field: "HonorCrawlDelay", Value: "set without Robots or Client (Crawl-delay comes from robots.txt)"}
	case c.HonorCrawlDelay && !hasRules(c.Robots):
		return &ConfigError{Field: "HonorCrawlDelay", Value: "Robots has no Rules method to read Crawl-delay from"}
	case c.Robots != nil && len(c.RobotsTokens) == 0:
		return &ConfigError{Field: "RobotsTokens", Value: "empty (required when Robots is set without Client)"}
	}
	if s := c.Slowdown; s != nil {
		if s.InFlight > MaxInFlight {
			return &ConfigError{"Slowdown.InFlight", s.InFlight, "0 (= 1) or " + inRange}
		}
		if s.Gap > MaxGap {
			return &ConfigError{"Slowdown.Gap", s.Gap, "0 (= 3s) or up to " + MaxGap.String()}
		}
	}
	return nil
}
