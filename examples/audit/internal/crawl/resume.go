package crawl

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/neardup"
	"github.com/politecrawl/polite/examples/audit/internal/store"
)

// ResumeConfig gives cfg the crawl's own settings. It refuses a crawl whose pages were fingerprinted
// for near-duplicates another way than this build's (an earlier audit's): the near-duplicate pass
// compares every page's fingerprint with every other's, and fingerprints of two versions estimate
// nothing, so the pages fetched before and after the resume could not be compared.
func ResumeConfig(cfg *Config, row *store.CrawlRow) error {
	s := row.Settings
	if v := max(s.Fingerprint, 1); v != neardup.Version {
		// The callers name the crawl.
		return store.Usagef("written by another version of the audit, whose near-duplicate fingerprints (version %d) this one (version %d) cannot compare with its own: it cannot be resumed; start a new crawl",
			v, neardup.Version)
	}
	gap, err := time.ParseDuration(s.Gap)
	if err != nil {
		return fmt.Errorf("settings: gap %q: %v", s.Gap, err)
	}
	timeout, err := time.ParseDuration(s.Timeout)
	if err != nil {
		return fmt.Errorf("settings: timeout %q: %v", s.Timeout, err)
	}
	cfg.URL, cfg.UserAgent = row.StartURL, row.UserAgent
	cfg.MaxPages, cfg.MaxDepth, cfg.Concurrency, cfg.Gap, cfg.Timeout = s.MaxPages, s.MaxDepth, s.Concurrency, gap, timeout
	cfg.Demo = s.Demo
	if len(cfg.Resolve) == 0 {
		cfg.Resolve = s.Resolve
	}
	if cfg.Render == 0 && s.Render > 0 {
		// The crawl asked for a rendered pass: the resumed one does it too (from the start, if it was cut).
		// The caller finds the browser for it.
		cfg.Render, cfg.Browser = s.Render, ""
	}
	return nil
}

// resumeCrawl reopens the crawls row and gives the crawler back what it knew (see resumedFrom), then
// starts the writer. The sitemaps are read again from sitemap_fetches, so their rows are cleared first.
func (c *Crawler) resumeCrawl(ctx context.Context) error {
	id := c.Resume.ID
	st := c.St
	if err := st.ReopenCrawl(ctx, id); err != nil { // with this process's crawl_runs row
		return err
	}
	pages, err := st.LoadPages(ctx)
	if err != nil {
		return fmt.Errorf("resume crawl %d: %w", id, err)
	}
	owners, err := st.LoadLinkOwners(ctx)
	if err != nil {
		return fmt.Errorf("resume crawl %d: %w", id, err)
	}
	reqs, err := st.LoadRequests(ctx)
	if err != nil {
		return fmt.Errorf("resume crawl %d: %w", id, err)
	}
	r := resumedFrom(pages, owners, reqs, c.InScope)

	c.mu.Lock()
	for u := range r.recorded {
		c.recorded.add(u)
	}
	for o := range r.linksOf {
		c.linksOf.add(o)
	}
	if r.home != "" {
		c.home = r.home
	}
	if r.llmsPage != nil {
		c.llmsPage = r.llmsPage
	}
	c.mu.Unlock()
	if r.wordpress != nil && c.wordpress.Load() == nil {
		c.wordpress.Store(r.wordpress)
	}
	c.Count.pages.Add(r.pages)
	c.Count.blocked.Add(r.blocked)
	c.Count.fetched.Add(r.fetched)
	c.Count.errors.Add(r.errors)
	c.requested = r.requested
	c.Count.requests.Store(int64(c.Resume.Requests))
	if c.Resume.SlowedBy != "" {
		c.Slow.Trip(c.Resume.SlowedBy, c.Resume.SlowedAt) // one 429 slows the rest of the run, resumed or not
	}
	return st.StartWriter(ctx)
}

// resumed is what a resumed crawl knew before it was stopped, as its rows tell it.
type resumed struct {
	recorded                        map[string]bool      // URLs with a pages row
	linksOf                         map[string]bool      // final URLs whose links are recorded
	requested                       map[string]bool      // llms.txt and probe URLs asked already
	pages, fetched, blocked, errors int64                // the progress counters
	home                            string               // where the start page ended up; "" if not known
	wordpress                       *string              // the first page that looked like WordPress
	llmsPage                        *store.RequestRecord // /llms.txt when a link led the crawl to it
}

// resumedFrom derives a resumed crawl's state from its rows alone: the pages recorded (and their
// counts), where the site lives, whether it looks like WordPress, what llms.txt answered, the pages
// whose links are stored and the extra requests sent. inScope is the crawl's scope rule.
func resumedFrom(pages []*store.PageRecord, linkOwners []string, reqs []store.RequestRecord, inScope func(*url.URL) bool) resumed {
	r := resumed{recorded: map[string]bool{}, linksOf: map[string]bool{}, requested: map[string]bool{}}
	for _, p := range pages {
		r.recorded[p.URL] = true
		r.pages++
		if p.Blocked {
			r.blocked++
		} else {
			r.fetched++
			if broken, _ := findings.IsBroken(p); broken {
				r.errors++
			}
		}
		if p.Depth == 0 && p.Err == "" && p.FinalURL != "" {
			if u, err := url.Parse(p.FinalURL); err == nil && inScope(u) {
				r.home = u.Scheme + "://" + u.Host
			}
		}
		if p.WordPress && r.wordpress == nil {
			final := p.FinalURL
			r.wordpress = &final
		}
		if l := llmsRecordOf(p); l != nil {
			r.llmsPage = l
		}
	}
	for _, o := range linkOwners {
		r.linksOf[o] = true
	}
	for _, q := range reqs {
		r.requested[q.URL] = true
	}
	return r
}

// keepProgress keeps the crawls row current while the crawl runs, for a resume after a crash: the
// request and page counts with every transaction, and the 429 slowdown as soon as it trips. resumed is
// the crawl being resumed (nil for a new one), whose slowdown, if it tripped, is recorded already (the
// run's crawl_runs row is BeginCrawl's or ReopenCrawl's). It returns the function that stops it (before
// the writer stops).
func keepProgress(st *store.Store, resumed *store.CrawlRow, count *counters, slow *backoff.Slowdown) (stop func()) {
	st.KeepTotals(func() (requests, pages int64) { return count.requests.Load(), count.pages.Load() })
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		if _, ok := slow.Tripped(); ok && resumed != nil && resumed.SlowedBy != "" {
			return // restored from the row: already recorded
		}
		select {
		case <-slow.C():
			ev, _ := slow.Tripped()
			st.RecordSlowdown(ev.At, ev.URL)
		case <-done:
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

// shellWord quotes s for a POSIX shell when it needs it, so that the resume command printed can be
// pasted as it is.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// dropResumeState deletes what only a resume needs once the crawl is over (finished, or stopped by an
// unreachable robots.txt, which is not resumed): the sitemap answers, which can be large, and the queue.
// An interrupted or failed crawl keeps them. The robots.txt copies stay: they record what was obeyed.
func dropResumeState(st *store.Store, outcome string) error {
	if st.CrawlID == 0 || (outcome != "finished" && outcome != "off_limits" && outcome != "refused") {
		return nil
	}
	return st.DropResumeState()
}
