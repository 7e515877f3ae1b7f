package frontier_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/internal/eventlog"
	"github.com/politecrawl/polite/internal/testsite"
	"github.com/politecrawl/polite/robots"
)

// Every Add says what became of the URL, with the documented attributes
// (url, from, depth, outcome, rule, line, err), empty ones left out.
func TestEventFrontierAdd(t *testing.T) {
	site := testsite.New(t)
	site.Robots("User-agent: *\nAllow: /private/open\nDisallow: /private/\n")
	down := testsite.New(t)
	down.Status("/robots.txt", http.StatusServiceUnavailable)
	base := site.URL()
	logger, log := eventlog.New(slog.LevelDebug)
	cfg := frontier.DefaultConfig()
	cfg.MaxPages, cfg.MaxDepth = 3, 1
	cfg.Robots, cfg.RobotsTokens = &robots.Cache{}, []string{"CrawlCove-Crawler"}
	cfg.Logger = logger
	f, err := frontier.New(cfg)
	require.NoError(t, err)
	ctx := context.Background()
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	from := base + "/"

	f.Add(ctx, base+"/", 0, "")
	f.Add(ctx, base+"/private/open", 1, from)
	f.Add(ctx, base+"/", 1, from)
	f.Add(ctx, "https://elsewhere.example/", 1, from)
	f.Add(ctx, base+"/deep", 2, from)
	f.Add(ctx, base+"/private/x", 1, from)
	f.Add(ctx, down.URL()+"/", 0, "")
	f.Add(ctx, "mailto:x@example.com", 1, from)
	f.Add(ctx, base+"/"+strings.Repeat("a", frontier.MaxURLLength), 1, from)
	_, err = f.StopHost(down.Host())
	require.NoError(t, err)
	f.Add(ctx, down.URL()+"/again", 0, "")
	fresh := testsite.New(t)
	f.Add(canceled, fresh.URL()+"/", 0, "")
	f.Add(ctx, base+"/third", 1, from)
	f.Add(ctx, base+"/fourth", 1, from)

	evs := log.Events(t, frontier.EventAdd)
	require.Len(t, evs, 13)
	byOutcome := map[string]map[string]any{}
	for _, ev := range evs {
		assert.Equal(t, "DEBUG", ev["level"])
		o := ev["outcome"].(string)
		if _, dup := byOutcome[o]; !dup {
			byOutcome[o] = ev
		}
	}
	assert.Equal(t, map[string]any{"level": "DEBUG", "url": base + "/", "depth": 0.0, "outcome": "queued"}, byOutcome["queued"])
	assert.Equal(t, map[string]any{"level": "DEBUG", "url": base + "/", "from": from, "depth": 1.0, "outcome": "duplicate"}, byOutcome["duplicate"])
	assert.Equal(t, map[string]any{"level": "DEBUG", "url": "https://elsewhere.example/", "from": from, "depth": 1.0, "outcome": "out_of_scope"}, byOutcome["out_of_scope"])
	assert.Equal(t, map[string]any{"level": "DEBUG", "url": base + "/deep", "from": from, "depth": 2.0, "outcome": "too_deep"}, byOutcome["too_deep"])
	assert.Equal(t, map[string]any{"level": "DEBUG", "url": base + "/private/x", "from": from, "depth": 1.0, "outcome": "disallowed",
		"rule": "Disallow: /private/", "line": 3.0}, byOutcome["disallowed"])
	assert.Equal(t, map[string]any{"level": "DEBUG", "url": base + "/fourth", "from": from, "depth": 1.0, "outcome": "page_limit"}, byOutcome["page_limit"])
	// The allowing rule is named too.
	assert.Equal(t, map[string]any{"level": "DEBUG", "url": base + "/private/open", "from": from, "depth": 1.0, "outcome": "queued",
		"rule": "Allow: /private/open", "line": 2.0}, evs[1])
	for o, errPart := range map[string]string{
		"robots_unreachable": "503",
		"invalid":            "invalid URL",
		"too_long":           "longer than 8 KiB",
		"stopped":            "host stopped",
		"failed":             "context canceled",
	} {
		ev := byOutcome[o]
		require.NotNil(t, ev, o)
		assert.Contains(t, ev["err"], errPart, o)
		assert.NotContains(t, ev, "rule", o)
	}
	assert.Len(t, byOutcome, 11, "every outcome seen once at least")
}

// An Acquire that had to wait says so; one admitted at once does not.
func TestEventFrontierGateWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger, log := eventlog.New(slog.LevelDebug)
		cfg := frontier.DefaultConfig() // 300 ms gap
		cfg.Logger = logger
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		for _, u := range []string{"https://shop.example/a", "https://user:pw@shop.example/b?q=1"} {
			rel, err := f.Acquire(t.Context(), mustURL(t, u))
			require.NoError(t, err)
			rel()
		}
		assert.Equal(t, []map[string]any{
			{"level": "DEBUG", "url": "https://user:xxxxx@shop.example/b?q=1", "host": "shop.example", "wait": float64(300 * time.Millisecond)},
		}, log.Events(t, frontier.EventGateWait))
	})
}

// The Frontier falls back to its Client's Logger.
func TestEventLoggerFromClient(t *testing.T) {
	logger, log := eventlog.New(slog.LevelDebug)
	cfg := frontier.DefaultConfig()
	cfg.Client = &fetch.Client{Logger: logger, Robots: verdictRobots{robots.Verdict{Outcome: robots.Allowed}}}
	f, err := frontier.New(cfg)
	require.NoError(t, err)
	f.Add(context.Background(), "https://shop.example/", 0, "")
	assert.Len(t, log.Events(t, frontier.EventAdd), 1)
}

// addNextDone adds n URLs (with a duplicate and an out-of-scope one, so
// events of several outcomes are built), takes them out with Next and
// Done, and acquires a slot for each.
func addNextDone(f *frontier.Frontier, urls []string) {
	ctx := context.Background()
	for i, u := range urls {
		f.Add(ctx, u, min(i, 1), "")
	}
	f.Add(ctx, urls[0], 1, "")
	f.Add(ctx, "https://elsewhere.example/", 1, "")
	for {
		it, err := f.Next(ctx)
		if err != nil {
			return
		}
		f.Done(it, nil)
	}
}

// A nil Logger and a disabled one cost the same allocations on the hot
// paths (Add+Next+Done, Acquire); an enabled one costs more, so the paths
// do log.
func TestDisabledLoggerAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	urls := make([]string, 100)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://shop.example/p%d", i)
	}
	var lines lineCounter
	loggers := map[string]*slog.Logger{
		"nil":      nil,
		"disabled": slog.New(slog.DiscardHandler),
		"info":     slog.New(slog.NewJSONHandler(&lines, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	crawl := map[string]float64{}
	for name, l := range loggers {
		crawl[name] = testing.AllocsPerRun(20, func() {
			cfg := benchConfig()
			cfg.Logger = l
			f, err := frontier.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			addNextDone(f, urls)
		})
	}
	t.Logf("Add+Next+Done of 100 URLs, allocs: %v", crawl)
	assert.Equal(t, crawl["nil"], crawl["disabled"])
	assert.Equal(t, crawl["nil"], crawl["info"])
	assert.Zero(t, lines.n.Load(), "no event is Info or above")

	acquire := map[string]float64{}
	for name, l := range loggers {
		synctest.Test(t, func(t *testing.T) {
			cfg := benchConfig()
			cfg.Gap = time.Millisecond // every Acquire waits: the gate_wait path
			cfg.Logger = l
			f, err := frontier.New(cfg)
			require.NoError(t, err)
			u := mustURL(t, "https://shop.example/a")
			acquire[name] = testing.AllocsPerRun(100, func() {
				rel, err := f.Acquire(context.Background(), u)
				if err != nil {
					t.Fatal(err)
				}
				rel()
			})
		})
	}
	t.Logf("Acquire after a wait, allocs: %v", acquire)
	assert.Equal(t, acquire["nil"], acquire["disabled"])
	assert.Equal(t, acquire["nil"], acquire["info"])

	// The same paths with a Debug logger do emit events: the checks above
	// measured the paths that log.
	var debug lineCounter
	cfg := benchConfig()
	cfg.Gap = time.Millisecond
	cfg.Logger = slog.New(slog.NewJSONHandler(&debug, &slog.HandlerOptions{Level: slog.LevelDebug}))
	synctest.Test(t, func(t *testing.T) {
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		addNextDone(f, urls)
		for range 2 { // the second waits a gap
			rel, err := f.Acquire(context.Background(), mustURL(t, "https://shop.example/a"))
			require.NoError(t, err)
			rel()
		}
	})
	assert.Equal(t, int64(len(urls)+2+1), debug.n.Load(), "an add event per Add, a gate_wait event")
}

// lineCounter counts the lines a handler writes.
type lineCounter struct{ n atomic.Int64 }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.n.Add(int64(bytes.Count(p, []byte("\n"))))
	return len(p), nil
}

// An Add whose context has ended queues nothing, even when the host's robots.txt is already cached and
// the verdict is ready at once (TestEventFrontierAdd's canceled Add was queued now and then under load).
func TestAddWithEndedContextQueuesNothing(t *testing.T) {
	site := testsite.New(t)
	cfg := frontier.DefaultConfig()
	cfg.Robots, cfg.RobotsTokens = &robots.Cache{}, []string{"CrawlCove-Crawler"}
	f, err := frontier.New(cfg)
	require.NoError(t, err)
	require.Equal(t, frontier.Queued, f.Add(context.Background(), site.URL()+"/", 0, "").Outcome)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	r := f.Add(canceled, site.URL()+"/next", 1, site.URL()+"/")
	assert.Equal(t, frontier.Failed, r.Outcome)
	assert.ErrorIs(t, r.Err, context.Canceled)
}
