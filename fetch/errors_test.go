package fetch_test

import (
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/testsite"
)

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
