package robots

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clock is an injected clock that only moves when told to.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// site is a loopback server whose handler the test can swap, recording
// every request path it saw.
type site struct {
	*httptest.Server
	mu      sync.Mutex
	handler http.HandlerFunc
	paths   []string
	agents  []string
}

func newSite(t *testing.T, h http.HandlerFunc) *site {
	s := &site{handler: h}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.RequestURI())
		s.agents = append(s.agents, r.UserAgent())
		h := s.handler
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) set(h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = h
}

func (s *site) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range s.paths {
		if p == path {
			n++
		}
	}
	return n
}

func (s *site) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

func robotsBody(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, body)
	}
}

func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) }
}

// waiters returns how many callers wait on the fetch of key.
func (c *Cache) waiters(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl := c.calls[key]; cl != nil {
		return cl.waiters
	}
	return 0
}

func TestCacheOneFetchForConcurrentCallers(t *testing.T) {
	// The first robots.txt request is held until every caller waits on it.
	// Any later one is answered at once, so a broken cache that fetches
	// twice fails the test below instead of hanging it.
	release := make(chan struct{})
	var fetches atomic.Int32
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if fetches.Add(1) == 1 {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
	})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // runs before the server closes
	c := &Cache{Client: s.Client(), UserAgent: "polite-test/1.0"}
	key, err := authority(s.URL)
	require.NoError(t, err)

	const n = 100
	verdicts := make([]Verdict, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			path := "/public/" + fmt.Sprint(i)
			if i%2 == 1 {
				path = "/private/" + fmt.Sprint(i)
			}
			verdicts[i], errs[i] = c.Check(context.Background(), "bot", s.URL+path)
		})
	}
	// All 100 callers are parked on the one fetch before it may answer.
	deadline := time.Now().Add(10 * time.Second)
	for c.waiters(key) < n {
		if f := fetches.Load(); f > 1 {
			unblock()
			wg.Wait()
			t.Fatalf("%d robots.txt requests for %d concurrent callers; want 1", f, n)
		}
		if time.Now().After(deadline) {
			unblock()
			wg.Wait()
			t.Fatalf("after 10s only %d of %d callers wait on the fetch (%d requests)", c.waiters(key), n, fetches.Load())
		}
		time.Sleep(time.Millisecond)
	}
	unblock()
	wg.Wait()

	assert.Equal(t, 1, s.count("/robots.txt"), "server saw one robots.txt request")
	assert.Equal(t, []string{"polite-test/1.0"}, s.agents)
	for i := range n {
		require.NoError(t, errs[i])
		want := Allowed
		if i%2 == 1 {
			want = Disallowed
		}
		assert.Equal(t, want, verdicts[i].Outcome, verdicts[i].String())
		assert.Equal(t, 200, verdicts[i].Status)
	}
}

func TestCacheTTL(t *testing.T) {
	s := newSite(t, robotsBody("User-agent: *\nDisallow: /x\n"))
	clk := newClock()
	c := &Cache{Client: s.Client(), Now: clk.Now}
	ctx := context.Background()

	check := func() Verdict {
		v, err := c.Check(ctx, "bot", s.URL+"/x")
		require.NoError(t, err)
		return v
	}
	assert.Equal(t, Disallowed, check().Outcome)
	clk.Advance(59 * time.Minute)
	check()
	assert.Equal(t, 1, s.count("/robots.txt"), "within the default TTL of 1h")

	s.set(robotsBody("User-agent: *\nAllow: /\n"))
	clk.Advance(time.Minute)
	assert.Equal(t, Allowed, check().Outcome, "new rules seen after 1h")
	assert.Equal(t, 2, s.count("/robots.txt"))
}

func TestCacheTTLNeverAbove24h(t *testing.T) {
	s := newSite(t, robotsBody("User-agent: *\nDisallow: /x\n"))
	clk := newClock()
	c := &Cache{Client: s.Client(), Now: clk.Now, TTL: 7 * 24 * time.Hour}
	ctx := context.Background()
	_, err := c.Check(ctx, "bot", s.URL+"/x")
	require.NoError(t, err)
	clk.Advance(24*time.Hour - time.Second)
	_, _ = c.Check(ctx, "bot", s.URL+"/x")
	assert.Equal(t, 1, s.count("/robots.txt"))
	clk.Advance(time.Second)
	_, _ = c.Check(ctx, "bot", s.URL+"/x")
	assert.Equal(t, 2, s.count("/robots.txt"))
}

func TestCacheStatusPolicy(t *testing.T) {
	for _, tc := range []struct {
		code int
		want Outcome
	}{
		{200, Disallowed}, {204, Allowed}, // 204: an empty file has no rules
		{400, Allowed}, {401, Allowed}, {403, Allowed}, {404, Allowed}, {410, Allowed},
		{429, Unreachable}, {500, Unreachable}, {502, Unreachable}, {503, Unreachable}, {504, Unreachable},
	} {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.code)
				fmt.Fprint(w, "User-agent: *\nDisallow: /\n")
			})
			clk := newClock()
			c := &Cache{Client: s.Client(), Now: clk.Now}
			v, err := c.Check(context.Background(), "bot", s.URL+"/page")
			require.NoError(t, err)
			assert.Equal(t, tc.want, v.Outcome, v.String())
			assert.Equal(t, tc.code, v.Status)
			if tc.want == Unreachable {
				assert.False(t, v.Allowed())
				assert.ErrorIs(t, v.Err, ErrUnreachable)
				var fe *FetchError
				require.ErrorAs(t, v.Err, &fe)
				assert.Equal(t, tc.code, fe.Status)
				assert.Contains(t, v.Err.Error(), s.URL+"/robots.txt")
				assert.Equal(t, clk.Now().Add(DefaultRecheck), v.RecheckAt)
			} else {
				assert.NoError(t, v.Err)
			}
		})
	}
}

func TestCacheUnreachableRecheck(t *testing.T) {
	s := newSite(t, status(503))
	clk := newClock()
	c := &Cache{Client: s.Client(), Now: clk.Now}
	ctx := context.Background()
	v, err := c.Check(ctx, "bot", s.URL+"/a")
	require.NoError(t, err)
	assert.Equal(t, Unreachable, v.Outcome)

	s.set(robotsBody("User-agent: *\nDisallow: /b\n"))
	clk.Advance(DefaultRecheck - time.Second)
	v, _ = c.Check(ctx, "bot", s.URL+"/a")
	assert.Equal(t, Unreachable, v.Outcome, "still within the re-check period")
	assert.Equal(t, 1, s.count("/robots.txt"))

	clk.Advance(time.Second)
	v, _ = c.Check(ctx, "bot", s.URL+"/a")
	assert.Equal(t, Allowed, v.Outcome, "re-checked after 5 minutes")
	assert.Equal(t, 2, s.count("/robots.txt"))
}

func TestCacheRecheckNegativeHoldsForTTL(t *testing.T) {
	s := newSite(t, status(500))
	clk := newClock()
	c := &Cache{Client: s.Client(), Now: clk.Now, Recheck: -1}
	v, _ := c.Check(context.Background(), "bot", s.URL+"/a")
	assert.Equal(t, Unreachable, v.Outcome)
	assert.Equal(t, clk.Now().Add(DefaultTTL), v.RecheckAt)
	clk.Advance(DefaultTTL - time.Second)
	_, _ = c.Check(context.Background(), "bot", s.URL+"/a")
	assert.Equal(t, 1, s.count("/robots.txt"))
}

func TestCacheNetworkError(t *testing.T) {
	// A port that was listening and is now closed: connection refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	c := &Cache{}
	v, err := c.Check(context.Background(), "bot", "http://"+addr+"/page")
	require.NoError(t, err)
	assert.Equal(t, Unreachable, v.Outcome)
	assert.Equal(t, 0, v.Status)
	assert.ErrorIs(t, v.Err, ErrUnreachable)
	var opErr *net.OpError
	assert.ErrorAs(t, v.Err, &opErr, "unwraps to the network error")
	assert.Contains(t, v.String(), "unreachable")
}

func TestCacheRedirects(t *testing.T) {
	// robots.txt on one host redirects through a chain on another host.
	target := newSite(t, nil)
	origin := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/r1", http.StatusMovedPermanently)
	})
	chain := func(hops int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var i int
			if _, err := fmt.Sscanf(r.URL.Path, "/r%d", &i); err == nil && i < hops {
				http.Redirect(w, r, fmt.Sprintf("/r%d", i+1), http.StatusFound)
				return
			}
			fmt.Fprint(w, "User-agent: *\nDisallow: /blocked\n")
		}
	}

	t.Run("five redirects followed", func(t *testing.T) {
		target.set(chain(4)) // origin -> r1 -> r2 -> r3 -> r4 -> (r4 serves): 4 redirects
		c := &Cache{Client: origin.Client()}
		v, err := c.Check(context.Background(), "bot", origin.URL+"/blocked")
		require.NoError(t, err)
		assert.Equal(t, Disallowed, v.Outcome, "rules of the redirect target apply to the host asked for")

		target.set(chain(5)) // 5 redirects: origin, r1..r4 redirect, r5 serves
		target.mu.Lock()
		target.paths = nil
		target.mu.Unlock()
		c = &Cache{Client: origin.Client()}
		v, err = c.Check(context.Background(), "bot", origin.URL+"/blocked")
		require.NoError(t, err)
		assert.Equal(t, Disallowed, v.Outcome, v.String())
		assert.Equal(t, []string{"/r1", "/r2", "/r3", "/r4", "/r5"}, target.seen())
	})
	t.Run("sixth redirect not followed", func(t *testing.T) {
		target.set(chain(6)) // r5 redirects to r6: the sixth redirect
		target.mu.Lock()
		target.paths = nil
		target.mu.Unlock()
		c := &Cache{Client: origin.Client()}
		v, err := c.Check(context.Background(), "bot", origin.URL+"/blocked")
		require.NoError(t, err)
		assert.Equal(t, []string{"/r1", "/r2", "/r3", "/r4", "/r5"}, target.seen(), "/r6 never requested")
		assert.Equal(t, Allowed, v.Outcome, "too many redirects: robots.txt unavailable (RFC 9309 §2.3.1.2)")
		assert.Equal(t, http.StatusFound, v.Status)
	})
	t.Run("caller's redirect policy is not touched", func(t *testing.T) {
		cl := origin.Client()
		called := false
		cl.CheckRedirect = func(*http.Request, []*http.Request) error { called = true; return errors.New("no") }
		c := &Cache{Client: cl}
		_, err := c.Check(context.Background(), "bot", origin.URL+"/x")
		require.NoError(t, err)
		assert.False(t, called)
		assert.NotNil(t, cl.CheckRedirect)
	})
}

func TestCacheOversizeBody(t *testing.T) {
	var written atomic.Int64
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /early\n")
		line := "#" + strings.Repeat("x", 1022) + "\n"
		for range 2 * 1024 { // 2 MiB of comments
			n, err := fmt.Fprint(w, line)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
		fmt.Fprint(w, "Disallow: /late\n")
	})
	store := &MemoryStore{}
	c := &Cache{Client: s.Client(), Store: store}
	rules, err := c.Rules(context.Background(), s.URL)
	require.NoError(t, err)
	assert.True(t, rules.Truncated())
	assert.False(t, rules.Allowed("bot", "/early"))
	assert.True(t, rules.Allowed("bot", "/late"))

	key, _ := authority(s.URL)
	e, ok, _ := store.Load(context.Background(), key)
	require.True(t, ok)
	assert.Len(t, e.Body, MaxBodySize+1, "read at most 500 KiB plus one byte")
}

func TestCacheKeepStale(t *testing.T) {
	s := newSite(t, robotsBody("User-agent: *\nDisallow: /x\n"))
	clk := newClock()
	c := &Cache{Client: s.Client(), Now: clk.Now, KeepStale: 2 * time.Hour}
	ctx := context.Background()
	check := func() Verdict {
		v, err := c.Check(ctx, "bot", s.URL+"/x")
		require.NoError(t, err)
		return v
	}
	require.Equal(t, Disallowed, check().Outcome)

	s.set(status(503))
	clk.Advance(DefaultTTL)
	v := check()
	assert.Equal(t, Disallowed, v.Outcome, "previous copy used")
	assert.True(t, v.Stale)
	assert.ErrorIs(t, v.Err, ErrUnreachable)
	assert.Equal(t, clk.Now().Add(DefaultRecheck), v.RecheckAt)
	assert.Equal(t, 200, v.Status, "status of the copy in use")
	assert.Equal(t, 2, s.count("/robots.txt"))

	clk.Advance(DefaultRecheck)
	assert.True(t, check().Stale, "refresh failed again, still within KeepStale")
	assert.Equal(t, 3, s.count("/robots.txt"))

	clk.Advance(2 * time.Hour) // past expiry + KeepStale
	assert.Equal(t, Unreachable, check().Outcome)

	// Without KeepStale, an unreachable refresh makes the site off limits.
	s.set(robotsBody("User-agent: *\nDisallow: /x\n"))
	c2 := &Cache{Client: s.Client(), Now: clk.Now}
	_, _ = c2.Check(ctx, "bot", s.URL+"/y")
	s.set(status(500))
	clk.Advance(DefaultTTL)
	v, _ = c2.Check(ctx, "bot", s.URL+"/y")
	assert.Equal(t, Unreachable, v.Outcome)
}

func TestCacheStore(t *testing.T) {
	s := newSite(t, robotsBody("User-agent: *\nDisallow: /live\nSitemap: https://e.com/live.xml\n"))
	clk := newClock()
	key, err := authority(s.URL)
	require.NoError(t, err)
	ctx := context.Background()

	store := &MemoryStore{}
	require.NoError(t, store.Save(ctx, Entry{
		Authority: key, URL: key + "/robots.txt", Status: 200,
		Body:      []byte("User-agent: *\nDisallow: /stored\nSitemap: https://e.com/stored.xml\n"),
		FetchedAt: clk.Now().Add(-30 * time.Minute), ExpiresAt: clk.Now().Add(30 * time.Minute),
	}))
	c := &Cache{Client: s.Client(), Now: clk.Now, Store: store}
	v, err := c.Check(ctx, "bot", s.URL+"/stored")
	require.NoError(t, err)
	assert.Equal(t, Disallowed, v.Outcome, "fresh stored entry used")
	assert.Equal(t, 0, s.count("/robots.txt"))
	sm, err := c.Sitemaps(ctx, s.URL+"/anything")
	require.NoError(t, err)
	assert.Equal(t, []string{"https://e.com/stored.xml"}, sm)

	// A new cache (a new run) after the stored entry expired fetches and saves.
	clk.Advance(31 * time.Minute)
	c = &Cache{Client: s.Client(), Now: clk.Now, Store: store}
	v, _ = c.Check(ctx, "bot", s.URL+"/live")
	assert.Equal(t, Disallowed, v.Outcome)
	assert.Equal(t, 1, s.count("/robots.txt"))
	e, ok, _ := store.Load(ctx, key)
	require.True(t, ok)
	assert.Equal(t, 200, e.Status)
	assert.Equal(t, clk.Now(), e.FetchedAt)
	assert.Equal(t, clk.Now().Add(DefaultTTL), e.ExpiresAt)
	assert.False(t, e.Rules().Allowed("bot", "/live"), "Entry rebuilds its Rules")

	// Unreachable entries are saved too, and rebuilt as unreachable.
	s.set(status(503))
	clk.Advance(DefaultTTL)
	_, _ = c.Check(ctx, "bot", s.URL+"/live")
	e, _, _ = store.Load(ctx, key)
	assert.True(t, e.Unreachable())
	assert.Nil(t, e.Rules())
	c = &Cache{Client: s.Client(), Now: clk.Now, Store: store}
	v, _ = c.Check(ctx, "bot", s.URL+"/live")
	assert.Equal(t, Unreachable, v.Outcome)
	assert.ErrorIs(t, v.Err, ErrUnreachable)
	assert.Equal(t, 2, s.count("/robots.txt"), "stored unreachable entry honoured until its re-check")
}

type failingStore struct{}

func (failingStore) Load(context.Context, string) (Entry, bool, error) {
	return Entry{}, false, errors.New("disk on fire")
}
func (failingStore) Save(context.Context, Entry) error { return errors.New("disk on fire") }

func TestCacheStoreErrors(t *testing.T) {
	s := newSite(t, robotsBody("User-agent: *\nDisallow: /x\n"))
	var got []error
	c := &Cache{Client: s.Client(), Store: failingStore{}, OnStoreError: func(err error) { got = append(got, err) }}
	v, err := c.Check(context.Background(), "bot", s.URL+"/x")
	require.NoError(t, err)
	assert.Equal(t, Disallowed, v.Outcome, "a broken store only costs a fetch")
	require.Len(t, got, 2)
	assert.Contains(t, got[0].Error(), "loading")
	assert.Contains(t, got[1].Error(), "saving")
}

func TestCacheLRU(t *testing.T) {
	sites := []*site{
		newSite(t, robotsBody("")), newSite(t, robotsBody("")), newSite(t, robotsBody("")),
	}
	c := &Cache{MaxEntries: 2}
	ctx := context.Background()
	check := func(i int) {
		_, err := c.Check(ctx, "bot", sites[i].URL+"/")
		require.NoError(t, err)
	}
	check(0)
	check(1)
	check(0) // 0 is now more recent than 1
	check(2) // evicts 1
	assert.Equal(t, 2, c.Len())
	check(0)
	check(2)
	assert.Equal(t, 1, sites[0].count("/robots.txt"))
	assert.Equal(t, 1, sites[2].count("/robots.txt"))
	check(1)
	assert.Equal(t, 2, sites[1].count("/robots.txt"), "evicted entry fetched again")
	assert.Equal(t, 2, c.Len())
}

func TestCacheContext(t *testing.T) {
	unblock := make(chan struct{})
	defer close(unblock)
	serverSawCancel := make(chan struct{})
	started := make(chan struct{})
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		close(started)
		select {
		case <-r.Context().Done():
			close(serverSawCancel)
		case <-unblock:
		}
	})
	c := &Cache{Client: s.Client()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Check(ctx, "bot", s.URL+"/x")
		done <- err
	}()
	<-started
	cancel()
	err := <-done
	assert.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), s.URL)
	<-serverSawCancel // the abandoned fetch is cancelled, not left holding a connection
	assert.Equal(t, 0, c.Len(), "nothing cached from an abandoned fetch")
}

func TestCacheBadURL(t *testing.T) {
	c := &Cache{}
	for _, u := range []string{"", "/relative", "ftp://e.com/x", "mailto:a@b.c", "http://", "http:///x", "http://[::1", "://x"} {
		_, err := c.Check(context.Background(), "bot", u)
		assert.ErrorIs(t, err, ErrBadURL, u)
		_, err = c.Sitemaps(context.Background(), u)
		assert.ErrorIs(t, err, ErrBadURL, u)
	}
}

func TestAuthority(t *testing.T) {
	for in, want := range map[string]string{
		"http://example.com/x":           "http://example.com",
		"https://example.com":            "https://example.com",
		"https://example.com?q":          "https://example.com",
		"https://example.com#f":          "https://example.com",
		"HTTP://Example.COM:80/x":        "http://example.com",
		"https://example.com:443/":       "https://example.com",
		"https://example.com:8443/":      "https://example.com:8443",
		"http://user:pw@example.com/":    "http://example.com",
		"http://127.0.0.1:8080/x":        "http://127.0.0.1:8080",
		"http://[::1]:8080/x":            "http://[::1]:8080",
		"http://bücher.de/x":             "http://xn--bcher-kva.de",
		"http://xn--bcher-kva.de/x":      "http://xn--bcher-kva.de",
		"https://www.example.co.uk/a/b?": "https://www.example.co.uk",
	} {
		got, err := authority(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
}

func TestVerdictStrings(t *testing.T) {
	assert.Equal(t, "allowed", Allowed.String())
	assert.Equal(t, "disallowed", Disallowed.String())
	assert.Equal(t, "unreachable", Unreachable.String())
	assert.Equal(t, "Outcome(7)", Outcome(7).String())

	s := newSite(t, status(404))
	c := &Cache{Client: s.Client()}
	v, err := c.Check(context.Background(), "bot", s.URL+"/x")
	require.NoError(t, err)
	assert.True(t, v.Allowed())
	assert.Equal(t, s.URL+"/x: allowed: no group applies (robots.txt HTTP 404: no rules)", v.String())
	sm, err := c.Sitemaps(context.Background(), s.URL)
	assert.NoError(t, err)
	assert.Nil(t, sm)

	s.set(status(500))
	c = &Cache{Client: s.Client()}
	_, err = c.Sitemaps(context.Background(), s.URL)
	assert.ErrorIs(t, err, ErrUnreachable)
	_, err = c.Rules(context.Background(), s.URL)
	assert.ErrorIs(t, err, ErrUnreachable)
	v, _ = c.Check(context.Background(), "bot", s.URL+"/x")
	assert.Contains(t, v.String(), ": unreachable: robots.txt could not be fetched, site off limits (")
	assert.Contains(t, v.String(), "HTTP 500")
}

// String starts with the URL and the Outcome's word, whatever the other
// fields say, so a reader of logs never sees "allowed" for a verdict that
// is not Allowed; odd hand-made verdicts do not panic.
func TestVerdictStringNeverContradictsOutcome(t *testing.T) {
	const u = "https://e.com/x"
	rule := &Rule{Pattern: "/x", Line: 3}
	cases := []struct {
		v    Verdict
		want string
	}{
		{Verdict{}, ": unknown: no robots.txt answer"},
		{Verdict{URL: u, Err: ErrBadURL}, u + ": unknown: no robots.txt answer (not an absolute http(s) URL)"},
		{Verdict{URL: u, Outcome: Unreachable}, u + ": unreachable: robots.txt could not be fetched, site off limits"},
		{Verdict{URL: u, Outcome: Disallowed, Decision: Decision{Allowed: true, Agents: []string{"*"}}}, u + ": disallowed"},
		{Verdict{URL: u, Outcome: Allowed}, u + ": allowed"},
		{Verdict{URL: u, Outcome: Allowed, Decision: Decision{Allowed: true}, Stale: true}, u + ": allowed: no group applies (stale copy; refresh failed)"},
		{Verdict{URL: u, Outcome: Disallowed, Decision: Decision{Rule: rule, Agents: []string{"a"}}}, u + `: disallowed by "Disallow: /x" (line 3, user-agent a)`},
		{Verdict{URL: u, Outcome: Outcome(9), Decision: Decision{Allowed: true}}, u + ": Outcome(9): not an answer"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.v.String())
		assert.True(t, strings.HasPrefix(c.v.String(), c.v.URL+": "+c.v.Outcome.String()), c.v.String())
	}
	assert.Equal(t, "disallowed: no rule recorded", Decision{}.String(), "the zero Decision does not claim a group allowed it")

	// Every verdict the cache gives, each outcome and a stale one.
	s := newSite(t, robotsBody("User-agent: *\nDisallow: /no\n"))
	down := newSite(t, status(500))
	clk := newClock()
	c := &Cache{Client: s.Client(), Now: clk.Now, KeepStale: time.Hour}
	ctx := context.Background()
	var got []Verdict
	for _, u := range []string{s.URL + "/yes", s.URL + "/no", down.URL + "/x", "relative"} {
		v, _ := c.Check(ctx, "bot", u)
		got = append(got, v)
	}
	s.set(status(503))
	clk.Advance(time.Hour)
	v, _ := c.Check(ctx, "bot", s.URL+"/no")
	require.True(t, v.Stale)
	got = append(got, v)
	seen := map[Outcome]bool{}
	for _, v := range got {
		seen[v.Outcome] = true
		rest, ok := strings.CutPrefix(v.String(), v.URL+": "+v.Outcome.String())
		assert.True(t, ok && (rest[0] == ':' || rest[0] == ' '), v.String())
		assert.Equal(t, v.Outcome == Allowed, v.Allowed())
	}
	assert.Len(t, seen, 4, "all four outcomes were seen")
}
