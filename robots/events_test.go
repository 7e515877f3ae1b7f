package robots

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/eventlog"
)

func TestDecisionEvents(t *testing.T) {
	s := newSite(t, robotsBody("User-agent: *\nDisallow: /private/\n\nUser-agent: CrawlCove-Crawler\nDisallow: /basket/\nAllow: /basket/public\n"))
	gone := newSite(t, status(http.StatusNotFound))
	down := newSite(t, status(http.StatusServiceUnavailable))
	clk := newClock()
	logger, log := eventlog.New(slog.LevelDebug)
	c := &Cache{Client: s.Client(), Now: clk.Now, Logger: logger}
	ctx := context.Background()
	tokens := []string{"CrawlCove", "CrawlCove-Crawler"}
	for _, u := range []string{s.URL + "/basket/1", s.URL + "/basket/public/x", s.URL + "/shop", gone.URL + "/x", down.URL + "/x", "/relative"} {
		_, _ = c.CheckAs(ctx, tokens, u)
	}
	_, _ = c.Check(ctx, "OtherBot", s.URL+"/private/x")

	assert.Equal(t, []map[string]any{
		{"level": "DEBUG", "url": s.URL + "/basket/1", "outcome": "disallowed", "token": "CrawlCove-Crawler", "rule": "Disallow: /basket/", "line": 5.0},
		{"level": "DEBUG", "url": s.URL + "/basket/public/x", "outcome": "allowed", "token": "CrawlCove-Crawler", "rule": "Allow: /basket/public", "line": 6.0},
		{"level": "DEBUG", "url": s.URL + "/shop", "outcome": "allowed", "token": "CrawlCove-Crawler"},
		{"level": "DEBUG", "url": gone.URL + "/x", "outcome": "allowed"},
		{"level": "DEBUG", "url": down.URL + "/x", "outcome": "unreachable"},
		{"level": "DEBUG", "url": "/relative", "outcome": "unknown"},
		{"level": "DEBUG", "url": s.URL + "/private/x", "outcome": "disallowed", "rule": "Disallow: /private/", "line": 2.0},
	}, log.Events(t, "robots.decision"))

	ttl := clk.Now().Add(time.Hour).Format(time.RFC3339Nano)
	recheck := clk.Now().Add(5 * time.Minute).Format(time.RFC3339Nano)
	assert.Equal(t, []map[string]any{
		{"level": "INFO", "robots_url": s.URL + "/robots.txt", "status": 200.0, "outcome": "rules", "expires": ttl},
		{"level": "INFO", "robots_url": gone.URL + "/robots.txt", "status": 404.0, "outcome": "no_rules", "expires": ttl},
		{"level": "INFO", "robots_url": down.URL + "/robots.txt", "status": 503.0, "outcome": "unreachable", "expires": recheck, "err": "HTTP 503"},
	}, log.Events(t, "robots.fetch"), "one event per fetch, none for cache hits")

	// A network error has no status, only the cause.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := "http://" + l.Addr().String()
	require.NoError(t, l.Close())
	logger, log = eventlog.New(slog.LevelInfo)
	c = &Cache{Now: clk.Now, Logger: logger}
	_, _ = c.Check(ctx, "bot", refused+"/x")
	fetches := log.Events(t, "robots.fetch")
	require.Len(t, fetches, 1)
	assert.NotContains(t, fetches[0], "status")
	assert.Equal(t, "unreachable", fetches[0]["outcome"])
	assert.Contains(t, fetches[0]["err"], "connection refused")
	assert.Empty(t, log.Events(t, "robots.decision"), "decisions are Debug: not logged at Info")
}

// A Store answer is not a fetch: no robots.fetch event, as no request was made.
func TestNoFetchEventForStoredCopy(t *testing.T) {
	s := newSite(t, robotsBody("User-agent: *\nDisallow: /x\n"))
	store := &MemoryStore{}
	ctx := context.Background()
	_, err := (&Cache{Client: s.Client(), Store: store}).Check(ctx, "bot", s.URL+"/x")
	require.NoError(t, err)
	logger, log := eventlog.New(slog.LevelDebug)
	_, err = (&Cache{Client: s.Client(), Store: store, Logger: logger}).Check(ctx, "bot", s.URL+"/x")
	require.NoError(t, err)
	assert.Empty(t, log.Events(t, "robots.fetch"))
	assert.Len(t, log.Events(t, "robots.decision"), 1)
	assert.Equal(t, 1, s.count("/robots.txt"))
}

// With no Logger, or one whose handler is not enabled for Debug, a cache hit
// costs no allocation.
func TestCacheHitDoesNotAllocate(t *testing.T) {
	s := newSite(t, robotsBody(realisticRobots(1)))
	for name, logger := range map[string]*slog.Logger{
		"nil":                nil,
		"DiscardHandler":     slog.New(slog.DiscardHandler),
		"JSON handler, Info": slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo})),
	} {
		t.Run(name, func(t *testing.T) {
			c := &Cache{Client: s.Client(), Logger: logger}
			page := s.URL + "/search/x"
			tokens := []string{"CrawlCove", "CrawlCove-Crawler"}
			v, err := c.CheckAs(context.Background(), tokens, page)
			require.NoError(t, err)
			require.NotNil(t, v.Decision.Rule, "a rule decides: an enabled logger would format it")
			other := s.URL + "/products/1?page=2"
			n := testing.AllocsPerRun(100, func() {
				_, _ = c.Check(context.Background(), "Googlebot", other)
				_, _ = c.CheckAs(context.Background(), tokens, page)
			})
			assert.Zero(t, n)
		})
	}
}
