package frontier_test

import (
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/internal/testsite"
	"github.com/politecrawl/polite/robots"
)

// wiring is the state the documented wiring steps build.
type wiring struct {
	net    *testsite.Network
	client *fetch.Client
	tr     *fetch.Transport // a PoliteTransport taken at some step
	rules  *robots.Cache
	sd     *backoff.Slowdown
	f      *frontier.Frontier
	extra  *http.Client // another fetcher of the run (a sitemap reader, say), over tr
}

// step is one documented call; it may need earlier steps.
type step struct {
	name  string
	needs []string
	do    func(t *testing.T, w *wiring)
}

// orders returns every permutation of steps that respects needs.
func orders(steps []step) [][]step {
	var out [][]step
	var walk func(done []step, left []step)
	walk = func(done, left []step) {
		if len(left) == 0 {
			out = append(out, slices.Clone(done))
			return
		}
		for i, s := range left {
			ok := true
			for _, n := range s.needs {
				ok = ok && slices.ContainsFunc(done, func(d step) bool { return d.name == n })
			}
			if ok {
				rest := append(slices.Clone(left[:i]), left[i+1:]...)
				walk(append(done, s), rest)
			}
		}
	}
	walk(nil, steps)
	return out
}

func names(steps []step) string {
	var b []string
	for _, s := range steps {
		b = append(b, s.name)
	}
	return strings.Join(b, " → ")
}

// oldStyle are the steps of the hand-wired crawler the README used to
// show: a robots cache over the client's PoliteTransport, a frontier over
// that cache, then the frontier set as the client's gate.
var oldStyle = []step{
	{"PoliteTransport", nil, func(t *testing.T, w *wiring) { w.tr = w.client.PoliteTransport() }},
	{"robots.Cache", []string{"PoliteTransport"}, func(t *testing.T, w *wiring) {
		w.rules = &robots.Cache{Client: &http.Client{Transport: w.tr}}
		w.extra = &http.Client{Transport: w.tr}
	}},
	{"client.Robots", []string{"robots.Cache"}, func(t *testing.T, w *wiring) { w.client.Robots = w.rules }},
	{"client.Slowdown", nil, func(t *testing.T, w *wiring) { w.client.Slowdown = w.sd }},
	{"frontier.New", []string{"robots.Cache"}, func(t *testing.T, w *wiring) {
		cfg := wiringConfig()
		cfg.Robots, cfg.RobotsTokens, cfg.Slowdown = w.rules, w.client.Tokens(), w.sd
		var err error
		w.f, err = frontier.New(cfg)
		require.NoError(t, err)
	}},
	{"client.Gate", []string{"frontier.New"}, func(t *testing.T, w *wiring) { w.client.Gate = w.f }},
}

// newStyle is the one-step wiring (Config.Client), with the calls a crawler
// may make around it in any order: the client's robots cache (for
// Sitemaps) and a PoliteTransport for another fetcher.
var newStyle = []step{
	{"frontier.New(Client)", nil, func(t *testing.T, w *wiring) {
		cfg := wiringConfig()
		cfg.Client = w.client
		var err error
		w.f, err = frontier.New(cfg)
		require.NoError(t, err)
	}},
	{"RobotsCache", nil, func(t *testing.T, w *wiring) { w.rules = w.client.RobotsCache() }},
	{"PoliteTransport", nil, func(t *testing.T, w *wiring) {
		w.tr = w.client.PoliteTransport()
		w.extra = &http.Client{Transport: w.tr}
	}},
}

func wiringConfig() frontier.Config {
	cfg := frontier.DefaultConfig()
	cfg.MaxInFlight = 1 // so "admitted so far" is exact when a request arrives
	cfg.Gap = 100 * time.Millisecond
	return cfg
}

// TestNoOrderOfTheDocumentedStepsLeavesARequestUngated runs a small crawl
// after every order of the documented wiring steps, old style and new, and
// has the server check each request it sees against the gate's count of
// admitted requests: a request the gate did not admit is counted as
// outside the gate. robots.txt (fetched by Add's check, by the client and
// by the cache's Sitemaps), pages, redirects and another fetcher's
// requests all count.
func TestNoOrderOfTheDocumentedStepsLeavesARequestUngated(t *testing.T) {
	for style, steps := range map[string][]step{"old": oldStyle, "new": newStyle} {
		all := orders(steps)
		require.NotEmpty(t, all)
		for _, order := range all {
			t.Run(style+"/"+names(order), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					w := &wiring{net: testsite.NewNetwork(t, testsite.InMemory), sd: &backoff.Slowdown{}}
					site := w.net.Add("shop.test")
					var (
						mu      sync.Mutex
						seen    int
						outside []string
					)
					check := func(r *http.Request) {
						mu.Lock()
						defer mu.Unlock()
						seen++
						if w.f == nil || w.f.Stats().Requests < seen {
							outside = append(outside, r.URL.Path)
							seen-- // count each ungated request once
						}
					}
					page := func(body string) http.HandlerFunc {
						return func(rw http.ResponseWriter, r *http.Request) {
							check(r)
							rw.Header().Set("Content-Type", "text/html")
							_, _ = io.WriteString(rw, body)
						}
					}
					site.Handle("/robots.txt", func(rw http.ResponseWriter, r *http.Request) {
						check(r)
						_, _ = io.WriteString(rw, "User-agent: *\nDisallow: /private/\nSitemap: http://shop.test/sitemap.xml\n")
					})
					site.Handle("/", page("home"))
					site.Handle("/a", page("a"))
					site.Handle("/old", func(rw http.ResponseWriter, r *http.Request) {
						check(r)
						http.Redirect(rw, r, "/a", http.StatusMovedPermanently)
					})
					site.Handle("/sitemap.xml", page("<urlset/>"))

					w.client = &fetch.Client{UserAgent: "CrawlCove-Crawler", Transport: w.net.Transport()}
					for _, s := range order {
						s.do(t, w)
					}
					require.NotNil(t, w.f)

					ctx := t.Context()
					for _, p := range []string{"/", "/old", "/a", "/private/x"} {
						w.f.Add(ctx, site.URL()+p, 0, "")
					}
					if w.rules != nil {
						sm, err := w.rules.Sitemaps(ctx, site.URL()+"/")
						require.NoError(t, err)
						assert.Equal(t, []string{"http://shop.test/sitemap.xml"}, sm)
					}
					if w.extra != nil {
						resp, err := w.extra.Get(site.URL() + "/sitemap.xml")
						require.NoError(t, err)
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					for {
						it, err := w.f.Next(ctx)
						if errors.Is(err, frontier.ErrComplete) {
							break
						}
						require.NoError(t, err)
						_, err = w.client.Get(ctx, it.URL)
						assert.NoError(t, err, it.URL)
						w.f.Done(it, err)
					}

					mu.Lock()
					defer mu.Unlock()
					assert.Empty(t, outside, "requests the gate never admitted")
					assert.Equal(t, 0, site.Count("/private/x"))
					assert.Equal(t, 1, site.Count("/robots.txt"), "one robots cache for the run")
					assert.Equal(t, site.Total(), w.f.Stats().Requests, "every request the server saw was admitted")
					if style == "old" {
						assert.Same(t, w.sd, w.client.Slowdown, "one slowdown for the run")
					} else {
						assert.NotNil(t, w.client.Slowdown, "New gave the client the run's slowdown")
					}
				})
			})
		}
	}
}

func TestNewWiresTheClient(t *testing.T) {
	t.Run("the client's gate must be free", func(t *testing.T) {
		c := &fetch.Client{}
		cfg := frontier.DefaultConfig()
		cfg.Client = c
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		assert.Same(t, f, c.Gate)
		_, err = frontier.New(cfg) // a second frontier for the same client
		var ce *frontier.ConfigError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "Client.Gate", ce.Field)
	})
	t.Run("one slowdown", func(t *testing.T) {
		a, b := &backoff.Slowdown{}, &backoff.Slowdown{}
		for _, tt := range []struct {
			name           string
			client, config *backoff.Slowdown
			want           *backoff.Slowdown
		}{
			{"the client's", a, nil, a},
			{"the config's", nil, b, b},
			{"the same on both", a, a, a},
		} {
			c := &fetch.Client{Slowdown: tt.client}
			cfg := frontier.DefaultConfig()
			cfg.Client, cfg.Slowdown = c, tt.config
			_, err := frontier.New(cfg)
			require.NoError(t, err, tt.name)
			assert.Same(t, tt.want, c.Slowdown, tt.name)
		}
		cfg := frontier.DefaultConfig()
		cfg.Client, cfg.Slowdown = &fetch.Client{Slowdown: a}, b
		_, err := frontier.New(cfg)
		var ce *frontier.ConfigError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "Slowdown", ce.Field)
		assert.Nil(t, cfg.Client.Gate, "a failed New leaves the client alone")
	})
	t.Run("a new slowdown carries the client's policy", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := &fetch.Client{Policy: &backoff.Policy{SlowdownGap: 5 * time.Second}}
			cfg := frontier.DefaultConfig()
			cfg.Client = c
			f, err := frontier.New(cfg)
			require.NoError(t, err)
			require.NotNil(t, c.Slowdown)
			_, gap := c.Slowdown.Limits()
			assert.Equal(t, 5*time.Second, gap)
			// The frontier applies that very latch.
			c.Slowdown.Trip("https://shop.example/", time.Now())
			rel, err := f.Acquire(t.Context(), mustURL(t, "https://shop.example/a"))
			require.NoError(t, err)
			rel()
			start := time.Now()
			rel, err = f.Acquire(t.Context(), mustURL(t, "https://shop.example/b"))
			require.NoError(t, err)
			rel()
			assert.Equal(t, 5*time.Second, time.Since(start))
		})
	})
	t.Run("the client's robots tokens", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			n := testsite.NewNetwork(t, testsite.InMemory)
			site := n.Add("shop.test")
			site.Robots("User-agent: CrawlCove-Crawler\nDisallow: /basket/\n")
			const ua = "Mozilla/5.0 (compatible; CrawlCove/2.0)"
			c := &fetch.Client{UserAgent: ua, RobotsTokens: robots.Tokens(ua, "CrawlCove-Crawler"), Transport: n.Transport()}
			cfg := frontier.DefaultConfig()
			cfg.Client = c
			f, err := frontier.New(cfg)
			require.NoError(t, err)
			r := f.Add(t.Context(), site.URL()+"/basket/1", 0, "")
			assert.Equal(t, frontier.Disallowed, r.Outcome)
			assert.Equal(t, "CrawlCove-Crawler", r.Verdict.Decision.Token)
			assert.Equal(t, frontier.Queued, f.Add(t.Context(), site.URL()+"/", 0, "").Outcome)
			assert.Same(t, c.RobotsCache(), c.RobotsCache())
			rules, err := c.RobotsCache().Rules(t.Context(), site.URL()+"/")
			require.NoError(t, err)
			assert.NotNil(t, rules)
			assert.Equal(t, 1, site.Count("/robots.txt"), "the frontier asked the client's cache")
		})
	})
}
