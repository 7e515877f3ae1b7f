package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
)

// The layout keeps a million pages' snapshots small. A check that finds its
// page unchanged writes one snapshot_log row (page id, time, the state it
// saw, response time: about 50 bytes with its index); what it saw is a
// snapshot_states row shared with every other check of the page that saw
// the same thing, and the visible text is a contents row shared by every
// state (of any page) with the same compressed text. The snapshots view
// puts the three together again with the columns of the first layout, for
// the store's queries and for a person reading the file with sqlite3.
//
// Times are fixed-width UTC text (timeLayout) so that string comparison in
// SQL is time comparison and a person reading the file sees real dates;
// snapshot_log.taken_ns alone is Unix nanoseconds (8 bytes, not 30, on
// every row and in its index), and the view shows it as taken_at text.
//
// schema is applied on every open; every statement is idempotent.
const schema = `
CREATE TABLE IF NOT EXISTS pages (
	id               INTEGER PRIMARY KEY,
	url              TEXT NOT NULL UNIQUE,
	interval_seconds INTEGER NOT NULL,
	added_at         TEXT NOT NULL,
	next_due         TEXT NOT NULL,
	retry_at         TEXT,
	last_attempt_at  TEXT,
	last_outcome     TEXT,
	last_detail      TEXT
);
CREATE TABLE IF NOT EXISTS contents (
	id     INTEGER PRIMARY KEY,
	hash   BLOB NOT NULL UNIQUE, -- contentKey(text_z)
	text_z BLOB NOT NULL         -- visible text, deflate, at most maxTextBytes before compression
);
CREATE TABLE IF NOT EXISTS snapshot_states (
	id                INTEGER PRIMARY KEY,
	page_id           INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
	key               BLOB NOT NULL, -- stateKey of the columns below
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
	error             TEXT,
	content_id        INTEGER REFERENCES contents(id),
	text_truncated    INTEGER NOT NULL DEFAULT 0,
	etag              TEXT,
	last_modified     TEXT,
	body_bytes        INTEGER,
	bot_protection    TEXT,
	UNIQUE(page_id, key)
);
CREATE INDEX IF NOT EXISTS snapshot_states_content ON snapshot_states(content_id) WHERE content_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS snapshot_log (
	id           INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: an alert's ID and key are snapshot-<id>
	page_id      INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
	taken_ns     INTEGER NOT NULL,
	state_id     INTEGER NOT NULL,
	response_ms  INTEGER,
	not_modified INTEGER NOT NULL DEFAULT 0, -- the server answered 304: the state is the 200's
	bytes_saved  INTEGER,                    -- 304 only: the body not sent again
	changes      TEXT                        -- JSON list of the kinds of change (changes.Kind) since the previous snapshot
);
CREATE INDEX IF NOT EXISTS snapshot_log_page ON snapshot_log(page_id, taken_ns);
CREATE INDEX IF NOT EXISTS snapshot_log_saved ON snapshot_log(bytes_saved) WHERE not_modified = 1;
CREATE VIEW IF NOT EXISTS snapshots AS
SELECT l.id, p.url AS page_url, p.id AS page_id,
	strftime('%Y-%m-%dT%H:%M:%S', l.taken_ns / 1000000000, 'unixepoch') || printf('.%09dZ', l.taken_ns % 1000000000) AS taken_at,
	l.taken_ns, s.blocked_by_robots, s.robots_rule, s.status, s.final_url, s.redirects, s.title, s.meta_description,
	s.canonical, s.meta_robots, s.x_robots_tag, s.h1, s.hreflang, s.content_hash, s.word_count, l.response_ms,
	s.error, c.text_z AS text, s.text_truncated, s.etag, s.last_modified, l.not_modified, s.body_bytes,
	l.bytes_saved, l.changes, s.bot_protection
FROM snapshot_log l JOIN pages p ON p.id = l.page_id JOIN snapshot_states s ON s.id = l.state_id
LEFT JOIN contents c ON c.id = s.content_id;
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

// addedColumns came after the first release; migrate adds those an older
// database lacks (ALTER TABLE ADD COLUMN is not idempotent, so each is
// checked first), then the indexes that use them.
var addedColumns = []struct{ table, column, decl string }{
	{"pages", "host", "TEXT"},           // scheme://host[:port] of url, for the dashboard's filter
	{"pages", "last_status", "INTEGER"}, // HTTP status of the last snapshot
	{"pages", "last_change", "TEXT"},    // what the last change was, one line
	{"pages", "last_change_at", "TEXT"},
	{"pages", "rules", "TEXT"}, // JSON {select, exclude, ignore}: the part compared (rules.go); NULL: the whole text
}

// legacySnapshotColumns are the columns of the first layout's snapshots
// table added after its first release: a file from before them is
// converted as if they were NULL (or their default).
var legacySnapshotColumns = map[string]string{
	"text": "NULL", "text_truncated": "0", "etag": "NULL", "last_modified": "NULL", "not_modified": "0",
	"body_bytes": "NULL", "bytes_saved": "NULL", "changes": "NULL", "bot_protection": "NULL",
}

const indexes = `
CREATE INDEX IF NOT EXISTS pages_host ON pages(host, url);
CREATE INDEX IF NOT EXISTS pages_outcome ON pages(last_outcome, url);
CREATE INDEX IF NOT EXISTS pages_due ON pages(next_due);
CREATE INDEX IF NOT EXISTS robots_cache_expires ON robots_cache(expires_at);
`

// counters keeps the dashboard's totals (pages, pages per outcome,
// snapshots, 304s) and its list of hosts (hosts, with each host's number of
// pages, so an untracked host leaves the list) up to date as pages and
// snapshots are written and deleted: triggers, so every path counts
// (SaveSnapshot, the cascade of untrack, a row deleted by hand), and the
// dashboard reads a few rows instead of counting a million on every view.
// A database from before a counter gets it counted once, in the
// transaction that creates its triggers.
var counters = `
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO counters(name, value) SELECT 'snapshots', (SELECT count(*) FROM snapshot_log)
	WHERE NOT EXISTS (SELECT 1 FROM counters WHERE name = 'snapshots');
INSERT INTO counters(name, value) SELECT 'not_modified', (SELECT count(*) FROM snapshot_log WHERE not_modified = 1)
	WHERE NOT EXISTS (SELECT 1 FROM counters WHERE name = 'not_modified');
INSERT INTO counters(name, value) SELECT 'bytes_saved', (SELECT coalesce(sum(bytes_saved), 0) FROM snapshot_log WHERE not_modified = 1)
	WHERE NOT EXISTS (SELECT 1 FROM counters WHERE name = 'bytes_saved');
INSERT INTO counters(name, value) SELECT 'pages', (SELECT count(*) FROM pages)
	WHERE NOT EXISTS (SELECT 1 FROM counters WHERE name = 'pages');
` + outcomeCounters + `
CREATE TABLE IF NOT EXISTS hosts (host TEXT PRIMARY KEY, pages INTEGER NOT NULL);
INSERT INTO hosts(host, pages) SELECT host, count(*) FROM pages WHERE host IS NOT NULL
	AND NOT EXISTS (SELECT 1 FROM hosts) GROUP BY host;
CREATE TRIGGER IF NOT EXISTS hosts_added AFTER INSERT ON pages WHEN NEW.host IS NOT NULL BEGIN
	INSERT OR IGNORE INTO hosts(host, pages) VALUES (NEW.host, 0);
	UPDATE hosts SET pages = pages + 1 WHERE host = NEW.host;
END;
CREATE TRIGGER IF NOT EXISTS hosts_removed AFTER DELETE ON pages WHEN OLD.host IS NOT NULL BEGIN
	UPDATE hosts SET pages = pages - 1 WHERE host = OLD.host;
	DELETE FROM hosts WHERE host = OLD.host AND pages <= 0;
END;
CREATE TRIGGER IF NOT EXISTS hosts_moved AFTER UPDATE OF host ON pages WHEN OLD.host IS NOT NEW.host BEGIN
	UPDATE hosts SET pages = pages - 1 WHERE host = OLD.host;
	DELETE FROM hosts WHERE host = OLD.host AND pages <= 0;
	INSERT OR IGNORE INTO hosts(host, pages) SELECT NEW.host, 0 WHERE NEW.host IS NOT NULL;
	UPDATE hosts SET pages = pages + 1 WHERE host = NEW.host;
END;
CREATE TRIGGER IF NOT EXISTS pages_counted AFTER INSERT ON pages BEGIN
	UPDATE counters SET value = value + 1 WHERE name IN ('pages', 'outcome:' || coalesce(NEW.last_outcome, 'new'));
END;
CREATE TRIGGER IF NOT EXISTS pages_uncounted AFTER DELETE ON pages BEGIN
	UPDATE counters SET value = value - 1 WHERE name IN ('pages', 'outcome:' || coalesce(OLD.last_outcome, 'new'));
END;
CREATE TRIGGER IF NOT EXISTS pages_recounted AFTER UPDATE OF last_outcome ON pages
WHEN OLD.last_outcome IS NOT NEW.last_outcome BEGIN
	UPDATE counters SET value = value - 1 WHERE name = 'outcome:' || coalesce(OLD.last_outcome, 'new');
	UPDATE counters SET value = value + 1 WHERE name = 'outcome:' || coalesce(NEW.last_outcome, 'new');
END;
CREATE TRIGGER IF NOT EXISTS snapshots_counted AFTER INSERT ON snapshot_log BEGIN
	UPDATE counters SET value = value + 1 WHERE name = 'snapshots';
	UPDATE counters SET value = value + 1 WHERE name = 'not_modified' AND NEW.not_modified = 1;
	UPDATE counters SET value = value + coalesce(NEW.bytes_saved, 0) WHERE name = 'bytes_saved' AND NEW.not_modified = 1;
END;
CREATE TRIGGER IF NOT EXISTS snapshots_uncounted AFTER DELETE ON snapshot_log BEGIN
	UPDATE counters SET value = value - 1 WHERE name = 'snapshots';
	UPDATE counters SET value = value - 1 WHERE name = 'not_modified' AND OLD.not_modified = 1;
	UPDATE counters SET value = value - coalesce(OLD.bytes_saved, 0) WHERE name = 'bytes_saved' AND OLD.not_modified = 1;
END;
`

// countedOutcomes are the pages.last_outcome values (and "new", never
// checked) whose pages are counted in counters ("outcome:ok", ...) for the
// dashboard's filter; a value not among them is counted when asked.
var countedOutcomes = []string{"new", snapshot.OutcomeOK, snapshot.OutcomeError, snapshot.OutcomeBlocked,
	snapshot.OutcomeRobotsWait, snapshot.OutcomeBotProtection}

// outcomeCounters counts each counted outcome once, in the transaction
// that creates the triggers keeping the counts.
var outcomeCounters = func() string {
	var b strings.Builder
	for _, o := range countedOutcomes {
		fmt.Fprintf(&b, `INSERT INTO counters(name, value) SELECT 'outcome:%[1]s', (SELECT count(*) FROM pages WHERE coalesce(last_outcome, 'new') = '%[1]s')
	WHERE NOT EXISTS (SELECT 1 FROM counters WHERE name = 'outcome:%[1]s');
`, o)
	}
	return b.String()
}()

// pageCounter names the counter of the pages with outcome ("" all of them).
func pageCounter(outcome string) string {
	if outcome == "" {
		return "pages"
	}
	return "outcome:" + outcome
}

// dbtx is what a migration step or a write needs: a transaction or the
// pinned connection of a migration.
type dbtx interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// migrate applies the schema and adds what older databases lack, in one
// transaction: a database of the first layout (a snapshots table holding
// every field of every snapshot) is converted to this one, or, on any
// error, left as it was.
func migrate(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Rebuilding pages must not cascade into its snapshots, and foreign
	// keys can only be switched outside a transaction.
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`)
	tx, err := conn.BeginTx(ctx, nil) // immediate (the DSN's _txlock)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := migrateTx(ctx, tx); err != nil {
		return err
	}
	var bad int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_foreign_key_check`).Scan(&bad); err != nil {
		return err
	}
	if bad != 0 {
		return fmt.Errorf("migration left %d rows whose page is missing", bad)
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	// The mark: another program (or another version of this one) can tell
	// the file is the monitor's before it writes anything.
	_, err = conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA application_id = %d`, monitorAppID))
	return err
}

func migrateTx(ctx context.Context, tx dbtx) error {
	var legacy int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'snapshots'`).Scan(&legacy); err != nil {
		return err
	}
	if legacy == 1 {
		// The first layout's tables step aside (their indexes and triggers
		// go with them when they are dropped, but their names are needed
		// now).
		for _, q := range []string{
			`DROP TRIGGER IF EXISTS snapshots_counted`, `DROP TRIGGER IF EXISTS snapshots_uncounted`,
			`DROP TABLE IF EXISTS counters`,
			`DROP INDEX IF EXISTS snapshots_page_taken`, `DROP INDEX IF EXISTS snapshots_saved`,
			`DROP INDEX IF EXISTS pages_host`, `DROP INDEX IF EXISTS pages_outcome`,
			`ALTER TABLE pages RENAME TO legacy_pages`, `ALTER TABLE snapshots RENAME TO legacy_snapshots`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("convert the first layout: %s: %w", q, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, alertSchema); err != nil {
		return err
	}
	have, err := columnsOf(ctx, tx, "pages")
	if err != nil {
		return err
	}
	for _, c := range addedColumns {
		if have[c.column] {
			continue
		}
		if _, err := tx.ExecContext(ctx, "ALTER TABLE "+c.table+" ADD COLUMN "+c.column+" "+c.decl); err != nil {
			return fmt.Errorf("add column %s.%s: %w", c.table, c.column, err)
		}
	}
	if legacy == 1 {
		if err := convertLegacy(ctx, tx); err != nil {
			return fmt.Errorf("convert the first layout: %w", err)
		}
	}
	if err := backfillHosts(ctx, tx); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, indexes); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, counters)
	return err
}

// columnsOf returns the column names of table.
func columnsOf(ctx context.Context, tx dbtx, table string) (map[string]bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		have[name] = true
	}
	return have, rows.Err()
}

// convertBatch is how many first-layout snapshots are read before they are
// written again (the transaction's one connection cannot do both at once).
const convertBatch = 1000

// convertLegacy copies legacy_pages and legacy_snapshots into the new
// tables (a snapshot keeps its id) and drops them.
func convertLegacy(ctx context.Context, tx dbtx) error {
	oldPages, err := columnsOf(ctx, tx, "legacy_pages")
	if err != nil {
		return err
	}
	newPages, err := columnsOf(ctx, tx, "pages")
	if err != nil {
		return err
	}
	var cols []string
	for c := range newPages {
		if oldPages[c] && c != "id" {
			cols = append(cols, c)
		}
	}
	list := strings.Join(cols, ", ")
	if _, err := tx.ExecContext(ctx, `INSERT INTO pages(`+list+`) SELECT `+list+` FROM legacy_pages ORDER BY url`); err != nil {
		return err
	}
	oldSnaps, err := columnsOf(ctx, tx, "legacy_snapshots")
	if err != nil {
		return err
	}
	var sel []string
	for c := range strings.SplitSeq(snapshotColumns, ",") {
		c = strings.TrimSpace(c)
		if def, ok := legacySnapshotColumns[c]; ok && !oldSnaps[c] {
			sel = append(sel, def+" AS "+c)
		} else {
			sel = append(sel, "o."+c)
		}
	}
	query := `SELECT ` + strings.Join(sel, ", ") + `, p.id FROM legacy_snapshots o JOIN pages p ON p.url = o.page_url
WHERE o.id > ? ORDER BY o.id LIMIT ?`
	ins := newStateCache()
	for last := int64(-1 << 63); ; {
		batch, err := legacyBatch(ctx, tx, query, last)
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			break
		}
		for _, b := range batch {
			if _, err := insertSnapshot(ctx, tx, ins, b.pageID, b.sn, b.sn.ID); err != nil {
				return fmt.Errorf("snapshot %d of %s: %w", b.sn.ID, b.sn.PageURL, err)
			}
			last = b.sn.ID
		}
	}
	for _, q := range []string{`DROP TABLE legacy_snapshots`, `DROP TABLE legacy_pages`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

type legacyRow struct {
	sn     *snapshot.Snapshot
	pageID int64
}

func legacyBatch(ctx context.Context, tx dbtx, query string, after int64) ([]legacyRow, error) {
	rows, err := tx.QueryContext(ctx, query, after, convertBatch)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []legacyRow
	for rows.Next() {
		var id int64
		sn, err := scanSnapshotRow(rows, &id)
		if err != nil {
			return nil, err
		}
		out = append(out, legacyRow{sn, id})
	}
	return out, rows.Err()
}

// stateOf is what a snapshot saw, the columns of snapshot_states: two
// checks of a page that saw the same share one row.
type state struct {
	Blocked                                         bool
	RobotsRule, FinalURL, Redirects, Title, Desc    sql.NullString
	Canonical, MetaRobots, XRobotsTag, H1, Hreflang sql.NullString
	ContentHash, Error, ETag, LastModified, BotProt sql.NullString
	Status, Words, BodyBytes                        sql.NullInt64
	TextCut                                         bool
	Text                                            []byte `json:"-"`
	TextKey                                         []byte // contentKey(Text); nil: no text
}

func stateOf(sn *snapshot.Snapshot) (state, error) {
	st := state{Blocked: sn.Blocked, RobotsRule: nullStr(sn.RobotsRule), BotProt: nullStr(sn.BotProtection)}
	if sn.Blocked {
		return st, nil
	}
	redirects, err := jsonOrNull(sn.Redirects, len(sn.Redirects) == 0)
	if err != nil {
		return st, err
	}
	hreflang, err := jsonOrNull(sn.Hreflang, len(sn.Hreflang) == 0)
	if err != nil {
		return st, err
	}
	st.FinalURL, st.Redirects, st.Title, st.Desc = nullStr(sn.FinalURL), redirects, nullStr(sn.Title), nullStr(sn.MetaDescription)
	st.Canonical, st.MetaRobots, st.XRobotsTag, st.H1 = nullStr(sn.Canonical), nullStr(sn.MetaRobots), nullStr(sn.XRobotsTag), nullStr(sn.H1)
	st.Hreflang, st.ContentHash, st.Error = hreflang, nullStr(sn.ContentHash), nullStr(sn.Error)
	st.ETag, st.LastModified = nullStr(sn.ETag), nullStr(sn.LastModified)
	st.Status = sql.NullInt64{Int64: int64(sn.Status), Valid: sn.Status != 0}
	st.Words = sql.NullInt64{Int64: int64(sn.WordCount), Valid: sn.Error == "" && sn.BotProtection == ""}
	st.BodyBytes = sql.NullInt64{Int64: sn.BodyBytes, Valid: sn.Status != 0}
	st.TextCut = sn.TextCut
	if len(sn.TextZ) > 0 {
		st.Text, st.TextKey = sn.TextZ, contentKey(sn.TextZ)
	}
	return st, nil
}

// keyBytes is how much of a SHA-256 names a content or a state: 128 bits,
// no collision in any database a machine can hold.
const keyBytes = 16

// contentKey names a compressed text in contents.hash.
func contentKey(textZ []byte) []byte {
	h := sha256.Sum256(textZ)
	return h[:keyBytes]
}

// key names the state among its page's states.
func (st state) key() ([]byte, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	h := sha256.Sum256(b)
	return h[:keyBytes], nil
}

// stateCache remembers the content and state ids a conversion has
// written, so a database of millions of unchanged snapshots is converted
// without one lookup per row. A nil cache asks the database every time.
type stateCache struct{ contents, states map[string]int64 }

func newStateCache() *stateCache {
	return &stateCache{contents: map[string]int64{}, states: map[string]int64{}}
}

// insertSnapshot writes sn as a snapshot_log row of page pageID (with id,
// unless it is 0), adding its state and its text only when the page (or,
// for the text, any page) has not had them yet. It returns the row's id.
func insertSnapshot(ctx context.Context, tx dbtx, cache *stateCache, pageID int64, sn *snapshot.Snapshot, id int64) (int64, error) {
	st, err := stateOf(sn)
	if err != nil {
		return 0, err
	}
	var contentID sql.NullInt64
	if st.TextKey != nil {
		if contentID.Int64, err = lookupOrInsert(ctx, tx, cache.contentMap(), string(st.TextKey),
			`SELECT id FROM contents WHERE hash = ?`, []any{st.TextKey},
			`INSERT INTO contents(hash, text_z) VALUES(?, ?)`, []any{st.TextKey, st.Text}); err != nil {
			return 0, err
		}
		contentID.Valid = true
	}
	key, err := st.key()
	if err != nil {
		return 0, err
	}
	stateID, err := lookupOrInsert(ctx, tx, cache.stateMap(), fmt.Sprint(pageID, string(key)),
		`SELECT id FROM snapshot_states WHERE page_id = ? AND key = ?`, []any{pageID, key},
		`INSERT INTO snapshot_states(page_id, key, blocked_by_robots, robots_rule, status, final_url, redirects, title,
	meta_description, canonical, meta_robots, x_robots_tag, h1, hreflang, content_hash, word_count, error, content_id,
	text_truncated, etag, last_modified, body_bytes, bot_protection)
VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		[]any{pageID, key, st.Blocked, st.RobotsRule, st.Status, st.FinalURL, st.Redirects, st.Title, st.Desc,
			st.Canonical, st.MetaRobots, st.XRobotsTag, st.H1, st.Hreflang, st.ContentHash, st.Words, st.Error, contentID,
			st.TextCut, st.ETag, st.LastModified, st.BodyBytes, st.BotProt})
	if err != nil {
		return 0, err
	}
	var ms, saved sql.NullInt64
	if !sn.Blocked {
		ms = sql.NullInt64{Int64: sn.ResponseTime.Milliseconds(), Valid: sn.Status != 0 || sn.Error != ""}
		saved = sql.NullInt64{Int64: sn.BytesSaved, Valid: sn.NotModified}
	}
	changes, err := jsonOrNull(sn.Changes, len(sn.Changes) == 0)
	if err != nil {
		return 0, err
	}
	rowID := sql.NullInt64{Int64: id, Valid: id != 0}
	res, err := tx.ExecContext(ctx, `
INSERT INTO snapshot_log(id, page_id, taken_ns, state_id, response_ms, not_modified, bytes_saved, changes)
VALUES(?, ?, ?, ?, ?, ?, ?, ?)`,
		rowID, pageID, sn.TakenAt.UnixNano(), stateID, ms, sn.NotModified && !sn.Blocked, saved, changes)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

func (c *stateCache) contentMap() map[string]int64 {
	if c == nil {
		return nil
	}
	return c.contents
}

func (c *stateCache) stateMap() map[string]int64 {
	if c == nil {
		return nil
	}
	return c.states
}

// lookupOrInsert returns the id of the row find finds, inserting it first
// when there is none; seen (if not nil) remembers ids by key.
func lookupOrInsert(ctx context.Context, tx dbtx, seen map[string]int64, key, find string, findArgs []any, insert string, insertArgs []any) (int64, error) {
	if id, ok := seen[key]; ok {
		return id, nil
	}
	var id int64
	err := tx.QueryRowContext(ctx, find, findArgs...).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		res, err := tx.ExecContext(ctx, insert, insertArgs...)
		if err != nil {
			return 0, err
		}
		id, err = res.LastInsertId()
		if err != nil {
			return 0, err
		}
	} else if err != nil {
		return 0, err
	}
	if seen != nil {
		seen[key] = id
	}
	return id, nil
}
