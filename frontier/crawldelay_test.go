package frontier_test

import (
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/internal/eventlog"
	"github.com/politecrawl/polite/internal/testsite"
)

// crawlDelaySites serves four hosts whose robots.txt ask for different
// Crawl-delays, three pages each.
func crawlDelaySites(t *testing.T) (*testsite.Network, map[string]*testsite.Site) {
	net := testsite.NewNetwork(t, testsite.InMemory)
	robots := map[string]string{
		"star.test":  "User-agent: *\nCrawl-delay: 2\n",
		"named.test": "User-agent: *\nDisallow: /private/\nCrawl-delay: 1\n\nUser-agent: DelayBot\nDisallow: /private/\nCrawl-delay: 5\n",
		"huge.test":  "User-agent: *\nCrawl-delay: 100\n",
		"tiny.test":  "User-agent: *\nCrawl-delay: 0.1\n",
	}
	sites := map[string]*testsite.Site{}
	for h, body := range robots {
		s := net.Add(h)
		s.Robots(body)
		s.Route("/p*", testsite.Response{Body: "page"})
		sites[h] = s
	}
	return net, sites
}

func crawlDelayCrawl(t *testing.T, honor bool) (map[string]*testsite.Site, *eventlog.Log) {
	net, sites := crawlDelaySites(t)
	logger, log := eventlog.New(slog.LevelInfo)
	client := &fetch.Client{UserAgent: "DelayBot/1.0", Transport: net.Transport(), Logger: logger}
	cfg := frontier.DefaultConfig()
	cfg.Gap, cfg.PerHostGap = 0, 500*time.Millisecond
	cfg.HonorCrawlDelay = honor
	cfg.Client = client
	f, err := frontier.New(cfg)
	require.NoError(t, err)
	for _, s := range sites {
		addPages(t, f, s.URL(), 3, "p")
	}
	crawlLoop(t, f, client, 4, nil)
	return sites, log
}

// pageGaps returns the times between consecutive page requests of s
// (robots.txt left out).
func pageGaps(s *testsite.Site) []time.Duration {
	var last time.Time
	var out []time.Duration
	for _, r := range s.Requests() {
		if r.Path == "/robots.txt" {
			continue
		}
		if !last.IsZero() {
			out = append(out, r.Time.Sub(last))
		}
		last = r.Time
	}
	return out
}

// With HonorCrawlDelay each host is paced by the Crawl-delay of the group
// that applies to the crawler (its own group before `*`), capped at 30 s,
// never below PerHostGap; each applied delay is a frontier.crawl_delay event.
func TestHonorCrawlDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sites, log := crawlDelayCrawl(t, true)
		want := map[string]time.Duration{
			"star.test":  2 * time.Second,
			"named.test": 5 * time.Second,
			"huge.test":  frontier.DefaultMaxHostGap,
			"tiny.test":  500 * time.Millisecond,
		}
		for h, gap := range want {
			assert.Equal(t, []time.Duration{gap, gap}, pageGaps(sites[h]), h)
		}
		evs := log.Events(t, frontier.EventCrawlDelay)
		require.Len(t, evs, 4, "one event per host, when its delay is first applied")
		byHost := map[string]map[string]any{}
		for _, e := range evs {
			byHost[e["host"].(string)] = e
		}
		assert.Equal(t, (100 * time.Second).Nanoseconds(), int64(byHost["huge.test"]["crawl_delay"].(float64)))
		assert.Equal(t, frontier.DefaultMaxHostGap.Nanoseconds(), int64(byHost["huge.test"]["gap"].(float64)))
		assert.Equal(t, true, byHost["huge.test"]["capped"])
		assert.Equal(t, (5 * time.Second).Nanoseconds(), int64(byHost["named.test"]["gap"].(float64)))
		assert.Equal(t, (500 * time.Millisecond).Nanoseconds(), int64(byHost["tiny.test"]["gap"].(float64)), "never below PerHostGap")
	})
}

// Off by default: the same sites crawled without HonorCrawlDelay keep
// PerHostGap, and no crawl_delay event is logged.
func TestCrawlDelayIgnoredByDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sites, log := crawlDelayCrawl(t, false)
		for h, s := range sites {
			assert.Equal(t, []time.Duration{500 * time.Millisecond, 500 * time.Millisecond}, pageGaps(s), h)
		}
		assert.Empty(t, log.Events(t, frontier.EventCrawlDelay))
	})
}

// The audit's configuration (DefaultConfig with the client) never reads
// Crawl-delay: Crawl Cove's promise.
func TestDefaultConfigIgnoresCrawlDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := testsite.NewNetwork(t, testsite.InMemory)
		s := net.Add("shop.test")
		s.Robots("User-agent: *\nCrawl-delay: 10\n\nUser-agent: CrawlCove-Crawler\nCrawl-delay: 30\n")
		s.Route("/p*", testsite.Response{Body: "page"})
		client := &fetch.Client{UserAgent: "CrawlCove-Crawler", Transport: net.Transport()}
		cfg := frontier.DefaultConfig()
		require.False(t, cfg.HonorCrawlDelay)
		cfg.Client = client
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		addPages(t, f, s.URL(), 5, "p")
		crawlLoop(t, f, client, 4, nil)
		for _, g := range pageGaps(s) {
			assert.Equal(t, frontier.DefaultGap, g)
		}
	})
}

func TestHonorCrawlDelayNeedsRobots(t *testing.T) {
	cfg := frontier.DefaultConfig()
	cfg.HonorCrawlDelay = true
	_, err := frontier.New(cfg)
	var ce *frontier.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "HonorCrawlDelay", ce.Field)
	cfg.MaxHostGap = 2 * frontier.MaxGap
	cfg.HonorCrawlDelay = false
	_, err = frontier.New(cfg)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "MaxHostGap", ce.Field)
}
