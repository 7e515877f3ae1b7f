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
//	go run ./examples/audit app -demo                # the window: start, watch, explore and compare crawls (appcmd.go)
//
// The crawl writes its HTML report (<db>-report-<crawl>.html, next to the database) at the end. Its
// frontier, robots.txt copies and sitemap answers are kept in the database as it goes (internal/store),
// so that -resume continues it after a crash. examples/audit/README.md is the manual; this file and
// cli.go only parse the command line and wire the packages of internal/ (README: "How it is built").
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
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/demo"
	"github.com/politecrawl/polite/examples/audit/internal/render"
	"github.com/politecrawl/polite/examples/audit/internal/store"
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

// run is the whole program: parse args, crawl, analyse, print the summary; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runEnv(ctx, args, stdout, stderr, crawl.Env{})
}

func runEnv(ctx context.Context, args []string, stdout, stderr io.Writer, e crawl.Env) int {
	if e.Now == nil {
		e.Now = time.Now
	}
	if len(args) > 0 {
		switch args[0] {
		case "report":
			return runReport(ctx, args[1:], stdout, stderr, e.Now)
		case "compare":
			return runCompare(ctx, args[1:], stdout, stderr, e.Now)
		case "app":
			return runApp(ctx, args[1:], stdout, stderr, e)
		case "migrate":
			return runMigrate(ctx, args[1:], stdout, stderr)
		}
	}
	cfg, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return crawl.ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "audit: %v\n(run with -h for help)\n", err)
		return crawl.ExitUsage
	}
	closeLog, err := openLog(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "audit: %v\n", err)
		return crawl.ExitFailure
	}
	defer closeLog()
	if e.Terminal == nil {
		e.Terminal = crawl.IsTerminal // before -resume too: the progress line asks it
	}
	if cfg.Resume {
		return runResume(ctx, cfg, stdout, stderr, e)
	}

	var shop *demo.DemoSite
	if cfg.Demo {
		if shop, err = demo.StartDemo(); err != nil {
			fmt.Fprintf(stderr, "audit: %v\n", err)
			return crawl.ExitFailure
		}
		defer shop.Stop()
		cfg.URL = shop.URL()
		if cfg.Resolve == nil {
			cfg.Resolve = map[string]string{}
		}
		for k, v := range shop.Resolve() {
			cfg.Resolve[k] = v
		}
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
	if err := st.CheckNotBusy(ctx); err != nil { // one crawl at a time per database (the app's too)
		fmt.Fprintf(stderr, "audit: %v\n", err)
		return crawl.ExitUsage
	}
	if shop != nil {
		fmt.Fprintf(stdout, "Demo: crawling the built-in shop at %s (served on loopback by this program).\n", cfg.URL)
	}

	c, err := crawl.NewCrawler(cfg, e, st, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "audit: %v\n", err)
		return crawl.ExitUsage
	}
	return runCrawl(ctx, c, shop, stdout, stderr)
}

// runCrawl runs a new or resumed crawl to its end: the crawl, the rendered pass (only with -render),
// the summary, the report, and what the demo shop saw. It returns the exit status. Once the crawl and
// the rendered pass are over it keeps only their Ending (crawlPhase): the Crawler, its frontier and its
// caches are garbage before the passes over the crawl start, which Finish gives back to the system.
func runCrawl(ctx context.Context, c *crawl.Crawler, shop *demo.DemoSite, stdout, stderr io.Writer) int {
	cfg := c.Cfg
	stopCPU, err := startCPUProfile(cfg.CPUProfile)
	if err != nil {
		fmt.Fprintf(stderr, "audit: %v\n", err)
		return crawl.ExitFailure
	}
	defer stopCPU()
	phase := phaseTimer(cfg.Timings, stderr)
	end := crawlPhase(ctx, c, phase, stderr)
	code := end.Finish(stdout, stderr)
	phase("findings")
	code = end.WriteReport(code, stdout, stderr)
	phase("report")
	if cfg.MemProfile != "" {
		// The second profile: its alloc_space shows what the passes after the crawl allocated.
		if err := writeHeapProfile(cfg.MemProfile + ".end"); err != nil {
			fmt.Fprintf(stderr, "audit: %v\n", err)
		}
	}
	if shop != nil {
		shop.Report(stdout, cfg.UserAgent)
	}
	return code
}

// crawlPhase runs the crawl and the rendered pass and returns their Ending, the only thing of the crawl
// runCrawl keeps.
func crawlPhase(ctx context.Context, c *crawl.Crawler, phase func(string), stderr io.Writer) *crawl.Ending {
	res := c.Crawl(ctx)
	phase("crawl")
	if c.Cfg.Timings { // the part of the crawl's time spent building the links' index once its writes ended
		fmt.Fprintf(stderr, "timing index %.3fs\n", c.St.IndexTime().Seconds())
	}
	if err := writeHeapProfile(c.Cfg.MemProfile); err != nil {
		fmt.Fprintf(stderr, "audit: %v\n", err)
	}
	rr := &render.RenderRun{Crawler: c}
	res = rr.RenderPass(ctx, res) // step 6, only with -render
	phase("render")
	end := c.Ending(res)
	end.SummaryExtra = rr.RenderSummary()
	return end
}

// phaseTimer returns the function that ends a phase of the run: with -timings it prints the phase's
// wall time to stderr as "timing <phase> <seconds>s", the line bench/scale.sh reads.
func phaseTimer(on bool, stderr io.Writer) func(name string) {
	last := time.Now()
	return func(name string) {
		now := time.Now()
		if on {
			fmt.Fprintf(stderr, "timing %s %.3fs\n", name, now.Sub(last).Seconds())
		}
		last = now
	}
}

// startCPUProfile starts -cpuprofile's profile; the returned function stops it and closes the file.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile %s: %w", path, err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// writeHeapProfile writes -memprofile's heap profile of what the stopped crawl still holds.
func writeHeapProfile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-memprofile: %w", err)
	}
	runtime.GC() // the profile shows live memory as of the last GC
	err = pprof.WriteHeapProfile(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("-memprofile %s: %w", path, err)
	}
	return nil
}

// openLog opens -log FILE and makes the logger every component of the crawl gets (robots.Cache,
// fetch.Client, the frontier): their decision events, as JSON lines at Debug level, one per decision, so
// that "why was this URL not crawled?" has an answer (a frontier.add event with outcome disallowed and the
// robots.txt rule and line, say). The file is appended to, so a resumed crawl goes on in the same file.
func openLog(cfg *crawl.Config) (closeLog func(), err error) {
	if cfg.Log == "" {
		return func() {}, nil
	}
	f, err := os.OpenFile(cfg.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("-log: %w", err)
	}
	cfg.Logger = slog.New(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return func() { f.Close() }, nil
}
