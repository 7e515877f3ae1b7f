package crawl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/report"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/politecrawl/polite/examples/internal/cmdline"
)

// Finish stores everything, runs the analysis, prints the summary and returns the exit status. It runs
// after an interrupted crawl too, with a fresh context: what was crawled is kept and reported.
func (c *Crawler) Finish(res CrawlResult, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	werr := c.St.Flush()
	var ws *writeStopped
	if errors.As(res.Err, &ws) {
		return c.writeFailed(ctx, res, ws, stderr)
	}

	// Off limits at the start: nothing was crawled, there is nothing to analyse. Off limits during the
	// crawl: what was crawled before is analysed and summarised like an interrupted crawl.
	analysed := res.Outcome != "off_limits" || c.Count.pages.Load() > 0
	var fs []store.FindingRecord
	if analysed {
		var err error
		if fs, err = c.findings(ctx); err != nil {
			werr = errors.Join(werr, err)
		} else if err := c.St.WriteFindings(ctx, fs); err != nil {
			werr = errors.Join(werr, err)
		}
	}
	end := store.CrawlEnd{Finished: res.Ended, Outcome: res.Outcome, Pages: int(c.Count.pages.Load()), Requests: int(c.Count.requests.Load())}
	if res.Err != nil {
		end.Message = res.Err.Error()
	}
	if ev, ok := c.Slow.Tripped(); ok {
		end.SlowedAt, end.SlowedBy = ev.At, ev.URL
	}
	if c.St.CrawlID != 0 {
		werr = errors.Join(werr, c.St.FinishCrawl(ctx, end))
	}

	if analysed && c.St.CrawlID != 0 {
		c.printSummary(ctx, stdout, res, fs)
	}
	switch {
	case res.Outcome == "off_limits" && analysed:
		fmt.Fprintf(stderr, "audit: %s; everything crawled before is in %s (crawl %d)\n", cmdline.Safe(res.Err.Error()), c.Cfg.DB, c.St.CrawlID)
		return ExitOffLimits
	case res.Outcome == "off_limits":
		fmt.Fprintf(stderr, "audit: %s\n", cmdline.Safe(res.Err.Error()))
		return ExitOffLimits
	case res.Outcome == "refused":
		fmt.Fprintf(stderr, "audit: %s; nothing else was requested (crawl %d in %s)\n", cmdline.Safe(res.Err.Error()), c.St.CrawlID, c.Cfg.DB)
		return ExitRefused
	case res.Outcome == "interrupted":
		fmt.Fprintf(stderr, "audit: interrupted; everything crawled so far is in %s (crawl %d). To continue it: audit -resume -db %s -crawl %d\n",
			c.Cfg.DB, c.St.CrawlID, shellWord(c.Cfg.DB), c.St.CrawlID)
		return ExitFailure
	case res.Err != nil:
		fmt.Fprintf(stderr, "audit: %s\n", cmdline.Safe(res.Err.Error()))
		return ExitFailure
	case werr != nil:
		fmt.Fprintf(stderr, "audit: writing %s: %s\n", c.Cfg.DB, cmdline.Safe(werr.Error()))
		return ExitFailure
	}
	return ExitOK
}

// writeFailed ends a crawl stopped by a failed write: no analysis and no summary (the figures would
// count pages the file does not hold), the crawl marked interrupted if the file still takes that, and
// the way to go on. A file that cannot even take that keeps the crawl as running, which -resume accepts
// once this process has exited.
func (c *Crawler) writeFailed(ctx context.Context, res CrawlResult, ws *writeStopped, stderr io.Writer) int {
	end := store.CrawlEnd{Finished: res.Ended, Outcome: "interrupted", Message: ws.Error(), Pages: int(c.Count.pages.Load()), Requests: int(c.Count.requests.Load())}
	if ev, ok := c.Slow.Tripped(); ok {
		end.SlowedAt, end.SlowedBy = ev.At, ev.URL
	}
	recorded := "is kept as interrupted"
	if err := c.St.FinishCrawl(ctx, end); err != nil {
		recorded = "could not even be marked interrupted (" + err.Error() + "), so it stays marked running"
	}
	fmt.Fprintf(stderr, "audit: %s\naudit: the crawl stopped at that write; crawl %d %s, with everything written before it. To continue it once the problem is fixed: audit -resume -db %s -crawl %d\n",
		cmdline.Safe(ws.Error()), c.St.CrawlID, recorded, shellWord(c.Cfg.DB), c.St.CrawlID)
	return ExitFailure
}

// findings reads the crawl back from the database and analyses it.
func (c *Crawler) findings(ctx context.Context) ([]store.FindingRecord, error) {
	pages, err := c.St.LoadPages(ctx)
	if err != nil {
		return nil, err
	}
	// Redirects to a URL the crawl had already end where that URL's own request ended.
	changed := completeChains(pages)
	if err := c.St.UpdateChains(ctx, changed); err != nil {
		return nil, err
	}
	for _, e := range changed {
		if broken, _ := findings.IsBroken(e.Page); broken {
			c.Count.errors.Add(1)
		}
	}
	links, err := c.St.LoadLinks(ctx)
	if err != nil {
		return nil, err
	}
	smURLs, err := c.St.LoadSitemapURLs(ctx)
	if err != nil {
		return nil, err
	}
	sitemaps, err := c.St.LoadSitemaps(ctx)
	if err != nil {
		return nil, err
	}
	reqs, err := c.St.LoadRequests(ctx)
	if err != nil {
		return nil, err
	}
	in := findings.AnalysisInput{Pages: pages, Links: links, SitemapURLs: smURLs, Sitemaps: sitemaps, Requests: reqs, Normalize: store.NormalizeOrSelf}
	if in.Rendered, err = c.St.LoadRendered(ctx); err != nil {
		return nil, err
	}
	if ev, ok := c.Slow.Tripped(); ok {
		in.SlowedBy = ev.URL
	}
	c.mu.Lock()
	in.NotCrawled = c.notCrawled
	c.mu.Unlock()
	in.OverHold, in.FirstOverHold = c.heldDropped, c.heldFirstDropped
	return findings.Analyze(in), nil
}

func (c *Crawler) printSummary(ctx context.Context, w io.Writer, res CrawlResult, fs []store.FindingRecord) {
	counts := map[string]int{}
	for _, f := range fs {
		counts[f.Kind]++
	}
	state := res.Outcome
	switch state {
	case "off_limits":
		state = "stopped (robots.txt unreachable)"
	case "refused":
		state = "stopped (the site refuses this crawler)"
	}
	pages, reqs, errs := int(c.Count.pages.Load()), int(c.Count.requests.Load()), int(c.Count.errors.Load())
	fmt.Fprintf(w, "\nCrawl %d of %s %s in %s: %d page%s (%d fetched, %d blocked by robots.txt), %d request%s, %d error%s.\n",
		c.St.CrawlID, c.Cfg.URL, state, res.Ended.Sub(res.Started).Round(time.Millisecond),
		pages, store.Plural(pages), c.Count.fetched.Load(), c.Count.blocked.Load(), reqs, store.Plural(reqs), errs, store.Plural(errs))
	if c.SummaryExtra != nil {
		c.SummaryExtra(w)
	}
	if ev, ok := c.Slow.Tripped(); ok {
		inFlight, gap := c.Slow.Limits()
		fmt.Fprintf(w, "Slowed down after 429 from %s at %s: %d in flight, %s between requests, for the rest of the run.\n",
			cmdline.Safe(ev.URL), ev.At.Format(time.TimeOnly), inFlight, gap)
	}
	if len(fs) == 0 {
		fmt.Fprintln(w, "No findings.")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "\nFINDING\tCOUNT\tEXAMPLE")
		example := map[string]store.FindingRecord{}
		for _, f := range fs {
			if _, ok := example[f.Kind]; !ok {
				example[f.Kind] = f
			}
		}
		width := exampleWidth(termColumns(w), counts)
		for _, k := range findings.OrderedKinds(counts) {
			ex := example[k]
			fmt.Fprintf(tw, "%s\t%d\t%s\n", k, counts[k], report.TruncateRunes(cmdline.Safe(c.short(ex.URL)+"  "+c.shortAll(ex.Detail)), width))
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\nWritten to %s (crawl %d). Try:\n  sqlite3 %s \"SELECT kind, url, detail FROM findings WHERE crawl_id = %d ORDER BY kind\"\n",
		c.Cfg.DB, c.St.CrawlID, c.Cfg.DB, c.St.CrawlID)
}

// exampleWidth is how much of a finding the summary's EXAMPLE column shows: 90 characters, or what is
// left of the terminal's width when stdout is one, so that the table's rows do not wrap.
func exampleWidth(cols int, counts map[string]int) int {
	if cols <= 0 {
		return 90
	}
	kw, cw := len("FINDING"), len("COUNT")
	for k, n := range counts {
		kw, cw = max(kw, len(k)), max(cw, len(fmt.Sprint(n)))
	}
	return min(90, max(30, cols-kw-cw-2*2-1))
}

// short drops the site's own scheme and host from a URL, for the summary table.
func (c *Crawler) short(u string) string {
	for _, o := range []string{c.home, c.Origin, c.Twin} {
		if o != "" {
			if rest, ok := strings.CutPrefix(u, o); ok && strings.HasPrefix(rest, "/") {
				return rest
			}
		}
	}
	return u
}

// shortAll applies short to every URL of the site in a finding's detail.
func (c *Crawler) shortAll(s string) string {
	for _, o := range []string{c.home, c.Origin, c.Twin} {
		if o != "" {
			s = strings.ReplaceAll(s, o+"/", "/")
		}
	}
	return s
}

// WriteReport writes the HTML report at the end of a crawl (unless -no-report) and says where. A crawl
// stopped before anything was crawled (robots.txt off limits) has nothing to report.
func (c *Crawler) WriteReport(res CrawlResult, code int, stdout, stderr io.Writer) int {
	if err := c.dropResumeState(res); err != nil && code == ExitOK {
		fmt.Fprintf(stderr, "audit: %v\n", err)
		code = ExitFailure
	}
	if c.Cfg.NoReport || c.St.CrawlID == 0 || (res.Outcome == "off_limits" && c.Count.pages.Load() == 0) || errors.As(res.Err, new(*writeStopped)) {
		return code
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path := report.DefaultReportPath(c.Cfg.DB, c.St.CrawlID, "html")
	d, err := report.LoadReport(ctx, c.St.Reader(), c.St.CrawlID, report.NeedAll)
	if err == nil {
		err = report.WriteAtomic(path, func(w io.Writer) error { return report.WriteHTML(w, d, c.Env.Now()) })
	}
	if err != nil {
		fmt.Fprintf(stderr, "audit: writing the report %s: %v\n", path, err)
		if code == ExitOK {
			return ExitFailure
		}
		return code
	}
	fmt.Fprintf(stdout, "Report: %s\n", path)
	return code
}
