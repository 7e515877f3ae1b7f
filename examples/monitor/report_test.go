package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/monitor/internal/report"
	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
	"github.com/politecrawl/polite/examples/monitor/internal/store"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func seed(t *testing.T, st *store.Store, snaps ...*snapshot.Snapshot) {
	t.Helper()
	ctx := context.Background()
	for _, sn := range snaps {
		require.NoError(t, st.Track(ctx, []string{sn.PageURL}, 6*time.Hour, t0))
		require.NoError(t, st.SaveSnapshot(ctx, sn))
	}
}

func reportOf(t *testing.T, st *store.Store, now time.Time, since time.Duration) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, report.Changes(context.Background(), st, &buf, now, since))
	return buf.String()
}

func TestReportShowsChangedFieldsOldAndNew(t *testing.T) {
	st := openTestStore(t, tempDB(t))
	const u = "https://a.example/pricing"
	seed(t, st,
		&snapshot.Snapshot{PageURL: u, TakenAt: t0, Status: 200, Title: "Pricing", MetaDescription: "Cheap", H1: "Plans",
			ContentHash: "aa", WordCount: 100, ResponseTime: time.Millisecond},
		&snapshot.Snapshot{PageURL: u, TakenAt: t0.Add(6 * time.Hour), Status: 200, Title: "Pricing plans", MetaDescription: "Cheap",
			H1: "Plans", ContentHash: "bb", WordCount: 120, ResponseTime: 9 * time.Millisecond,
			Hreflang: []snapshot.Alternate{{Hreflang: "de", URL: "https://a.example/de/pricing"}}},
		&snapshot.Snapshot{PageURL: u, TakenAt: t0.Add(12 * time.Hour), Status: 200, Title: "Pricing plans", MetaDescription: "Cheap",
			H1: "Plans", ContentHash: "bb", WordCount: 120, ResponseTime: 5 * time.Millisecond,
			Hreflang: []snapshot.Alternate{{Hreflang: "de", URL: "https://a.example/de/pricing"}}},
	)
	got := reportOf(t, st, t0.Add(13*time.Hour), 0)
	want := `https://a.example/pricing
  2026-11-29 12:00:00Z -> 2026-11-29 18:00:00Z
    title (medium): "Pricing" -> "Pricing plans"
    hreflang (low): "" -> "de=https://a.example/de/pricing"
    text (low): "" -> "changed"
`
	assert.Equal(t, want, got, "the third snapshot changed nothing (response time is not a field)")
}

func TestReportOmitsPagesWhileBlocked(t *testing.T) {
	st := openTestStore(t, tempDB(t))
	const blocked, unblocked = "https://a.example/private", "https://a.example/blog/"
	seed(t, st,
		&snapshot.Snapshot{PageURL: blocked, TakenAt: t0, Status: 200, Title: "Old"},
		&snapshot.Snapshot{PageURL: blocked, TakenAt: t0.Add(6 * time.Hour), Status: 200, Title: "New"},
		&snapshot.Snapshot{PageURL: blocked, TakenAt: t0.Add(12 * time.Hour), Blocked: true, RobotsRule: `disallowed by "Disallow: /"`},
		// Blocked once, then allowed again: the blocked row is skipped and
		// the allowed snapshots around it are compared.
		&snapshot.Snapshot{PageURL: unblocked, TakenAt: t0, Status: 200, Title: "One"},
		&snapshot.Snapshot{PageURL: unblocked, TakenAt: t0.Add(6 * time.Hour), Blocked: true},
		&snapshot.Snapshot{PageURL: unblocked, TakenAt: t0.Add(12 * time.Hour), Status: 200, Title: "Two"},
	)
	got := reportOf(t, st, t0.Add(13*time.Hour), 0)
	assert.NotContains(t, got, blocked)
	assert.Contains(t, got, unblocked+"\n  2026-11-29 12:00:00Z -> 2026-11-30 00:00:00Z\n    robots_unblocked (medium): \"blocked by robots.txt\" -> \"allowed\"\n    title (medium): \"One\" -> \"Two\"\n")
	assert.NotContains(t, got, "status")
}

func TestReportSince(t *testing.T) {
	st := openTestStore(t, tempDB(t))
	const u = "https://a.example/"
	seed(t, st,
		&snapshot.Snapshot{PageURL: u, TakenAt: t0, Status: 200, Title: "A"},
		&snapshot.Snapshot{PageURL: u, TakenAt: t0.Add(6 * time.Hour), Status: 200, Title: "B"},
		&snapshot.Snapshot{PageURL: u, TakenAt: t0.Add(12 * time.Hour), Status: 404},
	)
	got := reportOf(t, st, t0.Add(13*time.Hour), 2*time.Hour)
	assert.NotContains(t, got, `"A" -> "B"`)
	assert.Contains(t, got, "    status (high): \"200\" -> \"404\"\n    title (medium): \"B\" -> \"\"\n")

	assert.Equal(t, "no changes\n", reportOf(t, st, t0.Add(30*time.Hour), time.Hour))
}

func TestReportEscapesHostileValues(t *testing.T) {
	st := openTestStore(t, tempDB(t))
	const u = "https://a.example/"
	seed(t, st,
		&snapshot.Snapshot{PageURL: u, TakenAt: t0, Status: 200, Title: "plain"},
		&snapshot.Snapshot{PageURL: u, TakenAt: t0.Add(6 * time.Hour), Status: 200, Title: "\x1b[2Jgotcha\n" + strings.Repeat("x", 1000)},
	)
	got := reportOf(t, st, t0.Add(7*time.Hour), 0)
	assert.NotContains(t, got, "\x1b")
	assert.Contains(t, got, `\x1b[2Jgotcha\n`)
	assert.Less(t, len(got), 600)
}

func TestReportCLI(t *testing.T) {
	clk := newFakeClock()
	db := tempDB(t)
	st := openTestStore(t, db)
	seed(t, st,
		&snapshot.Snapshot{PageURL: "https://a.example/", TakenAt: clk.Now().Add(-7 * time.Hour), Status: 200, Canonical: "https://a.example/"},
		&snapshot.Snapshot{PageURL: "https://a.example/", TakenAt: clk.Now().Add(-time.Hour), Status: 200, Canonical: "https://a.example/home"},
	)
	code, out, errOut := cli(t, env{now: clk.Now}, "report", "-db", db, "-since", "2h")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `canonical (high): "https://a.example/" -> "https://a.example/home"`)
}

func TestStatusShowsSkippedBanner(t *testing.T) {
	clk := newFakeClock()
	db := tempDB(t)
	st := openTestStore(t, db)
	ctx := context.Background()
	seed(t, st,
		&snapshot.Snapshot{PageURL: "https://a.example/private", TakenAt: clk.Now().Add(-time.Hour), Blocked: true, RobotsRule: `disallowed by "Disallow: /"`},
		&snapshot.Snapshot{PageURL: "https://a.example/ok", TakenAt: clk.Now().Add(-time.Hour), Status: 200},
		&snapshot.Snapshot{PageURL: "https://a.example/gone", TakenAt: clk.Now().Add(-time.Hour), Status: 0, Error: "dial tcp: connection refused"},
	)
	require.NoError(t, st.Track(ctx, []string{"https://b.example/"}, 6*time.Hour, clk.Now()))
	require.NoError(t, st.DeferPage(ctx, "https://b.example/", clk.Now(), clk.Now().Add(5*time.Minute), "robots.txt unreachable (HTTP 503); re-check after 2026-11-29 12:05:00Z"))

	code, out, errOut := cli(t, env{now: clk.Now}, "status", "-db", db)
	require.Equal(t, exitOK, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 5)
	assert.Equal(t, "https://a.example/gone  last check: 2026-11-29 11:00:00Z  next due: "+dueAfter("https://a.example/gone", "2026-11-29 11:00:00Z")+"  error: dial tcp: connection refused", lines[0])
	assert.Equal(t, "https://a.example/ok  last check: 2026-11-29 11:00:00Z  next due: "+dueAfter("https://a.example/ok", "2026-11-29 11:00:00Z")+"  ok: HTTP 200", lines[1])
	assert.Equal(t, "https://a.example/private  last check: 2026-11-29 11:00:00Z  next due: "+dueAfter("https://a.example/private", "2026-11-29 11:00:00Z")+"  "+
		"Latest check was skipped — robots.txt disallows 2-UAcomBot on this path.", lines[2])
	assert.Equal(t, "https://b.example/  last check: 2026-11-29 12:00:00Z  next due: 2026-11-29 12:05:00Z  "+
		"waiting: robots.txt unreachable (HTTP 503); re-check after 2026-11-29 12:05:00Z", lines[3])

	// The token follows the configured user agent.
	code, out, _ = cli(t, env{now: clk.Now}, "status", "-db", db, "-user-agent", "Mozilla/5.0 (compatible; OtherBot/2.0; +https://x.example/)")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "Latest check was skipped — robots.txt disallows OtherBot on this path.")
}

// The report streams snapshots page by page; a page whose changes are held
// back because it is blocked now must not count as printed.
func TestReportOnlyBlockedChangesSaysNoChanges(t *testing.T) {
	st := openTestStore(t, tempDB(t))
	const a, b, c = "https://a.example/1", "https://a.example/2", "https://a.example/3"
	seed(t, st,
		&snapshot.Snapshot{PageURL: a, TakenAt: t0, Status: 200, Title: "Same"},
		&snapshot.Snapshot{PageURL: a, TakenAt: t0.Add(6 * time.Hour), Status: 200, Title: "Same"},
		&snapshot.Snapshot{PageURL: b, TakenAt: t0, Status: 200, Title: "Old"},
		&snapshot.Snapshot{PageURL: b, TakenAt: t0.Add(6 * time.Hour), Status: 200, Title: "New"},
		&snapshot.Snapshot{PageURL: b, TakenAt: t0.Add(12 * time.Hour), Blocked: true},
		&snapshot.Snapshot{PageURL: c, TakenAt: t0, Blocked: true},
	)
	assert.Equal(t, "no changes\n", reportOf(t, st, t0.Add(13*time.Hour), 0))

	// The page after a held-back one is still reported, under its own URL.
	seed(t, st,
		&snapshot.Snapshot{PageURL: c, TakenAt: t0.Add(6 * time.Hour), Status: 200, Title: "C1"},
		&snapshot.Snapshot{PageURL: c, TakenAt: t0.Add(12 * time.Hour), Status: 200, Title: "C2"},
	)
	assert.Equal(t, c+"\n  2026-11-29 12:00:00Z -> 2026-11-29 18:00:00Z\n    robots_unblocked (medium): \"blocked by robots.txt\" -> \"allowed\"\n"+
		"  2026-11-29 18:00:00Z -> 2026-11-30 00:00:00Z\n    title (medium): \"C1\" -> \"C2\"\n",
		reportOf(t, st, t0.Add(13*time.Hour), 0))
}
