package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier/redisfrontier"
	"github.com/politecrawl/polite/frontier/redisfrontier/redistest"
	"github.com/politecrawl/polite/internal/testsite"
)

var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// fleetBinary builds the program with go build, as the README does, once
// per test process, and returns the binary's path (removed by TestMain).
func fleetBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "fleet-bin-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "fleet")
		if out, err := exec.Command("go", "build", "-o", built.path, ".").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, built.err)
	return built.path
}

func removeBuiltBinary() {
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
}

// catalogSites starts n loopback sites of a home page linking to items
// pages, each linking home and to /cart, which robots.txt disallows:
// 1 + items pages a site.
func catalogSites(t *testing.T, n, items int) []*testsite.Site {
	sites := make([]*testsite.Site, n)
	for i := range sites {
		s := testsite.New(t)
		s.Robots("User-agent: *\nDisallow: /cart\n")
		var home strings.Builder
		for k := range items {
			fmt.Fprintf(&home, `<a href="/item/%d">item %d</a>`, k, k)
			s.Route(fmt.Sprintf("/item/%d", k), testsite.Response{Delay: 5 * time.Millisecond, ContentType: "text/html",
				Body: `<a href="/">home</a><a href="/cart">cart</a>`})
		}
		s.Route("/", testsite.Response{Delay: 5 * time.Millisecond, ContentType: "text/html", Body: home.String()})
		sites[i] = s
	}
	return sites
}

// fleetProc is a worker process of the built binary.
type fleetProc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	out            string
}

// startFleet starts n workers of the built binary with args, each writing
// its pages to its own file in dir; they are killed if ctx ends first.
func startFleet(t *testing.T, ctx context.Context, dir string, n int, args ...string) []*fleetProc {
	t.Helper()
	bin := fleetBinary(t)
	var procs []*fleetProc
	for i := range n {
		p := &fleetProc{out: filepath.Join(dir, "w"+strconv.Itoa(i)+".jsonl")}
		p.cmd = exec.CommandContext(ctx, bin, append(slices.Clone(args), "-out", p.out)...)
		p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
		require.NoError(t, p.cmd.Start())
		procs = append(procs, p)
	}
	return procs
}

// waitFleet waits for every worker to exit with "crawl complete" and
// returns the pages they wrote.
func waitFleet(t *testing.T, procs []*fleetProc) []page {
	t.Helper()
	var all []page
	for i, p := range procs {
		require.NoError(t, p.cmd.Wait(), "worker %d: %s", i, &p.stderr)
		assert.Contains(t, p.stdout.String(), "fleet: crawl complete", "worker %d", i)
		all = append(all, readPages(t, p.out)...)
	}
	return all
}

// checkSites checks what a site owner must see of any crawl: robots.txt
// once, nothing it disallows, every page once, and requests arriving at
// the site's kernel at least gap apart (less 2 ms for the kernel's own
// path after a worker's write, see redisfrontier's fleet test).
func checkSites(t *testing.T, sites []*testsite.Site, items int, gap time.Duration, pages []page) {
	t.Helper()
	got := keys(t, sites, pages)
	assert.Equal(t, slices.Compact(slices.Clone(got)), got, "no page recorded twice")
	assert.Len(t, got, len(sites)*(1+items), "every page recorded")
	for i, s := range sites {
		assert.Equal(t, 1, s.Count("/robots.txt"), "site %d: one robots.txt for the fleet", i)
		assert.Zero(t, s.Count("/cart"), "site %d: disallowed page requested", i)
		assert.Equal(t, 2+items, s.Total(), "site %d: robots.txt and every page, once", i)
		for _, r := range s.Requests() {
			assert.Equal(t, 1, s.Count(r.Path), "site %d: %s requested more than once", i, r.Path)
		}
		at := kernelArrivals(t, s)
		for k := 1; k < len(at); k++ {
			assert.GreaterOrEqual(t, at[k].Sub(at[k-1]), gap-2*time.Millisecond, "site %d: requests %d and %d arrived closer than the gap", i, k-1, k)
		}
	}
}

// kernelArrivals returns when the site's requests reached its kernel, in
// order.
func kernelArrivals(t *testing.T, s *testsite.Site) []time.Time {
	t.Helper()
	var at []time.Time
	for _, r := range s.Requests() {
		if r.Arrived.IsZero() {
			if runtime.GOOS == "linux" {
				t.Fatalf("%s has no kernel arrival time", r.Path)
			}
			t.Skipf("kernel receive times are read on Linux only, not %s", runtime.GOOS)
		}
		at = append(at, r.Arrived)
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	return at
}

func totalRequests(sites []*testsite.Site) int {
	n := 0
	for _, s := range sites {
		n += s.Total()
	}
	return n
}

// TestSentinel runs the built fleet through Redis Sentinel (a master, a
// replica and a sentinel on loopback), with the Sentinel URL the README
// documents: two workers crawl every page once within every site's gap;
// then the master is killed (SIGKILL) a third into a crawl, the sentinel
// promotes the replica, and the crawl finishes, still every page once and
// every gap kept at the sites.
func TestSentinel(t *testing.T) {
	sn := redistest.StartSentinel(t, redistest.SentinelOptions{})
	fleetBinary(t) // built before anything is timed
	const gap = 40 * time.Millisecond
	crawl := func(t *testing.T, name string, sites []*testsite.Site, during func(ctx context.Context)) []page {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		var file strings.Builder
		for _, s := range sites {
			file.WriteString(s.URL() + "/ inflight=2\n")
		}
		dir := t.TempDir()
		sitesPath := filepath.Join(dir, "sites.txt")
		require.NoError(t, os.WriteFile(sitesPath, []byte(file.String()), 0o644))
		procs := startFleet(t, ctx, dir, 2, "-sites", sitesPath, "-redis", sn.URL(), "-crawl", name,
			"-gap", gap.String(), "-workers", "3", "-lease", "10s", "-progress", "0")
		if during != nil {
			during(ctx)
		}
		return waitFleet(t, procs)
	}

	t.Run("crawl", func(t *testing.T) {
		const items = 6
		sites := catalogSites(t, 3, items)
		checkSites(t, sites, items, gap, crawl(t, "shops", sites, nil))
	})

	t.Run("failover", func(t *testing.T) {
		const nSites, items = 4, 20
		sites := catalogSites(t, nSites, items)
		defer func() {
			if t.Failed() {
				t.Logf("Sentinel setup after the crawl:\n%s", sn.Describe(context.Background()))
			}
		}()
		var killed time.Time
		var atKill int
		pages := crawl(t, "failover", sites, func(ctx context.Context) {
			for totalRequests(sites) < nSites*(2+items)/3 {
				select {
				case <-ctx.Done():
					t.Errorf("the crawl never got a third done: %v", ctx.Err())
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
			killed, atKill = time.Now(), totalRequests(sites)
			old, err := sn.KillMaster(ctx)
			require.NoError(t, err)
			require.NoError(t, sn.WaitFailover(ctx, old))
			t.Logf("replica promoted %v after the kill", time.Since(killed).Round(time.Millisecond))
		})
		require.Less(t, atKill, nSites*(2+items), "the master was killed before the crawl ended")
		checkSites(t, sites, items, gap, pages)

		var pause time.Duration
		var after []time.Time
		for _, s := range sites {
			for _, at := range kernelArrivals(t, s) {
				if at.After(killed) {
					after = append(after, at)
				}
			}
		}
		slices.SortFunc(after, func(a, b time.Time) int { return a.Compare(b) })
		prev := killed
		for _, at := range after {
			pause = max(pause, at.Sub(prev))
			prev = at
		}
		f, err := redisfrontier.New(t.Context(), sn.Client(), redisfrontier.DefaultConfig("failover"))
		require.NoError(t, err)
		defer f.Close()
		st, err := f.FleetStats(t.Context())
		require.NoError(t, err)
		t.Logf("killed at %d of %d requests; longest pause in requests after the kill: %v; %d re-handed, %d fences",
			atKill, nSites*(2+items), pause.Round(time.Millisecond), st.Rehanded, st.Fences)
		assert.Positive(t, st.Fences, "the promoted replica fenced the crawl")
	})
}

// TestREADMESentinelCommands runs the README's commands for a master, a
// replica and three Sentinels on free ports, then the README's worker
// command line against them, twice: the fleet crawls the sites once
// between the two workers.
func TestREADMESentinelCommands(t *testing.T) {
	script, worker := readmeCommands(t, "--sentinel", `(?m)^\./fleet .*master_name=.*$`)

	// The README's ports, each replaced by a free one in a single pass
	// (6380 is part of 26380).
	ports := map[string]string{}
	for _, p := range []string{"6380", "6381", "26379", "26380", "26381"} {
		ports[p] = strconv.Itoa(freeClusterPort(t))
	}
	portRE := regexp.MustCompile(`\b(6380|6381|26379|26380|26381)\b`)
	subst := func(s string) string {
		return portRE.ReplaceAllStringFunc(s, func(p string) string { return ports[p] })
	}
	dir := t.TempDir()
	t.Cleanup(func() {
		for _, p := range ports {
			_ = exec.Command("redis-cli", "-p", p, "shutdown", "nosave").Run()
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", subst(script))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "OK 3 usable Sentinels")

	const items = 4
	sites := catalogSites(t, 2, items)
	var file strings.Builder
	for _, s := range sites {
		file.WriteString(s.URL() + "/\n")
	}
	fields := strings.Fields(subst(worker))
	require.Equal(t, "./fleet", fields[0])
	var args []string
	for _, a := range fields[1:] {
		switch {
		case a == "sites.txt":
			a = filepath.Join(dir, "sites.txt")
		case a == "-out" || strings.HasSuffix(a, ".jsonl"):
			continue // startFleet gives each worker its own file
		}
		args = append(args, strings.Trim(a, "'"))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sites.txt"), []byte(file.String()), 0o644))
	procs := startFleet(t, ctx, dir, 2, append(args, "-progress", "0", "-gap", "10ms")...)
	checkSites(t, sites, items, 10*time.Millisecond, waitFleet(t, procs))
}
