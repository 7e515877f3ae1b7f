package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mmcdole/gofeed"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/monitor/internal/alert"
	"github.com/politecrawl/polite/fetch"
)

// seoPage is an HTML page with every field the change kinds read.
type seoPage struct {
	title, desc, canonical, robots, h1, hreflang, text string
}

func (p seoPage) html() string {
	return `<!doctype html><html><head><title>` + p.title + `</title>
<meta name="description" content="` + p.desc + `">
<link rel="canonical" href="` + p.canonical + `">
<link rel="alternate" hreflang="` + p.hreflang + `" href="/alt/">
<meta name="robots" content="` + p.robots + `">
</head><body><h1>` + p.h1 + `</h1><p>` + p.text + `</p></body></html>`
}

func basePage() seoPage {
	return seoPage{title: "Pricing", desc: "Our prices", canonical: "http://a.test/canonical", robots: "index, follow",
		h1: "Plans", hreflang: "de", text: "Plans start at ten euros a month for one site and its pages"}
}

// kindSite serves one path per change kind: version one before stage is
// set, version two after.
func kindSite(t *testing.T, h *harness, stage *atomic.Bool) {
	s := h.net.Add("a.test")
	s.Handle("/robots.txt", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		if stage.Load() {
			fmt.Fprint(w, "User-agent: *\nDisallow: /blocked\n")
			return
		}
		fmt.Fprint(w, "User-agent: *\nAllow: /\n")
	})
	serve := func(path string, change func(p *seoPage), hdr func(w http.ResponseWriter)) {
		s.Handle(path, func(w http.ResponseWriter, _ *http.Request) {
			p := basePage()
			w.Header().Set("Content-Type", "text/html")
			if stage.Load() {
				change(&p)
				if hdr != nil {
					hdr(w)
				}
			}
			fmt.Fprint(w, p.html())
		})
	}
	same := func(*seoPage) {}
	serve("/title", func(p *seoPage) { p.title = "Pricing 2027" }, nil)
	serve("/desc", func(p *seoPage) { p.desc = "Our new prices" }, nil)
	serve("/canonical", func(p *seoPage) { p.canonical = "http://a.test/other" }, nil)
	serve("/noindex", func(p *seoPage) { p.robots = "noindex, follow" }, nil)
	serve("/xrobots", same, func(w http.ResponseWriter) { w.Header().Set("X-Robots-Tag", "noindex") })
	serve("/h1", func(p *seoPage) { p.h1 = "Our plans" }, nil)
	serve("/hreflang", func(p *seoPage) { p.hreflang = "fr" }, nil)
	serve("/blocked", same, nil)
	serve("/text", func(p *seoPage) { p.text = "Plans start at twelve euros a month for two sites and all pages" }, nil)
	serve("/text-small", func(p *seoPage) { p.text = "Plans start at ten euros a month for one site and its page" }, nil)
	serve("/r1", same, nil)
	serve("/r2", same, nil)
	s.Handle("/redirect", func(w http.ResponseWriter, r *http.Request) {
		to := "/r1"
		if stage.Load() {
			to = "/r2"
		}
		http.Redirect(w, r, to, http.StatusMovedPermanently)
	})
	s.Handle("/status", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if stage.Load() {
			w.WriteHeader(http.StatusNotFound)
		}
		fmt.Fprint(w, basePage().html())
	})
}

// kindCases are the pages of kindSite and the change each must show.
var kindCases = []struct{ path, kind, severity string }{
	{"/title", "title", "medium"},
	{"/desc", "meta_description", "low"},
	{"/canonical", "canonical", "high"},
	{"/noindex", "noindex_added", "critical"},
	{"/xrobots", "noindex_added", "critical"},
	{"/h1", "h1", "low"},
	{"/hreflang", "hreflang", "low"},
	{"/blocked", "robots_blocked", "high"},
	{"/text", "text", "low"},
	{"/redirect", "redirect", "medium"},
	{"/status", "status", "high"},
}

// TestEveryChangeKindEndToEnd: a loopback site changes one thing per page
// between two runs; each page's stored row, status, report, dashboard and
// history show the classified kind and severity, and a text change below
// -min-text-words is no change.
func TestEveryChangeKindEndToEnd(t *testing.T) {
	h := newHarness(t)
	var stage atomic.Bool
	kindSite(t, h, &stage)
	var urls []string
	for _, c := range kindCases {
		urls = append(urls, "http://a.test"+c.path)
	}
	urls = append(urls, "http://a.test/text-small")
	h.track(urls...)
	runArgs := []string{"run", "-gap", "0s", "-min-text-words", "3"}
	code, out, errOut := h.cli(runArgs...)
	require.Equal(t, exitOK, code, out+errOut)
	stage.Store(true)
	h.clk.Advance(6*time.Hour + maxJitter + time.Minute)
	code, out, errOut = h.cli(runArgs...)
	require.Equal(t, exitOK, code, out+errOut)

	_, status, _ := h.cli("status")
	_, report, _ := h.cli("report", "-min-text-words", "3")
	srv := newTestServer(t, h)
	dash := do(t, srv, "GET", "/", nil).body
	for _, c := range kindCases {
		u := "http://a.test" + c.path
		snaps := h.snapshots(u)
		require.Len(t, snaps, 2, u)
		assert.Contains(t, snaps[1].Changes, c.kind, "stored row of %s", u)
		assert.Contains(t, status, "["+c.severity+"] "+c.kind, "status of %s", u)
		if c.kind != "robots_blocked" { // a blocked page is never in the report (the seed's promise)
			assert.Contains(t, report, c.kind+" ("+c.severity+")", "report of %s", u)
			hist := do(t, srv, "GET", "/page?url="+url.QueryEscape(u), nil).body
			assert.Contains(t, hist, "<th>"+c.kind+` <span class="sev">`+c.severity+"</span></th>", "history of %s", u)
		}
		assert.Contains(t, dash, "["+c.severity+"] "+c.kind, "dashboard row of %s", u)
	}
	small := h.snapshots("http://a.test/text-small")
	assert.Empty(t, small[1].Changes, "one word changed: below -min-text-words 3")
	assert.Contains(t, report, "noindex_added (critical): \"meta robots \\\"index, follow\\\"\" -> \"meta robots \\\"noindex, follow\\\"\"")
}

// receiver is a loopback webhook endpoint that counts idempotency keys.
type receiver struct {
	mu     sync.Mutex
	keys   map[string]int
	bodies []alert.Message
	hdrs   []http.Header
	raw    [][]byte
	status atomic.Int32 // answer; 0: 204
	srv    *httptest.Server
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{keys: map[string]int{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if st := rc.status.Load(); st != 0 {
			w.WriteHeader(int(st))
			return
		}
		var m alert.Message
		_ = json.Unmarshal(body, &m)
		rc.mu.Lock()
		rc.keys[r.Header.Get(alert.HeaderKey)]++
		rc.bodies = append(rc.bodies, m)
		rc.hdrs = append(rc.hdrs, r.Header.Clone())
		rc.raw = append(rc.raw, body)
		rc.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) messages() []alert.Message {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]alert.Message(nil), rc.bodies...)
}

// TestAlertsQueuedWithTheSnapshotAndDeliveredByRun: channels added with
// `alert add` (monitor-wide, per host, per page, by kind, by severity) get
// exactly the changes they match, signed, with old and new values, the
// history link and the word diff, delivered by run's drain.
func TestAlertsQueuedWithTheSnapshotAndDeliveredByRun(t *testing.T) {
	h := newHarness(t)
	var stage atomic.Bool
	kindSite(t, h, &stage)
	h.track("http://a.test/noindex", "http://a.test/text", "http://a.test/title")
	all, crit, page, other := newReceiver(t), newReceiver(t), newReceiver(t), newReceiver(t)
	add := func(args ...string) {
		t.Helper()
		code, out, errOut := cli(t, h.e, append([]string{"alert", "add", "-db", h.db, "-allow-private"}, args...)...)
		require.Equal(t, exitOK, code, out+errOut)
		require.Contains(t, out, "alert channel ")
	}
	add("-webhook", all.srv.URL+"/hook", "-secret", "s3cret")
	add("-webhook", crit.srv.URL+"/hook", "-min-severity", "critical")
	add("-webhook", page.srv.URL+"/hook", "-page", "http://a.test/text", "-kinds", "text")
	add("-webhook", other.srv.URL+"/hook", "-host", "http://b.test")
	slack := newReceiver(t)
	add("-slack", slack.srv.URL+"/services/T0/B0/secretpath", "-kinds", "noindex_added")

	runArgs := []string{"run", "-gap", "0s", "-allow-private", "-public-url", "http://127.0.0.1:9999/"}
	code, out, errOut := h.cli(runArgs...)
	require.Equal(t, exitOK, code, out+errOut)
	assert.Empty(t, all.messages(), "first snapshots change nothing")
	stage.Store(true)
	h.clk.Advance(6*time.Hour + maxJitter + time.Minute)
	code, out, errOut = h.cli(runArgs...)
	require.Equal(t, exitOK, code, out+errOut)
	assert.Contains(t, out, "alerts: 6 delivery attempts", "3 to the monitor-wide channel, 1 critical, 1 for the page, 1 to Slack")

	msgs := all.messages()
	require.Len(t, msgs, 3, "one message per changed page")
	for k, n := range all.keys {
		assert.Equal(t, 1, n, "key %s delivered once", k)
	}
	byPage := map[string]alert.Message{}
	for i, m := range msgs {
		byPage[m.PageURL] = m
		require.NoError(t, alert.Verify([]byte("s3cret"), all.hdrs[i], all.raw[i], time.Now(), time.Minute), "signed")
	}
	ni := byPage["http://a.test/noindex"]
	assert.Equal(t, "critical", ni.Severity)
	require.Len(t, ni.Changes, 1)
	assert.Equal(t, "noindex_added", ni.Changes[0].Kind)
	assert.Contains(t, ni.Changes[0].Old, "index, follow")
	assert.Contains(t, ni.Changes[0].New, "noindex, follow")
	assert.Equal(t, "http://127.0.0.1:9999/page?url=http%3A%2F%2Fa.test%2Fnoindex", ni.HistoryURL)
	tx := byPage["http://a.test/text"]
	require.NotEmpty(t, tx.DiffLines)
	assert.Contains(t, tx.DiffLines[0], "[-ten-]{+twelve+}")

	cm := crit.messages()
	require.Len(t, cm, 1, "min-severity critical: only the noindex")
	assert.Equal(t, "http://a.test/noindex", cm[0].PageURL)
	pm := page.messages()
	require.Len(t, pm, 1, "page and kind filter")
	assert.Equal(t, "http://a.test/text", pm[0].PageURL)
	assert.Empty(t, other.messages(), "another host's channel")
	slack.mu.Lock()
	require.Len(t, slack.raw, 1)
	var sl struct{ Text string }
	require.NoError(t, json.Unmarshal(slack.raw[0], &sl))
	slack.mu.Unlock()
	assert.Contains(t, sl.Text, "*[critical] noindex_added: http://a.test/noindex*")
	assert.Contains(t, sl.Text, "<http://127.0.0.1:9999/page?url=http%3A%2F%2Fa.test%2Fnoindex|History>")

	// Nothing is sent twice: a second drain has nothing due.
	h.clk.Advance(time.Minute)
	code, out, _ = h.cli(runArgs...)
	require.Equal(t, exitOK, code)
	assert.NotContains(t, out, "alerts:")
	assert.Len(t, all.messages(), 3)

	code, out, errOut = cli(t, h.e, "alert", "list", "-db", h.db)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "delivered  channel 1  [critical] noindex_added: http://a.test/noindex")
	assert.NotContains(t, out, "s3cret", "secrets are never listed")
	assert.NotContains(t, out, "secretpath", "a Slack URL's path is its secret")
	assert.Contains(t, out, "host http://b.test")
}

// TestRunNowDeliversItsAlerts: a change found by `run -now` is queued in
// its snapshot's transaction and sent by the same command, as `run` sends
// what its checks queued.
func TestRunNowDeliversItsAlerts(t *testing.T) {
	h := newHarness(t)
	var stage atomic.Bool
	kindSite(t, h, &stage)
	const page = "http://a.test/title"
	h.track(page)
	recv := newReceiver(t)
	code, out, errOut := cli(t, h.e, "alert", "add", "-db", h.db, "-allow-private", "-webhook", recv.srv.URL+"/hook")
	require.Equal(t, exitOK, code, out+errOut)
	code, out, errOut = h.cli("run", "-gap", "0s", "-allow-private", "-now", page)
	require.Equal(t, exitOK, code, out+errOut)
	assert.NotContains(t, out, "alerts:", "a first snapshot changes nothing")
	stage.Store(true)
	h.clk.Advance(6*time.Hour + time.Minute) // past the minimum, not necessarily due (jitter)
	code, out, errOut = h.cli("run", "-gap", "0s", "-allow-private", "-now", page)
	require.Equal(t, exitOK, code, out+errOut)
	assert.Contains(t, out, "alerts: 1 delivery attempts")
	msgs := recv.messages()
	require.Len(t, msgs, 1)
	assert.Equal(t, page, msgs[0].PageURL)
	require.Len(t, msgs[0].Changes, 1)
	assert.Equal(t, "title", msgs[0].Changes[0].Kind)
}

// TestAlertCLIUsageErrors: bad alert command lines exit 2 with a message,
// and a loopback destination is refused without -allow-private.
func TestAlertCLIUsageErrors(t *testing.T) {
	h := newHarness(t)
	h.track("http://a.test/")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"alert"}, "alert needs a subcommand"},
		{[]string{"alert", "nope"}, "unknown alert subcommand"},
		{[]string{"alert", "add", "-db", h.db}, "exactly one of -webhook URL, -slack URL or -email ADDR"},
		{[]string{"alert", "add", "-db", h.db, "-webhook", "ftp://x.example/"}, "want an absolute http(s) URL"},
		{[]string{"alert", "add", "-db", h.db, "-webhook", "https://x.example/", "-kinds", "titel"}, `unknown change kind "titel"`},
		{[]string{"alert", "add", "-db", h.db, "-webhook", "https://x.example/", "-min-severity", "urgent"}, `unknown severity "urgent"`},
		{[]string{"alert", "add", "-db", h.db, "-email", "a@example.com"}, "-email needs -smtp HOST:PORT"},
		{[]string{"alert", "add", "-db", h.db, "-webhook", "http://127.0.0.1:1/"}, "alert destination 127.0.0.1:1"},
		{[]string{"alert", "add", "-db", h.db, "-webhook", "http://localhost:1/"}, "unless -allow-private"},
		{[]string{"alert", "rm", "-db", h.db}, "takes one channel ID"},
		{[]string{"alert", "test", "-db", h.db, "x"}, `channel ID "x"`},
		{[]string{"run", "-db", h.db, "-min-text-percent", "120"}, "min-text-percent"},
		{[]string{"run", "-db", h.db, "-public-url", "ftp://x"}, "-public-url"},
	}
	for _, c := range cases {
		code, _, errOut := cli(t, h.e, c.args...)
		assert.Equal(t, exitUsage, code, "%v: %s", c.args, errOut)
		assert.Contains(t, errOut, c.want, "%v", c.args)
	}
	code, _, errOut := cli(t, h.e, "alert", "rm", "-db", h.db, "7")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "no alert channel 7")
	code, out, _ := cli(t, h.e, "alert", "list", "-db", h.db)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "no alert channels")
	assert.False(t, strings.Contains(out, "latest deliveries"))
}

// TestAtomFeedsParseInAFeedReader: the monitor's and a page's feed, behind
// the dashboard's Host check, parsed by gofeed.
func TestAtomFeedsParseInAFeedReader(t *testing.T) {
	h := newHarness(t)
	var stage atomic.Bool
	kindSite(t, h, &stage)
	h.track("http://a.test/noindex", "http://a.test/title")
	h.run()
	stage.Store(true)
	h.clk.Advance(6*time.Hour + maxJitter + time.Minute)
	h.run()
	srv := newTestServer(t, h)

	r := do(t, srv, "GET", "/feed.atom", nil)
	require.Equal(t, http.StatusOK, r.code, r.body)
	assert.Equal(t, "application/atom+xml; charset=utf-8", r.header.Get("Content-Type"))
	assert.NotEmpty(t, r.header.Get("Content-Security-Policy"), "the site's headers")
	feed, err := gofeed.NewParser().ParseString(r.body)
	require.NoError(t, err, r.body)
	require.Len(t, feed.Items, 2)
	titles := feed.Items[0].Title + " | " + feed.Items[1].Title
	assert.Contains(t, titles, "[critical] noindex_added: http://a.test/noindex")
	assert.Contains(t, titles, "title")
	for _, it := range feed.Items {
		assert.True(t, strings.HasPrefix(it.Link, "http://127.0.0.1:8080/page?url="), it.Link)
	}

	r = do(t, srv, "GET", "/page/feed.atom?url="+url.QueryEscape("http://a.test/noindex"), nil)
	require.Equal(t, http.StatusOK, r.code, r.body)
	feed, err = gofeed.NewParser().ParseString(r.body)
	require.NoError(t, err)
	require.Len(t, feed.Items, 1)
	assert.Contains(t, feed.Items[0].Title, "noindex_added")
	assert.Contains(t, feed.Items[0].Content+feed.Items[0].Description, "noindex, follow")

	r = do(t, srv, "GET", "/page/feed.atom?url="+url.QueryEscape("http://nowhere.test/"), nil)
	assert.Equal(t, http.StatusNotFound, r.code)
	r = do(t, srv, "GET", "/feed.atom", nil, "Host", "rebind.evil.example")
	assert.Equal(t, http.StatusMisdirectedRequest, r.code, "the Host check guards the feeds")
	hist := do(t, srv, "GET", "/page?url="+url.QueryEscape("http://a.test/noindex"), nil).body
	assert.Contains(t, hist, `href="/page/feed.atom?url=http%3a%2f%2fa.test%2fnoindex"`)
}

// TestAlertsPageAddsChannelsAndShowsFailures: the form adds a channel
// (same-origin POST only, the destination through the guard), the page
// lists it without its secret, and a failed delivery shows as a banner on
// the dashboard and a row on the alerts page.
func TestAlertsPageAddsChannelsAndShowsFailures(t *testing.T) {
	h := newHarness(t)
	var stage atomic.Bool
	kindSite(t, h, &stage)
	h.track("http://a.test/noindex")
	h.run()
	rc := newReceiver(t)

	guarded := newTestServer(t, h)
	form := url.Values{"kind": {"webhook"}, "url": {rc.srv.URL + "/hook"}, "secret": {"topsecret"}, "min_severity": {"high"}}
	r := do(t, guarded, "POST", "/alerts", form)
	assert.Equal(t, http.StatusBadRequest, r.code)
	assert.Contains(t, r.body, "unless -allow-private", "a loopback destination is refused under the guard")

	srv := newTestServer(t, h, func(o *options) { o.allowPrivate = true })
	r = do(t, srv, "POST", "/alerts", form, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusForbidden, r.code, "cross-origin POST refused")
	r = do(t, srv, "POST", "/alerts", url.Values{"kind": {"webhook"}, "url": {rc.srv.URL}, "kinds": {"titel"}})
	assert.Equal(t, http.StatusBadRequest, r.code)
	assert.Contains(t, r.body, "unknown change kind")
	r = do(t, srv, "POST", "/alerts", form)
	require.Equal(t, http.StatusSeeOther, r.code, r.body)
	r = do(t, srv, "GET", "/alerts?done=alert-added", nil)
	assert.Contains(t, r.body, "Alert channel added")
	assert.Contains(t, r.body, "every page; every kind at least high")
	assert.NotContains(t, r.body, "topsecret")
	assert.NotContains(t, do(t, srv, "GET", "/", nil).body, "alert-failed")

	// The test button sends now, through the guard, and says how it went.
	r = do(t, srv, "POST", "/alerts/test", url.Values{"id": {"1"}})
	require.Equal(t, http.StatusSeeOther, r.code, r.body)
	assert.Equal(t, "/alerts?done=alert-tested", r.header.Get("Location"))
	require.Len(t, rc.messages(), 1)
	assert.Equal(t, "test", rc.messages()[0].Changes[0].Kind)
	rc.status.Store(http.StatusBadRequest) // a 4xx is permanent: failed at once
	r = do(t, srv, "POST", "/alerts/test", url.Values{"id": {"1"}})
	assert.Equal(t, http.StatusBadGateway, r.code)
	assert.Contains(t, r.body, "test delivery to channel 1")
	assert.Contains(t, r.body, "answered 400 Bad Request")
	r = do(t, guarded, "POST", "/alerts/test", url.Values{"id": {"1"}})
	assert.Equal(t, http.StatusBadGateway, r.code)
	assert.Contains(t, r.body, "unless -allow-private", "the guarded server refuses before connect")

	stage.Store(true)
	h.clk.Advance(6*time.Hour + maxJitter + time.Minute)
	code, out, errOut := h.cli("run", "-gap", "0s", "-allow-private")
	require.Equal(t, exitOK, code, out+errOut)
	dash := do(t, srv, "GET", "/", nil).body
	assert.Contains(t, dash, "1 alert delivery failed.")
	page := do(t, srv, "GET", "/alerts", nil).body
	assert.Contains(t, page, `<tr class="d-failed"><td class="state">failed</td>`)
	assert.Contains(t, page, "answered 400 Bad Request")

	r = do(t, srv, "POST", "/alerts/remove", url.Values{"id": {"1"}})
	require.Equal(t, http.StatusSeeOther, r.code, r.body)
	assert.NotContains(t, do(t, srv, "GET", "/", nil).body, "alert-failed", "the channel's deliveries went with it")
}

// TestSenderDialsThroughTheProcessGuard: what alert channels connect
// through is the process's guard (on by default): a loopback destination
// is refused before connect; -allow-private lets it through.
func TestSenderDialsThroughTheProcessGuard(t *testing.T) {
	rc := newReceiver(t)
	st := openTestStore(t, tempDB(t))
	o := options{userAgent: defaultUserAgent, gap: time.Second, parallel: 1}
	m, err := newMonitor(st, o, env{})
	require.NoError(t, err)
	ch, err := alert.Config{Kind: "webhook", URL: rc.srv.URL + "/hook"}.Channel(m.alertNet())
	require.NoError(t, err)
	err = ch.Send(context.Background(), "k", testMessage(time.Now()))
	require.Error(t, err)
	assert.ErrorIs(t, err, fetch.ErrForbiddenAddress)
	assert.Empty(t, rc.messages(), "refused before connect")

	o.allowPrivate = true
	m, err = newMonitor(st, o, env{})
	require.NoError(t, err)
	ch, err = alert.Config{Kind: "webhook", URL: rc.srv.URL + "/hook"}.Channel(m.alertNet())
	require.NoError(t, err)
	require.NoError(t, ch.Send(context.Background(), "k", testMessage(time.Now())))
	assert.Len(t, rc.messages(), 1)
}

// TestSenderGuardJudgesTheResolvedAddress: a public-looking destination
// that -resolve maps to loopback is refused at dial time.
func TestSenderGuardJudgesTheResolvedAddress(t *testing.T) {
	rc := newReceiver(t)
	_, port, _ := strings.Cut(strings.TrimPrefix(rc.srv.URL, "http://"), ":")
	st := openTestStore(t, tempDB(t))
	o := options{userAgent: defaultUserAgent, gap: time.Second, parallel: 1,
		resolve: resolveFlag{"hooks.example:" + port: "127.0.0.1"}}
	m, err := newMonitor(st, o, env{})
	require.NoError(t, err)
	ch, err := alert.Config{Kind: "webhook", URL: "http://hooks.example:" + port + "/hook"}.Channel(m.alertNet())
	require.NoError(t, err)
	err = ch.Send(context.Background(), "k", testMessage(time.Now()))
	assert.ErrorIs(t, err, fetch.ErrForbiddenAddress)
	assert.Empty(t, rc.messages())
}
