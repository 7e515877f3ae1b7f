package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/demo"
	"github.com/politecrawl/polite/examples/audit/internal/render"
	"github.com/politecrawl/polite/examples/audit/internal/store"
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
func resumeArgs(c *crawl.Config, fs *flag.FlagSet) error {
	if !c.Resume {
		return store.Usagef("-crawl %d is for -resume (a new crawl gets the next id)", c.Crawl)
	}
	if c.Crawl < 0 {
		return store.Usagef("-crawl %d: crawl ids start at 1", c.Crawl)
	}
	if fs.NArg() > 0 {
		return store.Usagef("-resume continues a crawl of -db: give no URL (got %q)", fs.Arg(0))
	}
	var fixed []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "db", "resume", "crawl", "quiet", "no-report", "resolve", "log", "render", "browser", "timings", "cpuprofile", "memprofile":
		default:
			fixed = append(fixed, "-"+f.Name)
		}
	})
	if len(fixed) > 0 {
		return store.Usagef("-resume continues the crawl with its own settings: %s cannot be given (start a new crawl for other settings)",
			strings.Join(fixed, ", "))
	}
	return nil
}

// runResume continues crawl cfg.Crawl (0: the latest) of cfg.DB.
func runResume(ctx context.Context, cfg *crawl.Config, stdout, stderr io.Writer, e crawl.Env) int {
	if _, err := os.Stat(cfg.DB); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "audit: -resume: %s: no such file\n", cfg.DB)
		return crawl.ExitUsage
	}
	st, err := store.OpenStore(ctx, cfg.DB)
	if err != nil {
		fmt.Fprintf(stderr, "audit: %v\n", err)
		if errors.Is(err, store.ErrNotAudit) {
			return crawl.ExitUsage
		}
		return crawl.ExitFailure
	}
	defer st.Close()
	row, err := store.LoadCrawl(ctx, st.Reader(), cfg.Crawl)
	if err == nil {
		err = store.Resumable(ctx, st.Reader(), row)
	}
	if err != nil {
		fmt.Fprintf(stderr, "audit: -resume: %v\n", err)
		if errors.Is(err, store.ErrBadCrawl) || errors.As(err, new(*store.UsageError)) {
			return crawl.ExitUsage
		}
		return crawl.ExitFailure
	}
	if err := st.CheckNotBusy(ctx); err != nil { // one crawl at a time per database (the app's too)
		fmt.Fprintf(stderr, "audit: -resume: %v\n", err)
		return crawl.ExitUsage
	}
	var shop *demo.DemoSite
	hadRender := cfg.Render > 0
	err = crawl.ResumeConfig(cfg, row)
	if err == nil && cfg.Render > 0 && !hadRender {
		cfg.Browser, err = render.FindBrowser(cfg.Browser)
	}
	if err != nil {
		fmt.Fprintf(stderr, "audit: -resume: crawl %d: %v\n", row.ID, err)
		if errors.As(err, new(*store.UsageError)) {
			return crawl.ExitUsage
		}
		return crawl.ExitFailure
	}
	if row.Settings.Demo {
		// The demo shop listens on a new port each run: the crawl's URL is the same, its -resolve is not.
		if shop, err = demo.StartDemo(); err != nil {
			fmt.Fprintf(stderr, "audit: %v\n", err)
			return crawl.ExitFailure
		}
		defer shop.Stop()
		cfg.Resolve = shop.Resolve()
	}
	st.CrawlID = row.ID // the queue reads its rows when the frontier is made
	c, err := crawl.NewCrawler(cfg, e, st, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "audit: -resume: crawl %d: %v\n", row.ID, err)
		return crawl.ExitFailure
	}
	c.Resume = row
	fmt.Fprintf(stdout, "Resuming crawl %d of %s (%s so far).\n", row.ID, row.StartURL, store.ResumeProgress(ctx, st.Reader(), row.ID))
	return runCrawl(ctx, c, shop, stdout, stderr)
}
