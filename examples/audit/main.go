// Command audit is Crawl Cove, a desktop SEO audit crawler built on the polite packages, and the worked
// example of how they fit together: robots.Cache fetches robots.txt through a fetch.Transport, the
// frontier is the one politeness gate every request passes, a backoff.Slowdown shared by fetch and the
// frontier slows the whole run after a 429, and sitemaps are expanded through the same polite client.
//
// It crawls one site (the start host and its www/apex twin) breadth-first and writes pages, links,
// sitemaps and findings to a SQLite file:
//
//	go run ./examples/audit -demo                    # the built-in demo shop
//	go run ./examples/audit -db shop.db https://shop.example/
//	go run ./examples/audit -resume -db shop.db      # continue a crawl that was killed or interrupted
//	go run ./examples/audit report -db shop.db       # the self-contained HTML report again (or -format csv|json)
//	go run ./examples/audit compare -db shop.db      # what changed between the two latest crawls of the site
//
// The crawl writes its HTML report (<db>-report-<crawl>.html, next to the database) at the end. Its
// frontier, robots.txt copies and sitemap answers are kept in the database as it goes (queue.go,
// resume_store.go), so that -resume continues it after a crash. examples/audit/README.md is the manual.
//
// What it does, and does not do, is the public bot page's promise: robots.txt first and always obeyed,
// sitemaps only when advertised, 4 requests in flight with 300 ms between starts, Crawl-delay not read,
// 429 retried twice and then one request at a time with a 3 s gap for the rest of the run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // the first Ctrl-C stops the crawl gracefully; a second one kills the program as usual
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// env is what tests replace: where requests go, the clock, and whether stderr is a terminal.
type env struct {
	// Transport is the base transport under the polite layers; nil = fetch.NewBaseTransport(-resolve).
	Transport http.RoundTripper
	// Now is the clock; nil = time.Now.
	Now func() time.Time
	// Terminal reports whether w is a terminal (the progress line is drawn only there); nil = isTerminal.
	Terminal func(w io.Writer) bool
	// MemoryQueue keeps the frontier's queue in memory only, as before resume existed: the crawl cannot
	// be resumed. Benchmarks compare the two.
	MemoryQueue bool
}

// run is the whole program: parse args, crawl, analyse, print the summary; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runEnv(ctx, args, stdout, stderr, env{})
}

func runEnv(ctx context.Context, args []string, stdout, stderr io.Writer, e env) int {
	if e.Now == nil {
		e.Now = time.Now
	}
	if len(args) > 0 {
		switch args[0] {
		case "report":
			return runReport(ctx, args[1:], stdout, stderr, e.Now)
		case "compare":
			return runCompare(ctx, args[1:], stdout, stderr, e.Now)
		}
	}
	cfg, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "audit: %v\n(run with -h for help)\n", err)
		return exitUsage
	}
	closeLog, err := openLog(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "audit: %v\n", err)
		return exitFailure
	}
	defer closeLog()
	if e.Terminal == nil {
		e.Terminal = isTerminal // before -resume too: the progress line asks it
	}
	if cfg.Resume {
		return runResume(ctx, cfg, stdout, stderr, e)
	}

	var demo *demoSite
	if cfg.Demo {
		if demo, err = startDemo(); err != nil {
			fmt.Fprintf(stderr, "audit: %v\n", err)
			return exitFailure
		}
		defer demo.stop()
		cfg.URL = demo.URL()
		if cfg.Resolve == nil {
			cfg.Resolve = map[string]string{}
		}
		for k, v := range demo.Resolve() {
			cfg.Resolve[k] = v
		}
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
	if demo != nil {
		fmt.Fprintf(stdout, "Demo: crawling the built-in shop at %s (served on loopback by this program).\n", cfg.URL)
	}

	c, err := newCrawler(cfg, e, st, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "audit: %v\n", err)
		return exitUsage
	}
	res := c.crawl(ctx)
	res = c.renderPass(ctx, res) // step 6, only with -render
	code := c.finish(res, stdout, stderr)
	code = c.writeReport(res, code, stdout, stderr)
	if demo != nil {
		demo.report(stdout, cfg.UserAgent)
	}
	return code
}
