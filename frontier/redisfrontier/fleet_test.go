package redisfrontier_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier/redisfrontier"
	"github.com/politecrawl/polite/internal/testsite"
)

// makeSites starts n loopback sites with the same small tree each: a home
// page linking to four sections of two pages each, a disallowed path and
// a link into the next site.
func makeSites(t testing.TB, n int, delay time.Duration) []*testsite.Site {
	sites := make([]*testsite.Site, n)
	for i := range sites {
		sites[i] = testsite.New(t)
	}
	for i, s := range sites {
		next := sites[(i+1)%n]
		s.Robots("User-agent: *\nDisallow: /private/\n")
		page := func(path, body string) {
			s.Route(path, testsite.Response{Delay: delay, ContentType: "text/html", Body: body})
		}
		page("/", `<a href="/p1">1</a><a href="/p2">2</a><a href="/p3">3</a><a href="/p4">4</a>`+
			`<a href="/private/x">x</a><a href="`+next.URL()+`/p1">next</a>`)
		for k := 1; k <= 4; k++ {
			page(fmt.Sprintf("/p%d", k), fmt.Sprintf(`<a href="/p%d/a">a</a><a href="/p%d/b">b</a><a href="/">home</a>`, k, k))
			for _, leaf := range []string{"a", "b"} {
				page(fmt.Sprintf("/p%d/%s", k, leaf), fmt.Sprintf(`<a href="/p%d">up</a>`, k))
			}
		}
	}
	return sites
}

func startURLs(sites []*testsite.Site) []string {
	var s []string
	for _, site := range sites {
		s = append(s, site.URL()+"/")
	}
	return s
}

// pagesBySite turns fetched URLs into "site index + path" keys.
func pagesBySite(t testing.TB, sites []*testsite.Site, pages []fetched) []string {
	var keys []string
	for _, p := range pages {
		found := false
		for i, s := range sites {
			if path, ok := strings.CutPrefix(p.URL, s.URL()); ok {
				keys = append(keys, fmt.Sprintf("%02d%s", i, path))
				found = true
				break
			}
		}
		if !found {
			t.Errorf("fetched %s, on no site", p.URL)
		}
	}
	sort.Strings(keys)
	return keys
}

// TestFleetOfFourProcesses: four worker processes crawl twenty loopback
// sites through one Redis. Every site sees at most its in-flight limit
// and never two requests arriving closer than its gap (less
// startTolerance) at its kernel, across all workers; the gate spaced
// admissions by gap + StartWindow on the Redis clock and every request
// arrived within StartWindow (+ startTolerance) of its admission; no URL
// is fetched twice, and the union of the workers' pages equals a
// single-process crawl of the same sites.
func TestFleetOfFourProcesses(t *testing.T) {
	srv, rdb := startRedis(t)
	const nSites, gap, inFlight, window = 20, 50 * time.Millisecond, 2, 10 * time.Millisecond
	lim := redisfrontier.Limits{MaxDepth: 5, InFlight: inFlight, Gap: gap}
	sites := makeSites(t, nSites, 5*time.Millisecond)
	dir := t.TempDir()
	var procs []*proc
	for i := range 4 {
		procs = append(procs, startProc(t, workerSpec{
			Redis: srv.URL(), Crawl: "fleet", Starts: startURLs(sites), Goroutines: 4,
			Lease: 10 * time.Second, Limits: lim, StartWindow: window,
			Out: filepath.Join(dir, fmt.Sprintf("w%d.jsonl", i)), Admits: filepath.Join(dir, fmt.Sprintf("a%d.jsonl", i)),
		}))
	}
	var pages []fetched
	var admits []admit
	for i, p := range procs {
		require.NoError(t, p.wait(t, 60*time.Second), "worker %d: %s", i, p.stderr)
		got := readJSONLines[fetched](t, filepath.Join(dir, fmt.Sprintf("w%d.jsonl", i)))
		assert.NotEmpty(t, got, "worker %d fetched nothing", i)
		pages = append(pages, got...)
		admits = append(admits, readJSONLines[admit](t, filepath.Join(dir, fmt.Sprintf("a%d.jsonl", i)))...)
	}

	// The same crawl in one process, on twin sites.
	single := makeSites(t, nSites, 5*time.Millisecond)
	cfg := redisfrontier.DefaultConfig("single")
	cfg.Site = lim
	w := newWorker(t, rdb, cfg)
	ctx := shortCtx(t, 60*time.Second)
	for _, s := range startURLs(single) {
		w.f.Add(ctx, s, 0, "")
	}
	var mu sync.Mutex
	var one []fetched
	require.NoError(t, w.crawl(ctx, 4, func(p fetched) { mu.Lock(); one = append(one, p); mu.Unlock() }))
	assert.Equal(t, pagesBySite(t, single, one), pagesBySite(t, sites, pages), "fleet union = single-process crawl")
	assert.Len(t, one, nSites*13)

	// Gate side, on the one clock: admissions to a site (first ones and
	// those of requests that missed their window) gap + window apart.
	bySite := map[string][]int64{}
	admitted := map[string][]int64{} // URL -> its admissions
	lateStart := map[string]bool{}   // URLs whose worker recorded a late start
	again := 0
	for _, a := range admits {
		if a.Msg == "redisfrontier.late_start" {
			lateStart[a.URL] = true
			continue
		}
		bySite[a.Site] = append(bySite[a.Site], a.AtUS)
		admitted[a.URL] = append(admitted[a.URL], a.AtUS)
		if a.Again {
			again++
		}
	}
	assert.Len(t, bySite, nSites)
	minAdmit := time.Hour
	for site, at := range bySite {
		slices.Sort(at)
		for k := 1; k < len(at); k++ {
			d := time.Duration(at[k]-at[k-1]) * time.Microsecond
			minAdmit = min(minAdmit, d)
			assert.GreaterOrEqual(t, d, gap+window, "site %s: admissions %d and %d", site, k-1, k)
		}
	}

	// Site side, at each site's kernel: the promise a site owner reads.
	minGap, maxLate := time.Hour, time.Duration(0)
	for i, s := range sites {
		assert.LessOrEqual(t, s.MaxInFlight(), inFlight, "site %d in flight", i)
		assert.Equal(t, 1, s.Count("/robots.txt"), "site %d: one robots.txt for the fleet", i)
		reqs := s.Requests()
		counts := map[string]int{}
		for _, r := range reqs {
			counts[r.Path]++
			// The start window: each request left within it of its
			// admission (Redis and the kernel read the same clock here),
			// unless its worker stalled after the last check and said so.
			u := s.URL() + r.Path
			adm := slices.Max(append(admitted[u], 0))
			if assert.NotZero(t, adm, "site %d: %s arrived without an admission", i, r.Path) && !lateStart[u] {
				late := r.Arrived.Sub(time.UnixMicro(adm))
				maxLate = max(maxLate, late)
				assert.Less(t, late, window+startTolerance, "site %d: %s arrived %v after its admission", i, r.Path, late)
				assert.GreaterOrEqual(t, late, time.Duration(0), "site %d: %s arrived before its admission", i, r.Path)
			}
		}
		for path, n := range counts {
			if path != "/robots.txt" {
				assert.Equal(t, 1, n, "site %d: %s requested %d times", i, path, n)
			}
		}
		at := arrivals(t, reqs)
		for k := 1; k < len(at); k++ {
			d := at[k].Sub(at[k-1])
			minGap = min(minGap, d)
			assert.GreaterOrEqual(t, d, gap-startTolerance, "site %d: requests %d and %d arrived %v apart", i, k-1, k, d)
		}
	}
	t.Logf("%d pages by 4 workers, %d admitted again, %d late starts recorded; least gap between admissions to one site %v, between arrivals %v; latest arrival after admission %v",
		len(pages), again, len(lateStart), minAdmit, minGap, maxLate)
}
