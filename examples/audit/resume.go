package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"
)

// Resume: a crawl killed (kill -9, power loss) or interrupted (Ctrl-C) continues where it stopped with
// `audit -resume -db FILE [-crawl N]`. Everything it needs is in its database, written as it went:
//
//   - the frontier's queue and seen set (queue.go, a frontier.PersistentQueue), so the same page budget,
//     order and seen URLs hold, and only the pages in flight at the crash are fetched again;
//   - the robots.txt copies it obeyed (robots_cache), fetched again only once expired;
//   - the sitemaps it had read (sitemap_fetches), replayed rather than requested again;
//   - its pages, links, llms.txt and probe answers, its request count and the 429 slowdown, so that a
//     slowed run stays slowed.
//
// The politeness gap holds across the restart: the first request after a resume waits a whole gap
// counted from the resume itself (the gap of the slowdown if the run was slowed). The resume happens
// after the kill, which happens after the last request started, so this is never shorter than waiting
// from the last request before the kill, even when the kill lost the record of that request; it costs at
// most one gap.

// resumeArgs checks a -resume command line. The crawl continues with its own settings (its rate, limits
// and identity are what the site has seen so far), so only where to find it and how to show it may be
// given; -resolve too, for a staging server that moved, -log, and -render/-browser (the rendered pass
// comes after the crawl and changes nothing of it).
func resumeArgs(c *config, fs *flag.FlagSet) error {
	if !c.Resume {
		return usagef("-crawl %d is for -resume (a new crawl gets the next id)", c.Crawl)
	}
	if c.Crawl < 0 {
		return usagef("-crawl %d: crawl ids start at 1", c.Crawl)
	}
	if fs.NArg() > 0 {
		return usagef("-resume continues a crawl of -db: give no URL (got %q)", fs.Arg(0))
	}
	var fixed []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "db", "resume", "crawl", "quiet", "no-report", "resolve", "log", "render", "browser":
		default:
			fixed = append(fixed, "-"+f.Name)
		}
	})
	if len(fixed) > 0 {
		return usagef("-resume continues the crawl with its own settings: %s cannot be given (start a new crawl for other settings)",
			strings.Join(fixed, ", "))
	}
	return nil
}

// runResume continues crawl cfg.Crawl (0: the latest) of cfg.DB.
func runResume(ctx context.Context, cfg *config, stdout, stderr io.Writer, e env) int {
	if _, err := os.Stat(cfg.DB); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "audit: -resume: %s: no such file\n", cfg.DB)
		return exitUsage
	}
	st, err := openStore(ctx, cfg.DB)
	if err != nil {
		fmt.Fprintf(stderr, "audit: %v\n", err)
		if errors.Is(err, errNotAudit) {
			return exitUsage
		}
		return exitFailure
	}
	defer st.close()
	row, err := loadCrawl(ctx, st.db, cfg.Crawl)
	if err == nil {
		err = resumable(ctx, st.db, row)
	}
	if err != nil {
		fmt.Fprintf(stderr, "audit: -resume: %v\n", err)
		if errors.Is(err, errBadCrawl) || errors.As(err, new(*usageError)) {
			return exitUsage
		}
		return exitFailure
	}
	var demo *demoSite
	if err := resumeConfig(cfg, row); err != nil {
		fmt.Fprintf(stderr, "audit: -resume: crawl %d: %v\n", row.ID, err)
		if errors.As(err, new(*usageError)) {
			return exitUsage
		}
		return exitFailure
	}
	if row.Settings.Demo {
		// The demo shop listens on a new port each run: the crawl's URL is the same, its -resolve is not.
		if demo, err = startDemo(); err != nil {
			fmt.Fprintf(stderr, "audit: %v\n", err)
			return exitFailure
		}
		defer demo.stop()
		cfg.Resolve = demo.Resolve()
	}
	st.crawlID = row.ID // the queue reads its rows when the frontier is made
	c, err := newCrawler(cfg, e, st, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "audit: -resume: crawl %d: %v\n", row.ID, err)
		return exitFailure
	}
	c.resume = row
	fmt.Fprintf(stdout, "Resuming crawl %d of %s (%s so far).\n", row.ID, row.StartURL, resumeProgress(ctx, st.db, row.ID))
	res := c.crawl(ctx)
	res = c.renderPass(ctx, res) // step 6, only with -render
	code := c.finish(res, stdout, stderr)
	code = c.writeReport(res, code, stdout, stderr)
	if demo != nil {
		demo.report(stdout, cfg.UserAgent)
	}
	return code
}

// resumable says whether a crawl can be continued, and why not.
func resumable(ctx context.Context, db *sql.DB, row *crawlRow) error {
	switch row.Outcome {
	case "finished":
		return usagef("crawl %d of %s finished: there is nothing to resume (a new crawl of the site: audit -db FILE URL)", row.ID, row.StartURL)
	case "off_limits":
		return usagef("crawl %d of %s stopped because the site's robots.txt could not be read: it is not resumed; start a new crawl when the site answers", row.ID, row.StartURL)
	case "running":
		if pid, host, ok := lastRun(ctx, db, row.ID); ok && runningHere(pid, host) {
			return usagef("crawl %d seems to be running still, in process %d on this machine: stop it first (Ctrl-C), then resume", row.ID, pid)
		}
	}
	var queued, pages int
	if err := db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM queue WHERE crawl_id = ?), (SELECT COUNT(*) FROM pages WHERE crawl_id = ?)`,
		row.ID, row.ID).Scan(&queued, &pages); err != nil {
		return err
	}
	if queued == 0 && pages > 0 {
		return usagef("crawl %d was not recorded for resuming (its frontier is not in the file): start a new crawl", row.ID)
	}
	return nil
}

// lastRun is the process that last ran crawl id.
func lastRun(ctx context.Context, db *sql.DB, id int64) (pid int, host string, ok bool) {
	err := db.QueryRowContext(ctx, `SELECT pid, host FROM crawl_runs WHERE crawl_id = ? ORDER BY rowid DESC LIMIT 1`, id).Scan(&pid, &host)
	return pid, host, err == nil
}

// runningHere reports whether process pid of machine host is alive (and not this process).
func runningHere(pid int, host string) bool {
	me, _ := os.Hostname()
	if host != me || pid == os.Getpid() || pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// resumeConfig gives cfg the crawl's own settings.
func resumeConfig(cfg *config, row *crawlRow) error {
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
		b, err := findBrowser(cfg.Browser)
		if err != nil {
			return err
		}
		cfg.Render, cfg.Browser = s.Render, b
	}
	return nil
}

func resumeProgress(ctx context.Context, db *sql.DB, id int64) string {
	var pages, queued int
	_ = db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM pages WHERE crawl_id = ?), (SELECT COUNT(*) FROM queue WHERE crawl_id = ? AND state = 0)`,
		id, id).Scan(&pages, &queued)
	return fmt.Sprintf("%d URL%s crawled, %d queued", pages, plural(pages), queued)
}

// resumeCrawl reopens the crawls row and gives the crawler back what it knew: the pages recorded (and
// their counts), where the site lives, whether it looks like WordPress, what llms.txt and the probes
// answered, the requests sent and the slowdown. The sitemaps are read again from sitemap_fetches, so
// their rows are cleared first.
func (c *crawler) resumeCrawl(ctx context.Context) error {
	id := c.resume.ID
	st := c.st
	st.crawlID = id
	for _, q := range []string{
		`UPDATE crawls SET outcome = 'running', finished_at = NULL, message = NULL WHERE id = ?`,
		`DELETE FROM sitemaps WHERE crawl_id = ?`,
		`DELETE FROM sitemap_urls WHERE crawl_id = ?`,
	} {
		if _, err := st.db.ExecContext(ctx, q, id); err != nil {
			return fmt.Errorf("resume crawl %d: %w", id, err)
		}
	}
	if err := st.recordRun(ctx); err != nil {
		return err
	}

	pages, err := st.loadPages(ctx)
	if err != nil {
		return fmt.Errorf("resume crawl %d: %w", id, err)
	}
	c.mu.Lock()
	for _, p := range pages {
		c.recorded[p.URL] = true
		c.count.pages.Add(1)
		if p.Blocked {
			c.count.blocked.Add(1)
		} else {
			c.count.fetched.Add(1)
			if p.Status == 0 || p.Status >= 400 {
				c.count.errors.Add(1)
			}
		}
		if p.Depth == 0 && p.Err == "" && p.FinalURL != "" {
			if u, err := url.Parse(p.FinalURL); err == nil && c.inScope(u) {
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

	owners, err := st.loadLinkOwners(ctx)
	if err != nil {
		return fmt.Errorf("resume crawl %d: %w", id, err)
	}
	c.mu.Lock()
	for _, o := range owners {
		c.linksOf[o] = true
	}
	c.mu.Unlock()

	reqs, err := st.loadRequests(ctx)
	if err != nil {
		return fmt.Errorf("resume crawl %d: %w", id, err)
	}
	c.requested = map[string]bool{}
	for _, r := range reqs {
		c.requested[r.URL] = true
	}
	c.count.requests.Store(int64(c.resume.Requests))
	if c.resume.SlowedBy != "" {
		c.slow.Trip(c.resume.SlowedBy, c.resume.SlowedAt) // one 429 slows the rest of the run, resumed or not
	}
	return st.startWriter(ctx)
}

// recordRun notes which process runs the crawl, so that a resume can tell a crawl still running from
// one that was killed.
func (s *store) recordRun(ctx context.Context) error {
	host, _ := os.Hostname()
	_, err := s.db.ExecContext(ctx, `INSERT INTO crawl_runs (crawl_id, pid, host, started_at) VALUES (?,?,?,?)`,
		s.crawlID, os.Getpid(), host, fmtTime(time.Now()))
	return err
}

// keepProgress keeps the crawls row current while the crawl runs, for a resume after a crash: the
// request and page counts with every transaction, and the 429 slowdown as soon as it trips. It returns
// the function that stops it (before the writer stops).
func (c *crawler) keepProgress() (stop func()) {
	st, id := c.st, c.st.crawlID
	if c.resume == nil {
		if err := st.recordRun(context.Background()); err != nil {
			st.setErr(err)
		}
	}
	st.onCommit = func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE crawls SET requests = ?, pages = ? WHERE id = ?`, c.count.requests.Load(), c.count.pages.Load(), id)
		return err
	}
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		if _, ok := c.slow.Tripped(); ok && c.resume != nil && c.resume.SlowedBy != "" {
			return // restored from the row: already recorded
		}
		select {
		case <-c.slow.C():
			ev, _ := c.slow.Tripped()
			st.enqueue(func(tx *sql.Tx) error {
				_, err := tx.Exec(`UPDATE crawls SET slowed_at = ?, slowed_by = ? WHERE id = ?`, fmtTime(ev.At), nullStr(ev.URL), id)
				return err
			})
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
func (c *crawler) dropResumeState(res crawlResult) error {
	if c.st.crawlID == 0 || (res.outcome != "finished" && res.outcome != "off_limits") {
		return nil
	}
	for _, q := range []string{`DELETE FROM sitemap_fetches WHERE crawl_id = ?`, `DELETE FROM queue WHERE crawl_id = ?`,
		`DELETE FROM queue_hosts WHERE crawl_id = ?`} {
		if _, err := c.st.db.Exec(q, c.st.crawlID); err != nil {
			return fmt.Errorf("clearing the resume state of crawl %d: %w", c.st.crawlID, err)
		}
	}
	return nil
}
