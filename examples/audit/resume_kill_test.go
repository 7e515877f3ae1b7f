package main

import (
	"bytes"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The crawler run as a real process and killed with SIGKILL at chosen moments (inside the server's
// handler of a chosen request, so the moment is exact), then resumed with -resume, until it finishes.
// The result is compared with an uninterrupted crawl of the same site, and the server's log says what
// was requested twice.

// killSite is a loopback site of some 60 pages: a sitemap index with two sitemaps (orphans and a
// disallowed URL among their entries), a link tree, a 404, a redirect, an llms.txt, and a WordPress
// generator, so that every phase of a crawl has requests to be killed in.
type killSite struct {
	srv *httptest.Server

	mu     sync.Mutex
	log    []*serverRequest
	killAt func(n int, path string) bool // n: 1-based index of the request; true kills the crawler
	proc   *os.Process
	killed []*serverRequest // requests in flight when the kill came (the killing one included)
	// bin, when set, is the program run instead of this test binary as main (the built one, say).
	bin string
}

type serverRequest struct {
	Path       string
	Start, End time.Time
}

func newKillSite(t *testing.T) *killSite {
	k := &killSite{}
	pages := map[string]string{}
	var home []string
	for i := range 10 {
		home = append(home, fmt.Sprintf("/p%d", i))
	}
	pages["/"] = `<!doctype html><html><head><title>Home</title><meta name="generator" content="WordPress 6.5">` +
		`<meta name="description" content="Home"></head><body><h1>Home</h1>` + links(home...) + `</body></html>`
	for i := range 60 {
		var ls []string
		for _, c := range []int{2*i + 10, 2*i + 11} {
			if c < 60 {
				ls = append(ls, fmt.Sprintf("/p%d", c))
			}
		}
		if i == 3 {
			ls = append(ls, "/private/x", "https://elsewhere.example/")
		}
		pages[fmt.Sprintf("/p%d", i)] = page(fmt.Sprint("P", i), ls...)
	}
	delete(pages, "/p13") // a 404
	pages["/orphan1"] = page("Orphan 1")
	pages["/orphan2"] = page("Orphan 2")
	urls := func(paths ...string) string {
		var b strings.Builder
		b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for _, p := range paths {
			fmt.Fprintf(&b, "<url><loc>http://shop.test%s</loc></url>", p)
		}
		return b.String() + "</urlset>"
	}
	xml := map[string]string{
		"/sitemap_index.xml": `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>http://shop.test/sitemap-a.xml</loc></sitemap>` +
			`<sitemap><loc>http://shop.test/sitemap-b.xml</loc></sitemap></sitemapindex>`,
		"/sitemap-a.xml": urls("/p0", "/p1", "/p2", "/orphan1"),
		"/sitemap-b.xml": urls("/p20", "/p21", "/orphan2", "/private/s"),
	}
	k.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &serverRequest{Path: r.URL.RequestURI(), Start: time.Now()}
		k.mu.Lock()
		k.log = append(k.log, rec)
		kill := k.killAt != nil && k.proc != nil && k.killAt(len(k.log), rec.Path)
		if kill {
			// SIGKILL while this request (and whatever else is in flight) is unanswered.
			_ = k.proc.Signal(syscall.SIGKILL)
			for _, q := range k.log {
				if q.End.IsZero() {
					k.killed = append(k.killed, q)
				}
			}
			k.killAt = nil
		}
		k.mu.Unlock()
		defer func() {
			k.mu.Lock()
			rec.End = time.Now()
			k.mu.Unlock()
		}()
		if kill {
			<-r.Context().Done() // the connection closes when the process dies
			return
		}
		p := r.URL.Path
		switch {
		case p == "/robots.txt":
			io.WriteString(w, "User-agent: *\nDisallow: /private/\nSitemap: http://shop.test/sitemap_index.xml\n")
		case xml[p] != "":
			w.Header().Set("Content-Type", "application/xml")
			io.WriteString(w, xml[p])
		case p == "/llms.txt":
			w.Header().Set("Content-Type", "text/markdown")
			io.WriteString(w, "# Shop\n")
		case p == "/p17":
			http.Redirect(w, r, "/p18", http.StatusMovedPermanently)
		case p == "/wp-json/":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"name":"Shop"}`)
		case pages[p] != "" && r.URL.RawQuery == "":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, pages[p])
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(k.srv.Close)
	return k
}

func links(paths ...string) string {
	var b strings.Builder
	for _, p := range paths {
		fmt.Fprintf(&b, `<a href="%s">%s</a> `, p, p)
	}
	return b.String()
}

// reset starts a new server log with the kill rule for the next run.
func (k *killSite) reset(killAt func(n int, path string) bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.log, k.killed, k.killAt, k.proc = nil, nil, killAt, nil
}

func (k *killSite) arm(killAt func(n int, path string) bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.killAt, k.killed = killAt, nil
}

func (k *killSite) requests() []serverRequest {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]serverRequest, len(k.log))
	for i, r := range k.log {
		out[i] = *r
	}
	return out
}

func (k *killSite) inFlightAtKill() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for _, r := range k.killed {
		out = append(out, r.Path)
	}
	return out
}

// resolveArg sends shop.test to the loopback server.
func (k *killSite) resolveArg() string {
	_, port, _ := net.SplitHostPort(k.srv.Listener.Addr().String())
	return "shop.test:80:127.0.0.1:" + port
}

// runProgram runs the audit program (this test binary as main, or k.bin) with args until it exits; the
// site can kill it meanwhile. It returns the exit code (-1 when killed) and the output.
func (k *killSite) runProgram(t *testing.T, args ...string) (int, string) {
	return k.runProgramKillAfter(t, 0, args...)
}

// runProgramKillAfter is runProgram with a SIGKILL after d too (none when d is 0), whatever the
// crawler is doing then.
func (k *killSite) runProgramKillAfter(t *testing.T, d time.Duration, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), subprocessArgs+"="+strings.Join(args, "\x1f"), "HTTP_PROXY=", "http_proxy=")
	if k.bin != "" {
		cmd = exec.Command(k.bin, args...)
		cmd.Env = append(os.Environ(), "HTTP_PROXY=", "http_proxy=")
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	k.mu.Lock()
	k.proc = cmd.Process
	k.mu.Unlock()
	if d > 0 {
		timer := time.AfterFunc(d, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
		defer timer.Stop()
	}
	err := cmd.Wait()
	k.mu.Lock()
	k.proc = nil
	k.mu.Unlock()
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1, out.String()
		}
		return ee.ExitCode(), out.String()
	}
	require.NoError(t, err, out.String())
	return 0, out.String()
}

func openDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func queryStrings(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	require.NoError(t, err, q)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s sql.NullString
		require.NoError(t, rows.Scan(&s))
		out = append(out, s.String)
	}
	require.NoError(t, rows.Err())
	return out
}

// assertIntact checks that the database file opens and passes SQLite's integrity check.
func assertIntact(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var res string
	require.NoError(t, db.QueryRow(`PRAGMA integrity_check`).Scan(&res))
	assert.Equal(t, "ok", res, "integrity of %s", path)
}

// finishedInDB is every URL the killed crawl had finished with in its database: pages acknowledged,
// sitemaps read, robots.txt copies, llms.txt and probe answers. Anything requested again on resume must
// not be among them.
func finishedInDB(t *testing.T, path string) map[string]bool {
	db := openDB(t, path)
	done := map[string]bool{}
	for _, q := range []string{
		`SELECT url FROM queue WHERE state <> 0`,
		`SELECT url FROM sitemap_fetches`,
		`SELECT url FROM robots_cache`,
		`SELECT url FROM requests`,
	} {
		for _, u := range queryStrings(t, db, q) {
			done[strings.TrimPrefix(u, "http://shop.test")] = true
		}
	}
	return done
}

// hasCrawl reports whether the file has a crawl to resume (a kill can come before the schema or the
// crawls row is written).
func hasCrawl(t *testing.T, path string) bool {
	db := openDB(t, path)
	if queryStrings(t, db, `SELECT COUNT(*) FROM sqlite_master WHERE name = 'crawls'`)[0] == "0" {
		return false
	}
	return queryStrings(t, db, `SELECT COUNT(*) FROM crawls`)[0] != "0"
}

// crawlSummary is what must be the same after a resume as without one.
func crawlSummary(t *testing.T, path string) map[string][]string {
	db := openDB(t, path)
	return map[string][]string{
		"pages": queryStrings(t, db, `SELECT url || ' ' || COALESCE(status, '-') || ' ' || blocked_by_robots || ' ' || COALESCE(title, '-') || ' ' ||
			COALESCE(error_kind, '-') || ' ' || redirect_count FROM pages ORDER BY url`),
		"links":        queryStrings(t, db, `SELECT from_url || ' ' || to_url FROM links ORDER BY 1`),
		"findings":     queryStrings(t, db, `SELECT kind || ' ' || url FROM findings WHERE kind != 'slow_ttfb' ORDER BY 1`), // slow_ttfb depends on the machine's load, not on the crawl
		"sitemaps":     queryStrings(t, db, `SELECT url || ' ' || level || ' ' || entries FROM sitemaps ORDER BY 1`),
		"sitemap_urls": queryStrings(t, db, `SELECT sitemap || ' ' || url FROM sitemap_urls ORDER BY 1`),
		"requests":     queryStrings(t, db, `SELECT url || ' ' || purpose || ' ' || COALESCE(status, '-') FROM requests ORDER BY 1`),
		"crawl":        queryStrings(t, db, `SELECT outcome || ' ' || pages FROM crawls`),
	}
}

func requestPaths(reqs []serverRequest) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.Path
	}
	return out
}

func isPage(p string) bool {
	return p == "/" || strings.HasPrefix(p, "/p") || strings.HasPrefix(p, "/orphan")
}

// nthPage kills at the nth page request.
func nthPage(n int) func(int, string) bool {
	seen := 0
	return func(_ int, p string) bool {
		if isPage(p) {
			seen++
		}
		return seen == n && isPage(p)
	}
}

func atPath(path string) func(int, string) bool {
	return func(_ int, p string) bool { return p == path }
}

func TestResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the crawler as a subprocess some twenty times")
	}
	site := newKillSite(t)
	// The built program, as a user runs it: the kills come from the site at a request, whatever the
	// program's speed. (The random moments of TestResumeAfterKillAtRandomMoments hit the race-detector
	// build of this test binary.)
	site.bin = buildAudit(t)
	flags := []string{"-gap", "0", "-concurrency", "4", "-quiet", "-no-report", "-resolve", site.resolveArg()}

	// The reference: the same site crawled without interruption.
	ref := filepath.Join(t.TempDir(), "ref.db")
	site.reset(nil)
	code, out := site.runProgram(t, append(append([]string{"-db", ref}, flags...), "http://shop.test/")...)
	require.Equal(t, crawl.ExitOK, code, out)
	want := crawlSummary(t, ref)
	refPaths := requestPaths(site.requests())
	require.Greater(t, len(want["pages"]), 60)
	counts := map[string]int{}
	for _, p := range refPaths {
		counts[p]++
	}
	for p, n := range counts {
		// /p18 too, the target of /p17's redirect and a page: a URL is requested once however it is reached.
		assert.Equal(t, 1, n, "the reference requests %s once", p)
	}

	for _, sc := range []struct {
		name  string
		kills []func(int, string) bool // one per run; the last run finishes
	}{
		{"during sitemap expansion", []func(int, string) bool{atPath("/sitemap-b.xml")}},
		{"at the start page", []func(int, string) bool{nthPage(1)}},
		{"after 5 pages", []func(int, string) bool{nthPage(6)}},
		{"after 40 pages", []func(int, string) bool{nthPage(41)}},
		{"while crawling sitemap-only URLs", []func(int, string) bool{atPath("/orphan2")}},
		{"at llms.txt", []func(int, string) bool{atPath("/llms.txt")}},
		{"during the WordPress probes", []func(int, string) bool{atPath("/xmlrpc.php")}},
		{"three times", []func(int, string) bool{atPath("/sitemap-a.xml"), nthPage(12), nthPage(20)}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "crawl.db")
			site.reset(sc.kills[0])
			var all []serverRequest
			var twiceAllowed = map[string]bool{}
			args := append(append([]string{"-db", db}, flags...), "http://shop.test/")
			for i := 0; ; i++ {
				if i > 0 {
					args = []string{"-resume", "-db", db, "-quiet", "-no-report"}
					if i < len(sc.kills) {
						site.arm(sc.kills[i])
					} else {
						site.arm(nil)
					}
				}
				code, out := site.runProgram(t, args...)
				reqs := site.requests()
				all = append(all, reqs...)
				if code != 0 {
					t.Logf("run %d killed; in flight then: %v", i+1, site.inFlightAtKill())
				}
				site.reset(nil)
				if code == 0 {
					require.Contains(t, out, "finished", out)
					break
				}
				require.Equal(t, -1, code, "killed: %s", out)
				require.Less(t, i, len(sc.kills), "killed only when asked to")
				assertIntact(t, db)
				// What the crawler had not finished with at the kill may be requested again: nothing else.
				done := finishedInDB(t, db)
				for _, r := range reqs {
					if !done[r.Path] {
						twiceAllowed[r.Path] = true
					}
				}
				for _, r := range reqs {
					if r.Path == "/p17" {
						// Its redirect target: fetching /p17 again asks /p18 again, and a target claimed
						// before the kill is remembered in memory only, so the resumed crawl may ask it once more.
						twiceAllowed["/p18"] = true
					}
				}
				// Count pages, not requests: a retried page is one page, and /p17's
				// redirect hop to /p18 belongs to the same fetch.
				unfinishedPages := map[string]bool{}
				for _, r := range reqs {
					if isPage(r.Path) && !done[r.Path] {
						unfinishedPages[r.Path] = true
					}
				}
				if unfinishedPages["/p17"] {
					delete(unfinishedPages, "/p18")
				}
				unfinished := len(unfinishedPages)
				assert.LessOrEqual(t, unfinished, (1+crawl.WriteBacklog)*4, "at the kill, at most -concurrency pages in flight and writeBacklog times as many waiting to be written")
			}
			assertIntact(t, db)
			got := crawlSummary(t, db)
			for _, k := range []string{"pages", "links", "findings", "sitemaps", "sitemap_urls", "requests", "crawl"} {
				assert.Equal(t, want[k], got[k], "%s: the resumed crawl has what the uninterrupted one has", k)
			}
			n := map[string]int{}
			var again []string
			for _, r := range all {
				n[r.Path]++
				if n[r.Path] == counts[r.Path]+1 {
					again = append(again, r.Path)
					assert.True(t, twiceAllowed[r.Path], "%s requested again, though the killed crawl had finished with it", r.Path)
				}
			}
			sort.Strings(again)
			t.Logf("requested again after a kill (unfinished then): %v", again)
			assert.Equal(t, 1, n["/robots.txt"], "robots.txt is not fetched again: the copy has not expired")
			for p := range counts {
				assert.NotZero(t, n[p], "%s requested by the resumed crawl too", p)
			}
			for p := range n {
				assert.NotZero(t, counts[p], "%s: nothing the reference did not request", p)
			}
		})
	}
}

// SIGKILL at arbitrary moments of a fast crawl (no gap, 16 in flight: the writer is busy, so kills land
// in the middle of transactions): the file passes the integrity check after every kill, and the crawl
// resumed until it finishes has what an uninterrupted one has.
func TestResumeAfterKillAtRandomMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the crawler as a subprocess a dozen times")
	}
	site := newKillSite(t)
	flags := []string{"-gap", "0", "-concurrency", "16", "-quiet", "-no-report", "-resolve", site.resolveArg()}
	ref := filepath.Join(t.TempDir(), "ref.db")
	site.reset(nil)
	code, out := site.runProgram(t, append(append([]string{"-db", ref}, flags...), "http://shop.test/")...)
	require.Equal(t, crawl.ExitOK, code, out)
	want := crawlSummary(t, ref)

	rng := rand.New(rand.NewPCG(13, 1))
	for round := range 3 {
		db := filepath.Join(t.TempDir(), fmt.Sprintf("crawl%d.db", round))
		args := append(append([]string{"-db", db}, flags...), "http://shop.test/")
		kills := 0
		for i := 0; ; i++ {
			d := time.Duration(2+rng.IntN(60)) * time.Millisecond
			if i >= 12 {
				d = 0 // let it finish
			}
			code, out := site.runProgramKillAfter(t, d, args...)
			if _, err := os.Stat(db); err == nil {
				assertIntact(t, db)
			}
			if code == 0 {
				break
			}
			if code == crawl.ExitUsage && kills > 0 && strings.Contains(out, "finished: there is nothing to resume") {
				break // the last kill landed after the crawl was marked finished, before the process exited
			}
			require.Equal(t, -1, code, "killed after %s: %s", d, out)
			kills++
			args = []string{"-resume", "-db", db, "-quiet", "-no-report"}
			if _, err := os.Stat(db); err != nil {
				args = append(append([]string{"-db", db}, flags...), "http://shop.test/") // killed before the file existed
			} else if !hasCrawl(t, db) {
				args = append(append([]string{"-db", db}, flags...), "http://shop.test/") // killed before the crawl began
			}
		}
		t.Logf("round %d: %d kills", round, kills)
		got := crawlSummary(t, db)
		for _, k := range []string{"pages", "links", "findings", "sitemaps", "sitemap_urls", "requests", "crawl"} {
			assert.Equal(t, want[k], got[k], "round %d: %s", round, k)
		}
	}
}
