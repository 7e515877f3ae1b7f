package frontier

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/urlnorm"
)

var _ fetch.Claimer = (*Frontier)(nil)

// Claim records that a redirect led the crawl to u and it is about to be
// requested (fetch.Claimer; Config.Client wires it): it returns true and
// marks u's normalized URL seen, so a later Add of it is a Duplicate, or
// false when the URL was seen already — queued, handed out or fetched,
// from a link, a sitemap or another redirect — and must not be requested
// again. A URL outside the crawl's scope is not recorded (true), nor is
// one that does not normalize (fetch reports it). The redirected page's
// links belong to the final URL: add them with from = Result.FinalURL.
//
// A claimed URL does not count against MaxPages (the item that redirected
// is the page) and is not queued. With a PersistentQueue the claim lives
// in memory only, like every visit that is not pushed: after a resume, a
// target claimed before the crash may be requested once more.
func (f *Frontier) Claim(ctx context.Context, u *url.URL) (bool, error) {
	if u == nil {
		return true, nil
	}
	n, err := urlnorm.Normalize(u.String())
	if err != nil {
		return true, nil
	}
	if f.cfg.Scope != nil {
		pu, err := url.Parse(n)
		if err != nil || !f.cfg.Scope(pu) {
			f.logClaim(ctx, n, "out_of_scope")
			return true, nil
		}
	}
	hostName := urlnorm.Host(n)
	f.mu.Lock()
	if f.cfg.Scope == nil {
		if h := f.hosts[hostName]; h == nil || !h.inScope {
			f.mu.Unlock()
			f.logClaim(ctx, n, "out_of_scope")
			return true, nil
		}
	}
	seen, err := f.queue.Visit(n)
	f.mu.Unlock()
	if err != nil {
		return false, fmt.Errorf("frontier: recording %s as seen: %w", n, err)
	}
	if seen {
		f.logClaim(ctx, n, "duplicate")
		return false, nil
	}
	f.logClaim(ctx, n, "claimed")
	return true, nil
}

// logClaim emits frontier.claim.
func (f *Frontier) logClaim(ctx context.Context, u, outcome string) {
	if f.log == nil || !f.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	f.log.LogAttrs(ctx, slog.LevelDebug, EventClaim, slog.String("url", u), slog.String("outcome", outcome))
}
