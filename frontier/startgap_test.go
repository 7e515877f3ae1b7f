package frontier_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/internal/testsite"
)

// The frontier's gaps hold where the sites see them: the first request
// spends most of the run's gap dialing after its admission, yet the next
// requests (to the same host on the idle connection, and to another host)
// each reach their site a whole gap after the one before, not a gap after
// its admission. The wait is the request's GateWait.
func TestGapHoldsFromRequestStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const gap, dial = time.Second, 700 * time.Millisecond
		n := testsite.NewNetwork(t, testsite.InMemory)
		for _, h := range []string{"a.test", "b.test"} {
			s := n.Add(h)
			s.Robots("")
			s.Route("/*", testsite.Response{Body: "x"})
		}
		tr := n.Transport()
		base := tr.DialContext
		var dials atomic.Int32
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dials.Add(1) == 1 {
				time.Sleep(dial)
			}
			return base(ctx, network, addr)
		}
		client := &fetch.Client{Transport: tr}
		cfg := frontier.DefaultConfig()
		cfg.Gap, cfg.PerHostGap, cfg.Client = gap, 0, client
		_, err := frontier.New(cfg)
		require.NoError(t, err)
		for _, u := range []string{"http://a.test/", "http://a.test/item/0", "http://b.test/"} {
			res, err := client.Get(t.Context(), u)
			require.NoError(t, err)
			assert.Less(t, res.TTFB, dial/2, "%s: the start check's wait is not the server's time", u)
		}
		reqs := n.Requests()
		for i := 1; i < len(reqs); i++ {
			d := reqs[i].Time.Sub(reqs[i-1].Time)
			assert.GreaterOrEqual(t, d, gap, "%s%s → %s%s arrived %v apart", reqs[i-1].Site, reqs[i-1].Path, reqs[i].Site, reqs[i].Path, d)
		}
	})
}
