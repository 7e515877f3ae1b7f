package redisfrontier_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/frontier/redisfrontier"
	"github.com/politecrawl/polite/frontier/redisfrontier/redistest"
	"github.com/politecrawl/polite/internal/htmlx"
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
		} else if base, perr := url.Parse(res.FinalURL); perr == nil {
			if page, perr := htmlx.Parse(bytes.NewReader(res.Body), base); perr == nil {
				for _, l := range page.Links {
					links = append(links, l.URL)
				}
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
