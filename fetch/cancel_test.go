package fetch_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/testsite"
)

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
