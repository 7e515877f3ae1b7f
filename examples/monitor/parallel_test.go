package main

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/testsite"
)

// TestParallel256KeepsPerHostGate: -parallel 256 puts up to 256 hosts in
// flight at once, and each host still gets one request at a time, the gap
// apart (the ceiling was 16 hosts).
func TestParallel256KeepsPerHostGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		var sites []*testsite.Site
		var urls []string
		for h := range 300 {
			s := n.Add(fmt.Sprintf("h%03d.test", h))
			s.Robots("User-agent: *\nAllow: /\n")
			for i := range 3 {
				p := fmt.Sprintf("/%d", i)
				// Slower than the gap: only the one-at-a-time rule keeps two
				// requests to one host apart.
				s.Route(p, testsite.Response{ContentType: "text/html", Body: htmlPage(p, "x"), Delay: 1500 * time.Millisecond})
				urls = append(urls, "http://"+s.Host()+p)
			}
			sites = append(sites, s)
		}
		db := tempDB(t)
		e := env{transport: n.Transport()}
		code, _, errOut := cli(t, e, append([]string{"track", "-db", db}, urls...)...)
		require.Equal(t, exitOK, code, errOut)

		code, out, errOut := cli(t, e, "run", "-db", db, "-gap", "1s", "-parallel", "256", "-catch-up", fmt.Sprint(maxCatchUp))
		require.Equal(t, exitOK, code, errOut)
		assert.Contains(t, out, "run: 900 due, 900 snapshots (0 with errors)")
		for _, s := range sites {
			reqs := s.Requests()
			require.Len(t, reqs, 4, "robots.txt and three pages")
			assert.Equal(t, 1, s.MaxInFlight(), "one request at a time per host")
			for i := 1; i < len(reqs); i++ {
				assert.GreaterOrEqual(t, reqs[i].Time.Sub(reqs[i-1].Time), time.Second, "%s %s", s.Host(), reqs[i].Path)
				assert.False(t, reqs[i].Time.Before(reqs[i-1].End), "%s %s overlaps", s.Host(), reqs[i].Path)
			}
		}
		assert.Equal(t, 256, n.MaxInFlight(), "256 hosts in parallel, no more")
	})
}
