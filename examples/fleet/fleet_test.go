package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier/redisfrontier/redistest"
	"github.com/politecrawl/polite/internal/testsite"
)

// mainEnv makes the test binary run the program instead of the tests, so
// that tests can start real worker processes.
const mainEnv = "FLEET_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) != "" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	code := m.Run()
	removeBuiltBinary()
	os.Exit(code)
}

// shopSites starts n loopback sites: a home page, six pages linking
// back, a disallowed page, and a link into the next site.
func shopSites(t *testing.T, n int) []*testsite.Site {
	sites := make([]*testsite.Site, n)
	for i := range sites {
		sites[i] = testsite.New(t)
	}
	for i, s := range sites {
		s.Robots("User-agent: *\nDisallow: /cart\n")
		var links strings.Builder
		for k := range 6 {
			fmt.Fprintf(&links, `<a href="/item/%d">item %d</a>`, k, k)
			s.Route(fmt.Sprintf("/item/%d", k), testsite.Response{Delay: 10 * time.Millisecond, ContentType: "text/html",
				Body: `<a href="/">home</a><a href="/cart">cart</a>`})
		}
		links.WriteString(`<a href="` + sites[(i+1)%n].URL() + `/item/0">next shop</a>`)
		s.Route("/", testsite.Response{Delay: 10 * time.Millisecond, ContentType: "text/html", Body: links.String()})
	}
	return sites
}

// sitesFile writes a sites file; the last site gets its own limits.
func sitesFile(t *testing.T, sites []*testsite.Site) string {
	var b strings.Builder
	b.WriteString("# start URLs\n")
	for i, s := range sites {
		b.WriteString(s.URL() + "/")
		if i == len(sites)-1 {
			b.WriteString(" pages=3 depth=1 inflight=1 gap=40ms")
		}
		b.WriteString("\n")
	}
	p := filepath.Join(t.TempDir(), "sites.txt")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	return p
}

func readPages(t *testing.T, path string) []page {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []page
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var p page
		require.NoError(t, json.Unmarshal(sc.Bytes(), &p))
		out = append(out, p)
	}
	return out
}

// keys turns pages into "site index + path", sorted.
func keys(t *testing.T, sites []*testsite.Site, pages []page) []string {
	var k []string
	for _, p := range pages {
		for i, s := range sites {
			if path, ok := strings.CutPrefix(p.URL, s.URL()); ok {
				k = append(k, fmt.Sprintf("%d%s", i, path))
			}
		}
	}
	slices.Sort(k)
	return k
}

// TestOneProcessInMemory: without -redis the program crawls every site in
// its scope with its own limits in one process.
func TestOneProcessInMemory(t *testing.T) {
	sites := shopSites(t, 3)
	out := filepath.Join(t.TempDir(), "out.jsonl")
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"-sites", sitesFile(t, sites), "-out", out, "-gap", "5ms", "-progress", "0"}, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	got := keys(t, sites, readPages(t, out))
	// Sites 0 and 1: home and six items. Site 2 (pages=3): home and the
	// first two items it queued, one of them possibly the link from site 1.
	assert.Len(t, got, 7+7+3, "%v", got)
	assert.Equal(t, slices.Compact(slices.Clone(got)), got, "no page fetched twice")
	for i, s := range sites {
		assert.Equal(t, 0, s.Count("/cart"), "site %d: disallowed page never requested", i)
		assert.Equal(t, 1, s.Count("/robots.txt"))
	}
	assert.Equal(t, 1, sites[2].MaxInFlight())
	assert.Contains(t, stderr.String(), "final: 3 sites")
}

// TestThreeWorkersOnRedis: three worker processes on one Redis crawl the
// sites once between them, within each site's limits, and fetch what one
// process alone would have.
func TestThreeWorkersOnRedis(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	sites := shopSites(t, 4)
	file := sitesFile(t, sites)
	dir := t.TempDir()
	var procs []*exec.Cmd
	var errs []*bytes.Buffer
	for i := range 3 {
		cmd := exec.Command(os.Args[0], "-sites", file, "-redis", srv.URL(), "-crawl", "shops", "-gap", "20ms",
			"-workers", "3", "-progress", "100ms", "-out", filepath.Join(dir, fmt.Sprintf("w%d.jsonl", i)))
		cmd.Env = append(os.Environ(), mainEnv+"=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		procs = append(procs, cmd)
		errs = append(errs, &stderr)
	}
	var all []page
	for i, cmd := range procs {
		require.NoError(t, cmd.Wait(), "worker %d: %s", i, errs[i])
		all = append(all, readPages(t, filepath.Join(dir, fmt.Sprintf("w%d.jsonl", i)))...)
		assert.Contains(t, errs[i].String(), "fleet: final: 4 sites", "fleet-wide progress")
	}
	got := keys(t, sites, all)
	assert.Equal(t, slices.Compact(slices.Clone(got)), got, "no page fetched twice")
	assert.Len(t, got, 7+7+7+3)
	for i, s := range sites {
		assert.Equal(t, 0, s.Count("/cart"), "site %d", i)
		assert.Equal(t, 1, s.Count("/robots.txt"), "site %d: one robots.txt for the fleet", i)
		for _, r := range s.Requests() {
			if r.Path != "/robots.txt" {
				assert.Equal(t, 1, s.Count(r.Path), "site %d %s", i, r.Path)
			}
		}
	}
	assert.Equal(t, 1, sites[3].MaxInFlight(), "site 3: inflight=1 across three workers")
	// Site 3's gap, 40 ms, as the site sees it: between the moments
	// requests reached its kernel (not when its handlers got to run,
	// which a loaded machine delays), less 2 ms for the kernel's own
	// path after a worker's write (see redisfrontier's fleet test).
	var at []time.Time
	for _, r := range sites[3].Requests() {
		if r.Arrived.IsZero() {
			if runtime.GOOS == "linux" {
				t.Fatalf("%s has no kernel arrival time", r.Path)
			}
			t.Skipf("kernel receive times are read on Linux only, not %s", runtime.GOOS)
		}
		at = append(at, r.Arrived)
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	for k := 1; k < len(at); k++ {
		assert.GreaterOrEqual(t, at[k].Sub(at[k-1]), 40*time.Millisecond-2*time.Millisecond, "site 3: requests %d and %d", k-1, k)
	}
}

// TestUsageErrors: a missing or bad sites file is a usage error.
func TestUsageErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.txt")
	require.NoError(t, os.WriteFile(bad, []byte("https://shop.example/ speed=9\n"), 0o644))
	good := filepath.Join(t.TempDir(), "good.txt")
	require.NoError(t, os.WriteFile(good, []byte("https://shop.example/\n"), 0o644))
	for _, args := range [][]string{{}, {"-sites", bad}, {"-sites", filepath.Join(t.TempDir(), "missing")},
		{"-sites", good, "-shards", "0"}, {"-sites", good, "-workers", "0"}, {"-sites", good, "-workers", "100000"},
		{"-sites", good, "-lease", "-1s"}, {"-sites", good, "-progress", "-1s"}} {
		var stderr bytes.Buffer
		assert.Equal(t, exitUsage, run(t.Context(), args, &bytes.Buffer{}, &stderr), "%v", args)
		assert.Contains(t, stderr.String(), "fleet:")
	}
}

// TestOutputWriteErrorFails: a worker whose pages cannot be written
// (-out /dev/full: every write fails with ENOSPC, as on a full disk)
// stops with a non-zero exit naming the file, and marks nothing done: its
// items go back to the queue, and a second worker fetches and records
// every page.
func TestOutputWriteErrorFails(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("needs /dev/full")
	}
	t.Run("memory", func(t *testing.T) {
		sites := shopSites(t, 1)
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), []string{"-sites", sitesFile(t, sites), "-out", "/dev/full", "-gap", "5ms", "-progress", "0"}, &stdout, &stderr)
		assert.Equal(t, exitFailure, code, stderr.String())
		assert.Contains(t, stderr.String(), "writing /dev/full")
		assert.NotContains(t, stdout.String(), "crawl complete")
	})
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t, redistest.Options{})
		sites := shopSites(t, 2)
		file := sitesFile(t, sites)
		args := []string{"-sites", file, "-redis", srv.URL(), "-crawl", "full", "-gap", "5ms", "-progress", "0", "-lease", "500ms"}
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), append(args, "-out", "/dev/full"), &stdout, &stderr)
		require.Equal(t, exitFailure, code, stderr.String())
		assert.Contains(t, stderr.String(), "writing /dev/full")
		assert.Contains(t, stderr.String(), "final: 2 sites: 0 done", "nothing marked done that was not written")
		out := filepath.Join(t.TempDir(), "w2.jsonl")
		stdout.Reset()
		stderr.Reset()
		require.Equal(t, exitOK, run(t.Context(), append(args, "-out", out), &stdout, &stderr), stderr.String())
		got := keys(t, sites, readPages(t, out))
		assert.Len(t, got, 7+3, "every page written by the second worker: %v", got)
		assert.Equal(t, slices.Compact(slices.Clone(got)), got)
	})
}

// TestThreeMasterCluster runs the README's fleet on a real 3-master Redis
// Cluster: two worker processes with -shards 6 and a cluster URL crawl
// the sites once between them, the shards' keys on all three masters.
func TestThreeMasterCluster(t *testing.T) {
	cl := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3})
	sites := shopSites(t, 4)
	file := sitesFile(t, sites)
	dir := t.TempDir()
	var procs []*exec.Cmd
	var errs []*bytes.Buffer
	for i := range 2 {
		cmd := exec.Command(os.Args[0], "-sites", file, "-redis", cl.URL(), "-shards", "6", "-crawl", "shops", "-gap", "20ms",
			"-workers", "3", "-progress", "0", "-out", filepath.Join(dir, fmt.Sprintf("w%d.jsonl", i)))
		cmd.Env = append(os.Environ(), mainEnv+"=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		procs = append(procs, cmd)
		errs = append(errs, &stderr)
	}
	var all []page
	for i, cmd := range procs {
		require.NoError(t, cmd.Wait(), "worker %d: %s", i, errs[i])
		all = append(all, readPages(t, filepath.Join(dir, fmt.Sprintf("w%d.jsonl", i)))...)
		assert.Contains(t, errs[i].String(), "fleet: final: 4 sites")
	}
	got := keys(t, sites, all)
	assert.Equal(t, slices.Compact(slices.Clone(got)), got, "no page fetched twice")
	assert.Len(t, got, 7+7+7+3)
	// The crawl's keys are on every master.
	for i, m := range cl.Masters {
		n, err := redis.NewClient(&redis.Options{Addr: m.Addr()}).DBSize(t.Context()).Result()
		require.NoError(t, err)
		assert.Positive(t, n, "master %d holds none of the crawl's keys", i)
	}
}

// TestRedirectedPageLinks: two links redirect to one page. In either
// mode the page is requested once, and the links on it are attributed to
// it (its final URL), not to the link that redirected there.
func TestRedirectedPageLinks(t *testing.T) {
	for _, mode := range []string{"memory", "redis"} {
		t.Run(mode, func(t *testing.T) {
			s := testsite.New(t)
			s.Robots("User-agent: *\nAllow: /\n")
			s.HTML("/", `<a href="/old">old</a> <a href="/old2">old 2</a>`)
			s.Redirect("/old", "/new", 301)
			s.Redirect("/old2", "/new", 301)
			s.HTML("/new", `<a href="/deep">deep</a>`)
			s.HTML("/deep", `deep`)
			dir := t.TempDir()
			file, out := filepath.Join(dir, "sites.txt"), filepath.Join(dir, "out.jsonl")
			require.NoError(t, os.WriteFile(file, []byte(s.URL()+"/\n"), 0o644))
			args := []string{"-sites", file, "-out", out, "-gap", "0", "-progress", "0"}
			if mode == "redis" {
				args = append(args, "-redis", redistest.Start(t, redistest.Options{}).URL(), "-crawl", "redir")
			}
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), mainEnv+"=1")
			b, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", b)
			assert.Equal(t, 1, s.Count("/new"), "%v", s.Paths())
			var deep *page
			pages := readPages(t, out)
			for i := range pages {
				if pages[i].URL == s.URL()+"/deep" {
					deep = &pages[i]
				}
			}
			require.NotNil(t, deep, "%v", pages)
			assert.Equal(t, s.URL()+"/new", deep.From)
		})
	}
}
