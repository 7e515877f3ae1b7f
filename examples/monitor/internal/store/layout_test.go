package store

import (
	"context"
	"database/sql"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
)

// legacySchema is the first layout's schema as its first release created
// it (every field of every snapshot in one snapshots row).
const legacySchema = `
CREATE TABLE IF NOT EXISTS pages (
	url              TEXT PRIMARY KEY,
	interval_seconds INTEGER NOT NULL,
	added_at         TEXT NOT NULL,
	next_due         TEXT NOT NULL,
	retry_at         TEXT,
	last_attempt_at  TEXT,
	last_outcome     TEXT,
	last_detail      TEXT
);
CREATE TABLE IF NOT EXISTS snapshots (
	id                INTEGER PRIMARY KEY,
	page_url          TEXT NOT NULL REFERENCES pages(url) ON DELETE CASCADE,
	taken_at          TEXT NOT NULL,
	blocked_by_robots INTEGER NOT NULL DEFAULT 0,
	robots_rule       TEXT,
	status            INTEGER,
	final_url         TEXT,
	redirects         TEXT,
	title             TEXT,
	meta_description  TEXT,
	canonical         TEXT,
	meta_robots       TEXT,
	x_robots_tag      TEXT,
	h1                TEXT,
	hreflang          TEXT,
	content_hash      TEXT,
	word_count        INTEGER,
	response_ms       INTEGER,
	error             TEXT
);
CREATE INDEX IF NOT EXISTS snapshots_page_taken ON snapshots(page_url, taken_at);
CREATE TABLE IF NOT EXISTS robots_cache (
	host       TEXT PRIMARY KEY,
	url        TEXT,
	status     INTEGER NOT NULL,
	body       BLOB,
	fetched_at TEXT NOT NULL,
	expires_at TEXT NOT NULL,
	error      TEXT
);
`

// legacyMainLayout is the rest of the first layout as its last release
// (main before the compact layout) left a file: the added columns, the
// indexes and the counters with their triggers.
const legacyMainLayout = `
ALTER TABLE pages ADD COLUMN host TEXT;
ALTER TABLE pages ADD COLUMN last_status INTEGER;
ALTER TABLE pages ADD COLUMN last_change TEXT;
ALTER TABLE pages ADD COLUMN last_change_at TEXT;
ALTER TABLE snapshots ADD COLUMN text BLOB;
ALTER TABLE snapshots ADD COLUMN text_truncated INTEGER NOT NULL DEFAULT 0;
ALTER TABLE snapshots ADD COLUMN etag TEXT;
ALTER TABLE snapshots ADD COLUMN last_modified TEXT;
ALTER TABLE snapshots ADD COLUMN not_modified INTEGER NOT NULL DEFAULT 0;
ALTER TABLE snapshots ADD COLUMN body_bytes INTEGER;
ALTER TABLE snapshots ADD COLUMN bytes_saved INTEGER;
ALTER TABLE snapshots ADD COLUMN changes TEXT;
ALTER TABLE snapshots ADD COLUMN bot_protection TEXT;
CREATE INDEX IF NOT EXISTS pages_host ON pages(host, url);
CREATE INDEX IF NOT EXISTS pages_outcome ON pages(last_outcome, url);
CREATE INDEX IF NOT EXISTS snapshots_saved ON snapshots(bytes_saved) WHERE not_modified = 1;
CREATE INDEX IF NOT EXISTS robots_cache_expires ON robots_cache(expires_at);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO counters(name, value) VALUES ('snapshots', 0), ('not_modified', 0), ('bytes_saved', 0);
CREATE TRIGGER IF NOT EXISTS snapshots_counted AFTER INSERT ON snapshots BEGIN
	UPDATE counters SET value = value + 1 WHERE name = 'snapshots';
	UPDATE counters SET value = value + 1 WHERE name = 'not_modified' AND NEW.not_modified = 1;
	UPDATE counters SET value = value + coalesce(NEW.bytes_saved, 0) WHERE name = 'bytes_saved' AND NEW.not_modified = 1;
END;
CREATE TRIGGER IF NOT EXISTS snapshots_uncounted AFTER DELETE ON snapshots BEGIN
	UPDATE counters SET value = value - 1 WHERE name = 'snapshots';
	UPDATE counters SET value = value - 1 WHERE name = 'not_modified' AND OLD.not_modified = 1;
	UPDATE counters SET value = value - coalesce(OLD.bytes_saved, 0) WHERE name = 'bytes_saved' AND OLD.not_modified = 1;
END;
PRAGMA application_id = 844448099;
`

// legacyInsert writes sn as the first layout's SaveSnapshot did.
func legacyInsert(t *testing.T, db *sql.DB, sn *snapshot.Snapshot) {
	t.Helper()
	redirects, err := jsonOrNull(sn.Redirects, len(sn.Redirects) == 0)
	require.NoError(t, err)
	hreflang, err := jsonOrNull(sn.Hreflang, len(sn.Hreflang) == 0)
	require.NoError(t, err)
	changes, err := jsonOrNull(sn.Changes, len(sn.Changes) == 0)
	require.NoError(t, err)
	_, err = db.Exec(`
INSERT INTO snapshots(page_url, taken_at, blocked_by_robots, robots_rule, status, final_url, redirects,
	title, meta_description, canonical, meta_robots, x_robots_tag, h1, hreflang, content_hash, word_count,
	response_ms, error, text, text_truncated, etag, last_modified, not_modified, body_bytes, bytes_saved, changes,
	bot_protection)
VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		sn.PageURL, FmtTime(sn.TakenAt), sn.Blocked, nullStr(sn.RobotsRule), sql.NullInt64{Int64: int64(sn.Status), Valid: sn.Status != 0},
		nullStr(sn.FinalURL), redirects, nullStr(sn.Title), nullStr(sn.MetaDescription), nullStr(sn.Canonical), nullStr(sn.MetaRobots),
		nullStr(sn.XRobotsTag), nullStr(sn.H1), hreflang, nullStr(sn.ContentHash),
		sql.NullInt64{Int64: int64(sn.WordCount), Valid: !sn.Blocked && sn.Error == ""},
		sql.NullInt64{Int64: sn.ResponseTime.Milliseconds(), Valid: !sn.Blocked}, nullStr(sn.Error),
		sn.TextZ, sn.TextCut, nullStr(sn.ETag), nullStr(sn.LastModified), sn.NotModified,
		sql.NullInt64{Int64: sn.BodyBytes, Valid: sn.Status != 0}, sql.NullInt64{Int64: sn.BytesSaved, Valid: sn.NotModified},
		changes, nullStr(sn.BotProtection))
	require.NoError(t, err)
}

// legacySnapshots reads every snapshot of a first-layout file as that
// layout's readers did.
func legacySnapshots(t *testing.T, db *sql.DB) []snapshot.Snapshot {
	t.Helper()
	rows, err := db.Query(`SELECT ` + snapshotColumns + ` FROM snapshots ORDER BY page_url, taken_at, id`)
	require.NoError(t, err)
	defer rows.Close()
	var out []snapshot.Snapshot
	for rows.Next() {
		sn, err := scanSnapshotRow(rows)
		require.NoError(t, err)
		out = append(out, *sn)
	}
	require.NoError(t, rows.Err())
	return out
}

// A file of main's first layout, with every kind of snapshot (text, 304,
// blocked, bot protection, error, redirects and hreflang), is converted
// when a writing command opens it: every snapshot reads back as it was,
// with its id, the totals are kept, the old tables are gone, and a
// read-only open refuses the old file with what to do until then.
func TestMainLayoutIsConverted(t *testing.T) {
	ctx := context.Background()
	path := tempDB(t)
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(legacySchema + legacyMainLayout)
	require.NoError(t, err)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 123456789, time.UTC)
	for i, u := range []string{"https://a.example/x", "https://a.example/y", "https://b.example:8443/"} {
		_, err := db.Exec(`INSERT INTO pages(url, host, interval_seconds, added_at, next_due, last_outcome) VALUES(?, ?, 21600, ?, ?, 'ok')`,
			u, hostOf(u), FmtTime(t0), FmtTime(t0.Add(time.Duration(i)*time.Hour)))
		require.NoError(t, err)
	}
	text := strings.Repeat("the same words on every check ", 40)
	good := func(u string, at time.Time, title string) *snapshot.Snapshot {
		sn := &snapshot.Snapshot{PageURL: u, TakenAt: at, Status: 200, FinalURL: u + "?final", Title: title,
			MetaDescription: "d", Canonical: u, MetaRobots: "index", XRobotsTag: "noarchive", H1: "H",
			Redirects: []snapshot.Hop{{URL: u + "?r", Status: 301}}, Hreflang: []snapshot.Alternate{{Hreflang: "de", URL: u + "?de"}},
			ContentHash: "h-" + title, WordCount: 240, ResponseTime: 12 * time.Millisecond, ETag: `"e1"`,
			LastModified: "Wed, 01 Jan 2026 00:00:00 GMT", BodyBytes: 5000}
		sn.SetText(text+title, false)
		return sn
	}
	var want int
	for i := range 4 {
		at := t0.Add(time.Duration(i) * 6 * time.Hour)
		sn := good("https://a.example/x", at, "T")
		if i == 2 {
			sn.NotModified, sn.BytesSaved = true, 5000
		}
		if i == 3 {
			sn = good("https://a.example/x", at, "T2")
			sn.Changes = []string{"title", "content"}
		}
		legacyInsert(t, db, sn)
		legacyInsert(t, db, good("https://a.example/y", at, "T")) // the same text as x's: one content row
		want += 2
	}
	legacyInsert(t, db, &snapshot.Snapshot{PageURL: "https://b.example:8443/", TakenAt: t0, Blocked: true, RobotsRule: `disallowed by "Disallow: /"`})
	legacyInsert(t, db, &snapshot.Snapshot{PageURL: "https://b.example:8443/", TakenAt: t0.Add(time.Hour), Status: 403,
		BotProtection: "cloudflare, header cf-mitigated: challenge", ResponseTime: time.Millisecond})
	legacyInsert(t, db, &snapshot.Snapshot{PageURL: "https://b.example:8443/", TakenAt: t0.Add(2 * time.Hour), Error: "timeout after 15s"})
	want += 3
	before := legacySnapshots(t, db)
	require.Len(t, before, want)
	require.NoError(t, db.Close())

	_, err = Open(ctx, path, ReadOnly)
	require.ErrorContains(t, err, "was written by an older monitor: open it once with a command that writes")

	st := openTestStore(t, path)
	after, err := st.Snapshots(ctx)
	require.NoError(t, err)
	assert.Equal(t, before, after)
	tot, err := st.Totals(ctx)
	require.NoError(t, err)
	assert.Equal(t, Totals{Pages: 3, Snapshots: want, NotModified: 1, BytesSaved: 5000}, tot)
	var legacy, contents, states int
	require.NoError(t, st.db.QueryRow(`SELECT (SELECT count(*) FROM sqlite_master WHERE name LIKE 'legacy%'),
		(SELECT count(*) FROM contents), (SELECT count(*) FROM snapshot_states)`).Scan(&legacy, &contents, &states))
	assert.Equal(t, 0, legacy)
	var parent string
	require.NoError(t, st.db.QueryRow(`SELECT "table" FROM pragma_foreign_key_list('change_log')`).Scan(&parent))
	assert.Equal(t, "snapshot_log", parent, "the converted file's change log references the log, not the view")
	assert.Equal(t, 2, contents, "text T shared by both pages, and text T2")
	assert.Equal(t, 2+1+3, states, "x: T (the 304 too), T2; y: T; b: three")
	p, ok, err := st.Page(ctx, "https://b.example:8443/")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "https://b.example:8443", p.Host)
	assert.Equal(t, t0.Add(2*time.Hour), p.NextDue)

	// New snapshots go on from the converted ones, and the file now opens
	// read-only.
	next := good("https://a.example/y", t0.Add(24*time.Hour), "T")
	require.NoError(t, st.SaveSnapshot(ctx, next))
	assert.Greater(t, next.ID, after[len(after)-1].ID)
	assert.Empty(t, next.Changes)
	require.NoError(t, st.Close())
	ro, err := Open(ctx, path, ReadOnly)
	require.NoError(t, err)
	defer ro.Close()
	n, err := ro.Snapshots(ctx)
	require.NoError(t, err)
	assert.Len(t, n, want+1)
}

// A conversion that fails leaves the file as it was: one transaction.
func TestFailedConversionChangesNothing(t *testing.T) {
	path := tempDB(t)
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(legacySchema + legacyMainLayout)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO pages(url, interval_seconds, added_at, next_due) VALUES('https://a.example/', 21600, '2026-01-01T00:00:00.000000000Z', '2026-01-01T00:00:00.000000000Z');
		INSERT INTO snapshots(page_url, taken_at, status, redirects) VALUES('https://a.example/', '2026-01-01T00:00:00.000000000Z', 200, 'not json')`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	sizeBefore := fileSize(t, path)

	_, err = Open(context.Background(), path, CreateIfMissing)
	require.ErrorContains(t, err, "redirects")
	db, err = sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM snapshots WHERE redirects = 'not json'`).Scan(&n))
	assert.Equal(t, 1, n, "the old table is intact")
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name IN ('snapshot_log', 'contents', 'legacy_pages')`).Scan(&n))
	assert.Equal(t, 0, n, "nothing of the new layout was left behind")
	assert.Positive(t, sizeBefore)
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size()
}
