package fetch_test

import (
	"io"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/testsite"
)

// gatedBusySite serves /busy with 429, 503 and then 200, and checks, as
// each request arrives, that the gate admitted it: the gate must have
// counted at least as many acquisitions for /busy as the server has seen
// requests for it.
func gatedBusySite(t *testing.T, n *testsite.Network, g *testGate) *testsite.Site {
	a := n.Add("a.test")
	a.Robots("")
	hits := 0
	a.Handle("/busy", func(w http.ResponseWriter, r *http.Request) {
		hits++
		admitted := 0
		for _, u := range g.Acquired() {
			if u == "http://a.test/busy" {
				admitted++
			}
		}
		if admitted < hits {
			t.Errorf("request %d for /busy reached the server after %d acquisitions", hits, admitted)
		}
		switch hits {
		case 1:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		case 2:
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			_, _ = io.WriteString(w, "ok")
		}
	})
	return a
}

// The promise "the gate is passed before every single request, retries
// included": counted at the gate, not at the server.
func TestGatePassedBeforeEveryRetry(t *testing.T) {
	t.Run("Get", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			n := testsite.NewNetwork(t, testsite.InMemory)
			g := newGate(t, 1)
			a := gatedBusySite(t, n, g)
			c := newClient(n, g)
			res, err := c.Get(t.Context(), "http://a.test/busy")
			require.NoError(t, err)
			assert.Equal(t, "ok", string(res.Body))
			assert.Len(t, res.Attempts, 3)
			assert.Equal(t, []string{"http://a.test/robots.txt", "http://a.test/busy", "http://a.test/busy", "http://a.test/busy"}, g.Acquired())
			assert.Equal(t, 3, a.Count("/busy"))
		})
	})
	t.Run("RoundTripper", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			n := testsite.NewNetwork(t, testsite.InMemory)
			g := newGate(t, 1)
			a := gatedBusySite(t, n, g)
			c := newClient(n, g)
			req, err := http.NewRequest(http.MethodGet, "http://a.test/busy", nil)
			require.NoError(t, err)
			resp, err := c.RoundTripper().RoundTrip(req)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, "ok", string(body))
			busy := slices.DeleteFunc(g.Acquired(), func(u string) bool { return u != "http://a.test/busy" })
			assert.Len(t, busy, 3, "one acquisition per attempt")
			assert.Equal(t, 3, a.Count("/busy"))
		})
	})
}
