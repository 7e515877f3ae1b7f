package crawl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/report"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/politecrawl/polite/examples/internal/cmdline"
)

// Ending is a stopped crawl as the end of the run sees it: how it ended, its totals, and the few facts
// only the crawl knew (the sitemap URLs it left out, where the site lives). Finish and WriteReport read
// nothing else, so the end of a run never reaches back into the crawler's working state, and an Ending
// holds nothing of the crawler: once the caller drops the Crawler, its frontier (the seen set and the
// queue), its clients and its sets of URLs are garbage before the passes start (Finish).
type Ending struct {
	Res CrawlResult // how the crawl (and the rendered pass, if any) ended
	// SummaryExtra, when set, is added to the summary after its first line (the rendered pass's line).
	SummaryExtra string

	cfg          *Config
	st           *store.Store
	now          func() time.Time
	beforePasses func()            // Env.BeforePasses
	slow         *backoff.Slowdown // the run's 429 latch: the summary and the crawls row say when it tripped
	totals       totals
	sites        siteURLs // the site's own origins, dropped from URLs in the summary table

	// What the analysis needs that has no row: the sitemap URLs the page limit left out, and the entries
	// past sitemapHoldMax (with the first of them).
	notCrawled       [][2]string
	heldDropped      int
	heldFirstDropped string
}

// totals are the run's counters, read once the crawl has stopped.
type totals struct{ pages, fetched, blocked, errors, requests int }

// Ending takes what the end of the run needs from the stopped crawl. Call it once the crawl (and the
// rendered pass) are over: the counters are read then.
func (c *Crawler) Ending(res CrawlResult) *Ending {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &Ending{
		Res: res, cfg: c.Cfg, st: c.St, now: c.Env.Now, slow: c.Slow, beforePasses: c.Env.BeforePasses,
		totals: totals{pages: int(c.Count.pages.Load()), fetched: int(c.Count.fetched.Load()), blocked: int(c.Count.blocked.Load()),
			errors: int(c.Count.errors.Load()), requests: int(c.Count.requests.Load())},
		sites:      siteURLs{c.home, c.Origin, c.Twin},
		notCrawled: c.notCrawled, heldDropped: c.heldDropped, heldFirstDropped: c.heldFirstDropped,
	}
}

// Finish stores everything, runs the analysis, prints the summary and returns the exit status. It runs
// after an interrupted crawl too, with a fresh context: what was crawled is kept and reported. Before the
// passes it gives the crawl's memory back to the system (releaseMemory): the caller must hold no
// reference to the Crawler by then for that memory to go (main keeps only the Ending; the app keeps its
// crawler for the live view until the run is over).
func (e *Ending) Finish(stdout, stderr io.Writer) int {
	res := e.Res
	var busy *store.BusyError
	if errors.As(res.Err, &busy) {
		// Another process claimed the file first (store.BeginCrawl, ReopenCrawl): this run wrote nothing,
		// and the running crawl is not this one's to finish.
		fmt.Fprintf(stderr, "audit: %s\n", cmdline.Safe(busy.Error()))
		return ExitUsage
	}
	// No deadline: the passes over the crawl take time in proportion to it (a minute was not enough for
	// 100,000 pages on a loaded machine), and a second Ctrl-C ends the program.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	werr := e.st.Flush()
	var ws *writeStopped
	if errors.As(res.Err, &ws) {
		return e.writeFailed(ctx, ws, stderr)
	}

	// Off limits at the start: nothing was crawled, there is nothing to analyse. Off limits during the
	// crawl: what was crawled before is analysed and summarised like an interrupted crawl.
	analysed := res.Outcome != "off_limits" || e.totals.pages > 0
	var sum findings.Summary
	if analysed {
		e.releaseMemory(stderr)
		if e.beforePasses != nil {
			e.beforePasses()
		}
		var err error
		sum, err = e.findings(ctx)
		if e.cfg.Timings {
			e.printPassTimes(stderr, sum)
		}
		if err != nil {
			werr = errors.Join(werr, err)
		} else if err := e.st.EachPageFindingKind(ctx, sum.Counts, sum.Add); err != nil {
			// the summary counts the pages' own findings too, written with them during the crawl
			werr = errors.Join(werr, err)
		}
	}
	end := e.crawlEnd(res.Outcome)
	if res.Err != nil {
		end.Message = res.Err.Error()
	}
	if e.st.CrawlID != 0 {
		werr = errors.Join(werr, e.st.FinishCrawl(ctx, end))
	}

	if analysed && e.st.CrawlID != 0 {
		e.printSummary(stdout, sum)
	}
	switch {
	case res.Outcome == "off_limits" && analysed:
		fmt.Fprintf(stderr, "audit: %s; everything crawled before is in %s (crawl %d)\n", cmdline.Safe(res.Err.Error()), e.cfg.DB, e.st.CrawlID)
		return ExitOffLimits
	case res.Outcome == "off_limits":
		fmt.Fprintf(stderr, "audit: %s\n", cmdline.Safe(res.Err.Error()))
		return ExitOffLimits
	case res.Outcome == "refused":
		fmt.Fprintf(stderr, "audit: %s; nothing else was requested (crawl %d in %s)\n", cmdline.Safe(res.Err.Error()), e.st.CrawlID, e.cfg.DB)
		return ExitRefused
	case res.Outcome == "interrupted":
		fmt.Fprintf(stderr, "audit: interrupted; everything crawled so far is in %s (crawl %d). To continue it: audit -resume -db %s -crawl %d\n",
			e.cfg.DB, e.st.CrawlID, shellWord(e.cfg.DB), e.st.CrawlID)
		return ExitFailure
	case res.Err != nil:
		fmt.Fprintf(stderr, "audit: %s\n", cmdline.Safe(res.Err.Error()))
		return ExitFailure
	case werr != nil:
		fmt.Fprintf(stderr, "audit: writing %s: %s\n", e.cfg.DB, cmdline.Safe(werr.Error()))
		return ExitFailure
	}
	return ExitOK
}

// writeFailed ends a crawl stopped by a failed write: no analysis and no summary (the figures would
// count pages the file does not hold), the crawl marked interrupted if the file still takes that, and
// the way to go on. A file that cannot even take that keeps the crawl as running, which -resume accepts
// once this process has exited.
func (e *Ending) writeFailed(ctx context.Context, ws *writeStopped, stderr io.Writer) int {
	end := e.crawlEnd("interrupted")
	end.Message = ws.Error()
	recorded := "is kept as interrupted"
	if err := e.st.FinishCrawl(ctx, end); err != nil {
		recorded = "could not even be marked interrupted (" + err.Error() + "), so it stays marked running"
	}
	fmt.Fprintf(stderr, "audit: %s\naudit: the crawl stopped at that write; crawl %d %s, with everything written before it. To continue it once the problem is fixed: audit -resume -db %s -crawl %d\n",
		cmdline.Safe(ws.Error()), e.st.CrawlID, recorded, shellWord(e.cfg.DB), e.st.CrawlID)
	return ExitFailure
}

// releaseMemory collects the crawl's garbage once and returns the freed memory to the system, so that
// the passes start from what they need rather than from the crawl's high-water mark: the frontier's
// seen set and queue, the crawler's sets of URLs, the writer's caches and the last pages' garbage are
// unreachable by now, but the runtime would return their pages to the system only slowly, and the
// passes' own peak (the link graph) would come on top of them. With -timings it prints the live heap
// before (as of the crawl's last collection) and after, and what the Go runtime holds of the system.
func (e *Ending) releaseMemory(stderr io.Writer) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	read := func() (live, held float64) {
		metrics.Read(sample)
		return float64(sample[0].Value.Uint64()) / 1e6, float64(sample[1].Value.Uint64()-sample[2].Value.Uint64()) / 1e6
	}
	live0, held0 := read()
	rss0 := residentMemory()
	debug.FreeOSMemory() // a collection, then every free page back to the system
	if e.cfg.Timings {
		live, held := read()
		fmt.Fprintf(stderr, "memory before the passes: live heap %.1f MB (%.1f MB at the crawl's last collection), Go runtime %.1f MB of the system's memory (%.1f MB); process %s (%s)\n",
			live, live0, held, held0, residentMemory(), rss0)
	}
}

// printPassTimes prints, for -timings, the time of each pass over the crawl in the order they ran and the
// process's memory once they are over (its peak is the whole run's so far).
func (e *Ending) printPassTimes(stderr io.Writer, sum findings.Summary) {
	var b strings.Builder
	for _, name := range sum.Steps {
		fmt.Fprintf(&b, ", %s %.1fs", name, sum.Took[name].Seconds())
	}
	fmt.Fprintf(stderr, "passes: %s; process %s\n", strings.TrimPrefix(b.String(), ", "), residentMemory())
}

// residentMemory is the process's resident and peak resident memory as Linux's /proc/self/status has
// them ("RSS 120.3 MB, peak 344.0 MB"), for -timings: what the Go runtime holds is only part of it, the
// rest is SQLite's (its page cache and sorters, allocated outside the Go heap). Elsewhere: "RSS unknown".
func residentMemory() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "RSS unknown"
	}
	var rss, peak float64
	for line := range strings.Lines(string(b)) {
		var kb float64
		if n, _ := fmt.Sscanf(line, "VmRSS: %f kB", &kb); n == 1 {
			rss = kb / 1024
		} else if n, _ := fmt.Sscanf(line, "VmHWM: %f kB", &kb); n == 1 {
			peak = kb / 1024
		}
	}
	return fmt.Sprintf("RSS %.1f MB, peak %.1f MB", rss, peak)
}

// crawlEnd is the crawls row's closing state: outcome, totals and the slowdown, if it tripped.
func (e *Ending) crawlEnd(outcome string) store.CrawlEnd {
	end := store.CrawlEnd{Finished: e.Res.Ended, Outcome: outcome, Pages: e.totals.pages, Requests: e.totals.requests}
	if ev, ok := e.slow.Tripped(); ok {
		end.SlowedAt, end.SlowedBy = ev.At, ev.URL
	}
	return end
}

// findings completes the redirect chains that stopped at a URL the crawl had, then runs the passes over
// the crawl (findings.Run), which read the database and write the findings and link scores.
func (e *Ending) findings(ctx context.Context) (findings.Summary, error) {
	st := e.st
	pages, err := chainPages(ctx, st)
	if err != nil {
		return findings.Summary{}, err
	}
	// Redirects to a URL the crawl had already end where that URL's own request ended.
	changed := completeChains(pages)
	pages = nil
	if err := st.UpdateChains(ctx, changed); err != nil {
		return findings.Summary{}, err
	}
	for _, ch := range changed {
		if broken, _ := findings.IsBroken(ch.Page); broken {
			e.totals.errors++
		}
	}
	x := findings.Extra{NotCrawled: e.notCrawled, OverHold: e.heldDropped, FirstOverHold: e.heldFirstDropped}
	if ev, ok := e.slow.Tripped(); ok {
		x.SlowedBy = ev.URL
	}
	return findings.Run(ctx, st, x)
}

// chainPages reads the rows completeChains needs, in LoadPages' order: the rows that stopped at a
// redirect to a target the crawl had, the rows of those targets, and the redirecting rows whose chains
// passed one of them; none when no row stopped so (the usual case). The other rows cannot change the
// result, and reading every row would hold the whole crawl in memory.
func chainPages(ctx context.Context, st *store.Store) ([]*store.PageRecord, error) {
	redirected, err := st.LoadPagesWhere(ctx, `redirect_count > 0 AND blocked_by_robots = 0 AND COALESCE(error, '') = ''
		AND status IN (301, 302, 303, 307, 308)`)
	if err != nil {
		return nil, err
	}
	var targets []string
	for _, p := range redirected {
		if stoppedAtDuplicate(p) {
			targets = append(targets, p.FinalURL)
		}
	}
	if len(targets) == 0 {
		return nil, nil
	}
	list, err := json.Marshal(targets)
	if err != nil {
		return nil, err
	}
	const in = `IN (SELECT value FROM json_each(?2))`
	return st.LoadPagesWhere(ctx, `url `+in+` OR (redirect_count > 0 AND (audit_norm(final_url) `+in+`
		OR EXISTS (SELECT 1 FROM json_each(redirects) h WHERE audit_norm(json_extract(h.value, '$.url')) `+in+`)))`, string(list))
}

// printSummary writes the closing table to w: the crawl's totals, the slowdown, a count and an example
// per finding kind, and the query to read them all.
func (e *Ending) printSummary(w io.Writer, sum findings.Summary) {
	res := e.Res
	counts := sum.Counts
	state := res.Outcome
	switch state {
	case "off_limits":
		state = "stopped (robots.txt unreachable)"
	case "refused":
		state = "stopped (the site refuses this crawler)"
	}
	pages, reqs, errs := e.totals.pages, e.totals.requests, e.totals.errors
	fmt.Fprintf(w, "\nCrawl %d of %s %s in %s: %d page%s (%d fetched, %d blocked by robots.txt), %d request%s, %d error%s.\n",
		e.st.CrawlID, e.cfg.URL, state, res.Ended.Sub(res.Started).Round(time.Millisecond),
		pages, store.Plural(pages), e.totals.fetched, e.totals.blocked, reqs, store.Plural(reqs), errs, store.Plural(errs))
	fmt.Fprint(w, e.SummaryExtra)
	if ev, ok := e.slow.Tripped(); ok {
		inFlight, gap := e.slow.Limits()
		fmt.Fprintf(w, "Slowed down after 429 from %s at %s: %d in flight, %s between requests, for the rest of the run.\n",
			cmdline.Safe(ev.URL), ev.At.Format(time.TimeOnly), inFlight, gap)
	}
	if sum.Total() == 0 {
		fmt.Fprintln(w, "No findings.")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "\nFINDING\tCOUNT\tEXAMPLE")
		example := sum.Examples
		width := exampleWidth(termColumns(w), counts)
		for _, k := range findings.OrderedKinds(counts) {
			ex := example[k]
			fmt.Fprintf(tw, "%s\t%d\t%s\n", k, counts[k], report.TruncateRunes(cmdline.Safe(e.sites.short(ex.URL)+"  "+e.sites.shortAll(ex.Detail)), width))
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\nWritten to %s (crawl %d). Try:\n  sqlite3 %s \"SELECT kind, url, detail FROM findings WHERE crawl_id = %d ORDER BY kind\"\n",
		e.cfg.DB, e.st.CrawlID, e.cfg.DB, e.st.CrawlID)
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

// siteURLs are the site's own origins (scheme://host): where the start page ended up, the start URL's,
// and its www/apex twin's ("" when there is none).
type siteURLs []string

// short drops the site's own scheme and host from a URL, for the summary table.
func (s siteURLs) short(u string) string {
	for _, o := range s {
		if o != "" {
			if rest, ok := strings.CutPrefix(u, o); ok && strings.HasPrefix(rest, "/") {
				return rest
			}
		}
	}
	return u
}

// shortAll applies short to every URL of the site in a finding's detail.
func (s siteURLs) shortAll(detail string) string {
	for _, o := range s {
		if o != "" {
			detail = strings.ReplaceAll(detail, o+"/", "/")
		}
	}
	return detail
}

// WriteReport writes the HTML report at the end of a crawl (unless -no-report) and says where. A crawl
// stopped before anything was crawled (robots.txt off limits) has nothing to report.
func (e *Ending) WriteReport(code int, stdout, stderr io.Writer) int {
	res := e.Res
	if err := dropResumeState(e.st, res.Outcome); err != nil && code == ExitOK {
		fmt.Fprintf(stderr, "audit: %v\n", err)
		code = ExitFailure
	}
	if e.cfg.NoReport || e.st.CrawlID == 0 || (res.Outcome == "off_limits" && e.totals.pages == 0) || errors.As(res.Err, new(*writeStopped)) {
		return code
	}
	ctx, cancel := context.WithCancel(context.Background()) // no deadline, as in Finish
	defer cancel()
	// The passes' memory (the link graph: 190 MB at a million pages) is garbage now; without this the
	// report's reading came on top of it (a million-page run peaked at 550 MB in the report, 460 MB in
	// the passes).
	debug.FreeOSMemory()
	e.st.ShrinkMemory()
	if e.cfg.Timings {
		fmt.Fprintf(stderr, "memory before the report: process %s\n", residentMemory())
	}
	path := report.DefaultReportPath(e.cfg.DB, e.st.CrawlID, "html")
	d, err := report.LoadReport(ctx, e.st.Reader(), e.st.CrawlID, report.NeedAll)
	if err == nil {
		err = report.WriteAtomic(path, func(w io.Writer) error { return report.WriteHTML(w, d, e.now()) })
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
