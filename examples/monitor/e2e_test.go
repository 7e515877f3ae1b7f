package main

import (
	"context"
	"database/sql"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/monitor/internal/schedule"
	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
	"github.com/politecrawl/polite/examples/monitor/internal/store"
	"github.com/politecrawl/polite/internal/testsite"
)

// harness is one monitor database, a network of loopback sites and a fake
// clock; commands run in-process.
type harness struct {
	t   *testing.T
	net *testsite.Network
	clk *fakeClock
	db  string
	e   env
}

func newHarness(t *testing.T) *harness {
	n := testsite.NewNetwork(t, testsite.Loopback)
	clk := newFakeClock()
	return &harness{t: t, net: n, clk: clk, db: tempDB(t),
		e: env{now: clk.Now, transport: n.Transport(), anyGap: true}}
}

// site adds host with robots.txt body (no robots.txt route when "") and
// HTML pages at paths, each titled after its path.
func (h *harness) site(host, robotsTxt string, paths ...string) *testsite.Site {
	s := h.net.Add(host)
	if robotsTxt != "" {
		s.Robots(robotsTxt)
	}
	for _, p := range paths {
		s.HTML(p, htmlPage("Title of "+p, "Words on "+p))
	}
	return s
}

func htmlPage(title, text string) string {
	return `<!doctype html><html><head><title>` + title + `</title>
<meta name="description" content="About ` + title + `">
<link rel="canonical" href="/canonical">
<link rel="alternate" hreflang="de" href="/de/">
<meta name="robots" content="index, follow">
</head><body><h1>` + title + `</h1><h1>second</h1><p>` + text + `</p></body></html>`
}

func (h *harness) cli(args ...string) (int, string, string) {
	h.t.Helper()
	return cli(h.t, h.e, append(args[:1:1], append([]string{"-db", h.db}, args[1:]...)...)...)
}

func (h *harness) track(urls ...string) {
	h.t.Helper()
	code, _, errOut := h.cli(append([]string{"track"}, urls...)...)
	require.Equal(h.t, exitOK, code, errOut)
}

// run does one `run` with no gap and returns its output.
func (h *harness) run() string {
	h.t.Helper()
	code, out, errOut := h.cli("run", "-gap", "0s")
	require.Equal(h.t, exitOK, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	return out
}

func (h *harness) snapshots(url string) []snapshot.Snapshot {
	h.t.Helper()
	st := openTestStore(h.t, h.db)
	all, err := st.Snapshots(context.Background())
	require.NoError(h.t, err)
	var out []snapshot.Snapshot
	for _, sn := range all {
		if sn.PageURL == url {
			out = append(out, sn)
		}
	}
	return out
}

func TestEveryRequestCarriesIdentity(t *testing.T) {
	h := newHarness(t)
	h.site("a.test", "User-agent: *\nDisallow: /private\n", "/", "/about")
	h.site("b.test", "", "/") // no robots.txt: a 404
	h.track("http://a.test/", "http://a.test/about", "http://b.test/")
	h.run()

	reqs := h.net.Requests()
	require.Len(t, reqs, 5, "two robots.txt and three pages")
	var robotsSeen int
	for _, r := range reqs {
		assert.Equal(t, "GET", r.Method)
		assert.Equal(t, defaultUserAgent, r.Header.Get("User-Agent"), r.Path)
		assert.Equal(t, []string{"2-UA"}, r.Header.Values("X-AGENT"), r.Path)
		if r.Path == "/robots.txt" {
			robotsSeen++
		}
	}
	assert.Equal(t, 2, robotsSeen)
}

func TestSnapshotFields(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nAllow: /\n")
	s.Route("/p", testsite.Response{ContentType: "text/html", Body: htmlPage("Pricing", "one two three"),
		Header: http.Header{"X-Robots-Tag": {"noarchive"}}})
	s.Redirect("/old", "/p", http.StatusMovedPermanently)
	h.track("http://a.test/old")
	h.run()

	snaps := h.snapshots("http://a.test/old")
	require.Len(t, snaps, 1)
	sn := snaps[0]
	assert.False(t, sn.Blocked)
	assert.Equal(t, 200, sn.Status)
	assert.Equal(t, "http://a.test/p", sn.FinalURL)
	assert.Equal(t, []snapshot.Hop{{URL: "http://a.test/old", Status: 301, Location: "/p"}}, sn.Redirects)
	assert.Equal(t, "Pricing", sn.Title)
	assert.Equal(t, "About Pricing", sn.MetaDescription)
	assert.Equal(t, "http://a.test/canonical", sn.Canonical)
	assert.Equal(t, "index, follow", sn.MetaRobots)
	assert.Equal(t, "noarchive", sn.XRobotsTag)
	assert.Equal(t, "Pricing", sn.H1, "the first h1")
	assert.Equal(t, []snapshot.Alternate{{Hreflang: "de", URL: "http://a.test/de/"}}, sn.Hreflang)
	assert.Len(t, sn.ContentHash, 64)
	assert.Equal(t, 5, sn.WordCount, "Pricing second one two three")
	assert.Empty(t, sn.Error)
	assert.Equal(t, h.clk.Now(), sn.TakenAt)
}

func TestRobotsFetchedOncePerHostAcrossPagesAndRuns(t *testing.T) {
	h := newHarness(t)
	a := h.site("a.test", "User-agent: *\nAllow: /\n", "/1", "/2", "/3", "/4")
	b := h.site("b.test", "User-agent: *\nAllow: /\n", "/1", "/2", "/3")
	h.track("http://a.test/1", "http://a.test/2", "http://b.test/1", "http://b.test/2")
	h.run()
	assert.Equal(t, 1, a.Count("/robots.txt"))
	assert.Equal(t, 1, b.Count("/robots.txt"))

	// A second run 30 minutes later, in a fresh process as far as the cache
	// is concerned, snapshots newly tracked pages with the stored rules.
	h.clk.Advance(30 * time.Minute)
	h.track("http://a.test/3", "http://a.test/4", "http://b.test/3")
	h.run()
	assert.Equal(t, 1, a.Count("/robots.txt"), "robots.txt is cached across runs")
	assert.Equal(t, 1, b.Count("/robots.txt"))
	for _, p := range []string{"/1", "/2", "/3", "/4"} {
		assert.Equal(t, 1, a.Count(p), p)
	}

	// After the hour, the rules are fetched again, once per host.
	h.clk.Advance(31 * time.Minute)
	h.track("http://a.test/5")
	a.HTML("/5", htmlPage("five", "five"))
	h.run()
	assert.Equal(t, 2, a.Count("/robots.txt"))
	assert.Equal(t, 1, b.Count("/robots.txt"), "nothing of b.test was due")
}

func TestDisallowedPageNeverFetchedStoredBlocked(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nDisallow: /private/\n", "/private/x", "/public")
	h.track("http://a.test/private/x", "http://a.test/public")
	out := h.run()
	assert.Contains(t, out, "blocked http://a.test/private/x")

	assert.Equal(t, 0, s.Count("/private/x"), "never requested")
	assert.Equal(t, 1, s.Count("/public"))

	var blocked int
	var status, title, desc, hash, words, ms sql.NullString
	require.NoError(t, rawDB(t, h.db).QueryRow(`SELECT blocked_by_robots, status, title, meta_description, content_hash, word_count,
		response_ms FROM snapshots WHERE page_url = ?`, "http://a.test/private/x").
		Scan(&blocked, &status, &title, &desc, &hash, &words, &ms))
	assert.Equal(t, 1, blocked)
	for _, v := range []sql.NullString{status, title, desc, hash, words, ms} {
		assert.False(t, v.Valid, "a blocked row has no SEO fields")
	}

	code, statusOut, _ := h.cli("status")
	require.Equal(t, exitOK, code)
	assert.Contains(t, statusOut, "http://a.test/private/x  last check: 2026-11-29 12:00:00Z  next due: "+dueAfter("http://a.test/private/x", "2026-11-29 12:00:00Z")+"  "+
		"Latest check was skipped — robots.txt disallows 2-UAcomBot on this path.\n")
}

func TestAllowOnePathBlockEverythingElse(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: 2-UAcomBot\nDisallow: /\nAllow: /blog/\n", "/", "/about", "/blog/", "/blog/post")
	h.track("http://a.test/", "http://a.test/about", "http://a.test/blog/", "http://a.test/blog/post")
	h.run()
	assert.Equal(t, 0, s.Count("/"))
	assert.Equal(t, 0, s.Count("/about"))
	assert.Equal(t, 1, s.Count("/blog/"))
	assert.Equal(t, 1, s.Count("/blog/post"))
	assert.True(t, h.snapshots("http://a.test/about")[0].Blocked)
	assert.False(t, h.snapshots("http://a.test/blog/post")[0].Blocked)
}

func TestSpecificGroupBeatsWildcard(t *testing.T) {
	h := newHarness(t)
	// The 2-UAcomBot group (any case) allows what * forbids...
	a := h.site("a.test", "User-agent: *\nDisallow: /\n\nUser-agent: 2-uacombot\nAllow: /\n", "/page")
	// ...and forbids what * allows.
	b := h.site("b.test", "User-agent: *\nAllow: /\n\nUser-agent: 2-UAcomBot\nDisallow: /news\n", "/news", "/shop")
	// A group for another bot whose name starts with ours does not apply.
	c := h.site("c.test", "User-agent: 2-UAcomBotExtra\nDisallow: /\n", "/page")
	h.track("http://a.test/page", "http://b.test/news", "http://b.test/shop", "http://c.test/page")
	h.run()
	assert.Equal(t, 1, a.Count("/page"))
	assert.Equal(t, 0, b.Count("/news"))
	assert.Equal(t, 1, b.Count("/shop"))
	assert.Equal(t, 1, c.Count("/page"))
}

func TestRobotsServerErrorIsTemporaryDisallow(t *testing.T) {
	h := newHarness(t)
	s := h.net.Add("a.test")
	s.Route("/robots.txt",
		testsite.Response{Status: http.StatusServiceUnavailable},
		testsite.Response{ContentType: "text/plain", Body: "User-agent: *\nAllow: /\n"})
	s.HTML("/1", htmlPage("one", "one"))
	s.HTML("/2", htmlPage("two", "two"))
	h.track("http://a.test/1")
	out := h.run()
	assert.Contains(t, out, "waiting http://a.test/1: robots.txt unreachable (HTTP 503)")
	assert.Equal(t, 1, s.Count("/robots.txt"))
	assert.Equal(t, 0, s.Count("/1"), "no snapshot while robots.txt answers 5xx")
	assert.Empty(t, h.snapshots("http://a.test/1"))
	code, status, _ := h.cli("status")
	require.Equal(t, exitOK, code)
	assert.Contains(t, status, "next due: 2026-11-29 12:05:00Z  waiting: robots.txt unreachable (HTTP 503)")

	// Four minutes later a newly tracked page of the same host asks the
	// cache, which still holds the 5xx from the database: no refetch.
	h.clk.Advance(4 * time.Minute)
	h.track("http://a.test/2")
	h.run()
	assert.Equal(t, 1, s.Count("/robots.txt"), "no robots.txt refetch within five minutes")
	assert.Equal(t, 0, s.Count("/1"))
	assert.Equal(t, 0, s.Count("/2"))

	// After five minutes robots.txt is asked again; it answers, and both
	// pages are snapshotted.
	h.clk.Advance(time.Minute + time.Second)
	h.run()
	assert.Equal(t, 2, s.Count("/robots.txt"))
	assert.Equal(t, 1, s.Count("/1"))
	assert.Equal(t, 1, s.Count("/2"))
	assert.Len(t, h.snapshots("http://a.test/1"), 1)
}

func TestRobotsUnreachableHostIsTemporaryDisallow(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nAllow: /\n", "/")
	s.Close() // connection refused
	h.track("http://a.test/")
	out := h.run()
	assert.Contains(t, out, "waiting http://a.test/")
	assert.Empty(t, h.snapshots("http://a.test/"))
}

func TestRobotsNotFoundOrGoneMeansProceed(t *testing.T) {
	h := newHarness(t)
	a := h.site("a.test", "", "/page")
	a.Status("/robots.txt", http.StatusNotFound)
	b := h.site("b.test", "", "/page")
	b.Status("/robots.txt", http.StatusGone)
	h.track("http://a.test/page", "http://b.test/page")
	h.run()
	assert.Equal(t, 1, a.Count("/page"))
	assert.Equal(t, 1, b.Count("/page"))
	assert.Equal(t, "Title of /page", h.snapshots("http://b.test/page")[0].Title)
}

func TestAtMostOneSnapshotPerInterval(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nAllow: /\n", "/")
	h.track("http://a.test/")
	h.run()
	out := h.run()
	assert.Contains(t, out, "run: 0 due")
	assert.Equal(t, 1, s.Count("/"))
	assert.Len(t, h.snapshots("http://a.test/"), 1)

	// Due one interval plus the page's own jitter later, not before.
	h.clk.Advance(6*time.Hour + store.Jitter("http://a.test/", 6*time.Hour) - time.Second)
	h.run()
	assert.Equal(t, 1, s.Count("/"), "not before the interval")
	h.clk.Advance(time.Second)
	h.run()
	assert.Equal(t, 2, s.Count("/"))
	assert.Len(t, h.snapshots("http://a.test/"), 2)
}

func TestFetchErrorIsRecordedAndWaitsForInterval(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nAllow: /\n")
	s.Status("/broken", http.StatusNotFound)
	h.track("http://a.test/broken")
	h.run()
	snaps := h.snapshots("http://a.test/broken")
	require.Len(t, snaps, 1)
	assert.Equal(t, 404, snaps[0].Status)
	assert.Empty(t, snaps[0].Title)
	h.run()
	assert.Equal(t, 1, s.Count("/broken"))
}

func TestRedirectIntoDisallowedPathIsBlocked(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nDisallow: /private/\n", "/private/new")
	s.Redirect("/old", "/private/new", http.StatusMovedPermanently)
	h.track("http://a.test/old")
	h.run()
	assert.Equal(t, 1, s.Count("/old"))
	assert.Equal(t, 0, s.Count("/private/new"))
	snaps := h.snapshots("http://a.test/old")
	require.Len(t, snaps, 1)
	assert.True(t, snaps[0].Blocked)
	assert.Empty(t, snaps[0].Title)
}

func TestReportAfterRunsShowsChangesAndOmitsBlocked(t *testing.T) {
	h := newHarness(t)
	s := h.net.Add("a.test")
	s.Route("/robots.txt",
		testsite.Response{ContentType: "text/plain", Body: "User-agent: *\nAllow: /\n"},
		testsite.Response{ContentType: "text/plain", Body: "User-agent: 2-UAcomBot\nDisallow: /secret\n"})
	s.Route("/pricing",
		testsite.Response{ContentType: "text/html", Body: htmlPage("Pricing", "cheap")},
		testsite.Response{ContentType: "text/html", Body: htmlPage("Pricing plans", "cheap")})
	s.Route("/secret",
		testsite.Response{ContentType: "text/html", Body: htmlPage("Secret", "a")},
		testsite.Response{ContentType: "text/html", Body: htmlPage("Secret 2", "b")})
	h.track("http://a.test/pricing", "http://a.test/secret")
	h.run()
	h.clk.Advance(6*time.Hour + maxJitter)
	h.run()
	assert.Equal(t, 1, s.Count("/secret"), "blocked on the second run")

	code, out, errOut := h.cli("report")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, `http://a.test/pricing
  2026-11-29 12:00:00Z -> 2026-11-29 18:30:00Z
    title (medium): "Pricing" -> "Pricing plans"
    meta_description (low): "About Pricing" -> "About Pricing plans"
    h1 (low): "Pricing" -> "Pricing plans"
    text (low): 1 word added, 0 removed
      Pricing{+ plans+} ¶ second ¶ cheap
`, out, "the content change is a word diff, never two hashes")
	assert.NotContains(t, out, "content_hash")
	assert.NotContains(t, out, "secret")
}

func TestInterruptedRunKeepsFinishedSnapshots(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := h.site("a.test", "User-agent: *\nAllow: /\n", "/1")
	s.Handle("/2", func(w http.ResponseWriter, r *http.Request) {
		cancel() // Ctrl-C while this page is being fetched
		<-r.Context().Done()
	})
	h.track("http://a.test/1")
	h.clk.Advance(time.Second) // /1 is queued first: it was due first
	h.track("http://a.test/2")
	code, out, errOut := cliCtx(t, ctx, h.e, "run", "-db", h.db, "-gap", "0s", "-parallel", "1")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "interrupted")
	assert.Contains(t, out, "1 not checked (interrupted)")
	assert.Len(t, h.snapshots("http://a.test/1"), 1, "the finished snapshot is saved")
	assert.Empty(t, h.snapshots("http://a.test/2"))

	st := openTestStore(t, h.db)
	due, err := st.DuePages(context.Background(), h.clk.Now())
	require.NoError(t, err)
	require.Len(t, due, 1)
	assert.Equal(t, "http://a.test/2", due[0].URL, "the interrupted page stays due")
}

func TestWatchSnapshotsEachIntervalAndStopsOnCancel(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nAllow: /\n", "/")
	h.track("http://a.test/")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := h.clk.Now()
	sleeps := 0
	h.e.sleep = func(ctx context.Context, d time.Duration) error {
		sleeps++
		require.Positive(t, d)
		require.LessOrEqual(t, d, schedule.MaxWatchSleep)
		h.clk.Advance(d)
		if h.clk.Now().Sub(start) >= 13*time.Hour {
			cancel()
			return ctx.Err()
		}
		return nil
	}
	code, out, errOut := cliCtx(t, ctx, h.e, "watch", "-db", h.db, "-gap", "0s")
	assert.Equal(t, exitOK, code, errOut)
	assert.Equal(t, 3, s.Count("/"), "at 0h, 6h and 12h")
	assert.Equal(t, 3, s.Count("/robots.txt"), "robots.txt older than an hour each time")
	assert.Equal(t, 3, strings.Count(out, "ok      http://a.test/"))
	assert.Greater(t, sleeps, 3)
}

func TestResolveFlagReachesLoopbackSite(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nAllow: /\n", "/")
	h.track("http://a.test/")
	e := h.e
	e.transport = nil // the real base transport, dialled through -resolve
	var args []string
	for host, addr := range h.net.Resolve() {
		args = append(args, "-resolve", strings.TrimSuffix(host, ":80")+":80:"+addr)
	}
	// Without -allow-private the loopback address is refused before any
	// connection; with it, -resolve reaches the site.
	code, out, errOut := cli(t, e, append([]string{"run", "-db", h.db, "-gap", "0s"}, args...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "error   http://a.test/: refused: a.test resolves to 127.0.0.1, a loopback address")
	assert.Equal(t, 0, s.Total(), "not even robots.txt was requested")
	h.clk.Advance(6*time.Hour + maxJitter)
	code, out, errOut = cli(t, e, append([]string{"run", "-db", h.db, "-gap", "0s", "-allow-private"}, args...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "ok      http://a.test/: HTTP 200")
	assert.Equal(t, 1, s.Count("/"))
}

func TestPageHeldByAnotherProcessIsNotCheckedTwice(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nAllow: /\n", "/1", "/2")
	h.track("http://a.test/1", "http://a.test/2")
	// Another monitor process (a cron run during a watch) holds /1.
	st := openTestStore(t, h.db)
	ok, err := st.Claim(context.Background(), "http://a.test/1", h.clk.Now(), h.clk.Now().Add(schedule.ClaimLease))
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = st.Claim(context.Background(), "http://a.test/1", h.clk.Now(), h.clk.Now().Add(schedule.ClaimLease))
	require.NoError(t, err)
	require.False(t, ok, "a claim is exclusive")

	out := h.run()
	assert.Contains(t, out, "run: 1 due")
	assert.Equal(t, 0, s.Count("/1"))
	assert.Equal(t, 1, s.Count("/2"))

	// A claim of a crashed process runs out.
	h.clk.Advance(schedule.ClaimLease)
	out = h.run()
	assert.Contains(t, out, "run: 1 due, 1 snapshots")
	assert.Equal(t, 1, s.Count("/1"))
}

// The page promises plain HTTP requests and no JavaScript: a snapshot is one
// GET of the page (after robots.txt), never its scripts, styles, images,
// frames or a meta-refresh target.
func TestSnapshotIsOnePlainRequest(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nAllow: /\n")
	s.HTML("/app", `<!doctype html><html><head><title>App</title>
<meta http-equiv="refresh" content="0; url=/next">
<link rel="stylesheet" href="/style.css"><link rel="preload" href="/font.woff2" as="font">
<script src="/app.js"></script><script>fetch("/api/data")</script></head>
<body><img src="/logo.png"><iframe src="/frame"></iframe><a href="/other">other</a></body></html>`)
	h.track("http://a.test/app")
	h.run()
	assert.Equal(t, []string{"/robots.txt", "/app"}, s.Paths())
	for _, r := range s.Requests() {
		assert.Equal(t, http.MethodGet, r.Method, r.Path)
	}
	require.Len(t, h.snapshots("http://a.test/app"), 1)
	assert.Equal(t, "App", h.snapshots("http://a.test/app")[0].Title)
}

// A page row the frontier refuses (written by hand: not a canonical http(s)
// URL) is recorded as an error and waits its interval, so watch does not
// spin on it every second.
func TestUnqueueablePageWaitsForInterval(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nAllow: /\n", "/x")
	h.track("http://a.test/x")
	raw := rawDB(t, h.db)
	for _, u := range []string{"ftp://a.test/x", "HTTP://A.TEST/x"} {
		_, err := raw.Exec(`INSERT INTO pages(url, interval_seconds, added_at, next_due) VALUES(?, 21600, ?, ?)`,
			u, store.FmtTime(h.clk.Now()), store.FmtTime(h.clk.Now()))
		require.NoError(t, err)
	}
	require.NoError(t, raw.Close())

	out := h.run()
	assert.Contains(t, out, "run: 3 due, 3 snapshots (2 with errors)")
	assert.Equal(t, 1, s.Count("/x"), "the canonical page is fetched once")
	// Of the two spellings of one page, one is checked and the other is
	// the frontier's duplicate; the ftp row is invalid.
	notChecked := 0
	for _, u := range []string{"ftp://a.test/x", "HTTP://A.TEST/x", "http://a.test/x"} {
		snaps := h.snapshots(u)
		require.Len(t, snaps, 1, u)
		if strings.HasPrefix(snaps[0].Error, "not checked: ") {
			notChecked++
		}
	}
	assert.Equal(t, 2, notChecked)
	assert.Contains(t, h.snapshots("ftp://a.test/x")[0].Error, "not checked: frontier: invalid URL")
	assert.Contains(t, h.run(), "run: 0 due")
}
