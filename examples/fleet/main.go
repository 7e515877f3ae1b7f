// Command fleet is a multi-site polite crawler that runs as any number of
// worker processes sharing one Redis: each site is crawled in its own
// scope (its start host and www/apex twin) with its own limits, and those
// limits hold for the whole fleet, not per process.
//
//	fleet -sites sites.txt -redis redis://127.0.0.1:6379/0 -crawl shops   # one worker; start more
//	fleet -sites sites.txt                                                # one process, in memory
//
// The sites file has one start URL per line, optionally followed by that
// site's limits (defaults from the flags):
//
//	https://shop.example/  pages=200 depth=3 inflight=2 gap=500ms
//	https://blog.example/
//
// Each worker writes one JSON object per fetched page to its own file
// (-out, default fleet-<worker>.jsonl) and prints fleet-wide progress to
// stderr every -progress. See README.md.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/politecrawl/polite/examples/internal/cmdline"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/frontier/redisfrontier"
	"github.com/politecrawl/polite/internal/urlnorm"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // the crawl stopped on an error (Redis lost, unreachable...)
	exitUsage   = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// config is the parsed command line.
type config struct {
	sites    []siteSpec
	redis    string
	crawl    string
	workers  int
	out      string
	ua       string
	progress time.Duration
	lease    time.Duration
	shards   int
	logFile  string
}

// siteSpec is one line of the sites file.
type siteSpec struct {
	URL    string
	Limits redisfrontier.Limits
}

func parseArgs(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("fleet", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &config{}
	sites := fs.String("sites", "", "file of start URLs, one per line, each optionally followed by pages=N depth=N inflight=N gap=DURATION")
	fs.StringVar(&c.redis, "redis", "", "Redis URL shared by the fleet: redis://127.0.0.1:6379/0 (one Redis), redis://HOST:PORT?cluster=true&addr=HOST2:PORT2 (Redis Cluster), redis://SENTINEL:26379?master_name=NAME&addr=SENTINEL2:26379 (Sentinel); empty: one process, in memory")
	fs.StringVar(&c.crawl, "crawl", "fleet", "crawl name: workers with the same -redis and -crawl share one crawl")
	fs.IntVar(&c.workers, "workers", 4, "concurrent fetches in this process")
	fs.StringVar(&c.out, "out", "", "JSON lines file of this worker's pages (default fleet-<worker>.jsonl)")
	fs.StringVar(&c.ua, "ua", "CrawlCove-Crawler", "User-Agent (its product token is matched against robots.txt)")
	fs.DurationVar(&c.progress, "progress", 2*time.Second, "how often to print fleet-wide progress (0: never)")
	fs.DurationVar(&c.lease, "lease", redisfrontier.DefaultLease, "how long a dead worker's items and slots stay leased (Redis)")
	fs.IntVar(&c.shards, "shards", 1, "hash-tag shards of the crawl, for Redis Cluster (same on every worker)")
	fs.StringVar(&c.logFile, "log", "", "write decision events as JSON lines (Debug) to this file")
	def := redisfrontier.DefaultLimits()
	fs.IntVar(&def.MaxPages, "pages", def.MaxPages, "default pages per site (0: no limit)")
	fs.IntVar(&def.MaxDepth, "depth", def.MaxDepth, "default link depth per site")
	fs.IntVar(&def.InFlight, "inflight", def.InFlight, "default requests in flight per site, fleet-wide (1..16)")
	fs.DurationVar(&def.Gap, "gap", def.Gap, "default least time between request starts per site, fleet-wide")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *sites == "" {
		return nil, errors.New("-sites is required")
	}
	for _, err := range []error{
		cmdline.IntIn("workers", c.workers, 1, 1024),
		cmdline.IntIn("shards", c.shards, 1, 4096),
		cmdline.DurationIn("lease", c.lease, 100*time.Millisecond, 24*time.Hour),
		cmdline.DurationIn("progress", c.progress, 0, 24*time.Hour),
	} {
		if err != nil {
			return nil, err
		}
	}
	var err error
	if c.sites, err = readSites(*sites, def); err != nil {
		return nil, err
	}
	return c, nil
}

// readSites reads the sites file, at most 1 MiB per line.
func readSites(path string, def redisfrontier.Limits) ([]siteSpec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []siteSpec
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		u, err := urlnorm.Normalize(fields[0])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		s := siteSpec{URL: u, Limits: def}
		for _, kv := range fields[1:] {
			k, v, _ := strings.Cut(kv, "=")
			var err error
			switch k {
			case "pages":
				s.Limits.MaxPages, err = strconv.Atoi(v)
			case "depth":
				s.Limits.MaxDepth, err = strconv.Atoi(v)
			case "inflight":
				s.Limits.InFlight, err = strconv.Atoi(v)
			case "gap":
				s.Limits.Gap, err = time.ParseDuration(v)
			default:
				err = errors.New("unknown setting (pages, depth, inflight, gap)")
			}
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %s: %w", path, n, kv, err)
			}
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no start URLs", path)
	}
	return out, nil
}

// page is one line of a worker's results.
type page struct {
	URL     string  `json:"url"`
	Final   string  `json:"final,omitempty"`
	Status  int     `json:"status,omitempty"`
	Depth   int     `json:"depth"`
	From    string  `json:"from,omitempty"`
	Worker  string  `json:"worker"`
	Bytes   int     `json:"bytes"`
	Links   int     `json:"links"`
	TTFBms  float64 `json:"ttfb_ms"`
	Err     string  `json:"err,omitempty"`
	Fetched string  `json:"fetched"`
}

// crawler is what the crawl loop needs: the Redis frontier, or the
// in-memory frontiers of one process.
type crawler interface {
	Next(ctx context.Context) (frontier.Item, error)
	// finish adds the links of the page at from (the final URL after
	// redirects) and marks the item done.
	finish(ctx context.Context, it frontier.Item, from string, err error, links []string) error
	progress(ctx context.Context) (string, error)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "fleet: %v\n(run with -h for help)\n", err)
		return exitUsage
	}
	var logger *slog.Logger
	if cfg.logFile != "" {
		lf, err := os.Create(cfg.logFile)
		if err != nil {
			fmt.Fprintf(stderr, "fleet: %v\n", err)
			return exitFailure
		}
		defer lf.Close()
		logger = slog.New(slog.NewJSONHandler(lf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}

	client := &fetch.Client{UserAgent: cfg.ua, Logger: logger}
	var c crawler
	var worker string
	if cfg.redis != "" {
		// One step: the fleet's frontier becomes the client's gate, shares
		// its slowdown latch and stores its robots.txt cache in Redis.
		rc, err := newRedisCrawler(ctx, cfg, client)
		if err != nil {
			fmt.Fprintf(stderr, "fleet: %v\n", err)
			return exitFailure
		}
		defer rc.close()
		c, worker = rc, rc.f.Worker()
	} else {
		client.Slowdown = &backoff.Slowdown{}
		mc, err := newMemoryCrawler(cfg, client.RobotsCache(), client.Slowdown)
		if err != nil {
			fmt.Fprintf(stderr, "fleet: %v\n", err)
			return exitFailure
		}
		client.Gate = mc    // each request goes to its site's frontier
		client.Claimer = mc // and each redirect target to its seen set
		c, worker = mc, fmt.Sprintf("local-%d", os.Getpid())
	}
	for _, s := range cfg.sites {
		var r frontier.AddResult
		if rc, ok := c.(*redisCrawler); ok {
			r = rc.f.AddSite(ctx, s.URL, s.Limits)
		} else {
			r = c.(*memoryCrawler).start(ctx, s.URL)
		}
		if r.Outcome != frontier.Queued && r.Outcome != frontier.Duplicate {
			fmt.Fprintf(stderr, "fleet: start URL %s: %v %s\n", cmdline.Safe(s.URL), r.Outcome, cmdline.Safe(fmt.Sprint(r.Err)))
		}
	}

	if cfg.out == "" {
		cfg.out = "fleet-" + worker + ".jsonl"
	}
	out, err := os.Create(cfg.out)
	if err != nil {
		fmt.Fprintf(stderr, "fleet: %v\n", err)
		return exitFailure
	}
	defer out.Close() // closed and checked below; this covers early returns
	fmt.Fprintf(stderr, "fleet: worker %s, %d sites, writing %s\n", worker, len(cfg.sites), cfg.out)

	stopProgress := make(chan struct{})
	var pwg sync.WaitGroup
	if cfg.progress > 0 {
		pwg.Go(func() {
			t := time.NewTicker(cfg.progress)
			defer t.Stop()
			for {
				select {
				case <-stopProgress:
					return
				case <-t.C:
					if line, err := c.progress(ctx); err == nil {
						fmt.Fprintln(stderr, "fleet:", line)
					}
				}
			}
		})
	}

	// The first error (a page that cannot be written, Redis lost) stops
	// every fetcher of this worker: a page is marked done only once its
	// line is written, so the items it held go back to the queue (with
	// Redis, to other workers when their leases expire).
	crawlCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var writeErr error
	enc := json.NewEncoder(out)
	emit := func(p page) error {
		p.Worker = worker
		mu.Lock()
		defer mu.Unlock()
		if writeErr == nil {
			if err := enc.Encode(p); err != nil {
				writeErr = fmt.Errorf("writing %s: %w", cfg.out, err)
			}
		}
		return writeErr
	}
	errc := make(chan error, cfg.workers)
	for range cfg.workers {
		go func() {
			err := loop(crawlCtx, c, client, emit)
			if err != nil {
				cancel()
			}
			errc <- err
		}()
	}
	var first error
	for range cfg.workers {
		if err := <-errc; err != nil && (first == nil || errors.Is(first, context.Canceled) && ctx.Err() == nil) {
			first = err
		}
	}
	if err := out.Close(); err != nil && first == nil {
		first = fmt.Errorf("writing %s: %w", cfg.out, err)
	}
	close(stopProgress)
	pwg.Wait()
	if line, err := c.progress(context.WithoutCancel(ctx)); err == nil {
		fmt.Fprintln(stderr, "fleet: final:", line)
	}
	if first != nil {
		fmt.Fprintf(stderr, "fleet: stopped: %s\n", cmdline.Safe(first.Error())) // the error names a URL a site linked to
		return exitFailure
	}
	fmt.Fprintln(stdout, "fleet: crawl complete")
	return exitOK
}

// loop is the crawl loop, the same for both frontiers.
func loop(ctx context.Context, c crawler, client *fetch.Client, emit func(page) error) error {
	for {
		it, err := c.Next(ctx)
		if errors.Is(err, frontier.ErrComplete) {
			return nil
		}
		if err != nil {
			return err
		}
		res, ferr := client.Get(ctx, it.URL)
		if ctx.Err() != nil {
			return ctx.Err() // stopping: the item is not done, it goes back to the queue
		}
		p := page{URL: it.URL, Final: res.FinalURL, Status: res.Status, Depth: it.Depth, From: it.From,
			Bytes: len(res.Body), TTFBms: float64(res.TTFB.Microseconds()) / 1000, Fetched: time.Now().UTC().Format(time.RFC3339Nano)}
		if p.Final == p.URL {
			p.Final = ""
		}
		var links []string
		if ferr != nil {
			p.Err = ferr.Error()
		} else if pg, err := res.Page(); err == nil { // fetch/page; not HTML: no links
			for _, l := range pg.Links {
				links = append(links, l.URL)
			}
		}
		p.Links = len(links)
		if err := emit(p); err != nil {
			return err // not finished: the item goes back to the queue
		}
		// A redirected page's links were found on its final URL.
		from := res.FinalURL
		if from == "" {
			from = it.URL
		}
		if err := c.finish(ctx, it, from, ferr, links); err != nil {
			if errors.Is(err, redisfrontier.ErrLeaseLost) {
				continue // reported by the frontier's log; the page may be fetched again
			}
			return err
		}
	}
}

// redisCrawler is a worker of a fleet on Redis.
type redisCrawler struct {
	f   *redisfrontier.Frontier
	rdb redis.UniversalClient
}

func newRedisCrawler(ctx context.Context, cfg *config, client *fetch.Client) (*redisCrawler, error) {
	// One Redis, a Redis Cluster or Sentinel, as the URL says.
	rdb, err := redisfrontier.NewClient(cfg.redis)
	if err != nil {
		return nil, fmt.Errorf("-redis: %w", err)
	}
	rc := redisfrontier.DefaultConfig(cfg.crawl)
	rc.Shards, rc.Lease, rc.Client = cfg.shards, cfg.lease, client
	f, err := redisfrontier.New(ctx, rdb, rc)
	if err != nil {
		rdb.Close()
		return nil, err
	}
	return &redisCrawler{f: f, rdb: rdb}, nil
}

// close stops the worker's frontier and closes its Redis client.
func (r *redisCrawler) close() {
	_ = r.f.Close()
	_ = r.rdb.Close()
}

func (r *redisCrawler) Next(ctx context.Context) (frontier.Item, error) { return r.f.Next(ctx) }

func (r *redisCrawler) finish(ctx context.Context, it frontier.Item, from string, err error, links []string) error {
	_, ferr := r.f.FinishFrom(ctx, it, from, err, links)
	return ferr
}

func (r *redisCrawler) progress(ctx context.Context) (string, error) {
	st, err := r.f.FleetStats(ctx)
	if err != nil {
		return "", err
	}
	line := statsLine(st.Stats, st.Sites, st.Rehanded)
	if n := st.Readmitted + st.LateStarts; n > 0 {
		// Requests a worker could not start within the start window
		// of their admission (a loaded machine): admitted again, or
		// recorded as late starts, so the gaps held.
		line += fmt.Sprintf(", %d late starts (%d admitted again)", n, st.Readmitted)
	}
	return line, nil
}

func statsLine(st frontier.Stats, sites, rehanded int) string {
	s := fmt.Sprintf("%d sites: %d done, %d failed, %d queued, %d out, %d in flight, %d requests, %d blocked by robots.txt",
		sites, st.Done, st.Failed, st.Queued, st.Out, st.InFlight, st.Requests, st.Blocked)
	if rehanded > 0 {
		s += fmt.Sprintf(", %d re-handed after a lease expired", rehanded)
	}
	if st.Slowdown {
		s += ", SLOWED DOWN (429)"
	}
	return s
}
