package redisfrontier_test

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/frontier/redisfrontier"
	"github.com/politecrawl/polite/frontier/redisfrontier/redistest"
	"github.com/politecrawl/polite/internal/testsite"
	"github.com/politecrawl/polite/robots"
)

const ua = "CrawlCove-Crawler"

// worker is one crawler of a fleet: a Frontier on Redis wired to a polite
// client and a robots cache that share it as their gate and store.
type worker struct {
	f      *redisfrontier.Frontier
	client *fetch.Client
	rules  *robots.Cache
}

func newWorker(t testing.TB, rdb redisUniversal, cfg redisfrontier.Config) *worker {
	t.Helper()
	w, err := startWorker(t.Context(), rdb, cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.f.Close() })
	return w
}

type redisUniversal = redis.UniversalClient

// startWorker wires a worker in one step (Config.Client): the client's
// gate is the Frontier, its robots cache stores in Redis and takes the
// fleet's fetch lock, one slowdown latch serves both.
func startWorker(ctx context.Context, rdb redisUniversal, cfg redisfrontier.Config, header http.Header) (*worker, error) {
	client := &fetch.Client{UserAgent: ua, Header: header, Slowdown: cfg.Slowdown}
	cfg.Client = client
	f, err := redisfrontier.New(ctx, rdb, cfg)
	if err != nil {
		return nil, err
	}
	return &worker{f: f, client: client, rules: client.RobotsCache()}, nil
}

// fetched is one page a worker fetched.
type fetched struct {
	URL    string `json:"url"`
	Status int    `json:"status"`
	Depth  int    `json:"depth"`
	Err    string `json:"err,omitempty"`
}

// crawl runs n goroutines of the crawl loop until the crawl is complete,
// calling got for every page.
func (w *worker) crawl(ctx context.Context, n int, got func(fetched)) error {
	errc := make(chan error, n)
	for range n {
		go func() { errc <- w.loop(ctx, got) }()
	}
	var first error
	for range n {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (w *worker) loop(ctx context.Context, got func(fetched)) error {
	for {
		it, err := w.f.Next(ctx)
		if errors.Is(err, frontier.ErrComplete) {
			return nil
		}
		if err != nil {
			return err
		}
		res, ferr := w.client.Get(ctx, it.URL)
		r := fetched{URL: it.URL, Status: res.Status, Depth: it.Depth}
		var links []string
		if ferr != nil {
			r.Err = ferr.Error()
		} else if page, perr := res.Page(); perr == nil {
			for _, l := range page.Links {
				links = append(links, l.URL)
			}
		}
		got(r)
		if _, err := w.f.Finish(ctx, it, ferr, links); err != nil && !errors.Is(err, redisfrontier.ErrLeaseLost) {
			// ErrLeaseLost: this worker stalled past its lease (a loaded
			// machine) and the item went to another; at least once.
			return err
		}
	}
}

func startRedis(t testing.TB) (*redistest.Server, redisUniversal) {
	t.Helper()
	s := redistest.Start(t, redistest.Options{})
	return s, s.Client()
}

func shortCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// startTolerance is how much closer than its gap two requests may reach a
// site in these tests, measured at the site's kernel (testsite's
// Request.Arrived). It is the part of a request's path after the last
// check a worker can make: from the start-window check, made after the
// request line is buffered, to the bytes landing in the server's socket —
// the rest of the headers, one write(2), loopback delivery. Measured with
// -race on the shared 2-core machine at load 2–20: 6 µs to 0.9 ms (p99
// 0.1–0.4 ms). What the server's own goroutines add before a handler runs
// (up to 46 ms there) is the site's, not the crawler's, and is left out by
// using the kernel's receive time.
const startTolerance = 2 * time.Millisecond

// arrivals returns when each request reached the site's kernel, sorted.
// Kernel receive times are read on Linux only; elsewhere the server-side
// checks are skipped (the handler's start time would measure the server's
// scheduling instead).
func arrivals(t testing.TB, reqs []testsite.Request) []time.Time {
	t.Helper()
	var at []time.Time
	for _, r := range reqs {
		if r.Arrived.IsZero() {
			if runtime.GOOS == "linux" {
				t.Fatalf("request %s has no kernel arrival time", r.Path)
			}
			t.Skipf("server-side timing needs kernel receive timestamps (Linux); %s has none", runtime.GOOS)
		}
		at = append(at, r.Arrived)
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	return at
}
