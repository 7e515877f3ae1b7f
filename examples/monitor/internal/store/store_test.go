package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/monitor/internal/changes"
	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
	"github.com/politecrawl/polite/robots"
)

func tempDB(t *testing.T) string { return filepath.Join(t.TempDir(), "monitor.db") }

func openTestStore(t *testing.T, path string) *Store {
	t.Helper()
	st, err := Open(context.Background(), path, CreateIfMissing)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

func TestSchemaAndWAL(t *testing.T) {
	path := tempDB(t)
	st := openTestStore(t, path)
	ctx := context.Background()
	var mode string
	require.NoError(t, st.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode))
	assert.Equal(t, "wal", strings.ToLower(mode))
	for _, table := range []string{"pages", "snapshots", "robots_cache"} {
		var n int
		require.NoError(t, st.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view') AND name=?", table).Scan(&n))
		assert.Equal(t, 1, n, table)
	}
	// Opening again applies the schema again without harm.
	require.NoError(t, st.Close())
	openTestStore(t, path)
}

func TestOpenRefusesDriverOptionsInPath(t *testing.T) {
	_, err := Open(context.Background(), t.TempDir()+"/a.db?mode=ro", CreateIfMissing)
	assert.Error(t, err)
	_, err = Open(context.Background(), "", CreateIfMissing)
	assert.Error(t, err)
}

func TestSnapshotSchedulesNextCheck(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t, tempDB(t))
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	require.NoError(t, st.Track(ctx, []string{"https://a.example/"}, 6*time.Hour, t0))

	due, err := st.DuePages(ctx, t0)
	require.NoError(t, err)
	require.Len(t, due, 1, "a new page is due at once")

	sn := &snapshot.Snapshot{PageURL: "https://a.example/", TakenAt: t0.Add(time.Minute), Status: 200, Title: "A",
		Redirects: []snapshot.Hop{{URL: "http://a.example/", Status: 301, Location: "https://a.example/"}},
		Hreflang:  []snapshot.Alternate{{Hreflang: "de", URL: "https://a.example/de/"}}, ResponseTime: 42 * time.Millisecond}
	require.NoError(t, st.SaveSnapshot(ctx, sn))

	// One interval and the page's own jitter after the snapshot, not before.
	next := sn.TakenAt.Add(6*time.Hour + Jitter(sn.PageURL, 6*time.Hour))
	due, err = st.DuePages(ctx, next.Add(-time.Nanosecond))
	require.NoError(t, err)
	assert.Empty(t, due, "not due again within the interval and its jitter")
	due, err = st.DuePages(ctx, next)
	require.NoError(t, err)
	assert.Len(t, due, 1, "due one interval and its jitter after the snapshot")

	got, err := st.Snapshots(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, sn.Redirects, got[0].Redirects)
	assert.Equal(t, sn.Hreflang, got[0].Hreflang)
	assert.Equal(t, 42*time.Millisecond, got[0].ResponseTime)
	assert.Equal(t, sn.TakenAt, got[0].TakenAt)

	pages, err := st.Pages(ctx)
	require.NoError(t, err)
	assert.Equal(t, snapshot.OutcomeOK, pages[0].LastOutcome)
	assert.Equal(t, "HTTP 200", pages[0].LastDetail)

	// Re-tracking with a longer interval reschedules from the last snapshot.
	require.NoError(t, st.Track(ctx, []string{"https://a.example/"}, 24*time.Hour, t0.Add(time.Hour)))
	pages, err = st.Pages(ctx)
	require.NoError(t, err)
	assert.Equal(t, sn.TakenAt.Add(24*time.Hour+Jitter("https://a.example/", 24*time.Hour)), pages[0].NextDue)
}

func TestBlockedSnapshotHasNoSEOFields(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t, tempDB(t))
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	require.NoError(t, st.Track(ctx, []string{"https://a.example/x"}, 6*time.Hour, t0))
	// Even if a caller filled fields in, a blocked row stores status/word
	// count/response time as NULL.
	require.NoError(t, st.SaveSnapshot(ctx, &snapshot.Snapshot{PageURL: "https://a.example/x", TakenAt: t0, Blocked: true,
		RobotsRule: `disallowed by "Disallow: /"`, Status: 200, WordCount: 5}))
	var blocked int
	var status, words, ms, title any
	require.NoError(t, st.db.QueryRowContext(ctx,
		`SELECT blocked_by_robots, status, word_count, response_ms, title FROM snapshots`).Scan(&blocked, &status, &words, &ms, &title))
	assert.Equal(t, 1, blocked)
	assert.Nil(t, status)
	assert.Nil(t, words)
	assert.Nil(t, ms)
	assert.Nil(t, title)
}

func TestDeferPageWaitsForRobotsRecheck(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t, tempDB(t))
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	require.NoError(t, st.Track(ctx, []string{"https://a.example/"}, 6*time.Hour, t0))
	require.NoError(t, st.DeferPage(ctx, "https://a.example/", t0, t0.Add(5*time.Minute), "robots.txt unreachable (HTTP 503)"))

	due, err := st.DuePages(ctx, t0.Add(5*time.Minute-time.Second))
	require.NoError(t, err)
	assert.Empty(t, due)
	due, err = st.DuePages(ctx, t0.Add(5*time.Minute))
	require.NoError(t, err)
	assert.Len(t, due, 1)
	next, ok, err := st.NextDue(ctx)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, t0.Add(5*time.Minute), next)

	// A snapshot clears the wait.
	require.NoError(t, st.SaveSnapshot(ctx, &snapshot.Snapshot{PageURL: "https://a.example/", TakenAt: t0.Add(6 * time.Minute), Status: 200}))
	pages, err := st.Pages(ctx)
	require.NoError(t, err)
	assert.True(t, pages[0].RetryAt.IsZero())
}

func TestSnapshotOfUntrackedPageIsDropped(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t, tempDB(t))
	require.NoError(t, st.SaveSnapshot(ctx, &snapshot.Snapshot{PageURL: "https://gone.example/", TakenAt: time.Now(), Status: 200}))
	snaps, err := st.Snapshots(ctx)
	require.NoError(t, err)
	assert.Empty(t, snaps)
}

func TestUntrackDeletesSnapshots(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t, tempDB(t))
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	require.NoError(t, st.Track(ctx, []string{"https://a.example/"}, 6*time.Hour, t0))
	require.NoError(t, st.SaveSnapshot(ctx, &snapshot.Snapshot{PageURL: "https://a.example/", TakenAt: t0, Status: 200}))
	missing, err := st.Untrack(ctx, []string{"https://a.example/", "https://b.example/"})
	require.NoError(t, err)
	assert.Equal(t, []string{"https://b.example/"}, missing)
	snaps, err := st.Snapshots(ctx)
	require.NoError(t, err)
	assert.Empty(t, snaps)
}

func TestRobotsStorePersistsAcrossOpens(t *testing.T) {
	ctx := context.Background()
	path := tempDB(t)
	st, err := Open(ctx, path, CreateIfMissing)
	require.NoError(t, err)
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 123456789, time.UTC)
	e := robots.Entry{Authority: "https://a.example", URL: "https://a.example/robots.txt", Status: 200, Body: []byte("User-agent: *\nDisallow: /x\n"),
		FetchedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	require.NoError(t, st.Robots().Save(ctx, e))
	e2 := robots.Entry{Authority: "http://b.example:80", Status: 503, FetchedAt: t0, ExpiresAt: t0.Add(5 * time.Minute), Err: "HTTP 503"}
	require.NoError(t, st.Robots().Save(ctx, e2))
	require.NoError(t, st.Close())

	st2 := openTestStore(t, path)
	got, ok, err := st2.Robots().Load(ctx, "https://a.example")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, e.Body, got.Body)
	assert.Equal(t, e.URL, got.URL)
	assert.True(t, e.FetchedAt.Equal(got.FetchedAt))
	assert.True(t, e.ExpiresAt.Equal(got.ExpiresAt))
	got2, ok, err := st2.Robots().Load(ctx, "http://b.example:80")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 503, got2.Status)
	assert.Equal(t, "HTTP 503", got2.Err)
	assert.Nil(t, got2.Body)

	_, ok, err = st2.Robots().Load(ctx, "http://c.example:80")
	require.NoError(t, err)
	assert.False(t, ok)

	// Saving again replaces the row.
	e.Status = 404
	e.Body = nil
	require.NoError(t, st2.Robots().Save(ctx, e))
	got, _, err = st2.Robots().Load(ctx, "https://a.example")
	require.NoError(t, err)
	assert.Equal(t, 404, got.Status)
}

// A -db path is a plain file name: '%' and '#' are not URI syntax, and a
// relative name starting with "file:" is not a URI either.
func TestOpenTakesPathLiterally(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a%20b.db", "c#d.db", "e%zz.db"} {
		st := openTestStore(t, filepath.Join(dir, name))
		var fk, timeout int
		require.NoError(t, st.db.QueryRow("PRAGMA foreign_keys").Scan(&fk))
		require.NoError(t, st.db.QueryRow("PRAGMA busy_timeout").Scan(&timeout))
		assert.Equal(t, 1, fk, "driver options still apply")
		assert.Equal(t, 10000, timeout)
		require.NoError(t, st.Close())
		_, err := os.Stat(filepath.Join(dir, name))
		assert.NoError(t, err, "file %q exists under its own name", name)
	}
	_, err := os.Stat(filepath.Join(dir, "a b.db"))
	assert.True(t, os.IsNotExist(err), "%%20 was not decoded")

	t.Chdir(dir)
	st := openTestStore(t, "file:rel.db")
	require.NoError(t, st.Close())
	_, err = os.Stat(filepath.Join(dir, "file:rel.db"))
	assert.NoError(t, err)
}

// The dashboard's totals are kept by triggers; they must equal a full count
// after inserts, 304s, untrack's cascade and a row deleted by hand.
func TestTotalsFollowEveryWriteAndDelete(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t, tempDB(t))
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	require.NoError(t, st.Track(ctx, []string{"https://a.example/", "https://b.example/"}, 6*time.Hour, t0))
	for i, u := range []string{"https://a.example/", "https://a.example/", "https://b.example/", "https://b.example/"} {
		sn := &snapshot.Snapshot{PageURL: u, TakenAt: t0.Add(time.Duration(i) * time.Hour), Status: 200, BodyBytes: 1000}
		if i%2 == 1 {
			sn.NotModified, sn.BytesSaved = true, 1000+int64(i)
		}
		require.NoError(t, st.SaveSnapshot(ctx, sn))
	}
	check := func(snaps, nm int, saved int64) {
		t.Helper()
		got, err := st.Totals(ctx)
		require.NoError(t, err)
		var full Totals
		var sum sql.NullInt64
		require.NoError(t, st.db.QueryRow(`SELECT count(*), (SELECT count(*) FROM snapshots WHERE not_modified = 1),
			(SELECT sum(bytes_saved) FROM snapshots WHERE not_modified = 1) FROM snapshots`).Scan(&full.Snapshots, &full.NotModified, &sum))
		assert.Equal(t, snaps, got.Snapshots)
		assert.Equal(t, nm, got.NotModified)
		assert.Equal(t, saved, got.BytesSaved)
		assert.Equal(t, full.Snapshots, got.Snapshots)
		assert.Equal(t, full.NotModified, got.NotModified)
		assert.Equal(t, sum.Int64, got.BytesSaved)
	}
	check(4, 2, 1001+1003)
	_, err := st.Untrack(ctx, []string{"https://b.example/"})
	require.NoError(t, err)
	check(2, 1, 1001)
	_, err = st.db.Exec(`DELETE FROM snapshot_log WHERE not_modified = 1`)
	require.NoError(t, err)
	check(1, 0, 0)
}

// A database written before the text, validator and counter columns opens
// with them added, hosts filled in and totals counted, its snapshots intact.
func TestOldDatabaseIsMigrated(t *testing.T) {
	path := tempDB(t)
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(legacySchema)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO pages(url, interval_seconds, added_at, next_due) VALUES('https://old.example:8443/x', 21600, '2026-01-01T00:00:00.000000000Z', '2026-01-01T00:00:00.000000000Z');
		INSERT INTO snapshots(page_url, taken_at, status, title, content_hash) VALUES('https://old.example:8443/x', '2026-01-01T00:00:00.000000000Z', 200, 'Old', 'aa'),
		('https://old.example:8443/x', '2026-01-01T06:00:00.000000000Z', 200, 'Old', 'bb')`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	st := openTestStore(t, path)
	p, ok, err := st.Page(context.Background(), "https://old.example:8443/x")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "https://old.example:8443", p.Host)
	tot, err := st.Totals(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 2, tot.Snapshots)
	snaps, err := st.Snapshots(context.Background())
	require.NoError(t, err)
	require.Len(t, snaps, 2)
	cs := snapshot.Classify(&snaps[0], &snaps[0], &snaps[1], changes.Options{})
	require.Len(t, cs, 1)
	assert.Equal(t, changes.Change{Kind: changes.KindText, Severity: changes.Low, Field: "content", New: "changed"}, cs[0].Change,
		"no stored text: the change is named, not shown as hashes")
	assert.Empty(t, snaps[1].BotProtection)

	// bot_protection was added: a challenge is stored, not compared, and
	// the last good snapshot stays the baseline.
	bot := &snapshot.Snapshot{PageURL: "https://old.example:8443/x", TakenAt: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC),
		Status: 403, BotProtection: "cloudflare, header cf-mitigated: challenge"}
	require.NoError(t, st.SaveSnapshot(context.Background(), bot))
	assert.Equal(t, []string{"bot_protection"}, bot.Changes, "the block is its own kind, never a content change")
	good, ok, err := st.LastGood(context.Background(), "https://old.example:8443/x")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, snaps[1].ID, good.ID)
	p, _, err = st.Page(context.Background(), "https://old.example:8443/x")
	require.NoError(t, err)
	assert.Equal(t, snapshot.OutcomeBotProtection, p.LastOutcome)
	assert.Equal(t, "blocked by bot protection (cloudflare, header cf-mitigated: challenge)", p.LastDetail)
	require.NoError(t, st.Close())
	openTestStore(t, path) // and again: nothing applied twice
}

func robotsRows(t *testing.T, st *Store) (n int, bytes int64) {
	t.Helper()
	require.NoError(t, st.db.QueryRow(`SELECT count(*), coalesce(sum(length(body)), 0) FROM robots_cache`).Scan(&n, &bytes))
	return n, bytes
}

// TestRobotsCacheEvictsExpiredAndCapsUntrackedHosts: the free tool's
// anonymous checks each store a robots.txt copy; expired copies are evicted
// and untracked hosts' copies are capped, while tracked hosts keep theirs.
func TestRobotsCacheEvictsExpiredAndCapsUntrackedHosts(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t, tempDB(t))
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	require.NoError(t, st.Track(ctx, []string{"https://tracked.example/"}, 6*time.Hour, t0))
	body := []byte("User-agent: *\nDisallow: /x\n# " + strings.Repeat("p", 500<<10) + "\n")
	save := func(host string, at time.Time) {
		require.NoError(t, st.Robots().Save(ctx, robots.Entry{Authority: host, URL: host + "/robots.txt", Status: 200,
			Body: body, FetchedAt: at, ExpiresAt: at.Add(time.Hour)}))
	}
	save("https://tracked.example", t0)
	for i := range 200 {
		save(fmt.Sprintf("https://anon%d.example", i), t0.Add(time.Duration(i)*time.Second))
	}
	n, size := robotsRows(t, st)
	assert.LessOrEqual(t, n, maxUntrackedRobots+1)
	assert.LessOrEqual(t, size, int64(maxUntrackedRobotsBytes+len(body)), "untracked copies are capped in bytes too")
	_, ok, err := st.Robots().Load(ctx, "https://tracked.example")
	require.NoError(t, err)
	assert.True(t, ok, "the tracked host's copy is kept")
	_, ok, _ = st.Robots().Load(ctx, "https://anon199.example")
	assert.True(t, ok, "the newest anonymous copy is kept")

	// Two hours on, every copy has expired: the next save evicts them all,
	// the tracked host's included (robots.Cache would refetch it anyway).
	save("https://anon-late.example", t0.Add(2*time.Hour))
	n, _ = robotsRows(t, st)
	assert.Equal(t, 1, n)
}
