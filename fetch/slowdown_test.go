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
		tr := &fetch.Transport{Base: n.Transport(), Slowdown: slow, Gate: fetch.NoLimits{}}
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
		c := newClient(n, fetch.NoLimits{})
		c.Robots = allowAll{}
		g := &tripAtRelease{slow: c.Slowdown}
		c.Gate = g
		res, err := c.Get(t.Context(), "http://a.test/busy")
		require.NoError(t, err)
		assert.Equal(t, 200, res.Status)
		assert.Equal(t, []bool{true, true}, g.seen, "tripped before the 429's slot was released")
	})
}
