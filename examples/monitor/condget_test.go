package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
	"github.com/politecrawl/polite/examples/monitor/internal/store"
	"github.com/politecrawl/polite/internal/testsite"
)

// validatingSite serves one page with ETag and Last-Modified and answers a
// matching conditional GET with 304 and no body, counting the body bytes it
// actually wrote.
type validatingSite struct {
	mu        sync.Mutex
	body      string
	etag      string
	modified  string
	sent      []int // body bytes written per page request
	condHdrs  []http.Header
	notModded int
}

func (v *validatingSite) set(body, etag, modified string) {
	v.mu.Lock()
	v.body, v.etag, v.modified = body, etag, modified
	v.mu.Unlock()
}

func (v *validatingSite) handle(w http.ResponseWriter, r *http.Request) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.condHdrs = append(v.condHdrs, r.Header.Clone())
	w.Header().Set("ETag", v.etag)
	w.Header().Set("Last-Modified", v.modified)
	inm, ims := r.Header.Get("If-None-Match"), r.Header.Get("If-Modified-Since")
	if (inm != "" && inm == v.etag) || (inm == "" && ims != "" && ims == v.modified) {
		v.notModded++
		v.sent = append(v.sent, 0)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "text/html")
	n, _ := io.WriteString(w, v.body)
	v.sent = append(v.sent, n)
}

func TestConditionalGETRecordsUnchangedSnapshot(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nAllow: /\n")
	v := &validatingSite{}
	body := htmlPage("Pricing", "Plans start at ten euros a month.")
	v.set(body, `"v1"`, "Sun, 29 Nov 2026 10:00:00 GMT")
	s.Handle("/pricing", v.handle)
	h.track("http://a.test/pricing")

	h.run()
	h.clk.Advance(6*time.Hour + maxJitter)
	out := h.run()
	assert.Contains(t, out, "ok      http://a.test/pricing: HTTP 304 not modified ("+snapshot.FmtBytes(int64(len(body)))+" saved)")

	require.Len(t, v.condHdrs, 2)
	assert.Empty(t, v.condHdrs[0].Get("If-None-Match"), "nothing to validate the first time")
	assert.Equal(t, `"v1"`, v.condHdrs[1].Get("If-None-Match"))
	assert.Equal(t, "Sun, 29 Nov 2026 10:00:00 GMT", v.condHdrs[1].Get("If-Modified-Since"))
	assert.Equal(t, []int{len(body), 0}, v.sent, "the second answer had no body")

	snaps := h.snapshots("http://a.test/pricing")
	require.Len(t, snaps, 2)
	un := snaps[1]
	assert.True(t, un.NotModified)
	assert.Equal(t, int64(len(body)), un.BytesSaved)
	assert.Equal(t, "Pricing", un.Title, "fields carried over")
	assert.Equal(t, snaps[0].ContentHash, un.ContentHash)
	assert.Equal(t, snaps[0].WordCount, un.WordCount)
	assert.Empty(t, un.Changes)
	text, err := un.Text()
	require.NoError(t, err)
	assert.Equal(t, "Pricing\nsecond\nPlans start at ten euros a month.", text)

	// status and the report see it: bytes saved, no change.
	code, status, _ := h.cli("status")
	require.Equal(t, exitOK, code)
	assert.Contains(t, status, "conditional GET: 1 answered 304 not modified, "+snapshot.FmtBytes(int64(len(body)))+" not downloaded again")
	code, report, _ := h.cli("report")
	require.Equal(t, exitOK, code)
	assert.Equal(t, "no changes\n", report)

	// The page changes: a full 200, compared with the carried-over fields.
	h.clk.Advance(6*time.Hour + maxJitter)
	v.set(htmlPage("Pricing", "Plans start at twelve euros a month."), `"v2"`, "Sun, 29 Nov 2026 23:00:00 GMT")
	out = h.run()
	assert.Contains(t, out, "ok      http://a.test/pricing: HTTP 200")
	snaps = h.snapshots("http://a.test/pricing")
	require.Len(t, snaps, 3)
	assert.False(t, snaps[2].NotModified)
	assert.Equal(t, []string{"text"}, snaps[2].Changes)
	code, report, _ = h.cli("report")
	require.Equal(t, exitOK, code)
	assert.Contains(t, report, "text (low): 1 word added, 1 removed\n      Pricing ¶ second ¶ Plans start at [-ten-]{+twelve+} euros a month.\n")
	t.Logf("conditional GET saved %d bytes of %d-byte page", un.BytesSaved, len(body))
}

// A 304 without having sent validators (a broken server) is not taken as
// "unchanged": there is nothing it could confirm.
func TestUnsolicited304IsNotUnchanged(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nAllow: /\n")
	s.Status("/odd", http.StatusNotModified)
	h.track("http://a.test/odd")
	h.run()
	snaps := h.snapshots("http://a.test/odd")
	require.Len(t, snaps, 1)
	assert.False(t, snaps[0].NotModified)
	assert.Equal(t, 304, snaps[0].Status)
}

// response_ms is the server's time for the final request, not the time the
// request waited at the per-host gap (honest timings).
func TestResponseTimeIsServerTimeNotGateWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		s := n.Add("a.test")
		s.Robots("User-agent: *\nAllow: /\n")
		for _, p := range []string{"/1", "/2", "/3"} {
			s.Route(p, testsite.Response{ContentType: "text/html", Body: htmlPage(p, "x"), Delay: 120 * time.Millisecond})
		}
		db := tempDB(t)
		e := env{transport: n.Transport()}
		code, _, errOut := cli(t, e, "track", "-db", db, "http://a.test/1", "http://a.test/2", "http://a.test/3")
		require.Equal(t, exitOK, code, errOut)
		code, _, errOut = cli(t, e, "run", "-db", db, "-gap", "5s")
		require.Equal(t, exitOK, code, errOut)
		st := openTestStore(t, db)
		snaps, err := st.Snapshots(context.Background())
		require.NoError(t, err)
		require.Len(t, snaps, 3)
		for _, sn := range snaps {
			// Each page after the first waited 5 s at the gate; the server
			// took 120 ms.
			assert.Equal(t, 120*time.Millisecond, sn.ResponseTime, sn.PageURL)
		}
	})
}

func TestReadOnlyCommandsNeverCreateADatabase(t *testing.T) {
	for _, cmd := range []string{"status", "report"} {
		db := tempDB(t)
		code, _, errOut := cli(t, env{}, cmd, "-db", db)
		assert.Equal(t, exitFailure, code, cmd)
		assert.Contains(t, errOut, "database "+db+" does not exist", cmd)
		assert.NoFileExists(t, db, cmd)
	}
	db := tempDB(t)
	code, _, errOut := cli(t, env{}, "check", "-db", db, "http://a.test/")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "does not exist")
	assert.NoFileExists(t, db)
}

func TestServerErrorPageIsAnErrorOutcome(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nAllow: /\n", "/fine")
	s.Route("/broken", testsite.Response{Status: http.StatusInternalServerError, Body: "oops"})
	h.track("http://a.test/broken", "http://a.test/fine")
	out := h.run()
	assert.Contains(t, out, "error   http://a.test/broken: HTTP 500 (server error)")
	assert.Contains(t, out, "run: 2 due, 2 snapshots (1 with errors)")
	code, status, _ := h.cli("status")
	require.Equal(t, exitOK, code)
	assert.Contains(t, status, "http://a.test/broken  last check: 2026-11-29 12:00:00Z  next due: "+dueAfter("http://a.test/broken", "2026-11-29 12:00:00Z")+"  error: HTTP 500 (server error)")
}

func TestRunWithNothingDueSaysWhenNextIs(t *testing.T) {
	h := newHarness(t)
	h.site("a.test", "User-agent: *\nAllow: /\n", "/")
	code, out, _ := h.cli("run", "-gap", "0s")
	require.Equal(t, exitOK, code)
	assert.Equal(t, "run: 0 due, 0 snapshots (0 with errors), 0 blocked by robots.txt, 0 waiting for robots.txt; no pages tracked (add some with: monitor track -db "+h.db+" URL)\n", out)
	h.track("http://a.test/")
	h.run()
	h.clk.Advance(90 * time.Minute)
	out = h.run()
	in := fmtDuration(4*time.Hour + 30*time.Minute + store.Jitter("http://a.test/", 6*time.Hour))
	assert.Equal(t, "run: 0 due, 0 snapshots (0 with errors), 0 blocked by robots.txt, 0 waiting for robots.txt; next page due at "+
		dueAfter("http://a.test/", "2026-11-29 12:00:00Z")+" (in "+in+")\n", out)
}

func TestCheckCommandPrintsCardOrBanner(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: 2-UAcomBot\nDisallow: /private/\n", "/private/x")
	s.Route("/p", testsite.Response{ContentType: "text/html", Body: htmlPage("Pricing", "one two three"),
		Header: http.Header{"X-Robots-Tag": {"noarchive"}}})
	s.Redirect("/old", "/p", http.StatusMovedPermanently)

	code, out, errOut := cli(t, h.e, "check", "-gap", "0s", "http://a.test/old")
	require.Equal(t, exitOK, code, errOut)
	for _, want := range []string{
		"http://a.test/old\n", "  status:           200\n", `  final URL:        "http://a.test/p"` + "\n",
		"  redirects:        301 http://a.test/old\n", `  title:            "Pricing"` + "\n",
		`  meta description: "About Pricing"` + "\n", `  canonical:        "http://a.test/canonical"` + "\n",
		`  meta robots:      "index, follow"` + "\n", `  X-Robots-Tag:     "noarchive"` + "\n", `  h1:               "Pricing"` + "\n",
		`  hreflang:         "de=http://a.test/de/"` + "\n", "  words:            5\n", "  response time:    ",
	} {
		assert.Contains(t, out, want)
	}

	code, out, errOut = cli(t, h.e, "check", "-gap", "0s", "http://a.test/private/x")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "http://a.test/private/x\nLatest check was skipped — robots.txt disallows 2-UAcomBot on this path.\n"+
		"  rule: disallowed by \"Disallow: /private/\" (line 2, user-agent 2-UAcomBot)\n  why:  https://2-ua.com/support/robots\n", out)
	assert.Equal(t, 0, s.Count("/private/x"), "nothing but robots.txt is fetched")
	assert.Equal(t, 2, s.Count("/robots.txt"), "no -db: each check is its own process, with its own cache")
	_ = strings.TrimSpace
}

// A 200 marked Cache-Control: no-store leaves no validators behind (fetch's
// rule for a ValidatorStore): the next check is a full GET, not a 304.
func TestNoStoreResponseIsNotValidatedAgain(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nAllow: /\n")
	v := &validatingSite{}
	v.set(htmlPage("Private", "Account balance."), `"v1"`, "Sun, 29 Nov 2026 10:00:00 GMT")
	s.Handle("/account", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "private, no-store")
		v.handle(w, r)
	})
	h.track("http://a.test/account")
	h.run()
	h.clk.Advance(6*time.Hour + maxJitter)
	out := h.run()
	assert.Contains(t, out, "ok      http://a.test/account: HTTP 200")
	require.Len(t, v.condHdrs, 2)
	assert.Empty(t, v.condHdrs[1].Get("If-None-Match"), "no-store: the ETag was not kept")
	assert.Empty(t, v.condHdrs[1].Get("If-Modified-Since"))
	snaps := h.snapshots("http://a.test/account")
	require.Len(t, snaps, 2)
	assert.Empty(t, snaps[0].ETag)
	assert.False(t, snaps[1].NotModified)
}

// The free tool's check of a tracked page is a full GET: its card shows
// the page, not a 304 it could not fill.
func TestFreeToolCheckOfTrackedPageIsUnconditional(t *testing.T) {
	h := newHarness(t)
	s := h.site("a.test", "User-agent: *\nAllow: /\n")
	v := &validatingSite{}
	v.set(htmlPage("Pricing", "Plans."), `"v1"`, "Sun, 29 Nov 2026 10:00:00 GMT")
	s.Handle("/pricing", v.handle)
	h.track("http://a.test/pricing")
	h.run()
	code, out, errOut := h.cli("check", "http://a.test/pricing")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `title:            "Pricing"`)
	require.Len(t, v.condHdrs, 2)
	assert.Empty(t, v.condHdrs[1].Get("If-None-Match"))
}
