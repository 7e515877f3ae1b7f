package fetch_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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

// starts returns the fake times at which site s saw its requests, in order.
func starts(s *testsite.Site) []time.Time {
	var out []time.Time
	for _, r := range s.Requests() {
		out = append(out, r.Time)
	}
	return out
}

// requireSpaced checks that consecutive starts are at least gap apart.
func requireSpaced(t *testing.T, host string, ts []time.Time, gap time.Duration) {
	t.Helper()
	for i := 1; i < len(ts); i++ {
		assert.GreaterOrEqual(t, ts[i].Sub(ts[i-1]), gap, "%s: request %d started %v after request %d", host, i+1, ts[i].Sub(ts[i-1]), i)
	}
}

// The zero-value client is polite per host: one request in flight and 1 s
// between request starts to one host (robots.txt included), while another
// host is not held back. Only the transport is set, to reach the in-memory
// sites; the gate is the client's own default.
func TestZeroClientIsPolitePerHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		sites := map[string]*testsite.Site{"a.test": n.Add("a.test"), "b.test": n.Add("b.test")}
		for _, s := range sites {
			s.Robots("")
			for i := range 3 {
				s.Page(fmt.Sprintf("/p%d", i), "text/plain", "x")
			}
		}
		c := &fetch.Client{Transport: n.Transport()}
		t0 := time.Now()
		var wg sync.WaitGroup
		for host := range sites {
			for i := range 3 {
				wg.Go(func() {
					_, err := c.Get(t.Context(), fmt.Sprintf("http://%s/p%d", host, i))
					assert.NoError(t, err)
				})
			}
		}
		wg.Wait()
		for host, s := range sites {
			ts := starts(s)
			require.Len(t, ts, 4, host)
			assert.Equal(t, t0, ts[0], "%s: its first request waits for no other host", host)
			requireSpaced(t, host, ts, fetch.DefaultHostGap)
			assert.Equal(t, 1, s.MaxInFlight(), host)
		}
		assert.Equal(t, 3*fetch.DefaultHostGap, time.Since(t0), "two hosts crawled side by side, each at 1 request per second")
	})
}

// The user of the issue sent 10 requests in 1 ms through HTTPClient of a
// bare client: now they are 1 s apart. The zero Transport is polite too.
func TestZeroClientHTTPClientAndZeroTransportArePolite(t *testing.T) {
	for _, tc := range []struct {
		name string
		hc   func(n *testsite.Network) *http.Client
	}{
		{"Client.HTTPClient", func(n *testsite.Network) *http.Client {
			return (&fetch.Client{Transport: n.Transport()}).HTTPClient()
		}},
		{"Transport", func(n *testsite.Network) *http.Client {
			return &http.Client{Transport: &fetch.Transport{Base: n.Transport()}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := testsite.NewNetwork(t, testsite.InMemory)
				a := n.Add("a.test")
				a.Robots("")
				a.Page("/", "text/plain", "x")
				hc := tc.hc(n)
				var wg sync.WaitGroup
				for range 10 {
					wg.Go(func() {
						resp, err := hc.Get("http://a.test/")
						if assert.NoError(t, err) {
							_, _ = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					})
				}
				wg.Wait()
				assert.Equal(t, 10, a.Count("/"))
				requireSpaced(t, "a.test", starts(a), fetch.DefaultHostGap)
				assert.Equal(t, 1, a.MaxInFlight())
			})
		})
	}
}

// A client with no field set at all, on a real loopback server: the
// server's own clock sees the requests at least the default gap apart
// (less a margin for how long each took to reach it after the gate).
func TestZeroClientOnLoopback(t *testing.T) {
	var mu sync.Mutex
	var seen []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, time.Now())
		mu.Unlock()
	}))
	defer srv.Close()
	c := &fetch.Client{}
	for i := range 2 {
		_, err := c.Get(t.Context(), fmt.Sprintf("%s/p%d", srv.URL, i))
		require.NoError(t, err)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 3, "robots.txt and two pages")
	requireSpaced(t, "loopback", seen, fetch.DefaultHostGap-200*time.Millisecond)
}

// NoLimits is the explicit "no limits": ten requests to one host start at
// the same instant.
func TestNoLimitsAdmitsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Robots("")
		a.Route("/", testsite.Response{Delay: time.Second})
		c := &fetch.Client{Transport: n.Transport(), Gate: fetch.NoLimits{}}
		t0 := time.Now()
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				_, err := c.Get(t.Context(), "http://a.test/")
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		assert.Equal(t, time.Second, time.Since(t0))
		assert.Equal(t, 10, a.MaxInFlight())
	})
}

// A HostGate with its own limits, built without any frontier.
func TestHostGateLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Robots("")
		a.Route("/", testsite.Response{Delay: 2 * time.Second})
		c := &fetch.Client{Transport: n.Transport(), Gate: &fetch.HostGate{InFlight: 2, Gap: 500 * time.Millisecond}}
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				_, err := c.Get(t.Context(), "http://a.test/")
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		assert.Equal(t, 2, a.MaxInFlight())
		requireSpaced(t, "a.test", starts(a), 500*time.Millisecond)
	})
}

// A wait at the gate ends with the context, naming the URL.
func TestHostGateWaitEndsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &fetch.HostGate{}
		u, _ := url.Parse("http://a.test/x")
		rel, err := g.Acquire(t.Context(), u)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		_, err = g.Acquire(ctx, u)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), "http://a.test/x")
		rel()
		rel() // a second release does nothing
		// Default ports and host case do not make another host.
		u2, _ := url.Parse("http://A.test:80/y")
		t0 := time.Now()
		rel, err = g.Acquire(t.Context(), u2)
		require.NoError(t, err)
		rel()
		assert.Equal(t, fetch.DefaultHostGap-300*time.Millisecond, time.Since(t0), "the rest of the gap since the first start")
	})
}
