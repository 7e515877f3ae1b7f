package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier/redisfrontier/redistest"
	"github.com/politecrawl/polite/internal/testsite"
)

// fleetSite is a loopback shop: a home page, n items linking back, and a
// /cart robots.txt disallows (every page links to it).
func fleetSite(t *testing.T, n int) *testsite.Site {
	s := testsite.New(t)
	s.Robots("User-agent: *\nDisallow: /cart\n")
	links := []string{"/cart"}
	for k := range n {
		p := fmt.Sprintf("/item/%d", k)
		links = append(links, p)
		s.Route(p, testsite.Response{ContentType: "text/html", Body: page(p, "/", "/cart"), Delay: 20 * time.Millisecond})
	}
	s.Route("/", testsite.Response{ContentType: "text/html", Body: page("Shop", links...), Delay: 20 * time.Millisecond})
	return s
}

// fleetPage is the part of an output line the tests read.
type fleetPage struct {
	URL    string `json:"url"`
	Status int    `json:"status"`
	Worker string `json:"worker"`
}

func readFleetOut(t *testing.T, path string) []fleetPage {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []fleetPage
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var p fleetPage
		require.NoError(t, json.Unmarshal(sc.Bytes(), &p), sc.Text())
		out = append(out, p)
	}
	return out
}

func urlsOf(pages []fleetPage) []string {
	var u []string
	for _, p := range pages {
		u = append(u, p.URL)
	}
	slices.Sort(u)
	return u
}

// TestFleetOneProcess: `fleet -sites sites.txt` in memory, with the
// default limits for one site (4 in flight, 300 ms between request
// starts) and its own for the other; robots.txt first and once per site,
// /cart never requested, the CrawlCove-Crawler user agent.
func TestFleetOneProcess(t *testing.T) {
	t.Parallel()
	tol := gapTolerance(t)
	a, b := fleetSite(t, 4), fleetSite(t, 4)
	dir := t.TempDir()
	writeFile(t, dir, "sites.txt", "# shops\n"+a.URL()+"/\n"+b.URL()+"/ pages=3 inflight=1 gap=40ms\n")
	r := run(t, "fleet", opts{dir: dir}, "-sites", "sites.txt", "-out", "out.jsonl", "-progress", "0")
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "fleet: crawl complete")
	assert.Contains(t, r.stderr, "fleet: final: 2 sites")
	got := urlsOf(readFleetOut(t, filepath.Join(dir, "out.jsonl")))
	assert.Len(t, got, 5+3, "%v", got)
	assert.Equal(t, slices.Compact(slices.Clone(got)), got, "no page fetched twice")
	for _, s := range []*testsite.Site{a, b} {
		reqs := s.Requests()
		require.NotEmpty(t, reqs)
		assert.Equal(t, "/robots.txt", reqs[0].Path)
		assert.Equal(t, 1, s.Count("/robots.txt"))
		assertNever(t, reqs, "/cart")
		assertIdentity(t, reqs, auditUA, "")
	}
	assertGaps(t, a.Requests(), 300*time.Millisecond, tol)
	assert.LessOrEqual(t, a.MaxInFlight(), 4)
	assertGaps(t, b.Requests(), 40*time.Millisecond, tol)
	assert.Equal(t, 1, b.MaxInFlight())

	for _, args := range [][]string{{}, {"-sites", "missing.txt"}} {
		r := run(t, "fleet", opts{dir: dir}, args...)
		assert.Equal(t, 2, r.code, "%v: %s", args, r)
	}
}

// startRedis starts a redis-server of the test's own on a free loopback
// port (skipped with the install hint, failed under CI, when missing).
func startRedis(t *testing.T) *redistest.Server { return redistest.Start(t, redistest.Options{}) }

// TestFleetRedisWorkers: three worker processes on one Redis crawl two
// sites once between them, with each site's limits held across all the
// workers together as the sites' kernels saw the requests.
func TestFleetRedisWorkers(t *testing.T) {
	t.Parallel()
	tol := gapTolerance(t)
	rs := startRedis(t)
	a, b := fleetSite(t, 6), fleetSite(t, 6)
	dir := t.TempDir()
	writeFile(t, dir, "sites.txt", a.URL()+"/ inflight=2 gap=50ms\n"+b.URL()+"/ inflight=1 gap=50ms\n")
	var procs []*proc
	for i := range 3 {
		args := []string{"-sites", "sites.txt", "-redis", rs.URL(), "-crawl", "shops", "-progress", "200ms", "-out", fmt.Sprintf("w%d.jsonl", i)}
		if i == 0 {
			args = append(args, "-log", "w0.log")
		}
		procs = append(procs, start(t, "fleet", opts{dir: dir}, args...))
	}
	var all []fleetPage
	for i, p := range procs {
		r := p.wait()
		require.Equal(t, 0, r.code, "worker %d: %s", i, r)
		assert.Contains(t, r.stdout, "fleet: crawl complete")
		assert.Contains(t, r.stderr, "fleet: final: 2 sites", "fleet-wide progress")
		all = append(all, readFleetOut(t, filepath.Join(dir, fmt.Sprintf("w%d.jsonl", i)))...)
	}
	got := urlsOf(all)
	assert.Len(t, got, 14, "%v", got)
	assert.Equal(t, slices.Compact(slices.Clone(got)), got, "each page fetched once by the whole fleet")
	for i, s := range []*testsite.Site{a, b} {
		reqs := s.Requests()
		assert.Equal(t, "/robots.txt", reqs[0].Path, "site %d", i)
		assert.Equal(t, 1, s.Count("/robots.txt"), "site %d: one robots.txt for the fleet", i)
		assertNever(t, reqs, "/cart")
		assertIdentity(t, reqs, auditUA, "")
		assertGaps(t, reqs, 50*time.Millisecond, tol)
	}
	assert.LessOrEqual(t, a.MaxInFlight(), 2)
	assert.Equal(t, 1, b.MaxInFlight())
	log, err := os.ReadFile(filepath.Join(dir, "w0.log"))
	require.NoError(t, err)
	assert.Contains(t, string(log), `"msg":"redisfrontier.admit"`, "-log has the gate's admissions")
}

// TestFleetOutputUnwritable: a worker whose -out cannot be written
// (/dev/full: every write fails with ENOSPC) exits non-zero, and its items
// return to the queue, so another worker crawls every page. Expected to
// fail until the redis branch merges: on main the write errors are
// ignored, the worker exits 0 and its pages are lost.
func TestFleetOutputUnwritable(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here")
	}
	rs := startRedis(t)
	s := fleetSite(t, 4)
	dir := t.TempDir()
	writeFile(t, dir, "sites.txt", s.URL()+"/ gap=0\n")
	common := []string{"-sites", "sites.txt", "-redis", rs.URL(), "-crawl", "full", "-progress", "0", "-lease", "1s"}
	r := run(t, "fleet", opts{dir: dir}, append(common, "-out", "/dev/full")...)
	assert.NotEqual(t, 0, r.code, "a worker that cannot write its output fails: %s", r)
	assert.Regexp(t, `(?i)/dev/full|no space`, r.stderr, "the error names the file or the cause")
	assert.NotContains(t, r.stdout, "fleet: crawl complete")

	r = run(t, "fleet", opts{dir: dir}, append(common, "-out", "w2.jsonl")...)
	require.Equal(t, 0, r.code, r)
	got := urlsOf(readFleetOut(t, filepath.Join(dir, "w2.jsonl")))
	want := []string{s.URL() + "/"}
	for k := range 4 {
		want = append(want, fmt.Sprintf("%s/item/%d", s.URL(), k))
	}
	slices.Sort(want)
	assert.Equal(t, want, got, "the pages the first worker could not write were crawled again: nothing lost")
	assert.False(t, strings.Contains(r.stderr, "crawl state lost"), r.stderr)
}
