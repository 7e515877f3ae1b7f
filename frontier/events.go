package frontier

import (
	"context"
	"log/slog"
	"net/url"
	"time"
)

// Event names (slog messages) emitted by the Frontier; see the package doc.
const (
	EventAdd      = "frontier.add"
	EventGateWait = "frontier.gate_wait"
	EventClaim    = "frontier.claim"
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
