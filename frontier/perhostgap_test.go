package frontier_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/internal/testsite"
)

// startsBySite returns, per site, the start times the server saw as
// offsets from the first request of the network.
func startsBySite(reqs []testsite.Request) map[string][]time.Duration {
	out := map[string][]time.Duration{}
	for _, r := range reqs {
		out[r.Site] = append(out[r.Site], r.Time.Sub(reqs[0].Time))
	}
	return out
}

// PerHostGap spaces the starts on each host; other hosts fill the time in
// between, so the run goes as fast as the hosts together allow.
func TestPerHostGapSpacesEachHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := testsite.NewNetwork(t, testsite.InMemory)
		a := net.Add("a.test")
		a.Route("/*", testsite.Response{Body: "a"})
		b := net.Add("b.test")
		b.Route("/*", testsite.Response{Body: "b"})
		cfg := frontier.DefaultConfig()
		cfg.Gap, cfg.PerHostGap = 0, 2*time.Second
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		addPages(t, f, a.URL(), 4, "a")
		addPages(t, f, b.URL(), 4, "b")

		crawl(t, f, net.Transport(), 4, nil)

		want := []time.Duration{0, 2 * time.Second, 4 * time.Second, 6 * time.Second}
		got := startsBySite(net.Requests())
		assert.Equal(t, want, got["a.test"])
		assert.Equal(t, want, got["b.test"], "b is not held back by a's gap")
	})
}

// PerHostGap adds to Gap: starts are Gap apart run-wide and PerHostGap
// apart on one host.
func TestPerHostGapOnTopOfGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := testsite.NewNetwork(t, testsite.InMemory)
		a := net.Add("a.test")
		a.Route("/*", testsite.Response{Body: "a"})
		b := net.Add("b.test")
		b.Route("/*", testsite.Response{Body: "b"})
		cfg := frontier.DefaultConfig()
		cfg.Gap, cfg.PerHostGap = 500*time.Millisecond, 2*time.Second
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		addPages(t, f, a.URL(), 3, "a")
		addPages(t, f, b.URL(), 3, "b")

		crawl(t, f, net.Transport(), 4, nil)

		got := startsBySite(net.Requests())
		ms := time.Millisecond
		assert.Equal(t, []time.Duration{0, 2000 * ms, 4000 * ms}, got["a.test"])
		assert.Equal(t, []time.Duration{500 * ms, 2500 * ms, 4500 * ms}, got["b.test"])
	})
}

// PerHostGap binds every request to the host that passes the gate, not
// only items Next hands out: robots.txt, retries and sitemaps wait too.
func TestPerHostGapAppliesToAcquire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := testsite.NewNetwork(t, testsite.InMemory)
		a := net.Add("a.test")
		a.Route("/*", testsite.Response{Body: "a"})
		b := net.Add("b.test")
		b.Route("/*", testsite.Response{Body: "b"})
		cfg := frontier.DefaultConfig()
		cfg.Gap, cfg.PerHostGap = 0, 3*time.Second
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		client := &http.Client{Transport: &fetch.Transport{Base: net.Transport(), Gate: f}}
		for _, u := range []string{a.URL() + "/robots.txt", b.URL() + "/robots.txt", a.URL() + "/sitemap.xml", a.URL() + "/retry"} {
			resp, err := client.Get(u)
			require.NoError(t, err)
			resp.Body.Close()
		}
		got := startsBySite(net.Requests())
		assert.Equal(t, []time.Duration{0, 3 * time.Second, 6 * time.Second}, got["a.test"])
		assert.Equal(t, []time.Duration{0}, got["b.test"])
	})
}

// A host waiting out its PerHostGap does not take the run's only slot:
// Next hands out an item only when its host may start, so a URL of
// another host added meanwhile goes first.
func TestPerHostGapDoesNotHoldBackOtherHosts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := testsite.NewNetwork(t, testsite.InMemory)
		a := net.Add("a.test")
		a.Route("/*", testsite.Response{Body: "a"})
		b := net.Add("b.test")
		b.Route("/*", testsite.Response{Body: "b"})
		cfg := frontier.DefaultConfig()
		cfg.MaxInFlight, cfg.Gap, cfg.PerHostGap = 1, 0, 10*time.Second
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		addPages(t, f, a.URL(), 3, "a")
		time.AfterFunc(time.Second, func() { f.Add(t.Context(), b.URL()+"/b0", 0, "") })

		crawl(t, f, net.Transport(), 1, nil)

		got := startsBySite(net.Requests())
		assert.Equal(t, []time.Duration{0, 10 * time.Second, 20 * time.Second}, got["a.test"])
		assert.Equal(t, []time.Duration{time.Second}, got["b.test"], "b went as soon as it was added")
	})
}
