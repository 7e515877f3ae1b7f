package fetch_test

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/testsite"
)

// gapGate is a small real politeness gate: request starts at least gap
// apart, the first one at once.
type gapGate struct {
	gap  time.Duration
	mu   sync.Mutex
	last time.Time
	n    int
}

func (g *gapGate) Acquire(ctx context.Context, _ *url.URL) (func(), error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n > 0 {
		if d := time.Until(g.last.Add(g.gap)); d > 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	g.n++
	g.last = time.Now()
	return func() {}, nil
}

// The server's time (TTFB, Download, ResponseTime) excludes what politeness
// cost: the wait at the gate, the wait before a retry and the robots.txt
// check, which Result reports separately and Total adds up.
func TestResultTimingsSeparateServerTimeFromPoliteness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Route("/robots.txt", testsite.Response{Delay: 100 * time.Millisecond, Body: "User-agent: *\nAllow: /\n"})
		a.Route("/p",
			testsite.Response{Status: http.StatusServiceUnavailable, Delay: 50 * time.Millisecond, Header: retryAfter("2")},
			testsite.Response{Delay: 300 * time.Millisecond, Body: "abcde", Drip: 100 * time.Millisecond})
		a.Route("/r", testsite.Response{Location: "/p2", Delay: 200 * time.Millisecond})
		a.Route("/p2", testsite.Response{Delay: 100 * time.Millisecond, Body: "p2"})
		c := newClient(n, &gapGate{gap: time.Second})

		// t=0: robots.txt, answered at 0.1 s. /p waits at the gate until 1 s,
		// gets a 503 at 1.05 s asking for 2 s, is retried at 3.05 s (the gate
		// allows it since 2 s), headers at 3.35 s, body dripped until 3.75 s.
		start := time.Now()
		res, err := c.Get(t.Context(), "http://a.test/p")
		require.NoError(t, err)
		assert.Equal(t, "abcde", string(res.Body))
		assert.Equal(t, 300*time.Millisecond, res.TTFB, "the final request's time to first byte")
		assert.Equal(t, 400*time.Millisecond, res.Download, "headers to the end of the body")
		assert.Equal(t, 700*time.Millisecond, res.ResponseTime(), "the server's time only")
		assert.Equal(t, 900*time.Millisecond, res.GateWait)
		assert.Equal(t, 2*time.Second, res.RetryWait)
		assert.Equal(t, 100*time.Millisecond, res.RobotsWait, "robots.txt fetched on the first check")
		assert.Equal(t, 3750*time.Millisecond, res.Total)
		assert.Equal(t, res.Total, elapsed(start))

		// Across a redirect: the gate waits of both hops add up; TTFB is the
		// final hop's; robots.txt is cached. /r waits until 4.05 s and
		// answers at 4.25 s, /p2 waits until 5.05 s and answers at 5.15 s.
		res, err = c.Get(t.Context(), "http://a.test/r")
		require.NoError(t, err)
		assert.Equal(t, "http://a.test/p2", res.FinalURL)
		assert.Equal(t, 100*time.Millisecond, res.TTFB)
		assert.Equal(t, time.Duration(0), res.Download)
		assert.Equal(t, 1100*time.Millisecond, res.GateWait)
		assert.Equal(t, time.Duration(0), res.RetryWait)
		assert.Equal(t, time.Duration(0), res.RobotsWait)
		assert.Equal(t, 1400*time.Millisecond, res.Total)
	})
}

// A final request that got no response has no server time.
func TestResultTimingsOfAFailedRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Robots("")
		a.Route("/stall", testsite.Response{Delay: time.Hour})
		c := newClient(n, fetch.NoLimits{})
		c.Timeout = 2 * time.Second
		res, err := c.Get(t.Context(), "http://a.test/stall")
		require.ErrorIs(t, err, fetch.ErrTimeout)
		assert.Zero(t, res.TTFB)
		assert.Zero(t, res.Download)
		assert.Zero(t, res.ResponseTime())
		assert.Equal(t, 2*time.Second, res.Total)
		assert.Zero(t, (*fetch.Result)(nil).ResponseTime())
	})
}

// readmittingTransport stands for a shared gate's transport that, after the
// Client handed it a request, makes it wait again for politeness before
// sending it, and says so with ReportGateWait.
type readmittingTransport struct {
	base http.RoundTripper
	wait time.Duration
}

func (t readmittingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	time.Sleep(t.wait)
	fetch.ReportGateWait(req.Context(), t.wait)
	return t.base.RoundTrip(req)
}

// A wait that a gate's transport reports is politeness: it counts in
// GateWait and stays out of TTFB and ResponseTime.
func TestReportedTransportWaitIsGateWaitNotServerTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Robots("User-agent: *\nAllow: /\n")
		a.Route("/p", testsite.Response{Delay: 100 * time.Millisecond, Body: "ok"})
		c := newClient(n, &gapGate{})
		c.Robots = allowAll{}
		c.Transport = readmittingTransport{base: n.Transport(), wait: 400 * time.Millisecond}
		res, err := c.Get(t.Context(), "http://a.test/p")
		require.NoError(t, err)
		assert.Equal(t, 100*time.Millisecond, res.TTFB, "the server's time only")
		assert.Equal(t, 100*time.Millisecond, res.ResponseTime())
		assert.Equal(t, 400*time.Millisecond, res.GateWait, "the transport's reported wait")
		assert.Equal(t, 500*time.Millisecond, res.Total)

		// Outside a Client's request it does nothing (and does not panic).
		fetch.ReportGateWait(context.Background(), time.Second)
	})
}
