package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/render"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/politecrawl/polite/fetch"
)

// resolveFlag collects repeated -resolve HOST:PORT:ADDR values, like curl's --resolve.
type resolveFlag []string

func (r *resolveFlag) String() string { return strings.Join(*r, ",") }

func (r *resolveFlag) Set(v string) error {
	if _, err := fetch.ParseResolve(v); err != nil {
		return err
	}
	*r = append(*r, v)
	return nil
}

const usageText = `usage: audit [flags] URL
       audit [flags] -demo
       audit -resume [-db FILE] [-crawl N]                                    (continue a killed crawl)
       audit report [-db FILE] [-crawl N] [-format html|csv|json] [-o PATH]   (audit report -h)
       audit compare [-db FILE] [-o FILE.html] [A [B]]                      (audit compare -h)
       audit app [-addr 127.0.0.1:0] [-db FILE] [-demo] [-no-browser]       (the window: audit app -h)
       audit migrate [-db FILE]                                             (convert an older version's file)

Crawl Cove: a polite SEO audit crawler. Crawls URL's site (and its www/apex twin) breadth-first,
obeying robots.txt, and writes pages, links and findings to a SQLite file, then an HTML report
(<file>-report-<crawl>.html next to the file: audit-report-1.html for audit.db).

Exit status: 0 crawl finished, 2 usage error, 3 site off limits (robots.txt unreachable or 5xx),
1 any other failure (including Ctrl-C; what was crawled is kept).

Flags:
`

// printFlags is flag.PrintDefaults, except that a usage text that starts with its back-quoted name
// ("`HOST:PORT:ADDR`: connect to...") does not say the name a second time under the flag.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	var b strings.Builder
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	out := b.String()
	fs.VisitAll(func(f *flag.Flag) {
		name, _ := flag.UnquoteUsage(f)
		if strings.HasPrefix(f.Usage, "`"+name+"`: ") {
			out = strings.Replace(out, "\t"+name+": ", "\t", 1)
		}
	})
	fmt.Fprint(w, out)
}

// parseArgs parses the command line. Output of -h goes to stderr.
func parseArgs(args []string, stderr io.Writer) (*crawl.Config, error) {
	c := &crawl.Config{}
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	// The flag package prints a parse error and the whole usage text itself; we print the error once
	// (runEnv) with a pointer to -h, and the usage text only when it was asked for.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&c.DB, "db", "audit.db", "SQLite `file` the crawl is written to (a new crawl is added to an existing file)")
	fs.IntVar(&c.MaxPages, "max-pages", crawl.DefaultMaxPages, "stop after `N` pages")
	fs.IntVar(&c.MaxDepth, "max-depth", crawl.DefaultMaxDepth, "follow links at most `N` levels from the start page (start page = 0)")
	fs.IntVar(&c.Concurrency, "concurrency", crawl.DefaultConcurrency, "requests in flight, 1..16")
	fs.DurationVar(&c.Gap, "gap", crawl.DefaultGap, "minimum `duration` between request starts, 0..60s")
	fs.StringVar(&c.UserAgent, "user-agent", crawl.DefaultUserAgent, "User-Agent `string`; robots.txt groups for its product token apply, else those for CrawlCove-Crawler, else *")
	fs.DurationVar(&c.Timeout, "timeout", crawl.DefaultTimeout, "give up on a request after `duration`")
	var resolve resolveFlag
	fs.Var(&resolve, "resolve", "`HOST:PORT:ADDR`: connect to ADDR for HOST:PORT, like curl (repeatable)")
	fs.BoolVar(&c.Demo, "demo", false, "crawl the built-in demo shop, served on loopback, instead of URL")
	fs.BoolVar(&c.Quiet, "quiet", false, "no progress output")
	fs.BoolVar(&c.NoReport, "no-report", false, "do not write the HTML report at the end")
	fs.StringVar(&c.Log, "log", "", "append every decision (robots.txt, queueing, retries, slowdown...) to `file` as JSON lines")
	fs.BoolVar(&c.Resume, "resume", false, "continue an interrupted (Ctrl-C, killed) crawl of -db, with its own settings")
	fs.Int64Var(&c.Crawl, "crawl", 0, "with -resume: the crawl `id` to continue (default: the latest)")
	fs.IntVar(&c.Render, "render", 0, "after the crawl, load a sample of `N` crawled pages in headless Chromium so JavaScript runs, and compare (0 = off, up to 500)")
	fs.StringVar(&c.Browser, "browser", "", "the browser for -render: a `path` or a name in PATH (default: the first of chromium, chromium-browser, google-chrome)")
	fs.BoolVar(&c.Timings, "timings", false, "print how long the crawl and each pass after it took, to stderr")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write a pprof CPU profile of the run to `file`")
	fs.StringVar(&c.MemProfile, "memprofile", "", "write a pprof heap profile to `file` when the crawl stops, before the passes after it (and file.end at exit)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, usageText)
			printFlags(stderr, fs)
			return nil, err
		}
		msg := err.Error()
		if strings.Contains(msg, "for flag -gap") || strings.Contains(msg, "for flag -timeout") {
			msg += " (a duration needs a unit: 300ms, 2s, 1m)"
		}
		return nil, store.Usagef("%s", msg)
	}
	c.Resolve, _ = fetch.ParseResolve(resolve...) // each entry was validated by Set
	// Every setting has a range, checked by the one function the app's form calls too.
	if err := c.Check(); err != nil {
		return nil, err
	}
	resume := c.Resume || c.Crawl != 0
	if resume {
		if err := resumeArgs(c, fs); err != nil {
			return nil, err
		}
	}
	switch {
	case resume:
	case c.Demo && fs.NArg() > 0:
		return nil, store.Usagef("-demo crawls the built-in demo site: give no URL (got %q)", fs.Arg(0))
	case c.Demo:
	case fs.NArg() == 0:
		return nil, store.Usagef("missing URL to crawl (or -demo)")
	case fs.NArg() > 1:
		return nil, store.Usagef("one URL only, got %d arguments: %q", fs.NArg(), fs.Args())
	default:
		u, err := crawl.StartURL(fs.Arg(0))
		if err != nil {
			return nil, err
		}
		c.URL = u
	}
	if c.Render > 0 {
		// Only -render looks for a browser: without it nothing about one is touched or required.
		b, err := render.FindBrowser(c.Browser)
		if err != nil {
			return nil, err
		}
		c.Browser = b
	}
	return c, nil
}
