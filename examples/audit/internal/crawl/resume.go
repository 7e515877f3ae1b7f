package crawl

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/store"
)

// ResumeConfig gives cfg the crawl's own settings.
func ResumeConfig(cfg *Config, row *store.CrawlRow) error {
	s := row.Settings
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

// resumeCrawl reopens the crawls row and gives the crawler back what it knew: the pages recorded (and
// their counts), where the site lives, whether it looks like WordPress, what llms.txt and the probes
// answered, the requests sent and the slowdown. The sitemaps are read again from sitemap_fetches, so
// their rows are cleared first.
func (c *Crawler) resumeCrawl(ctx context.Context) error {
	id := c.Resume.ID
	st := c.St
	if err := st.ReopenCrawl(ctx, id); err != nil {
		return err
	}
	if err := st.RecordRun(ctx); err != nil {
		return err
	}

	pages, err := st.LoadPages(ctx)
	if err != nil {
		return fmt.Errorf("resume crawl %d: %w", id, err)
	}
	c.mu.Lock()
	for _, p := range pages {
		c.recorded[p.URL] = true
		c.Count.pages.Add(1)
		if p.Blocked {
			c.Count.blocked.Add(1)
		} else {
			c.Count.fetched.Add(1)
			if broken, _ := findings.IsBroken(p); broken {
				c.Count.errors.Add(1)
			}
		}
		if p.Depth == 0 && p.Err == "" && p.FinalURL != "" {
			if u, err := url.Parse(p.FinalURL); err == nil && c.InScope(u) {
				c.home = u.Scheme + "://" + u.Host
			}
		}
		if p.WordPress && c.wordpress.Load() == nil {
			final := p.FinalURL
			c.wordpress.Store(&final)
		}
		if r := llmsRecordOf(p); r != nil {
			c.llmsPage = r
		}
	}
	c.mu.Unlock()

	owners, err := st.LoadLinkOwners(ctx)
	if err != nil {
		return fmt.Errorf("resume crawl %d: %w", id, err)
	}
	c.mu.Lock()
	for _, o := range owners {
		c.linksOf[o] = true
	}
	c.mu.Unlock()

	reqs, err := st.LoadRequests(ctx)
	if err != nil {
		return fmt.Errorf("resume crawl %d: %w", id, err)
	}
	c.requested = map[string]bool{}
	for _, r := range reqs {
		c.requested[r.URL] = true
	}
	c.Count.requests.Store(int64(c.Resume.Requests))
	if c.Resume.SlowedBy != "" {
		c.Slow.Trip(c.Resume.SlowedBy, c.Resume.SlowedAt) // one 429 slows the rest of the run, resumed or not
	}
	return st.StartWriter(ctx)
}

// keepProgress keeps the crawls row current while the crawl runs, for a resume after a crash: the
// request and page counts with every transaction, and the 429 slowdown as soon as it trips. It returns
// the function that stops it (before the writer stops).
func (c *Crawler) keepProgress() (stop func()) {
	st := c.St
	if c.Resume == nil {
		if err := st.RecordRun(context.Background()); err != nil {
			st.SetErr(err)
		}
	}
	st.KeepTotals(func() (requests, pages int64) { return c.Count.requests.Load(), c.Count.pages.Load() })
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		if _, ok := c.Slow.Tripped(); ok && c.Resume != nil && c.Resume.SlowedBy != "" {
			return // restored from the row: already recorded
		}
		select {
		case <-c.Slow.C():
			ev, _ := c.Slow.Tripped()
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
func (c *Crawler) dropResumeState(res CrawlResult) error {
	if c.St.CrawlID == 0 || (res.Outcome != "finished" && res.Outcome != "off_limits" && res.Outcome != "refused") {
		return nil
	}
	return c.St.DropResumeState()
}
