package frontier

import (
	"context"
	"log/slog"
	"net/url"
	"time"

	"github.com/politecrawl/polite/backoff"
)

// Event names (slog messages) emitted by the Frontier; see the package doc.
const (
	EventAdd        = "frontier.add"
	EventGateWait   = "frontier.gate_wait"
	EventClaim      = "frontier.claim"
	EventCrawlDelay = "frontier.crawl_delay"
	EventHostGap    = "frontier.host_gap"
)

// logAdd emits frontier.add for one Add call. It builds attributes only
// when the logger is enabled for Debug, so a disabled logger costs no
// allocation.
func (f *Frontier) logAdd(ctx context.Context, r *AddResult, rawURL string, depth int, from string) {
	if !f.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	u := r.URL
	if u == "" {
		u = rawURL
	}
	attrs := make([]slog.Attr, 0, 7)
	attrs = append(attrs, slog.String("url", u))
	if from != "" {
		attrs = append(attrs, slog.String("from", from))
	}
	attrs = append(attrs, slog.Int("depth", depth), slog.String("outcome", r.Outcome.key()))
	if rule := r.Verdict.Decision.Rule; rule != nil {
		attrs = append(attrs, slog.String("rule", rule.String()), slog.Int("line", rule.Line))
	}
	if r.Err != nil {
		attrs = append(attrs, slog.String("err", r.Err.Error()))
	}
	f.log.LogAttrs(ctx, slog.LevelDebug, EventAdd, attrs...)
}

// logGateWait emits frontier.gate_wait for an Acquire that waited.
func (f *Frontier) logGateWait(ctx context.Context, u *url.URL, host string, wait time.Duration) {
	if !f.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	f.log.LogAttrs(ctx, slog.LevelDebug, EventGateWait,
		slog.String("url", u.Redacted()), slog.String("host", host), slog.Duration("wait", wait))
}

// key is the outcome attribute of frontier.add: "out_of_scope" and the like.
func (o Outcome) key() string {
	if o >= 0 && o < numOutcomes {
		return outcomeKeys[o]
	}
	return o.String()
}

// logCrawlDelay emits frontier.crawl_delay when Config.HonorCrawlDelay
// changed a host's gap: the Crawl-delay read (absent when robots.txt no
// longer has one) and the gap applied (capped, never below PerHostGap).
func (f *Frontier) logCrawlDelay(ctx context.Context, u string, cd *crawlDelay) {
	if !f.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	attrs := []slog.Attr{slog.String("url", u), slog.String("host", cd.host)}
	if cd.set {
		attrs = append(attrs, slog.Duration("crawl_delay", cd.delay))
	}
	attrs = append(attrs, slog.Duration("gap", cd.applied), slog.Bool("capped", cd.set && cd.delay > time.Duration(f.maxHostGap)))
	f.log.LogAttrs(ctx, slog.LevelInfo, EventCrawlDelay, attrs...)
}

// logHostGap emits frontier.host_gap when Config.Adaptive changed a
// host's gap after a response.
func (f *Frontier) logHostGap(u *url.URL, host string, gap time.Duration, o backoff.Observation) {
	ctx := context.Background()
	if !f.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	attrs := []slog.Attr{slog.String("url", u.Redacted()), slog.String("host", host), slog.Duration("gap", gap), slog.Duration("elapsed", o.Elapsed)}
	if o.Status != 0 {
		attrs = append(attrs, slog.Int("status", o.Status))
	}
	if o.Err != nil {
		attrs = append(attrs, slog.String("err", o.Err.Error()))
	}
	f.log.LogAttrs(ctx, slog.LevelDebug, EventHostGap, attrs...)
}
