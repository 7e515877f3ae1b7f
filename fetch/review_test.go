package fetch_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/testsite"
)

// "One 429 anywhere in a run" includes robots.txt: the private robots.Cache
// fetches it through PoliteTransport, which carries the client's latch.
func TestRobotsTxt429TripsTheSlowdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Route("/robots.txt", testsite.Response{Status: 429, Body: "slow down"})
		a.Page("/p", "text/plain", "page")
		c := newClient(n, newGate(t, 0))
		_, err := c.Get(t.Context(), "http://a.test/p")
		requireFetchError(t, err, "http://a.test/p")
		assert.ErrorIs(t, err, fetch.ErrSiteOffLimits)
		assert.Equal(t, 0, a.Count("/p"), "an off-limits site gets no page request")
		ev, tripped := c.Slowdown.Tripped()
		require.True(t, tripped, "a 429 on robots.txt must trip the run-wide slowdown")
		assert.Equal(t, "http://a.test/robots.txt", ev.URL)
	})
}

func TestTransportTripsSlowdownPerPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Status("/unavailable", 503)
		a.Status("/busy", 429)
		slow := &backoff.Slowdown{}
		tr := &fetch.Transport{Base: n.Transport(), Slowdown: slow}
		get := func(path string) {
			req, err := http.NewRequest(http.MethodGet, "http://a.test"+path, nil)
			require.NoError(t, err)
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		get("/unavailable")
		_, tripped := slow.Tripped()
		assert.False(t, tripped, "503 does not slow the run")
		get("/busy")
		ev, tripped := slow.Tripped()
		require.True(t, tripped)
		assert.Equal(t, "http://a.test/busy", ev.URL)
		assert.Equal(t, 1, a.Count("/busy"), "Transport never retries")
	})
}

// A 429 whose body then times out is still a 429: it trips the slowdown.
func TestSlowdownTrippedWhen429BodyFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Route("/busy", testsite.Response{Status: 429, Body: strings.Repeat("x", 100), Drip: time.Second})
		c := newClient(n, newGate(t, 0))
		c.Timeout = 5500 * time.Millisecond
		res, err := c.Get(t.Context(), "http://a.test/busy")
		requireFetchError(t, err, "http://a.test/busy")
		assert.ErrorIs(t, err, fetch.ErrTimeout)
		assert.Equal(t, 429, res.Status)
		assert.Len(t, res.Attempts, 1, "a timeout is not retried by default")
		ev, tripped := c.Slowdown.Tripped()
		require.True(t, tripped)
		assert.Equal(t, "http://a.test/busy", ev.URL)
	})
}

// cancelAfter is a real base transport that cancels the caller's context
// right after the response headers arrive, the race a crawler stopping
// mid-request runs into.
type cancelAfter struct {
	base   http.RoundTripper
	cancel context.CancelFunc
}

func (c cancelAfter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	c.cancel()
	return resp, err
}

func TestCancelledAfterHeadersIsACancellation(t *testing.T) {
	t.Run("Get", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			n := testsite.NewNetwork(t, testsite.InMemory)
			a := n.Add("a.test")
			a.Route("/busy", testsite.Response{Status: 429, Header: retryAfter("5"), Body: "slow down"})
			ctx, cancel := context.WithCancel(t.Context())
			c := newClient(n, newGate(t, 0))
			c.Robots = allowAll{}
			c.Transport = cancelAfter{n.Transport(), cancel}
			res, err := c.Get(ctx, "http://a.test/busy")
			if err != nil { // the body may or may not have been read in full before the cancel
				requireFetchError(t, err, "http://a.test/busy")
				assert.ErrorIs(t, err, context.Canceled)
			}
			assert.Len(t, res.Attempts, 1)
			assert.Equal(t, 1, a.Count("/busy"), "no retry after the caller gave up")
			assert.Equal(t, 429, res.Status)
			_, tripped := c.Slowdown.Tripped()
			assert.True(t, tripped, "the 429 arrived, so it trips the slowdown")
		})
	})
	t.Run("RoundTripper", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			n := testsite.NewNetwork(t, testsite.InMemory)
			a := n.Add("a.test")
			a.Route("/busy", testsite.Response{Status: 429, Header: retryAfter("5"), Body: "slow down"})
			ctx, cancel := context.WithCancel(t.Context())
			g := newGate(t, 0)
			c := newClient(n, g)
			c.Robots = allowAll{}
			c.Transport = cancelAfter{n.Transport(), cancel}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://a.test/busy", nil)
			require.NoError(t, err)
			resp, err := c.RoundTripper().RoundTrip(req)
			assert.Nil(t, resp)
			requireFetchError(t, err, "http://a.test/busy")
			assert.ErrorIs(t, err, context.Canceled, "not an Error with no cause")
			assert.NotContains(t, err.Error(), "unknown error")
			assert.Equal(t, 1, a.Count("/busy"))
			assert.Equal(t, 0, g.InFlight())
			_, tripped := c.Slowdown.Tripped()
			assert.True(t, tripped)
		})
	})
}

// A transport error from Transport names the URL even without an
// http.Client around it (robots.Cache stores the message).
func TestTransportErrorNamesTheURL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Close() // connection refused
		g := newGate(t, 0)
		tr := &fetch.Transport{Base: n.Transport(), Gate: g}
		req, err := http.NewRequest(http.MethodGet, "http://a.test/robots.txt", nil)
		require.NoError(t, err)
		resp, err := tr.RoundTrip(req)
		assert.Nil(t, resp)
		requireFetchError(t, err, "http://a.test/robots.txt")
		assert.Equal(t, 0, g.InFlight(), "the slot is released on error")
	})
}

// tripAtRelease is a gate that records, at each release, whether the
// slowdown had tripped by then.
type tripAtRelease struct {
	slow *backoff.Slowdown
	mu   sync.Mutex
	seen []bool
}

func (g *tripAtRelease) Acquire(_ context.Context, _ *url.URL) (func(), error) {
	return func() {
		_, tripped := g.slow.Tripped()
		g.mu.Lock()
		g.seen = append(g.seen, tripped)
		g.mu.Unlock()
	}, nil
}

// The slot of a 429 is freed only after the latch trips, so a request that
// was waiting for that slot already runs under the slowdown.
func TestSlowdownTripsBeforeTheSlotIsFreed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Route("/busy", testsite.Response{Status: 429, Body: "slow down"}, testsite.Response{Body: "ok"})
		c := newClient(n, nil)
		c.Robots = allowAll{}
		g := &tripAtRelease{slow: c.Slowdown}
		c.Gate = g
		res, err := c.Get(t.Context(), "http://a.test/busy")
		require.NoError(t, err)
		assert.Equal(t, 200, res.Status)
		assert.Equal(t, []bool{true, true}, g.seen, "tripped before the 429's slot was released")
	})
}
