package fetch_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
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

// observingGate admits everything and records what fetch reports.
type observingGate struct {
	mu  sync.Mutex
	obs []string
	els []time.Duration
}

func (g *observingGate) Acquire(context.Context, *url.URL) (func(), error) { return func() {}, nil }

func (g *observingGate) Observe(u *url.URL, o backoff.Observation) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := u.Path + " " + http.StatusText(o.Status)
	if o.Err != nil {
		s = u.Path + " error"
	}
	g.obs = append(g.obs, s)
	g.els = append(g.els, o.Elapsed)
}

// Every request sent through an Observer gate is reported once, with its
// status (or error) and its time to the end of the body, from every entry
// point: Get (retries too), HTTPClient and Transport.
func TestObserverHearsEveryResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		a := n.Add("a.test")
		a.Robots("")
		a.Route("/slow", testsite.Response{Delay: 700 * time.Millisecond, Body: "x"})
		a.Route("/busy", testsite.Response{Status: 503}, testsite.Response{Body: "ok"})
		g := &observingGate{}
		c := &fetch.Client{Transport: n.Transport(), Gate: g}
		_, err := c.Get(t.Context(), "http://a.test/slow")
		require.NoError(t, err)
		_, err = c.Get(t.Context(), "http://a.test/busy")
		require.NoError(t, err)
		resp, err := c.HTTPClient().Get("http://a.test/slow")
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		tr := &http.Client{Transport: &fetch.Transport{Base: n.Transport(), Gate: g}}
		resp, err = tr.Get("http://a.test/slow")
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		_, err = tr.Get("http://gone.test/")
		require.Error(t, err)
		assert.Equal(t, []string{"/robots.txt OK", "/slow OK", "/busy Service Unavailable", "/busy OK", "/slow OK", "/slow OK", "/ error"}, g.obs)
		assert.Equal(t, 700*time.Millisecond, g.els[1])
		assert.Equal(t, 700*time.Millisecond, g.els[4])
		assert.Equal(t, 700*time.Millisecond, g.els[5])
	})
}
