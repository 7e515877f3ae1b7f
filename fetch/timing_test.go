package fetch_test

import (
	"context"
	"errors"
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

func TestTimeoutWhenHeadersNeverCome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Route("/stall", testsite.Response{Delay: time.Hour, Body: "late"})
		g := newGate(t, 0)
		c := newClient(n, g)
		start := time.Now()
		res, err := c.Get(t.Context(), "http://a.test/stall")
		assert.Equal(t, fetch.DefaultTimeout, elapsed(start), "cut at the 15s timeout exactly")
		fe := requireFetchError(t, err, "http://a.test/stall")
		assert.ErrorIs(t, err, fetch.ErrTimeout)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.True(t, fe.Timeout())
		assert.Contains(t, err.Error(), "15s")
		require.Len(t, res.Attempts, 1, "a timeout is not retried by default")
		assert.ErrorIs(t, res.Attempts[0].Err, fetch.ErrTimeout)
		assert.Equal(t, 0, res.Attempts[0].Status)
		assert.Equal(t, 1, a.Count("/stall"))
		assert.Equal(t, 0, g.InFlight())
	})
}

func TestTimeoutCutsADripFedBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Route("/drip", testsite.Response{Body: strings.Repeat("x", 100), Drip: time.Second}) // 99s in all
		c := newClient(n, newGate(t, 0))
		c.Timeout = 10*time.Second + 500*time.Millisecond // between two drips, so the order is certain
		start := time.Now()
		res, err := c.Get(t.Context(), "http://a.test/drip")
		assert.Equal(t, c.Timeout, elapsed(start), "cut at the timeout, not after the body")
		requireFetchError(t, err, "http://a.test/drip")
		assert.ErrorIs(t, err, fetch.ErrTimeout)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 200, res.Status, "the headers did arrive")
		assert.Equal(t, time.Duration(0), res.TTFB)
		assert.Len(t, res.Body, 11, "bytes sent at 0s..10s, as far as they came")
	})
}

func TestDripWithinTimeoutIsRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Route("/drip", testsite.Response{Body: "abcdef", Drip: time.Second, Delay: 2 * time.Second})
		c := newClient(n, fetch.NoLimits{})
		start := time.Now()
		res, err := c.Get(t.Context(), "http://a.test/drip")
		require.NoError(t, err)
		assert.Equal(t, "abcdef", string(res.Body))
		assert.Equal(t, 2*time.Second, res.TTFB)
		assert.Equal(t, 7*time.Second, res.Total)
		assert.Equal(t, 7*time.Second, elapsed(start))
	})
}

func TestCallerContextEndsTheRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Route("/stall", testsite.Response{Delay: time.Hour})
		c := newClient(n, newGate(t, 0))
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		_, err := c.Get(ctx, "http://a.test/stall")
		requireFetchError(t, err, "http://a.test/stall")
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.NotErrorIs(t, err, fetch.ErrTimeout, "the caller's deadline is not the request timeout")
	})
}

func retryAfter(v string) http.Header { return http.Header{"Retry-After": {v}} }

func TestRetryAfterForms(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header http.Header
		status int
		want   time.Duration
	}{
		{"429 seconds", retryAfter("3"), 429, 3 * time.Second},
		{"429 http-date", retryAfter("Sat, 01 Jan 2000 00:00:07 GMT"), 429, 7 * time.Second}, // bubble time starts at 2000-01-01 00:00 UTC
		{"429 date in the past", retryAfter("Fri, 31 Dec 1999 23:00:00 GMT"), 429, 0},
		{"429 invalid", retryAfter("soon"), 429, 500 * time.Millisecond},
		{"429 none", nil, 429, 500 * time.Millisecond},
		{"429 over the cap", retryAfter("3600"), 429, 30 * time.Second},
		{"503 seconds", retryAfter("2"), 503, 2 * time.Second},
		{"502 exponential", nil, 502, 500 * time.Millisecond},
		{"504 exponential", nil, 504, 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := testsite.NewNetwork(t, testsite.InMemory)
				a := n.Add("a.test")
				a.Route("/p",
					testsite.Response{Status: tc.status, Header: tc.header},
					testsite.Response{Body: "ok"})
				g := newGate(t, 0)
				c := newClient(n, g)
				res, err := c.Get(t.Context(), "http://a.test/p")
				require.NoError(t, err)
				assert.Equal(t, "ok", string(res.Body))
				assert.Equal(t, []fetch.Attempt{
					{URL: "http://a.test/p", Status: tc.status},
					{URL: "http://a.test/p", Status: 200, Wait: tc.want},
				}, res.Attempts)
				// What the server saw: two requests, exactly the wait apart.
				var times []time.Time
				for _, r := range a.Requests() {
					if r.Path == "/p" {
						times = append(times, r.Time)
					}
				}
				require.Len(t, times, 2)
				assert.Equal(t, tc.want, times[1].Sub(times[0]))
				assert.Equal(t, []string{"http://a.test/robots.txt", "http://a.test/p", "http://a.test/p"}, g.Acquired(),
					"each attempt passes the gate again")
				assertIdentity(t, n.Requests())

				ev, tripped := c.Slowdown.Tripped()
				assert.Equal(t, tc.status == 429, tripped, "only 429 trips the slowdown")
				if tripped {
					assert.Equal(t, "http://a.test/p", ev.URL)
				}
			})
		})
	}
}

func TestRetriesGiveUpAfterTwo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Route("/busy", testsite.Response{Status: 429, Body: "slow down", Header: retryAfter("1")})
		c := newClient(n, newGate(t, 0))
		start := time.Now()
		res, err := c.Get(t.Context(), "http://a.test/busy")
		require.NoError(t, err, "a final 429 is a response, not an error")
		assert.Equal(t, 429, res.Status)
		assert.Equal(t, "slow down", string(res.Body))
		assert.Len(t, res.Attempts, 3)
		assert.Equal(t, 3, a.Count("/busy"), "at most twice retried")
		assert.Equal(t, 2*time.Second, elapsed(start))
		_, tripped := c.Slowdown.Tripped()
		assert.True(t, tripped)
	})
}

func TestNotRetried(t *testing.T) {
	for _, code := range []int{403, 404, 410, 500, 501} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := testsite.NewNetwork(t, testsite.InMemory)
				a := n.Add("a.test")
				a.Route("/p", testsite.Response{Status: code, Body: "no"}, testsite.Response{Body: "yes"})
				c := newClient(n, fetch.NoLimits{})
				res, err := c.Get(t.Context(), "http://a.test/p")
				require.NoError(t, err)
				assert.Equal(t, code, res.Status)
				assert.Equal(t, "no", string(res.Body))
				assert.Len(t, res.Attempts, 1)
				assert.Equal(t, 1, a.Count("/p"))
				_, tripped := c.Slowdown.Tripped()
				assert.False(t, tripped)
			})
		})
	}
}

func TestCustomPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Route("/p", testsite.Response{Status: 503})
		c := newClient(n, fetch.NoLimits{})
		c.Policy = &backoff.Policy{MaxRetries: backoff.NoRetries}
		res, err := c.Get(t.Context(), "http://a.test/p")
		require.NoError(t, err)
		assert.Equal(t, 503, res.Status)
		assert.Equal(t, 1, a.Count("/p"))

		// Transport errors are retried when the policy says so.
		a.Route("/stall", testsite.Response{Delay: time.Hour}, testsite.Response{Body: "fine"})
		c2 := newClient(n, fetch.NoLimits{})
		c2.Timeout = time.Second
		c2.Policy = &backoff.Policy{RetryTransportErrors: true}
		res, err = c2.Get(t.Context(), "http://a.test/stall")
		require.NoError(t, err)
		assert.Equal(t, "fine", string(res.Body))
		require.Len(t, res.Attempts, 2)
		assert.ErrorIs(t, res.Attempts[0].Err, fetch.ErrTimeout)
		assert.Equal(t, 500*time.Millisecond, res.Attempts[1].Wait)
	})
}

// The wait before a retry holds no slot: with one slot in the whole run,
// another request goes through while the first waits out its Retry-After.
func TestRetryWaitHoldsNoSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Robots("")
		a.Route("/busy", testsite.Response{Status: 429, Header: retryAfter("10")}, testsite.Response{Body: "ok"})
		a.Page("/other", "text/plain", "other")
		g := newGate(t, 1)
		c := newClient(n, g)
		// Warm robots.txt so both Gets below only fetch pages.
		_, err := c.Get(t.Context(), "http://a.test/other")
		require.NoError(t, err)

		start := time.Now()
		var wg sync.WaitGroup
		wg.Go(func() {
			_, err := c.Get(t.Context(), "http://a.test/busy")
			assert.NoError(t, err)
		})
		synctest.Wait() // /busy got its 429 and is waiting 10s
		assert.Equal(t, 0, g.InFlight(), "no slot held while waiting")
		assert.Equal(t, 1, a.Count("/busy"))
		res, err := c.Get(t.Context(), "http://a.test/other")
		require.NoError(t, err)
		assert.Equal(t, "other", string(res.Body))
		assert.Equal(t, time.Duration(0), elapsed(start), "/other did not wait for /busy's retry")
		wg.Wait()
		assert.Equal(t, 10*time.Second, elapsed(start))
		assert.Equal(t, 2, a.Count("/busy"))
	})
}

func TestCancelDuringRetryWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Route("/busy", testsite.Response{Status: 503, Header: retryAfter("20")})
		c := newClient(n, newGate(t, 0))
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(5*time.Second, cancel)
		start := time.Now()
		res, err := c.Get(ctx, "http://a.test/busy")
		assert.Equal(t, 5*time.Second, elapsed(start))
		requireFetchError(t, err, "http://a.test/busy")
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 1, a.Count("/busy"))
		assert.Len(t, res.Attempts, 1)
		assert.Equal(t, 503, res.Status)
	})
}

type refusingGate struct{}

var errStop = errors.New("run stopped")

func (refusingGate) Acquire(context.Context, *url.URL) (func(), error) { return nil, errStop }

func TestGateErrorSendsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		c := newClient(n, refusingGate{})
		c.Robots = allowAll{}
		res, err := c.Get(t.Context(), "http://a.test/")
		requireFetchError(t, err, "http://a.test/")
		assert.ErrorIs(t, err, errStop)
		assert.Empty(t, res.Attempts, "nothing was sent")
		assert.Equal(t, 0, a.Total())
	})
}
