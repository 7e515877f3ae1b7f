package fetch_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/eventlog"
	"github.com/politecrawl/polite/internal/testsite"
)

func TestEventDisallowed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Robots("User-agent: *\nDisallow: /private/\n")
		a.Redirect("/go", "/private/y", http.StatusFound)
		down := n.Add("down.test")
		down.Status("/robots.txt", http.StatusServiceUnavailable)
		c := newClient(n, fetch.NoLimits{})
		logger, log := eventlog.New(slog.LevelDebug)
		c.Logger = logger

		_, err := c.Get(t.Context(), "http://a.test/private/x")
		require.ErrorIs(t, err, fetch.ErrDisallowed)
		_, err = c.Get(t.Context(), "http://a.test/go")
		require.ErrorIs(t, err, fetch.ErrDisallowed)
		_, err = c.Get(t.Context(), "http://down.test/p")
		require.ErrorIs(t, err, fetch.ErrSiteOffLimits)

		assert.Equal(t, []map[string]any{
			{"level": "INFO", "url": "http://a.test/private/x", "outcome": "disallowed", "rule": "Disallow: /private/", "line": 2.0, "hop": 0.0},
			{"level": "INFO", "url": "http://a.test/private/y", "outcome": "disallowed", "rule": "Disallow: /private/", "line": 2.0, "hop": 1.0},
			{"level": "INFO", "url": "http://down.test/p", "outcome": "unreachable", "hop": 0.0},
		}, log.Events(t, fetch.EventDisallowed))

		// A checker with no answer: refused, and said so.
		c2 := newClient(n, fetch.NoLimits{})
		c2.Robots = verdictChecker{}
		c2.Logger = logger
		_, err = c2.Get(t.Context(), "http://a.test/")
		require.ErrorIs(t, err, fetch.ErrNoVerdict)
		evs := log.Events(t, fetch.EventDisallowed)
		require.Len(t, evs, 4)
		assert.Equal(t, map[string]any{"level": "INFO", "url": "http://a.test/", "outcome": "unknown", "hop": 0.0}, evs[3])
	})
}

func TestEventRedirectRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Redirect("/loop", "/loop2", http.StatusFound)
		a.Redirect("/loop2", "/loop", http.StatusFound)
		a.Redirect("/ftp", "ftp://a.test/f", http.StatusFound)
		a.Redirect("/out", "http://b.test/", http.StatusFound)
		c := newClient(n, fetch.NoLimits{})
		logger, log := eventlog.New(slog.LevelDebug)
		c.Logger = logger
		c.CheckRedirect = func(next *url.URL, _ []fetch.Hop) error {
			if next.Host != "a.test" {
				return errOffsite
			}
			return nil
		}

		_, err := c.Get(t.Context(), "http://a.test/loop")
		require.ErrorIs(t, err, fetch.ErrRedirectLoop)
		_, err = c.Get(t.Context(), "http://a.test/ftp")
		require.ErrorIs(t, err, fetch.ErrBadRedirect)
		_, err = c.Get(t.Context(), "http://a.test/out")
		require.ErrorIs(t, err, errOffsite)
		c.MaxRedirects = 0 // already initialised: the limit stays 10
		_, err = c.HTTPClient().Get("http://a.test/loop")
		require.ErrorIs(t, err, fetch.ErrRedirectLoop)

		evs := log.Events(t, fetch.EventRedirectRefused)
		require.Len(t, evs, 4)
		assert.Equal(t, "http://a.test/loop2", evs[0]["url"])
		assert.Equal(t, "http://a.test/loop", evs[0]["to"])
		assert.Contains(t, evs[0]["err"], "redirect loop")
		assert.Equal(t, "http://a.test/ftp", evs[1]["url"])
		assert.Equal(t, "ftp://a.test/f", evs[1]["to"])
		assert.Contains(t, evs[1]["err"], "bad redirect")
		assert.Equal(t, map[string]any{"level": "INFO", "url": "http://a.test/out", "to": "http://b.test/", "err": errOffsite.Error()}, evs[2])
		assert.Equal(t, "http://a.test/loop2", evs[3]["url"], "HTTPClient's redirects too")
		assert.Contains(t, evs[3]["err"], "redirect loop")
	})
}

// errOffsite is a CheckRedirect refusal.
var errOffsite = errorString("redirect leaves the site")

type errorString string

func (e errorString) Error() string { return string(e) }

func TestEventRetryAndSlowdownTripped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Robots("")
		a.Route("/busy", testsite.Response{Status: 429, Header: retryAfter("1")}, testsite.Response{Body: "ok"})
		a.Route("/again", testsite.Response{Status: 429, Header: retryAfter("2")}, testsite.Response{Body: "ok"})
		a.Route("/stall", testsite.Response{Delay: time.Hour}, testsite.Response{Body: "ok"})
		c := newClient(n, fetch.NoLimits{})
		c.Policy = &backoff.Policy{RetryTransportErrors: true}
		c.Timeout = time.Second
		logger, log := eventlog.New(slog.LevelDebug)
		c.Logger = logger

		for _, p := range []string{"/busy", "/again", "/stall"} {
			_, err := c.Get(t.Context(), "http://a.test"+p)
			require.NoError(t, err, p)
		}
		retries := log.Events(t, fetch.EventRetry)
		require.Len(t, retries, 3)
		assert.Equal(t, map[string]any{"level": "INFO", "url": "http://a.test/busy", "attempt": 1.0, "status": 429.0, "wait": float64(time.Second)}, retries[0])
		assert.Equal(t, float64(2*time.Second), retries[1]["wait"])
		assert.Equal(t, "http://a.test/stall", retries[2]["url"])
		assert.NotContains(t, retries[2], "status", "no response: no status")
		assert.Contains(t, retries[2]["err"], "timed out")
		assert.Equal(t, float64(500*time.Millisecond), retries[2]["wait"])

		assert.Equal(t, []map[string]any{
			{"level": "WARN", "url": "http://a.test/busy", "status": 429.0, "in_flight": 1.0, "gap": float64(3 * time.Second)},
		}, log.Events(t, fetch.EventSlowdownTripped), "the first trip only")
	})
}

// The private robots cache's transport reads the client's Logger when it
// makes a request, so a 429 on robots.txt is reported like one on a page.
func TestEventSlowdownTrippedByRobotsTxt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Status("/robots.txt", http.StatusTooManyRequests)
		c := newClient(n, fetch.NoLimits{})
		_ = c.RobotsCache() // made before the logger is set
		logger, log := eventlog.New(slog.LevelDebug)
		c.Logger = logger
		_, err := c.Get(t.Context(), "http://a.test/p")
		require.ErrorIs(t, err, fetch.ErrSiteOffLimits)
		assert.Equal(t, []map[string]any{
			{"level": "WARN", "url": "http://a.test/robots.txt", "status": 429.0, "in_flight": 1.0, "gap": float64(3 * time.Second)},
		}, log.Events(t, fetch.EventSlowdownTripped))
	})
}

// scriptedTransport answers in memory, deterministically, so allocation
// counts are exact: robots.txt disallows /private/, /busy answers 429
// (Retry-After: 0) and 200 in turn, /loop and /loop2 redirect to each other.
type scriptedTransport struct{ busy atomic.Int64 }

func (s *scriptedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	status, body, h := 200, "", http.Header{}
	switch req.URL.Path {
	case "/robots.txt":
		body = "User-agent: *\nDisallow: /private/\n"
	case "/busy":
		if s.busy.Add(1)%2 == 1 {
			status = 429
			h.Set("Retry-After", "0")
		}
	case "/loop":
		status = 302
		h.Set("Location", "/loop2")
	case "/loop2":
		status = 302
		h.Set("Location", "/loop")
	default:
		body = "page"
	}
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)), Request: req}, nil
}

// eventfulGets runs Gets that emit every fetch event (retry, slowdown —
// the first time —, disallowed, redirect refused).
func eventfulGets(c *fetch.Client) {
	ctx := context.Background()
	_, _ = c.Get(ctx, "http://bench.test/busy")
	_, _ = c.Get(ctx, "http://bench.test/private/x")
	_, _ = c.Get(ctx, "http://bench.test/loop")
}

// A nil Logger and a Logger whose handler is disabled for the events'
// levels cost the same allocations on paths that emit every event.
func TestDisabledLoggerAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	var lines lineCounter
	run := func(l *slog.Logger) (*fetch.Client, float64) {
		c := &fetch.Client{UserAgent: testUA, Transport: &scriptedTransport{}, Slowdown: &backoff.Slowdown{}, Logger: l, Gate: openGate{}}
		eventfulGets(c) // warm: robots.txt cached, slowdown tripped
		return c, testing.AllocsPerRun(200, func() { eventfulGets(c) })
	}
	_, none := run(nil)
	_, disabled := run(slog.New(slog.DiscardHandler))
	_, errorOnly := run(slog.New(slog.NewJSONHandler(&lines, &slog.HandlerOptions{Level: slog.LevelError})))
	t.Logf("allocs per run: nil %v, disabled %v, error level %v", none, disabled, errorOnly)
	assert.Equal(t, none, disabled)
	assert.Equal(t, none, errorOnly)
	assert.Zero(t, lines.n.Load())

	// The same calls with a Debug logger emit every event: the counts above
	// measured paths that log.
	logger, log := eventlog.New(slog.LevelDebug)
	c := &fetch.Client{UserAgent: testUA, Transport: &scriptedTransport{}, Slowdown: &backoff.Slowdown{}, Logger: logger, Gate: openGate{}}
	eventfulGets(c)
	eventfulGets(c)
	assert.Len(t, log.Events(t, fetch.EventSlowdownTripped), 1)
	for _, ev := range []string{fetch.EventRetry, fetch.EventDisallowed, fetch.EventRedirectRefused} {
		assert.Len(t, log.Events(t, ev), 2, ev)
	}
}

// lineCounter counts the lines a handler writes.
type lineCounter struct{ n atomic.Int64 }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.n.Add(int64(bytes.Count(p, []byte("\n"))))
	return len(p), nil
}

// The private robots cache logs its events through the client's Logger,
// even one set after the cache was made.
func TestPrivateRobotsCacheLogsThroughTheClientLogger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Robots("User-agent: *\nDisallow: /private/\n")
		c := newClient(n, fetch.NoLimits{})
		rc := c.RobotsCache() // made without a logger
		_, err := rc.Check(t.Context(), "bot", "http://a.test/")
		require.NoError(t, err) // nothing logged: the client has no Logger yet
		logger, log := eventlog.New(slog.LevelDebug)
		c.Logger = logger
		_, err = c.Get(t.Context(), "http://a.test/private/x")
		require.ErrorIs(t, err, fetch.ErrDisallowed)
		decisions := log.Events(t, "robots.decision")
		require.Len(t, decisions, 1)
		assert.Equal(t, "disallowed", decisions[0]["outcome"])
		assert.Equal(t, "http://a.test/private/x", decisions[0]["url"])
		assert.Empty(t, log.Events(t, "robots.fetch"), "robots.txt was fetched before the Logger was set")

		c2 := newClient(n, fetch.NoLimits{})
		c2.Logger = logger
		_, err = c2.Get(t.Context(), "http://a.test/")
		require.NoError(t, err)
		fetches := log.Events(t, "robots.fetch")
		require.Len(t, fetches, 1)
		assert.Equal(t, "http://a.test/robots.txt", fetches[0]["robots_url"])
	})
}
