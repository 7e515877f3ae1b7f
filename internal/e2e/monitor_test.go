package e2e

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/politecrawl/polite/internal/testsite"
)

// The 2-UAcomBot page publishes these, byte for byte.
const (
	monitorUA = "Mozilla/5.0 (compatible; 2-UAcomBot/1.0; +https://2-ua.com/support/robots)"
	xAgent    = "2-UA"
	banner    = "Latest check was skipped — robots.txt disallows 2-UAcomBot on this path."
)

// monitorSites is a.test (the `2-UAcomBot` group disallows /private/, the
// `*` group everything, so a monitor that did not pick its own group
// would fetch nothing) with /go redirecting into /private/, and b.test.
func monitorSites(t *testing.T) (*testsite.Network, *testsite.Site, *testsite.Site) {
	net := testsite.NewNetwork(t, testsite.Loopback)
	a := net.Add("a.test")
	a.Robots("User-agent: *\nDisallow: /\n\nUser-agent: 2-UAcomBot\nDisallow: /private/\n")
	a.HTML("/", page("Home"))
	a.HTML("/about", page("About"))
	a.HTML("/new", page("New"))
	a.HTML("/private/x", page("Private"))
	a.Redirect("/go", "/private/y", http.StatusMovedPermanently)
	b := net.Add("b.test")
	b.Robots("User-agent: *\nAllow: /\n")
	b.HTML("/", page("B home"))
	return net, a, b
}

// monitor runs the monitor in dir with -resolve for net's sites (and
// -allow-private: they are on loopback) where the command takes them.
func monitor(t *testing.T, dir string, net *testsite.Network, cmd string, args ...string) result {
	t.Helper()
	full := []string{cmd}
	if net != nil {
		full = append(full, resolveFlags(net, nil)...)
		if cmd != "status" && cmd != "report" && cmd != "untrack" {
			full = append(full, "-allow-private")
		}
	}
	return run(t, "monitor", opts{dir: dir}, append(full, args...)...)
}

// TestMonitorTrackRunStatusReport: the README's cron workflow on the built
// binary, with the defaults the bot page promises: the published user
// agent and X-AGENT on every request, robots.txt first and once per host
// per hour (across runs), the 2-UAcomBot group over `*`, a disallowed page
// never fetched (nor a redirect into one), at least 1 s between two
// requests to a host, at most one snapshot per page per interval.
func TestMonitorTrackRunStatusReport(t *testing.T) {
	t.Parallel()
	tol := gapTolerance(t)
	net, a, b := monitorSites(t)
	dir := t.TempDir()
	urls := []string{"http://a.test/", "http://a.test/about", "http://a.test/private/x", "http://a.test/go", "http://b.test/"}
	r := monitor(t, dir, net, "track", append([]string{"-db", "mon.db"}, urls...)...)
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "tracking http://a.test/about every 6h")
	assert.Zero(t, a.Total()+b.Total(), "track fetches nothing")

	r = monitor(t, dir, net, "run", "-db", "mon.db")
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "ok      http://a.test/: HTTP 200")
	assert.Contains(t, r.stdout, "ok      http://b.test/: HTTP 200")
	assert.Contains(t, r.stdout, `blocked http://a.test/private/x: disallowed by "Disallow: /private/"`)
	assert.Contains(t, r.stdout, "run: 5 due")

	reqs := a.Requests()
	t.Logf("a.test: %v", paths(reqs))
	require.NotEmpty(t, reqs)
	assert.Equal(t, "/robots.txt", reqs[0].Path, "robots.txt before the first snapshot")
	assert.Equal(t, "/robots.txt", b.Requests()[0].Path)
	assertIdentity(t, append(reqs, b.Requests()...), monitorUA, xAgent)
	assertNever(t, reqs, "/private/")
	assert.Equal(t, 1, a.Count("/robots.txt"))
	assert.Equal(t, 1, a.MaxInFlight(), "one request at a time per host")
	assertGaps(t, reqs, time.Second, tol)

	r = monitor(t, dir, net, "status", "-db", "mon.db")
	require.Equal(t, 0, r.code, r)
	assert.Regexp(t, `http://a\.test/private/x .*`+regexp.QuoteMeta(banner), r.stdout)
	assert.Contains(t, r.stdout, "5 pages tracked")
	// Expected to fail until the monitor branch merges (issue 18, "Small
	// CLI wording"): a redirect into a disallowed path says so, as the
	// dashboard does.
	t.Run("status names the disallowed redirect target", func(t *testing.T) {
		assert.Regexp(t, `http://a\.test/go .*after redirect to http://a\.test/private/y`, r.stdout)
	})

	// Nothing is due again before the interval: no request.
	before := a.Total() + b.Total()
	r = monitor(t, dir, net, "run", "-db", "mon.db")
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "run: 0 due")
	assert.Contains(t, r.stdout, "next page due at")
	assert.Equal(t, before, a.Total()+b.Total(), "at most one snapshot per page per interval")

	// Six hours later for /about, whose title changed; and a page tracked
	// since. The interval passing is written into the database (its
	// documented next_due column): the binary has no clock to turn.
	a.HTML("/about", page("About us"))
	r = monitor(t, dir, net, "track", "-db", "mon.db", "http://a.test/new")
	require.Equal(t, 0, r.code, r)
	db, err := sql.Open("sqlite", filepath.Join(dir, "mon.db"))
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE pages SET next_due = '2000-01-01T00:00:00.000000000Z' WHERE url = 'http://a.test/about'`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	from := len(a.Requests())
	r = monitor(t, dir, net, "run", "-db", "mon.db")
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "run: 2 due")
	second := a.Requests()[from:]
	assert.ElementsMatch(t, []string{"/about", "/new"}, paths(second), "robots.txt not fetched again within the hour, in a new process")
	assertGaps(t, second, time.Second, tol)

	r = monitor(t, dir, net, "report", "-db", "mon.db")
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, `title (medium): "About" -> "About us"`)
	assert.NotContains(t, r.stdout, "http://a.test/private/x", "no change report for a blocked page")

	r = monitor(t, dir, net, "untrack", "-db", "mon.db", "http://a.test/new")
	assert.Equal(t, 0, r.code, r)
	r = monitor(t, dir, net, "untrack", "-db", "mon.db", "http://a.test/new")
	assert.Equal(t, 1, r.code, "not tracked: %s", r)
}

// TestMonitorCheck: the free tool on the command line: the card, the
// banner (the page not fetched), the exact identity headers on the wire,
// and the read-only -db.
func TestMonitorCheck(t *testing.T) {
	t.Parallel()
	net := testsite.NewNetwork(t, testsite.Loopback)
	s := net.Add("c.test")
	s.Robots("User-agent: 2-UAcomBot\nDisallow: /private/\n")
	s.Redirect("/old", "/p", http.StatusMovedPermanently)
	s.HTML("/p", page("Pricing"))
	s.HTML("/private/x", page("Private"))
	dir := t.TempDir()

	r := monitor(t, dir, net, "check", "http://c.test/old")
	require.Equal(t, 0, r.code, r)
	for _, want := range []string{"http://c.test/old\n", "status:           200", `final URL:        "http://c.test/p"`,
		"redirects:        301 http://c.test/old", `title:            "Pricing"`, "response time:"} {
		assert.Contains(t, r.stdout, want)
	}
	r = monitor(t, dir, net, "check", "http://c.test/private/x")
	assert.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, banner)
	assert.Contains(t, r.stdout, `rule: disallowed by "Disallow: /private/"`)
	assert.Contains(t, r.stdout, "why:  https://2-ua.com/support/robots")
	assertNever(t, s.Requests(), "/private/")
	assertIdentity(t, s.Requests(), monitorUA, xAgent)

	// Under another -user-agent the rules written for 2-UAcomBot still
	// apply, and that user agent is what is sent.
	r = monitor(t, dir, net, "check", "-user-agent", "OtherBot/2.0 (+https://other.example/bot)", "http://c.test/private/x")
	assert.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "robots.txt disallows")
	assertNever(t, s.Requests(), "/private/")

	r = monitor(t, dir, net, "check", "-db", "missing.db", "http://c.test/p")
	assert.Equal(t, 1, r.code, r)
	assert.Contains(t, r.stderr, "database missing.db does not exist")
	assert.NoFileExists(t, filepath.Join(dir, "missing.db"), "a read-only command creates nothing")

	// The header names as the page spells them, on the wire.
	w := testsite.NewWire(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(page("Wire")))
	}))
	r = run(t, "monitor", opts{dir: dir}, "check", "-allow-private", w.URL()+"/")
	require.Equal(t, 0, r.code, r)
	heads := w.Heads()
	require.Len(t, heads, 2, "robots.txt, then the page")
	assert.True(t, strings.HasPrefix(heads[0], "GET /robots.txt "), heads[0])
	for _, h := range heads {
		assert.Contains(t, h, "\r\nUser-Agent: "+monitorUA+"\r\n")
		assert.Contains(t, h, "\r\nX-AGENT: 2-UA\r\n", "spelled X-AGENT on the wire")
	}
}

// TestMonitorUsage: documented usage errors are exit 2 and fetch nothing.
func TestMonitorUsage(t *testing.T) {
	t.Parallel()
	s := testsite.New(t)
	s.HTML("/", page("x"))
	dir := t.TempDir()
	for _, args := range [][]string{
		{},
		{"nosuchcommand"},
		{"track", "-db", "m.db", "-interval", "5h", s.URL() + "/"},
		{"track", "-db", "m.db", "notaurl"},
		{"track", "-db", "m.db", "ftp://e.com/"},
		{"track", "-db", "m.db", "http://user:pw@e.com/"},
		{"track", s.URL() + "/"},
		{"run", "-db", "m.db", "-gap", "500ms"},
		{"run", "-db", "m.db", "-parallel", "257"},
		{"check", "-allow-private", s.URL() + "/", s.URL() + "/x"},
	} {
		r := run(t, "monitor", opts{dir: dir}, args...)
		assert.Equal(t, 2, r.code, "%v: %s", args, r)
	}
	r := run(t, "monitor", opts{dir: dir}, "track", "-db", "m.db", "-interval", "5h", "http://e.com/")
	assert.Contains(t, r.stderr, "below the minimum of 6h")
	assert.Zero(t, s.Total())
	r = run(t, "monitor", opts{dir: dir}, "status", "-db", "none.db")
	assert.Equal(t, 1, r.code, r)
	assert.Contains(t, r.stderr, "database none.db does not exist (create it with: monitor track -db none.db URL)")
	assert.NoFileExists(t, filepath.Join(dir, "none.db"))
	for _, args := range [][]string{{"-h"}, {"run", "-h"}, {"serve", "-h"}} {
		r := run(t, "monitor", opts{dir: dir}, args...)
		assert.Equal(t, 0, r.code, "%v: %s", args, r)
	}
}

// TestMonitorNumericFlagsRefuseNaN: -check-rate NaN (or an infinity, or
// 0) is a usage error, not a rate limit turned off. Expected to fail until
// the monitor branch merges: on main NaN and +Inf start the server.
func TestMonitorNumericFlagsRefuseNaN(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"NaN", "+Inf", "-Inf", "0", "-1"} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			p := start(t, "monitor", opts{}, "serve", "-db", "m.db", "-addr", "127.0.0.1:0", "-check-rate", v)
			served := false
			deadline := time.Now().Add(20 * time.Second)
			for !served && time.Now().Before(deadline) {
				select {
				case <-p.done:
					deadline = time.Time{}
				default:
					served = strings.Contains(p.stdout.String(), "serving http://")
					time.Sleep(20 * time.Millisecond)
				}
			}
			if served {
				p.signal(syscall.SIGKILL)
				t.Fatalf("serve -check-rate %s started serving: the flag must be refused", v)
			}
			r := p.wait()
			assert.Equal(t, 2, r.code, r)
			assert.Contains(t, r.stderr, "-check-rate")
		})
	}
}

// TestMonitorRunOutputIsTerminalSafe: text from a site (here robots.txt,
// quoted in the blocked line) reaches the terminal without its control
// characters. Expected to fail until the monitor branch merges.
func TestMonitorRunOutputIsTerminalSafe(t *testing.T) {
	t.Parallel()
	net := testsite.NewNetwork(t, testsite.Loopback)
	s := net.Add("esc.test")
	s.Robots("User-agent: 2-UAcomBot\nUser-agent: x\x1b]0;pwned\x07\x1b[2J\nDisallow: /p\x1b[2J\nDisallow: /\n")
	dir := t.TempDir()
	r := monitor(t, dir, net, "track", "-db", "m.db", "http://esc.test/page")
	require.Equal(t, 0, r.code, r)
	r = monitor(t, dir, net, "run", "-db", "m.db")
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "blocked http://esc.test/page")
	assert.NotContains(t, r.out(), "\x1b", "no escape character from the site reaches the terminal: %q", r.out())
	assert.NotContains(t, r.out(), "\x07")
}

// serveProc is a running `monitor serve` and its base URL.
type serveProc struct {
	*proc
	base string
}

var servingLine = regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+)/`)

// startServe starts `monitor serve -addr 127.0.0.1:0` with args and waits
// until it listens.
func startServe(t *testing.T, dir string, args ...string) *serveProc {
	t.Helper()
	p := start(t, "monitor", opts{dir: dir}, append([]string{"serve", "-addr", "127.0.0.1:0"}, args...)...)
	p.waitFor(30*time.Second, "serving line", func() bool { return servingLine.MatchString(p.stdout.String()) })
	return &serveProc{proc: p, base: servingLine.FindStringSubmatch(p.stdout.String())[1]}
}

// TestMonitorServe: the dashboard, history, free tool and JSON API over
// real HTTP, with -watch taking the snapshots; the safety defaults of the
// web surface; Ctrl-C ends it with exit 0.
func TestMonitorServe(t *testing.T) {
	t.Parallel()
	net := testsite.NewNetwork(t, testsite.Loopback)
	s := net.Add("s.test")
	s.Robots("User-agent: *\nDisallow: /private/\n")
	s.HTML("/", page("Served home"))
	s.HTML("/tool", page("Tool page"))
	dir := t.TempDir()
	r := monitor(t, dir, net, "track", "-db", "mon.db", "http://s.test/")
	require.Equal(t, 0, r.code, r)

	srv := startServe(t, dir, append(resolveFlags(net, nil), "-db", "mon.db", "-allow-private", "-watch")...)
	srv.waitFor(30*time.Second, "the -watch snapshot", func() bool { return strings.Contains(srv.stdout.String(), "ok      http://s.test/: HTTP 200") })

	resp, body := get(t, srv.base+"/", nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/html")
	assert.Equal(t, "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
		resp.Header.Get("Content-Security-Policy"))
	assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
	assert.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
	assert.True(t, strings.Contains(body, "http://s.test/"), "the dashboard lists the tracked page")

	resp, body = get(t, srv.base+"/api/pages", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	var pages struct {
		Total int `json:"total"`
		Pages []struct {
			URL         string `json:"url"`
			LastOutcome string `json:"last_outcome"`
		} `json:"pages"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &pages), body)
	require.Equal(t, 1, pages.Total)
	assert.Equal(t, "http://s.test/", pages.Pages[0].URL)
	assert.Equal(t, "ok", pages.Pages[0].LastOutcome)

	resp, body = get(t, srv.base+"/api/pages/"+url.PathEscape("http://s.test/")+"/snapshots", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Regexp(t, `"title":\s*"Served home"`, body[:min(len(body), 2000)], "the snapshot taken by -watch")
	resp, _ = get(t, srv.base+"/page?url="+url.QueryEscape("http://s.test/"), nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = get(t, srv.base+"/check", nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	// Expected to fail until the monitor branch merges: a DNS-rebinding
	// Host header is refused (421 or 403).
	t.Run("Host header checked", func(t *testing.T) {
		for _, path := range []string{"/", "/api/pages"} {
			resp, _ := get(t, srv.base+path, http.Header{"Host": {"rebind.evil.example"}})
			assert.Contains(t, []int{http.StatusMisdirectedRequest, http.StatusForbidden}, resp.StatusCode, "GET %s with Host: rebind.evil.example", path)
		}
		resp, _ := postForm(t, srv.base+"/api/check", url.Values{"url": {"http://s.test/tool"}}, http.Header{"Host": {"rebind.evil.example"}})
		assert.Contains(t, []int{http.StatusMisdirectedRequest, http.StatusForbidden}, resp.StatusCode, "POST /api/check with Host: rebind.evil.example")
	})

	// The free tool: a card, and the banner for a disallowed URL (nothing
	// but robots.txt fetched for it).
	resp, body = postForm(t, srv.base+"/api/check", url.Values{"url": {"http://s.test/private/x"}}, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	var card struct {
		Blocked   bool   `json:"blocked_by_robots"`
		Banner    string `json:"banner"`
		PolicyURL string `json:"policy_url"`
		Title     string `json:"title"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &card), body)
	assert.True(t, card.Blocked)
	assert.Equal(t, banner, card.Banner)
	assert.Equal(t, "https://2-ua.com/support/robots", card.PolicyURL)
	assertNever(t, s.Requests(), "/private/")
	resp, body = postForm(t, srv.base+"/check", url.Values{"url": {"http://s.test/tool"}}, nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.True(t, strings.Contains(body, "Tool page"), "the card shows the title")

	// Cross-origin POSTs are refused and fetch nothing.
	n := s.Total()
	resp, _ = postForm(t, srv.base+"/api/check", url.Values{"url": {"http://s.test/tool"}},
		http.Header{"Origin": {"http://evil.example"}, "Sec-Fetch-Site": {"cross-site"}})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, _ = postForm(t, srv.base+"/track", url.Values{"url": {"http://s.test/tool"}},
		http.Header{"Origin": {"http://evil.example"}, "Sec-Fetch-Site": {"cross-site"}})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	// Bodies are capped at 16 KiB.
	resp, _ = postForm(t, srv.base+"/api/check", url.Values{"url": {"http://s.test/" + strings.Repeat("x", 32<<10)}}, nil)
	assert.GreaterOrEqual(t, resp.StatusCode, 400)
	assert.Less(t, resp.StatusCode, 500)
	assert.Equal(t, n, s.Total(), "refused requests fetch nothing")

	// The rate limit (10 a minute, burst 3 by default): two checks made
	// above, so a few more reach 429 with Retry-After.
	limited := false
	for range 6 {
		resp, _ = postForm(t, srv.base+"/api/check", url.Values{"url": {"http://s.test/tool"}}, nil)
		if resp.StatusCode == http.StatusTooManyRequests {
			limited = true
			assert.NotEmpty(t, resp.Header.Get("Retry-After"))
			break
		}
	}
	assert.True(t, limited, "the free tool's rate limit answers 429")

	srv.signal(syscall.SIGINT)
	r = srv.wait()
	assert.Equal(t, 0, r.code, "Ctrl-C ends serve with exit 0: %s", r)
	assertIdentity(t, s.Requests(), monitorUA, xAgent)
}

// TestMonitorWatchLog: `watch` takes the due snapshots, writes the
// decision events with -log, and ends with exit 0 on Ctrl-C.
func TestMonitorWatchLog(t *testing.T) {
	t.Parallel()
	net := testsite.NewNetwork(t, testsite.Loopback)
	s := net.Add("w.test")
	s.Robots("User-agent: *\nDisallow: /private/\n")
	s.HTML("/", page("Watched"))
	dir := t.TempDir()
	r := monitor(t, dir, net, "track", "-db", "mon.db", "http://w.test/", "http://w.test/private/z")
	require.Equal(t, 0, r.code, r)
	args := append([]string{"watch", "-db", "mon.db", "-allow-private", "-log", "decisions.jsonl"}, resolveFlags(net, nil)...)
	p := start(t, "monitor", opts{dir: dir}, args...)
	p.waitFor(30*time.Second, "the blocked line", func() bool {
		out := p.stdout.String()
		return strings.Contains(out, "ok      http://w.test/: HTTP 200") && strings.Contains(out, "blocked http://w.test/private/z")
	})
	p.signal(syscall.SIGINT)
	r = p.wait()
	assert.Equal(t, 0, r.code, "watch ends with exit 0 on Ctrl-C: %s", r)
	assertNever(t, s.Requests(), "/private/")
	log, err := os.ReadFile(filepath.Join(dir, "decisions.jsonl"))
	require.NoError(t, err)
	assert.Contains(t, string(log), `"msg":"robots.fetch"`)
	assert.Regexp(t, `"msg":"robots.decision".*"url":"http://w.test/private/z".*"outcome":"disallowed"`, string(log))
}

// TestMonitorAlertWebhook: `alert add` a signed webhook to a loopback
// receiver; the next run that finds a change delivers it once, with the
// change's kind, old and new value and the history link.
func TestMonitorAlertWebhook(t *testing.T) {
	t.Parallel()
	net, a, _ := monitorSites(t)
	dir := t.TempDir()
	var mu sync.Mutex
	var got []map[string]any
	keys := map[string]int{}
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		mu.Lock()
		got = append(got, m)
		keys[r.Header.Get("Idempotency-Key")]++
		mu.Unlock()
		assert.True(t, strings.HasPrefix(r.Header.Get("X-Polite-Signature"), "sha256="), "signed")
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()
	r := monitor(t, dir, net, "track", "-db", "mon.db", "http://a.test/about")
	require.Equal(t, 0, r.code, r)
	r = run(t, "monitor", opts{dir: dir}, "alert", "add", "-db", "mon.db", "-allow-private", "-webhook", recv.URL+"/hook",
		"-secret", "e2e", "-kinds", "title")
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "alert channel 1: webhook http://127.0.0.1:")
	r = monitor(t, dir, net, "run", "-db", "mon.db", "-public-url", "http://127.0.0.1:8080")
	require.Equal(t, 0, r.code, r)
	a.HTML("/about", page("About us"))
	db, err := sql.Open("sqlite", filepath.Join(dir, "mon.db"))
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE pages SET next_due = '2000-01-01T00:00:00.000000000Z'`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	r = monitor(t, dir, net, "run", "-db", "mon.db", "-public-url", "http://127.0.0.1:8080")
	require.Equal(t, 0, r.code, r)
	assert.Contains(t, r.stdout, "alerts: 1 delivery attempts")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 1)
	assert.Len(t, keys, 1)
	assert.Equal(t, "http://a.test/about", got[0]["page_url"])
	assert.Equal(t, "http://127.0.0.1:8080/page?url=http%3A%2F%2Fa.test%2Fabout", got[0]["history_url"])
	ch := got[0]["changes"].([]any)[0].(map[string]any)
	assert.Equal(t, "title", ch["kind"])
	assert.Equal(t, "About", ch["old"])
	assert.Equal(t, "About us", ch["new"])
}
