package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/politecrawl/polite/examples/internal/cmdline"
)

// kindOrder is the order of the summary table: problems first, information last.
var kindOrder = []string{
	kBrokenLink, kBrokenPage, kRedirectLoop, kTooManyRedirects, kBadRedirect, kRedirectChain, kRedirect,
	kRedirectBlocked, kRedirectOffsite, kLinkToBlocked, kTitleMissing, kTitleEmpty, kTitleDuplicate,
	kTitleTooLong, kTitleMultiple, kDescMissing, kDescDuplicate, kDescMultiple, kH1Missing, kH1Multiple,
	kNoindex, kCanonicalElsewhere, kRenderRobotsMeta, kRenderCanonical, kRenderTitle, kRenderH1, kRenderLinksOnly,
	kRenderBlocked, kRenderJSError, kRenderFailed, kSitemapBroken, kSitemapRedirected, kSitemapBlocked, kSitemapNonCanon,
	kSitemapNotCrawled, kSitemapOverHold, kSitemapError, kSitemapSkipped, kExternalLink, kLLMSTxt, kWordPress,
	kWordPressProbe, kSlowedDown,
}

// finish stores everything, runs the analysis, prints the summary and returns the exit status. It runs
// after an interrupted crawl too, with a fresh context: what was crawled is kept and reported.
func (c *crawler) finish(res crawlResult, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	werr := c.st.flush()
	var ws *writeStopped
	if errors.As(res.err, &ws) {
		return c.writeFailed(ctx, res, ws, stderr)
	}

	// Off limits at the start: nothing was crawled, there is nothing to analyse. Off limits during the
	// crawl: what was crawled before is analysed and summarised like an interrupted crawl.
	analysed := res.outcome != "off_limits" || c.count.pages.Load() > 0
	var fs []findingRecord
	if analysed {
		var err error
		if fs, err = c.findings(ctx); err != nil {
			werr = errors.Join(werr, err)
		} else if err := c.st.writeFindings(ctx, fs); err != nil {
			werr = errors.Join(werr, err)
		}
	}
	end := crawlEnd{Finished: res.ended, Outcome: res.outcome, Pages: int(c.count.pages.Load()), Requests: int(c.count.requests.Load())}
	if res.err != nil {
		end.Message = res.err.Error()
	}
	if ev, ok := c.slow.Tripped(); ok {
		end.SlowedAt, end.SlowedBy = ev.At, ev.URL
	}
	if c.st.crawlID != 0 {
		werr = errors.Join(werr, c.st.finishCrawl(ctx, end))
	}

	if analysed && c.st.crawlID != 0 {
		c.printSummary(ctx, stdout, res, fs)
	}
	switch {
	case res.outcome == "off_limits" && analysed:
		fmt.Fprintf(stderr, "audit: %s; everything crawled before is in %s (crawl %d)\n", cmdline.Safe(res.err.Error()), c.cfg.DB, c.st.crawlID)
		return exitOffLimits
	case res.outcome == "off_limits":
		fmt.Fprintf(stderr, "audit: %s\n", cmdline.Safe(res.err.Error()))
		return exitOffLimits
	case res.outcome == "interrupted":
		fmt.Fprintf(stderr, "audit: interrupted; everything crawled so far is in %s (crawl %d). To continue it: audit -resume -db %s -crawl %d\n",
			c.cfg.DB, c.st.crawlID, shellWord(c.cfg.DB), c.st.crawlID)
		return exitFailure
	case res.err != nil:
		fmt.Fprintf(stderr, "audit: %s\n", cmdline.Safe(res.err.Error()))
		return exitFailure
	case werr != nil:
		fmt.Fprintf(stderr, "audit: writing %s: %s\n", c.cfg.DB, cmdline.Safe(werr.Error()))
		return exitFailure
	}
	return exitOK
}

// writeFailed ends a crawl stopped by a failed write: no analysis and no summary (the figures would
// count pages the file does not hold), the crawl marked interrupted if the file still takes that, and
// the way to go on. A file that cannot even take that keeps the crawl as running, which -resume accepts
// once this process has exited.
func (c *crawler) writeFailed(ctx context.Context, res crawlResult, ws *writeStopped, stderr io.Writer) int {
	end := crawlEnd{Finished: res.ended, Outcome: "interrupted", Message: ws.Error(), Pages: int(c.count.pages.Load()), Requests: int(c.count.requests.Load())}
	if ev, ok := c.slow.Tripped(); ok {
		end.SlowedAt, end.SlowedBy = ev.At, ev.URL
	}
	recorded := "is kept as interrupted"
	if err := c.st.finishCrawl(ctx, end); err != nil {
		recorded = "could not even be marked interrupted (" + err.Error() + "), so it stays marked running"
	}
	fmt.Fprintf(stderr, "audit: %s\naudit: the crawl stopped at that write; crawl %d %s, with everything written before it. To continue it once the problem is fixed: audit -resume -db %s -crawl %d\n",
		cmdline.Safe(ws.Error()), c.st.crawlID, recorded, shellWord(c.cfg.DB), c.st.crawlID)
	return exitFailure
}

// findings reads the crawl back from the database and analyses it.
func (c *crawler) findings(ctx context.Context) ([]findingRecord, error) {
	pages, err := c.st.loadPages(ctx)
	if err != nil {
		return nil, err
	}
	links, err := c.st.loadLinks(ctx)
	if err != nil {
		return nil, err
	}
	smURLs, err := c.st.loadStrings(ctx, `SELECT sitemap, url FROM sitemap_urls WHERE crawl_id = ?`)
	if err != nil {
		return nil, err
	}
	sitemaps, err := c.st.loadSitemaps(ctx)
	if err != nil {
		return nil, err
	}
	reqs, err := c.st.loadRequests(ctx)
	if err != nil {
		return nil, err
	}
	in := analysisInput{Pages: pages, Links: links, SitemapURLs: smURLs, Sitemaps: sitemaps, Requests: reqs, Normalize: normalizeOrSelf}
	if in.Rendered, err = c.st.loadRendered(ctx); err != nil {
		return nil, err
	}
	if ev, ok := c.slow.Tripped(); ok {
		in.SlowedBy = ev.URL
	}
	c.mu.Lock()
	in.NotCrawled = c.notCrawled
	c.mu.Unlock()
	in.OverHold, in.FirstOverHold = c.heldDropped, c.heldFirstDropped
	return analyze(in), nil
}

func (c *crawler) printSummary(ctx context.Context, w io.Writer, res crawlResult, fs []findingRecord) {
	counts := map[string]int{}
	for _, f := range fs {
		counts[f.Kind]++
	}
	state := res.outcome
	if state == "off_limits" {
		state = "stopped (robots.txt unreachable)"
	}
	pages, reqs, errs := int(c.count.pages.Load()), int(c.count.requests.Load()), int(c.count.errors.Load())
	fmt.Fprintf(w, "\nCrawl %d of %s %s in %s: %d page%s (%d fetched, %d blocked by robots.txt), %d request%s, %d error%s.\n",
		c.st.crawlID, c.cfg.URL, state, res.ended.Sub(res.started).Round(time.Millisecond),
		pages, plural(pages), c.count.fetched.Load(), c.count.blocked.Load(), reqs, plural(reqs), errs, plural(errs))
	c.printRenderSummary(w)
	if ev, ok := c.slow.Tripped(); ok {
		inFlight, gap := c.slow.Limits()
		fmt.Fprintf(w, "Slowed down after 429 from %s at %s: %d in flight, %s between requests, for the rest of the run.\n",
			cmdline.Safe(ev.URL), ev.At.Format(time.TimeOnly), inFlight, gap)
	}
	if len(fs) == 0 {
		fmt.Fprintln(w, "No findings.")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "\nFINDING\tCOUNT\tEXAMPLE")
		example := map[string]findingRecord{}
		for _, f := range fs {
			if _, ok := example[f.Kind]; !ok {
				example[f.Kind] = f
			}
		}
		width := exampleWidth(termColumns(w), counts)
		for _, k := range orderedKinds(counts) {
			ex := example[k]
			fmt.Fprintf(tw, "%s\t%d\t%s\n", k, counts[k], truncateRunes(cmdline.Safe(c.short(ex.URL)+"  "+c.shortAll(ex.Detail)), width))
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\nWritten to %s (crawl %d). Try:\n  sqlite3 %s \"SELECT kind, url, detail FROM findings WHERE crawl_id = %d ORDER BY kind\"\n",
		c.cfg.DB, c.st.crawlID, c.cfg.DB, c.st.crawlID)
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
func (c *crawler) short(u string) string {
	for _, o := range []string{c.home, c.origin, c.twin} {
		if o != "" {
			if rest, ok := strings.CutPrefix(u, o); ok && strings.HasPrefix(rest, "/") {
				return rest
			}
		}
	}
	return u
}

// shortAll applies short to every URL of the site in a finding's detail.
func (c *crawler) shortAll(s string) string {
	for _, o := range []string{c.home, c.origin, c.twin} {
		if o != "" {
			s = strings.ReplaceAll(s, o+"/", "/")
		}
	}
	return s
}

func orderedKinds(counts map[string]int) []string {
	rank := map[string]int{}
	for i, k := range kindOrder {
		rank[k] = i
	}
	var ks []string
	for k := range counts {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		ri, iok := rank[ks[i]]
		rj, jok := rank[ks[j]]
		if iok != jok {
			return iok
		}
		if ri != rj {
			return ri < rj
		}
		return ks[i] < ks[j]
	})
	return ks
}
