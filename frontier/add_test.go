package frontier_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/internal/testsite"
	"github.com/politecrawl/polite/robots"
)

func TestNewRejectsOutOfRange(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*frontier.Config)
		field string
		rng   string
	}{
		{"in flight 0", func(c *frontier.Config) { c.MaxInFlight = 0 }, "MaxInFlight", "1..256"},
		{"in flight 257", func(c *frontier.Config) { c.MaxInFlight = 257 }, "MaxInFlight", "1..256"},
		{"negative gap", func(c *frontier.Config) { c.Gap = -time.Millisecond }, "Gap", "0s..1m0s"},
		{"gap over 60s", func(c *frontier.Config) { c.Gap = 61 * time.Second }, "Gap", "0s..1m0s"},
		{"per host in flight 17", func(c *frontier.Config) { c.PerHostInFlight = 17 }, "PerHostInFlight", "0 (= MaxInFlight) or 1..16"},
		{"per host gap", func(c *frontier.Config) { c.PerHostGap = time.Hour }, "PerHostGap", "0s..1m0s"},
		{"negative pages", func(c *frontier.Config) { c.MaxPages = -1 }, "MaxPages", "0 (no limit) or more"},
		{"negative depth", func(c *frontier.Config) { c.MaxDepth = -1 }, "MaxDepth", "0..1000"},
		{"robots without tokens", func(c *frontier.Config) { c.Robots = &robots.Cache{} }, "RobotsTokens", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := frontier.DefaultConfig()
			tt.edit(&cfg)
			f, err := frontier.New(cfg)
			require.Nil(t, f)
			var ce *frontier.ConfigError
			require.True(t, errors.As(err, &ce), "%v", err)
			assert.Equal(t, tt.field, ce.Field)
			assert.Equal(t, tt.rng, ce.Range)
			assert.Contains(t, err.Error(), tt.field)
			assert.Contains(t, err.Error(), tt.rng)
		})
	}
	for _, ok := range []func(*frontier.Config){
		func(c *frontier.Config) { c.MaxInFlight, c.Gap = 1, 0 },
		func(c *frontier.Config) { c.MaxInFlight, c.Gap = 16, 60*time.Second },
		func(c *frontier.Config) { c.MaxPages, c.MaxDepth = 0, 0 },
	} {
		cfg := frontier.DefaultConfig()
		ok(&cfg)
		_, err := frontier.New(cfg)
		assert.NoError(t, err)
	}
}

func TestDefaultConfig(t *testing.T) {
	c := frontier.DefaultConfig()
	assert.Equal(t, 500, c.MaxPages)
	assert.Equal(t, 5, c.MaxDepth)
	assert.Equal(t, 4, c.MaxInFlight)
	assert.Equal(t, 300*time.Millisecond, c.Gap)
}

// TestAddOutcomes covers every Add outcome against a real robots.txt served
// on loopback, checking also that robots.txt is asked before queueing and
// that a refused URL is never requested.
func TestAddOutcomes(t *testing.T) {
	site := testsite.New(t)
	site.Robots("User-agent: *\nDisallow: /private/\n")
	down := testsite.New(t)
	down.Status("/robots.txt", http.StatusServiceUnavailable)
	fresh := testsite.New(t)
	base := site.URL()

	cfg := frontier.DefaultConfig()
	cfg.MaxPages = 6
	cfg.MaxDepth = 2
	cfg.Robots = &robots.Cache{}
	cfg.RobotsTokens = []string{"CrawlCove-Crawler"}
	f, err := frontier.New(cfg)
	require.NoError(t, err)
	ctx := context.Background()
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	long := base + "/" + strings.Repeat("a", frontier.MaxURLLength)
	growsTooLong := base + "/" + strings.Repeat("é", 2000) // 4000 bytes, 12000 once escaped

	steps := []struct {
		name  string
		ctx   context.Context
		url   string
		depth int
		want  frontier.Outcome
		norm  string
		err   error
	}{
		{"start page", ctx, base + "/", 0, frontier.Queued, base + "/", nil},
		{"link", ctx, base + "/a", 1, frontier.Queued, base + "/a", nil},
		{"same after normalization", ctx, strings.ToUpper("http://") + strings.TrimPrefix(base, "http://") + "/x/../a#top", 1, frontier.Duplicate, base + "/a", nil},
		{"external site", ctx, "http://other.example/", 1, frontier.OutOfScope, "http://other.example/", nil},
		{"too deep", ctx, base + "/deep", 3, frontier.TooDeep, base + "/deep", nil},
		{"disallowed by robots.txt", ctx, base + "/private/x", 1, frontier.Disallowed, base + "/private/x", nil},
		{"invalid", ctx, "mailto:someone@example.com", 1, frontier.Invalid, "mailto:someone@example.com", frontier.ErrInvalidURL},
		{"negative depth", ctx, base + "/neg", -1, frontier.Invalid, base + "/neg", frontier.ErrInvalidURL},
		{"too long", ctx, long, 1, frontier.TooLong, long, frontier.ErrTooLong},
		{"too long once normalized", ctx, growsTooLong, 1, frontier.TooLong, growsTooLong, frontier.ErrTooLong},
		{"robots unreachable", ctx, down.URL() + "/", 0, frontier.RobotsUnreachable, down.URL() + "/", robots.ErrUnreachable},
		{"robots check canceled", canceled, fresh.URL() + "/", 0, frontier.Failed, fresh.URL() + "/", context.Canceled},
		{"page 3", ctx, base + "/c", 1, frontier.Queued, base + "/c", nil},
		{"page 4", ctx, base + "/d", 2, frontier.Queued, base + "/d", nil},
		{"page 5", ctx, base + "/e", 2, frontier.Queued, base + "/e", nil},
		{"page 6", ctx, base + "/f", 2, frontier.Queued, base + "/f", nil},
		{"page limit", ctx, base + "/g", 1, frontier.PageLimit, base + "/g", nil},
		{"duplicate wins over page limit", ctx, base + "/c", 1, frontier.Duplicate, base + "/c", nil},
	}
	want := map[frontier.Outcome]int{}
	for _, s := range steps {
		r := f.Add(s.ctx, s.url, s.depth, base+"/")
		assert.Equal(t, s.want, r.Outcome, "%s: %s (%v)", s.name, r.Outcome, r.Err)
		assert.Equal(t, s.norm, r.URL, s.name)
		if s.err != nil {
			assert.ErrorIs(t, r.Err, s.err, s.name)
		} else if s.want != frontier.Disallowed {
			assert.NoError(t, r.Err, s.name)
		}
		if s.want == frontier.Disallowed {
			assert.Equal(t, robots.Disallowed, r.Verdict.Outcome)
			require.NotNil(t, r.Verdict.Decision.Rule)
			assert.Equal(t, "/private/", r.Verdict.Decision.Rule.Pattern)
		}
		if s.want != frontier.Queued {
			want[s.want]++
		}
	}
	st := f.Stats()
	assert.Equal(t, want, st.Dropped)
	assert.Equal(t, 6, st.Queued)
	assert.Equal(t, 2, st.Blocked)
	assert.Equal(t, 1, st.Hosts[site.Host()].Blocked)
	assert.Equal(t, 6, st.Hosts[site.Host()].Queued)

	// Stop the unreachable site: nothing of it is ever handed out.
	n, err := f.StopHost(down.Host())
	require.NoError(t, err)
	assert.Zero(t, n)
	r := f.Add(ctx, down.URL()+"/other", 0, "")
	assert.Equal(t, frontier.Stopped, r.Outcome)
	assert.ErrorIs(t, r.Err, frontier.ErrStopped)

	// Everything queued comes out, shallowest first; nothing refused does.
	var got []string
	cfgNow := time.Now()
	for {
		it, _, err := f.NextAt(cfgNow)
		if errors.Is(err, frontier.ErrComplete) {
			break
		}
		if errors.Is(err, frontier.ErrNotReady) {
			cfgNow = cfgNow.Add(time.Second)
			continue
		}
		require.NoError(t, err)
		got = append(got, strings.TrimPrefix(it.URL, base))
		f.Done(it, nil)
	}
	assert.Equal(t, []string{"/", "/a", "/c", "/d", "/e", "/f"}, got)
	// The server saw robots.txt only: Add never requests a page.
	assert.Equal(t, []string{"/robots.txt"}, site.Paths())
	assert.Empty(t, fresh.Paths())
	assert.Equal(t, 6, f.Stats().Done)
}

func TestStopHostDropsQueued(t *testing.T) {
	cfg := frontier.DefaultConfig()
	f, err := frontier.New(cfg)
	require.NoError(t, err)
	ctx := context.Background()
	for _, p := range []string{"/", "/a", "/b"} {
		require.Equal(t, frontier.Queued, f.Add(ctx, "https://shop.example"+p, 0, "").Outcome)
	}
	n, err := f.StopHost("shop.example")
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	_, err = f.Next(ctx)
	assert.ErrorIs(t, err, frontier.ErrComplete)
	st := f.Stats()
	assert.Equal(t, 3, st.Dropped[frontier.Stopped])
	assert.True(t, st.Hosts["shop.example"].Stopped)
}

func TestScopeDefaultIsStartHostAndTwin(t *testing.T) {
	f, err := frontier.New(frontier.DefaultConfig())
	require.NoError(t, err)
	ctx := context.Background()
	require.Equal(t, frontier.Queued, f.Add(ctx, "https://shop.example/", 0, "").Outcome)
	for u, want := range map[string]frontier.Outcome{
		"https://www.shop.example/a":  frontier.Queued,
		"http://shop.example/b":       frontier.Queued, // scheme does not matter
		"https://blog.shop.example/":  frontier.OutOfScope,
		"https://shop.example:8443/":  frontier.OutOfScope,
		"https://www.other.example/":  frontier.OutOfScope,
		"https://shop.example.evil/x": frontier.OutOfScope,
	} {
		assert.Equal(t, want, f.Add(ctx, u, 1, "https://shop.example/").Outcome, u)
	}
	// An external link is reported as such however deep it was found.
	assert.Equal(t, frontier.OutOfScope, f.Add(ctx, "https://other.example/", 99, "").Outcome)
	assert.Equal(t, frontier.TooDeep, f.Add(ctx, "https://shop.example/deep", 99, "").Outcome)
}

// brokenQueue is a store whose writes fail, as a remote one might.
type brokenQueue struct {
	frontier.Queue
	visitErr, pushErr error
}

func (q brokenQueue) Visit(u string) (bool, error) {
	if q.visitErr != nil {
		return false, q.visitErr
	}
	return q.Queue.Visit(u)
}

func (q brokenQueue) Push(it frontier.Item) error {
	if q.pushErr != nil {
		return q.pushErr
	}
	return q.Queue.Push(it)
}

func TestQueueErrorsAreFailed(t *testing.T) {
	errDisk := errors.New("disk full")
	for _, q := range []brokenQueue{
		{Queue: frontier.NewMemoryQueue(), visitErr: errDisk},
		{Queue: frontier.NewMemoryQueue(), pushErr: errDisk},
	} {
		cfg := frontier.DefaultConfig()
		cfg.Queue = q
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		r := f.Add(context.Background(), "https://shop.example/", 0, "")
		assert.Equal(t, frontier.Failed, r.Outcome)
		assert.ErrorIs(t, r.Err, errDisk)
		assert.Contains(t, r.Err.Error(), "https://shop.example/")
		_, _, err = f.NextAt(time.Now())
		assert.ErrorIs(t, err, frontier.ErrComplete, "a failed Add leaves nothing pending")
		assert.Equal(t, 1, f.Stats().Dropped[frontier.Failed])
	}
}

func TestTwin(t *testing.T) {
	for in, want := range map[string]string{
		"shop.example":          "www.shop.example",
		"www.shop.example":      "shop.example",
		"shop.example:8080":     "www.shop.example:8080",
		"www.shop.example:8080": "shop.example:8080",
		"blog.shop.example":     "",
		"www.blog.shop.example": "",
		"example.co.uk":         "www.example.co.uk",
		"co.uk":                 "",
		"www.co.uk":             "", // apex would be a public suffix
		"github.io":             "",
		"user.github.io":        "www.user.github.io",
		"127.0.0.1":             "",
		"127.0.0.1:8080":        "",
		"[::1]:8080":            "",
		"localhost":             "",
	} {
		assert.Equal(t, want, frontier.Twin(in), in)
	}
}

func TestScopeFuncs(t *testing.T) {
	site, err := frontier.SameSite("https://www.shop.example/start")
	require.NoError(t, err)
	domain, err := frontier.SameDomain("https://www.shop.example/start")
	require.NoError(t, err)
	ip, err := frontier.SameDomain("http://127.0.0.1:8080/")
	require.NoError(t, err)
	for _, tt := range []struct {
		u                string
		site, domain, ip bool
	}{
		{"https://www.shop.example/a", true, true, false},
		{"https://SHOP.example/a", true, true, false},
		{"https://blog.shop.example/a", false, true, false},
		{"https://shop.example:444/a", false, true, false},
		{"https://other.example/", false, false, false},
		{"https://evilshop.example/", false, false, false},
		{"http://127.0.0.1:9/", false, false, true},
	} {
		u, err := url.Parse(tt.u)
		require.NoError(t, err)
		assert.Equal(t, tt.site, site(u), "SameSite %s", tt.u)
		assert.Equal(t, tt.domain, domain(u), "SameDomain %s", tt.u)
		assert.Equal(t, tt.ip, ip(u), "SameDomain(ip) %s", tt.u)
	}
	_, err = frontier.SameSite("not a url")
	assert.ErrorIs(t, err, frontier.ErrInvalidURL)

	cfg := frontier.DefaultConfig()
	cfg.Scope = domain
	f, err := frontier.New(cfg)
	require.NoError(t, err)
	ctx := context.Background()
	assert.Equal(t, frontier.Queued, f.Add(ctx, "https://blog.shop.example/", 1, "").Outcome)
	assert.Equal(t, frontier.OutOfScope, f.Add(ctx, "https://other.example/", 0, "").Outcome)
}

func TestOutcomeString(t *testing.T) {
	assert.Equal(t, "out of scope", frontier.OutOfScope.String())
	assert.Equal(t, "robots unreachable", frontier.RobotsUnreachable.String())
	assert.Equal(t, "Outcome(99)", frontier.Outcome(99).String())
}

// verdictRobots is a third party's robots checker answering a fixed
// verdict with no error.
type verdictRobots struct{ v robots.Verdict }

func (r verdictRobots) CheckAs(context.Context, []string, string) (robots.Verdict, error) {
	return r.v, nil
}

// Add fails closed: a checker that answers neither Allowed nor a refusal it
// knows (Unknown, the zero Verdict, or an outcome it does not know) never
// gets a URL queued.
func TestAddFailsClosedOnUnknownVerdicts(t *testing.T) {
	for _, v := range []robots.Verdict{{}, {Outcome: robots.Unknown, Decision: robots.Decision{Allowed: true}}, {Outcome: robots.Outcome(42)}} {
		cfg := frontier.DefaultConfig()
		cfg.Robots, cfg.RobotsTokens = verdictRobots{v}, []string{"CrawlCove-Crawler"}
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		r := f.Add(context.Background(), "https://shop.example/", 0, "")
		assert.Equal(t, frontier.Failed, r.Outcome, v.Outcome.String())
		assert.ErrorIs(t, r.Err, fetch.ErrNoVerdict)
		assert.Contains(t, r.Err.Error(), "https://shop.example/")
		st := f.Stats()
		assert.Zero(t, st.Queued)
		assert.Equal(t, 1, st.Dropped[frontier.Failed])
		_, _, err = f.NextAt(time.Now())
		assert.ErrorIs(t, err, frontier.ErrComplete, "nothing to hand out")
	}
}
