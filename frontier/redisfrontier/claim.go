package redisfrontier

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/internal/urlnorm"
)

var _ fetch.Claimer = (*Frontier)(nil)

// Claim records, fleet-wide, that a redirect led a worker to u and it is
// about to be requested (fetch.Claimer; Config.Client wires it): true
// adds u's normalized URL to its site's seen set, so a later Add of it by
// any worker is a Duplicate; false means some worker has queued or
// requested it already, and it must not be requested again. A URL of no
// site of the crawl is not recorded (true). One Redis round trip, only
// for redirect hops. The redirected page's links belong to the final URL
// (Result.FinalURL).
func (f *Frontier) Claim(ctx context.Context, u *url.URL) (bool, error) {
	if u == nil {
		return true, nil
	}
	n, err := urlnorm.Normalize(u.String())
	if err != nil {
		return true, nil
	}
	unit := unitOf(urlnorm.Host(n))
	f.mu.Lock()
	_, notSite := f.notSites[unit]
	f.mu.Unlock()
	if notSite {
		f.logClaim(ctx, n, "out_of_scope")
		return true, nil
	}
	h, lb := urlHash(n)
	r, err := f.run(ctx, f.shardOf(unit), scriptClaim, unit, h, lb)
	if err != nil {
		return false, fmt.Errorf("redisfrontier: claiming %s: %w", n, err)
	}
	switch st, _ := r[1].(string); st {
	case "DUP":
		f.logClaim(ctx, n, "duplicate")
		return false, nil
	case "OOS":
		f.logClaim(ctx, n, "out_of_scope")
	default:
		f.logClaim(ctx, n, "claimed")
	}
	return true, nil
}

func (f *Frontier) logClaim(ctx context.Context, u, outcome string) {
	if f.log == nil || !f.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	f.log.LogAttrs(ctx, slog.LevelDebug, frontier.EventClaim, slog.String("url", u), slog.String("outcome", outcome))
}
