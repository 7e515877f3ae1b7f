package fetch

import (
	"context"
	"log/slog"
	"time"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/robots"
)

// Event names (slog messages) emitted by this package; see the package doc.
const (
	EventDisallowed      = "fetch.disallowed"
	EventRedirectRefused = "fetch.redirect_refused"
	EventRetry           = "fetch.retry"
	EventSlowdownTripped = "slowdown.tripped"
	EventAddressRefused  = "fetch.address_refused"
)

// logAddressRefused emits fetch.address_refused: the Guard refused a URL
// (hop 0) or redirect target (hop n) by name, before any request.
func logAddressRefused(ctx context.Context, l *slog.Logger, e *AddressError, hop int) {
	if !enabled(ctx, l, slog.LevelInfo) {
		return
	}
	attrs := make([]slog.Attr, 0, 5)
	attrs = append(attrs, slog.String("url", e.URL), slog.String("host", e.Host))
	if e.Addr.IsValid() {
		attrs = append(attrs, slog.String("addr", e.Addr.String()))
	}
	attrs = append(attrs, slog.String("reason", e.Reason), slog.Int("hop", hop))
	l.LogAttrs(ctx, slog.LevelInfo, EventAddressRefused, attrs...)
}

// enabled reports whether l wants events at level. A nil logger is silent;
// callers test this before building any attribute, so a disabled logger
// costs no allocation.
func enabled(ctx context.Context, l *slog.Logger, level slog.Level) bool {
	return l != nil && l.Enabled(ctx, level)
}

// tripSlowdown trips s for url and, on the first trip only, emits
// slowdown.tripped.
func tripSlowdown(ctx context.Context, l *slog.Logger, s *backoff.Slowdown, url string, status int, now time.Time) {
	if !s.Trip(url, now) || !enabled(ctx, l, slog.LevelWarn) {
		return
	}
	inFlight, gap := s.Limits()
	attrs := []slog.Attr{slog.String("url", url)}
	if status != 0 {
		attrs = append(attrs, slog.Int("status", status))
	}
	attrs = append(attrs, slog.Int("in_flight", inFlight), slog.Duration("gap", gap))
	l.LogAttrs(ctx, slog.LevelWarn, EventSlowdownTripped, attrs...)
}

// logDisallowed emits fetch.disallowed for a URL (hop 0) or redirect target
// (hop n) that robots.txt refused.
func logDisallowed(ctx context.Context, l *slog.Logger, url string, v *robots.Verdict, hop int) {
	if !enabled(ctx, l, slog.LevelInfo) {
		return
	}
	attrs := make([]slog.Attr, 0, 5)
	attrs = append(attrs, slog.String("url", url), slog.String("outcome", v.Outcome.String()))
	if r := v.Decision.Rule; r != nil {
		attrs = append(attrs, slog.String("rule", r.String()), slog.Int("line", r.Line))
	}
	attrs = append(attrs, slog.Int("hop", hop))
	l.LogAttrs(ctx, slog.LevelInfo, EventDisallowed, attrs...)
}

// logRedirectRefused emits fetch.redirect_refused: a redirect from url to
// to (empty when the Location was unusable) was not followed because of err.
func logRedirectRefused(ctx context.Context, l *slog.Logger, url, to string, err error) {
	if !enabled(ctx, l, slog.LevelInfo) {
		return
	}
	attrs := make([]slog.Attr, 0, 3)
	attrs = append(attrs, slog.String("url", url))
	if to != "" {
		attrs = append(attrs, slog.String("to", to))
	}
	attrs = append(attrs, slog.String("err", err.Error()))
	l.LogAttrs(ctx, slog.LevelInfo, EventRedirectRefused, attrs...)
}

// logRetry emits fetch.retry: attempt number attempt of url ended with
// status (0: none) or err, and is retried after wait.
func logRetry(ctx context.Context, l *slog.Logger, url string, attempt, status int, err error, wait time.Duration) {
	if !enabled(ctx, l, slog.LevelInfo) {
		return
	}
	attrs := make([]slog.Attr, 0, 5)
	attrs = append(attrs, slog.String("url", url), slog.Int("attempt", attempt))
	if status != 0 {
		attrs = append(attrs, slog.Int("status", status))
	}
	if err != nil {
		attrs = append(attrs, slog.String("err", err.Error()))
	}
	attrs = append(attrs, slog.Duration("wait", wait))
	l.LogAttrs(ctx, slog.LevelInfo, EventRetry, attrs...)
}
