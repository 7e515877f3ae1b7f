package fetch_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/testsite"
)

// slowFirstDial returns tr with its first dial taking d longer: the new
// connection's connect (or TLS handshake) that delays a request's bytes
// well past the moment the gate admitted it.
func slowFirstDial(tr *http.Transport, d time.Duration) *http.Transport {
	dial := tr.DialContext
	var n atomic.Int32
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if n.Add(1) == 1 {
			time.Sleep(d)
		}
		return dial(ctx, network, addr)
	}
	return tr
}

// The gap holds where the site sees it: the first request spends most of
// the gap dialing after its admission, yet the second, on the idle
// connection it left, reaches the site a whole gap after the first did,
// not a gap after the first was admitted. The extra wait is politeness
// (GateWait), not the server's time (TTFB). Every way of sending a
// request is covered: Get, HTTPClient, and the bare Transport.
func TestGapHoldsFromRequestStartNotAdmission(t *testing.T) {
	const gap, dial = 1 * time.Second, 700 * time.Millisecond
	send := map[string]func(t *testing.T, gate fetch.Gate, tr *http.Transport, url string){
		"Get": func(t *testing.T, gate fetch.Gate, tr *http.Transport, url string) {
			c := &fetch.Client{Gate: gate, Transport: tr, Robots: allowAll{}}
			_, err := c.Get(t.Context(), url+"/a")
			require.NoError(t, err)
			res, err := c.Get(t.Context(), url+"/b")
			require.NoError(t, err)
			assert.GreaterOrEqual(t, res.GateWait, dial, "the start check's wait is GateWait")
			assert.Less(t, res.TTFB, dial/2, "and not the server's time")
		},
		"HTTPClient": func(t *testing.T, gate fetch.Gate, tr *http.Transport, url string) {
			hc := (&fetch.Client{Gate: gate, Transport: tr, Robots: allowAll{}}).HTTPClient()
			for _, p := range []string{"/a", "/b"} {
				resp, err := hc.Get(url + p)
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, resp.Body)
				require.NoError(t, resp.Body.Close())
			}
		},
		"Transport": func(t *testing.T, gate fetch.Gate, tr *http.Transport, url string) {
			hc := &http.Client{Transport: &fetch.Transport{Gate: gate, Base: tr}}
			for _, p := range []string{"/a", "/b"} {
				resp, err := hc.Get(url + p)
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, resp.Body)
				require.NoError(t, resp.Body.Close())
			}
		},
	}
	for name, send := range send {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := testsite.NewInMemory(t)
				s.Route("/*", testsite.Response{Body: "x"})
				send(t, &fetch.HostGate{Gap: gap}, slowFirstDial(s.Transport(), dial), s.URL())
				ts := starts(s)
				require.Len(t, ts, 2)
				assert.GreaterOrEqual(t, ts[1].Sub(ts[0]), gap, "the site saw the second request %v after the first", ts[1].Sub(ts[0]))
			})
		})
	}
}

// The zero client's own gate, robots.txt included: robots.txt is fetched
// on a slow new connection, and the page after it still arrives a whole
// DefaultHostGap later.
func TestDefaultGapHoldsAfterSlowRobotsDial(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testsite.NewInMemory(t)
		s.Robots("")
		s.HTML("/", "hi")
		c := &fetch.Client{Transport: slowFirstDial(s.Transport(), 800*time.Millisecond)}
		_, err := c.Get(t.Context(), s.URL()+"/")
		require.NoError(t, err)
		ts := starts(s)
		require.Equal(t, []string{"/robots.txt", "/"}, s.Paths())
		assert.GreaterOrEqual(t, ts[1].Sub(ts[0]), fetch.DefaultHostGap)
	})
}

// On real loopback sockets, measured at the site's kernel
// (Request.Arrived): a new connection whose dial is held back most of the
// gap does not bring the next request closer than the gap.
func TestGapHoldsAtTheSitesKernel(t *testing.T) {
	const gap, dial = 300 * time.Millisecond, 200 * time.Millisecond
	s := testsite.New(t)
	s.Route("/*", testsite.Response{Body: "x"})
	c := &fetch.Client{Gate: &fetch.HostGate{Gap: gap}, Transport: slowFirstDial(s.Transport(), dial), Robots: allowAll{}}
	for _, p := range []string{"/", "/item/0", "/item/1"} {
		_, err := c.Get(t.Context(), s.URL()+p)
		require.NoError(t, err)
	}
	reqs := s.Requests()
	require.Len(t, reqs, 3)
	for i := 1; i < len(reqs); i++ {
		a, b := reqs[i-1].Arrived, reqs[i].Arrived
		if a.IsZero() || b.IsZero() {
			a, b = reqs[i-1].Time, reqs[i].Time // no kernel timestamps on this platform
		}
		assert.GreaterOrEqual(t, b.Sub(a), gap-time.Millisecond, "%s → %s arrived %v apart", reqs[i-1].Path, reqs[i].Path, b.Sub(a))
	}
}
