package robots

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests in this file pin what the bot pages in shared/seeds promise site
// owners, with the durations written as the pages write them, not with this
// package's constants: a change of DefaultTTL or DefaultRecheck that breaks
// a published promise must fail here.

// 2-UAcomBot: "We cache the parsed rules per host for one hour, so repeat
// snapshots of the same host do not hammer your robots.txt file", "At most
// one robots.txt fetch per host per hour" and "we will see the rule (within
// one hour of you publishing it)". A Cache with default settings keeps a
// host's rules exactly one hour.
func TestPromiseRulesCachedPerHostForOneHour(t *testing.T) {
	s := newSite(t, robotsBody("User-agent: 2-UAcomBot\nAllow: /\n"))
	clk := newClock()
	c := &Cache{Client: s.Client(), Now: clk.Now}
	ctx := context.Background()
	check := func(path string) Outcome {
		t.Helper()
		v, err := c.Check(ctx, "2-UAcomBot", s.URL+path)
		require.NoError(t, err)
		return v.Outcome
	}
	start := clk.Now()
	require.Equal(t, Allowed, check("/a"))

	// The owner blocks the bot right after the first fetch.
	s.set(robotsBody("User-agent: 2-UAcomBot\nDisallow: /\n"))
	clk.Advance(time.Hour - time.Nanosecond)
	assert.Equal(t, Allowed, check("/b"), "rules of the first fetch still used just before one hour")
	assert.Equal(t, Allowed, check("/c/d?e"), "every page of the host shares them")
	assert.Equal(t, 1, s.count("/robots.txt"), "one robots.txt fetch within the hour")

	clk.Advance(time.Nanosecond)
	require.Equal(t, start.Add(time.Hour), clk.Now())
	assert.Equal(t, Disallowed, check("/b"), "the new rule is seen one hour after the first fetch")
	assert.Equal(t, 2, s.count("/robots.txt"))
}

// 2-UAcomBot: "If robots.txt returns a 5xx we treat it as a temporary
// disallow (also per RFC 9309) and re-check in about five minutes."
func TestPromiseServerErrorRecheckedAfterFiveMinutes(t *testing.T) {
	s := newSite(t, status(http.StatusServiceUnavailable))
	clk := newClock()
	c := &Cache{Client: s.Client(), Now: clk.Now}
	ctx := context.Background()
	start := clk.Now()

	v, err := c.Check(ctx, "2-UAcomBot", s.URL+"/page")
	require.NoError(t, err)
	assert.Equal(t, Unreachable, v.Outcome, "a 5xx is a disallow")
	assert.False(t, v.Allowed())
	assert.Equal(t, start.Add(5*time.Minute), v.RecheckAt)

	s.set(robotsBody("User-agent: *\nAllow: /\n"))
	clk.Advance(5*time.Minute - time.Nanosecond)
	v, _ = c.Check(ctx, "2-UAcomBot", s.URL+"/page")
	assert.Equal(t, Unreachable, v.Outcome, "still disallowed just before five minutes")
	assert.Equal(t, 1, s.count("/robots.txt"), "no re-check before five minutes")

	clk.Advance(time.Nanosecond)
	v, _ = c.Check(ctx, "2-UAcomBot", s.URL+"/page")
	assert.Equal(t, Allowed, v.Outcome, "re-checked after five minutes")
	assert.Equal(t, 2, s.count("/robots.txt"))
}

// A stored copy says how long it lasts (ExpiresAt), but a Store may have
// been written with a longer TTL, by another program, or by a machine whose
// clock runs ahead. The cache never trusts a copy for longer than its own
// TTL from when it was fetched, nor longer than that from now.
func TestStoredCopyNotTrustedPastItsTTL(t *testing.T) {
	const stored, live = "User-agent: *\nDisallow: /stored\n", "User-agent: *\nDisallow: /live\n"
	ctx := context.Background()
	setup := func(t *testing.T, fetchedAgo, expiresIn time.Duration, e Entry) (*site, *clock, *Cache) {
		s := newSite(t, robotsBody(live))
		clk := newClock()
		key, err := authority(s.URL)
		require.NoError(t, err)
		if e.Status == 0 && e.Err == "" {
			e.Status, e.Body = 200, []byte(stored)
		}
		e.Authority, e.URL = key, key+"/robots.txt"
		e.FetchedAt, e.ExpiresAt = clk.Now().Add(-fetchedAgo), clk.Now().Add(expiresIn)
		store := &MemoryStore{}
		require.NoError(t, store.Save(ctx, e))
		return s, clk, &Cache{Client: s.Client(), Now: clk.Now, Store: store}
	}
	outcome := func(t *testing.T, c *Cache, s *site, path string) Outcome {
		t.Helper()
		v, err := c.Check(ctx, "bot", s.URL+path)
		require.NoError(t, err)
		return v.Outcome
	}

	t.Run("written with a 24 h TTL two hours ago: refetched", func(t *testing.T) {
		s, _, c := setup(t, 2*time.Hour, 22*time.Hour, Entry{})
		assert.Equal(t, Disallowed, outcome(t, c, s, "/live"), "the live file is used")
		assert.Equal(t, 1, s.count("/robots.txt"))
	})
	t.Run("written with a 24 h TTL 30 minutes ago: used until one hour after its fetch", func(t *testing.T) {
		s, clk, c := setup(t, 30*time.Minute, 23*time.Hour+30*time.Minute, Entry{})
		assert.Equal(t, Disallowed, outcome(t, c, s, "/stored"))
		clk.Advance(30*time.Minute - time.Nanosecond)
		assert.Equal(t, Disallowed, outcome(t, c, s, "/stored"))
		assert.Equal(t, 0, s.count("/robots.txt"))
		clk.Advance(time.Nanosecond)
		assert.Equal(t, Disallowed, outcome(t, c, s, "/live"), "refetched one hour after the copy was fetched")
		assert.Equal(t, 1, s.count("/robots.txt"))
	})
	t.Run("stamped ten days in the future: refetched", func(t *testing.T) {
		s, _, c := setup(t, -240*time.Hour, 241*time.Hour, Entry{})
		assert.Equal(t, Disallowed, outcome(t, c, s, "/live"))
		assert.Equal(t, 1, s.count("/robots.txt"))
	})
	t.Run("stamped seconds in the future (clock skew): used one hour after its fetch", func(t *testing.T) {
		s, clk, c := setup(t, -30*time.Second, time.Hour+30*time.Second, Entry{})
		assert.Equal(t, Disallowed, outcome(t, c, s, "/stored"))
		clk.Advance(time.Hour + 30*time.Second)
		assert.Equal(t, Disallowed, outcome(t, c, s, "/live"))
		assert.Equal(t, 1, s.count("/robots.txt"))
	})
	t.Run("unreachable copy written with a long re-check: re-checked after five minutes", func(t *testing.T) {
		s, clk, c := setup(t, 4*time.Minute, time.Hour, Entry{Status: 503, Err: "HTTP 503"})
		assert.Equal(t, Unreachable, outcome(t, c, s, "/live"))
		clk.Advance(time.Minute)
		assert.Equal(t, Disallowed, outcome(t, c, s, "/live"))
		assert.Equal(t, 1, s.count("/robots.txt"))
	})
	t.Run("expiry before the TTL is honoured", func(t *testing.T) {
		s, clk, c := setup(t, 0, 10*time.Minute, Entry{})
		assert.Equal(t, Disallowed, outcome(t, c, s, "/stored"))
		clk.Advance(10 * time.Minute)
		assert.Equal(t, Disallowed, outcome(t, c, s, "/live"))
	})
}

// A damaged store must not make a site read as "no rules": an entry for
// another authority, or one with neither a status nor an error, is ignored
// and robots.txt fetched; the zero Entry rebuilds no rules at all.
func TestDamagedStoreEntriesAreNotTrusted(t *testing.T) {
	ctx := context.Background()
	assert.True(t, Entry{}.Unreachable())
	assert.Nil(t, Entry{}.Rules(), "the zero Entry allows nothing")
	assert.Nil(t, Entry{Status: 503}.Rules(), "a 5xx without Err is unreachable")
	assert.Nil(t, Entry{Status: 429}.Rules())
	assert.NotNil(t, Entry{Status: 404}.Rules())

	for name, damage := range map[string]func(*Entry){
		"other authority":     func(e *Entry) { e.Authority = "https://elsewhere.example" },
		"no status, no error": func(e *Entry) { e.Status, e.Body = 0, nil },
	} {
		t.Run(name, func(t *testing.T) {
			s := newSite(t, robotsBody("User-agent: *\nDisallow: /x\n"))
			clk := newClock()
			key, err := authority(s.URL)
			require.NoError(t, err)
			e := Entry{Authority: key, URL: key + "/robots.txt", Status: 404, FetchedAt: clk.Now(), ExpiresAt: clk.Now().Add(time.Hour)}
			damage(&e)
			store := &MemoryStore{}
			store.m = map[string]Entry{key: e} // as a buggy store would hand it out
			var storeErrs []error
			c := &Cache{Client: s.Client(), Now: clk.Now, Store: store, OnStoreError: func(err error) { storeErrs = append(storeErrs, err) }}
			v, err := c.Check(ctx, "bot", s.URL+"/x")
			require.NoError(t, err)
			assert.Equal(t, Disallowed, v.Outcome, "the live robots.txt decides")
			assert.Equal(t, 1, s.count("/robots.txt"))
			require.NotEmpty(t, storeErrs)
			assert.Contains(t, storeErrs[0].Error(), "ignored")
		})
	}
}
