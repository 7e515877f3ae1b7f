package crawl

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/politecrawl/polite/fetch"
)

// A redirect whose target the crawl already has (queued, fetched, or reached through another redirect)
// is not followed: fetch stops at it (Result.DuplicateTarget, asked of the frontier, its Claimer), so a URL
// is requested once per crawl however it is reached. Its row is stored as the redirect it is, the last
// hop's status and the target as final URL; once the crawl is over, the chain is completed from the row
// that did request the target, so the findings and the report read it as if it had been followed.

// duplicateRecord makes p, the row of a Get that stopped at a redirect to a target the crawl has, that
// redirect: the hop is appended and the target is the final URL; the status stays the 3xx, which marks
// the row as waiting for its target's (completeChains).
func duplicateRecord(p *store.PageRecord, hop store.HopRecord, target string) {
	p.Redirects = append(p.Redirects, hop)
	p.FinalURL = store.NormalizeOrSelf(target)
	p.ContentType, p.Bytes = "", 0
}

// reachedURL is a URL of the site a redirect chain requested after the chain's first (a target the
// frontier let the client claim): the chain's row (its links left out) and where in it the URL was. While
// the chain's Get is still running, chain is nil, and named holds the first link or sitemap entry that
// named the URL meanwhile, so that its row is made when the chain ends.
type reachedURL struct {
	chain *store.PageRecord
	hop   int // index into chain.Redirects; len(chain.Redirects) = the final URL
	named *naming
}

// naming is where a link or a sitemap named a URL: what its row records as depth, found_on and source.
type naming struct {
	depth        int
	from, source string
}

// claimRecorder is the pages client's Claimer: the frontier's (which decides), noting each target it
// lets the client request, so that a link naming it before the chain ends is not lost (rowReached).
type claimRecorder struct {
	c    *Crawler
	next fetch.Claimer
}

func (r claimRecorder) Claim(ctx context.Context, u *url.URL) (bool, error) {
	ok, err := r.next.Claim(ctx, u)
	if ok && err == nil && r.c.InScope(u) {
		k := store.NormalizeOrSelf(u.String())
		r.c.mu.Lock()
		if _, known := r.c.reached[k]; !known && !r.c.recorded.has(k) {
			r.c.reached[k] = reachedURL{}
		}
		r.c.mu.Unlock()
	}
	return ok, err
}

// rememberReached notes the URLs p's chain requested after its own. They will not be requested again
// (the frontier knows them as seen): when a link or a sitemap names one later, it gets its row from
// here (rowReached) rather than from a request; one already named while the chain ran gets it now.
func (c *Crawler) rememberReached(p *store.PageRecord, res *fetch.Result, err error) {
	last := len(p.Redirects)
	if res.DuplicateTarget != "" || err != nil {
		// The target was not requested: it has a row, or will have one, of its own; or the chain failed
		// at its end (a loop, an 11th hop, a refused target: not requested), and only its hops surely were.
		last--
	}
	if last < 1 {
		return
	}
	chain := *p
	chain.Links, chain.Findings = nil, nil // the document's links and own findings are written once, with p
	var now []*store.PageRecord
	c.mu.Lock()
	for i := 1; i <= last; i++ {
		raw := p.FinalURL
		if i < len(p.Redirects) {
			raw = p.Redirects[i].URL
		}
		u, perr := url.Parse(raw)
		if perr != nil || !c.InScope(u) {
			continue
		}
		k := store.NormalizeOrSelf(raw)
		if c.recorded.has(k) {
			continue
		}
		r := reachedURL{chain: &chain, hop: i}
		if prev := c.reached[k]; prev.named != nil {
			delete(c.reached, k)
			now = append(now, r.row(k, *prev.named))
			continue
		}
		c.reached[k] = r
	}
	c.mu.Unlock()
	for _, row := range now {
		c.recordOnce(row)
	}
}

// rowReached records the row of a URL a link or a sitemap names that a redirect chain has requested
// already, or notes the naming while that chain is still running.
func (c *Crawler) rowReached(u string, depth int, from, source string) {
	c.mu.Lock()
	r, ok := c.reached[u]
	switch {
	case !ok:
	case r.chain == nil:
		if r.named == nil {
			r.named = &naming{depth, from, source}
			c.reached[u] = r
		}
		ok = false
	default:
		delete(c.reached, u)
	}
	c.mu.Unlock()
	if ok {
		c.recordOnce(r.row(u, naming{depth, from, source}))
	}
}

// row is the pages row of u, reached at r: a hop's row is the rest of the chain from there, the final
// URL's the page itself.
func (r reachedURL) row(u string, n naming) *store.PageRecord {
	p := *r.chain
	if r.hop < len(p.Redirects) {
		p = store.PageRecord{URL: u, FinalURL: p.FinalURL, Status: p.Status, Redirects: p.Redirects[r.hop:], Attempts: len(p.Redirects) - r.hop + 1,
			ContentType: p.ContentType, FetchedAt: p.FetchedAt, Err: p.Err, ErrKind: p.ErrKind}
	} else {
		p.URL, p.Redirects, p.Attempts = u, nil, 1
	}
	p.Depth, p.FoundOn, p.Source = n.depth, n.from, n.source
	return &p
}

// stoppedAtDuplicate says whether p is such a row, its chain not completed yet. Any other row that
// redirected ends in the status of a response that was not a redirect, or in an error.
func stoppedAtDuplicate(p *store.PageRecord) bool {
	n := len(p.Redirects)
	return !p.Blocked && p.Err == "" && n > 0 && p.Status == p.Redirects[n-1].Status && isRedirectStatus(p.Status)
}

func isRedirectStatus(s int) bool {
	switch s {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// completeChains completes the chains of the rows that stopped at a target the crawl had, from the row
// that requested that target (the target's own row, or a redirect that reached it), and returns the rows
// it changed. A row whose target was never requested (an interrupted crawl) is left as it is. A chain
// that comes back to a URL it passed is a redirect loop, as fetch would have found following it.
func completeChains(pages []*store.PageRecord) []store.ChainEnd {
	type at struct {
		p   *store.PageRecord
		hop int // the target is the URL requested at this hop of p's chain (len = the final URL)
	}
	reached := map[string]at{}
	pending := map[string]*store.PageRecord{}
	for _, p := range pages {
		switch {
		case stoppedAtDuplicate(p):
			pending[p.URL] = p
		case !p.Blocked:
			reached[p.URL] = at{p, 0}
		}
	}
	for _, p := range pages {
		if p.Blocked || pending[p.URL] != nil {
			continue
		}
		for i := 1; i <= len(p.Redirects); i++ {
			u := p.FinalURL
			if i < len(p.Redirects) {
				u = p.Redirects[i].URL
			}
			if k := store.NormalizeOrSelf(u); u != "" {
				if _, ok := reached[k]; !ok {
					reached[k] = at{p, i}
				}
			}
		}
	}
	var changed []store.ChainEnd
	done := map[string]bool{}
	var complete func(p *store.PageRecord)
	complete = func(p *store.PageRecord) {
		if done[p.URL] {
			return
		}
		done[p.URL] = true
		target := p.FinalURL
		src, ok := reached[target]
		if q := pending[target]; q != nil {
			complete(q) // the target stopped at a duplicate too: complete it first (a cycle stops at done)
			src, ok = at{q, 0}, true
		}
		if !ok || src.p == p {
			return
		}
		hops := append(append([]store.HopRecord(nil), p.Redirects...), src.p.Redirects[src.hop:]...)
		final := src.p.FinalURL
		if final == "" {
			final = target
		}
		seen := map[string]bool{}
		for i := 0; i <= len(hops); i++ {
			u := final
			if i < len(hops) {
				u = hops[i].URL
			}
			k := store.NormalizeOrSelf(u)
			if seen[k] {
				p.Redirects, p.Status, p.ContentType = hops[:i], 0, ""
				p.Err, p.ErrKind = fmt.Sprintf("redirected to %s, already requested in this chain", u), "redirect_loop"
				changed = append(changed, store.ChainEnd{Page: p})
				return
			}
			seen[k] = true
		}
		if len(hops) > maxChain {
			p.Redirects, p.Status, p.ContentType = hops[:maxChain+1], 0, ""
			p.Err, p.ErrKind = fmt.Sprintf("redirect %d (to %s) not followed, the limit is %d", maxChain+1, hops[maxChain].Location, maxChain), "too_many_redirects"
			changed = append(changed, store.ChainEnd{Page: p})
			return
		}
		p.Redirects, p.FinalURL, p.Status, p.ContentType, p.Err, p.ErrKind = hops, final, src.p.Status, src.p.ContentType, src.p.Err, src.p.ErrKind
		// The page fields too, as if the chain had been followed: the row reads the same whichever of
		// the two URLs the crawl requested first.
		q := src.p
		p.Parsed, p.Title, p.TitleCount, p.Description, p.DescriptionCount = q.Parsed, q.Title, q.TitleCount, q.Description, q.DescriptionCount
		p.Canonical, p.MetaRobots, p.XRobots, p.H1Count, p.WordCount = q.Canonical, q.MetaRobots, q.XRobots, q.H1Count, q.WordCount
		p.WordPress, p.WordPressHint = q.WordPress, q.WordPressHint
		changed = append(changed, store.ChainEnd{Page: p, ContentOf: q.URL})
	}
	for _, p := range pages {
		if pending[p.URL] == p {
			complete(p)
		}
	}
	return changed
}

// maxChain is the client's redirect limit (fetch.Client.MaxRedirects of the pages client).
const maxChain = 10
