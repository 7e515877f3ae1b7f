// Package store is the monitor's SQLite database: the schema and its
// migrations, the application_id mark, and every query (tracked pages, their
// snapshots, the claim a check holds, the robots.txt cache, the totals). Only
// this package opens the database.
//
// It never fetches and never prints; the changes it records with a snapshot
// are classified by package snapshot (changes.Compare), and the alerts they
// cause are queued here, in the snapshot's transaction, for package alert
// to deliver.
package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // pure-Go SQLite driver, no cgo

	"github.com/politecrawl/polite/examples/monitor/internal/changes"
	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
)

// timeLayout is RFC 3339 with a fixed nine-digit fraction: fixed width keeps
// lexical order equal to chronological order.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// FmtTime is a time as the database stores it (timeLayout, UTC).
func FmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		// Accept any RFC 3339 text a person may have written by hand.
		t, err = time.Parse(time.RFC3339Nano, s)
	}
	return t, err
}

// Store is the monitor's SQLite database.
type Store struct {
	db *sql.DB
	// path names the file in every error, so a full disk or a locked file
	// says which database it is about.
	path string
	// compare tunes the classification of changes (SetCompareOptions).
	compare changes.Options
}

// wrap names the database file in err (once); nil stays nil.
func (s *Store) wrap(err error) error {
	if err == nil || errors.Is(err, sql.ErrNoRows) || strings.HasPrefix(err.Error(), "database "+s.path+": ") {
		return err
	}
	return fmt.Errorf("database %s: %w", s.path, err)
}

// maxDBPathLen bounds the -db flag; the driver treats '?' as the start of
// its own options, so such paths are refused rather than misread.
const maxDBPathLen = 4096

// ErrNoDatabase: a read-only command was given a path where no database is.
var ErrNoDatabase = errors.New("no database")

// ErrNotOurs: the file is another program's database, or not one the monitor
// recognises; nothing was written to it.
var ErrNotOurs = errors.New("not a monitor database")

// Application ids of PRAGMA application_id (the database header): the
// monitor marks its databases "2UAc"; the audit (Crawl Cove) marks its own
// "CCov".
const (
	monitorAppID = 0x32554163
	auditAppID   = 0x43436F76
)

// openMode says what a command may do to the database file.
type openMode int

const (
	// createIfMissing: track, untrack, run, watch, serve.
	CreateIfMissing openMode = iota
	// mustExist: check -db reads and updates the robots.txt cache of an
	// existing database, never creates one.
	MustExist
	// readOnly: status and report open the file read-only (they work on a
	// read-only mount) and change nothing, not even the mark.
	ReadOnly
)

// Open opens the database at path as mode allows. A file that is
// another program's database, or an unknown non-empty one, is refused before
// anything is written to it; an old monitor database (no mark, recognised by
// its tables) is upgraded and marked, except by read-only commands.
func Open(ctx context.Context, path string, mode openMode) (*Store, error) {
	if path == "" {
		return nil, errors.New("no database path")
	}
	if strings.Contains(path, "?") || len(path) > maxDBPathLen {
		return nil, fmt.Errorf("database path %q: must not contain '?' nor be longer than %d bytes", path, maxDBPathLen)
	}
	fi, statErr := os.Stat(path)
	switch {
	case statErr == nil && fi.IsDir():
		return nil, fmt.Errorf("database %s: is a directory", path)
	case errors.Is(statErr, fs.ErrNotExist) && mode != CreateIfMissing:
		return nil, fmt.Errorf("database %s does not exist (create it with: monitor track -db %s URL): %w", path, path, ErrNoDatabase)
	case errors.Is(statErr, fs.ErrPermission):
		return nil, fmt.Errorf("database %s: permission denied", path)
	}
	if statErr == nil {
		// SQLite says "unable to open database file (14)" for a file it may
		// not read or write; say what it is.
		flag := os.O_RDWR
		if mode == ReadOnly {
			flag = os.O_RDONLY
		}
		f, err := os.OpenFile(path, flag, 0)
		if errors.Is(err, fs.ErrPermission) {
			if mode == ReadOnly {
				return nil, fmt.Errorf("database %s: permission denied (the monitor needs to read it)", path)
			}
			return nil, fmt.Errorf("database %s: permission denied (the monitor needs to read and write it)", path)
		}
		if err == nil {
			f.Close()
		}
		// Whose file is it? Asked read-only, before any pragma of the
		// read-write connection (journal_mode=WAL rewrites the header).
		probe, err := sql.Open("sqlite", readOnlyDSN(path))
		if err != nil {
			return nil, fmt.Errorf("database %s: %w", path, err)
		}
		upToDate, empty, err := checkOwner(ctx, probe, path)
		probe.Close()
		if err != nil {
			return nil, err
		}
		if mode == ReadOnly {
			if empty {
				return nil, fmt.Errorf("database %s is empty (create it with: monitor track -db %s URL): %w", path, path, ErrNoDatabase)
			}
			if !upToDate {
				return nil, fmt.Errorf("database %s was written by an older monitor: open it once with a command that writes (monitor run -db %s) to upgrade it", path, path)
			}
			db, err := sql.Open("sqlite", readOnlyDSN(path))
			if err != nil {
				return nil, fmt.Errorf("database %s: %w", path, err)
			}
			db.SetMaxOpenConns(1)
			return &Store{db: db, path: path}, nil
		}
	}
	// A plain file name, not a "file:" URI: SQLite would percent-decode a URI
	// ("a%20b.db" would open "a b.db"). A relative path that itself starts
	// with "file:" is made explicit so it stays a plain name.
	name := path
	if strings.HasPrefix(name, "file:") {
		name = "./" + name
	}
	// WAL lets status/report/serve read while run/watch write; synchronous=NORMAL in
	// WAL mode loses nothing when the process dies (Ctrl-C), only possibly the
	// last commits on power loss. busy_timeout makes concurrent processes wait
	// instead of failing with "database is locked"; _txlock=immediate takes
	// the write lock when a transaction begins, so two processes never both
	// read and then fail to upgrade to a write (which busy_timeout cannot fix).
	dsn := name + "?_busy_timeout=10000&_journal_mode=WAL&_foreign_keys=1&_synchronous=NORMAL&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// One connection: SQLite serialises writers anyway, and a single
	// connection rules out SQLITE_BUSY between our own goroutines.
	db.SetMaxOpenConns(1)
	if err := migrate(ctx, db); err != nil {
		db.Close()
		if perm := permissionProblem(path); perm != nil {
			return nil, perm
		}
		return nil, fmt.Errorf("database %s: open: %w", path, err)
	}
	return &Store{db: db, path: path}, nil
}

// readOnlyDSN opens path read-only, as a file: URI (the only form in which
// SQLite honours mode=ro; the path is percent-encoded, so it is taken
// literally). In a directory the monitor cannot write (a read-only mount)
// SQLite cannot create the WAL index, so the file is opened immutable:
// nobody can be writing it there.
func readOnlyDSN(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	q := "mode=ro&_busy_timeout=10000"
	if syscall.Access(filepath.Dir(abs), 2 /* W_OK */) != nil {
		q += "&immutable=1"
	}
	return (&url.URL{Scheme: "file", Path: abs, OmitHost: true, RawQuery: q}).String()
}

// checkOwner refuses a database that is not the monitor's: one marked by
// another program (the audit), one marked by an unknown one, or an unmarked
// one whose tables are not the monitor's. An empty file is fine (a new
// database). upToDate says the file has every column this version reads.
func checkOwner(ctx context.Context, db *sql.DB, path string) (upToDate, empty bool, err error) {
	var id int64
	if err := db.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&id); err != nil {
		if perm := permissionProblem(path); perm != nil {
			return false, false, perm
		}
		return false, false, fmt.Errorf("database %s: %w", path, err)
	}
	switch id {
	case monitorAppID, 0:
	case auditAppID:
		return false, false, fmt.Errorf("database %s is a Crawl Cove (audit) database, not a monitor database: %w", path, ErrNotOurs)
	default:
		return false, false, fmt.Errorf("database %s belongs to another program (application_id %#x), not the monitor: %w", path, id, ErrNotOurs)
	}
	rows, err := db.QueryContext(ctx, `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table'`)
	if err != nil {
		return false, false, fmt.Errorf("database %s: %w", path, err)
	}
	defer rows.Close()
	have := map[string]bool{}
	tables := map[string]bool{}
	for rows.Next() {
		var table, column string
		if err := rows.Scan(&table, &column); err != nil {
			return false, false, fmt.Errorf("database %s: %w", path, err)
		}
		tables[table] = true
		have[table+"."+column] = true
	}
	if err := rows.Err(); err != nil {
		return false, false, fmt.Errorf("database %s: %w", path, err)
	}
	if id == 0 && len(tables) > 0 && !(tables["pages"] && (tables["snapshots"] || tables["snapshot_log"]) && tables["robots_cache"]) {
		return false, false, fmt.Errorf("database %s is not a monitor database (it has other tables and no monitor mark); nothing was changed: %w", path, ErrNotOurs)
	}
	upToDate = tables["counters"] && tables["snapshot_log"] && hasAlertTables(tables)
	for _, c := range addedColumns {
		upToDate = upToDate && have[c.table+"."+c.column]
	}
	return upToDate, len(tables) == 0, nil
}

// permissionProblem tells whether path (or the WAL and shared-memory files
// next to it, or its directory) cannot be written, to replace SQLite's
// "unable to open database file (14)" with what a person can fix.
func permissionProblem(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		_, existed := os.Stat(p)
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
		if errors.Is(err, fs.ErrPermission) {
			if existed != nil {
				return fmt.Errorf("database %s: permission denied (cannot create %s in %s)", path, filepath.Base(p), filepath.Dir(p))
			}
			return fmt.Errorf("database %s: permission denied (cannot write %s)", path, p)
		}
		if err == nil {
			f.Close()
			if existed != nil {
				os.Remove(p)
			}
		}
	}
	return nil
}

// backfillHosts fills pages.host of a database from before the column.
func backfillHosts(ctx context.Context, db dbtx) error {
	rows, err := db.QueryContext(ctx, `SELECT url FROM pages WHERE host IS NULL`)
	if err != nil {
		return err
	}
	var urls []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			rows.Close()
			return err
		}
		urls = append(urls, u)
	}
	rows.Close()
	for _, u := range urls {
		if _, err := db.ExecContext(ctx, `UPDATE pages SET host = ? WHERE url = ?`, hostOf(u), u); err != nil {
			return err
		}
	}
	return nil
}

// hostOf is the scheme://host[:port] of a stored URL.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Page is one row of pages.
type Page struct {
	URL         string
	Host        string
	Interval    time.Duration
	Added       time.Time
	NextDue     time.Time
	RetryAt     time.Time // zero: none
	LastAttempt time.Time // zero: never checked
	LastOutcome string
	LastDetail  string
	LastStatus  int
	LastChange  string    // what the last change was, one line
	LastChanged time.Time // zero: no change seen yet
}

// Due reports when the page may next be checked: its interval, and for a host
// whose robots.txt was unreachable, not before the robots re-check.
func (p Page) Due() time.Time {
	if p.RetryAt.After(p.NextDue) {
		return p.RetryAt
	}
	return p.NextDue
}

// Track adds pages or changes their interval. A new page is due at once; a
// page already tracked keeps its history and its next due time is
// recomputed from its last snapshot with the new interval.
func (s *Store) Track(ctx context.Context, urls []string, interval time.Duration, now time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap(err)
	}
	defer tx.Rollback()
	for _, u := range urls {
		var last sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT max(taken_ns) FROM snapshot_log WHERE page_id = (SELECT id FROM pages WHERE url = ?)`, u).Scan(&last); err != nil {
			return s.wrap(err)
		}
		next := now
		if last.Valid {
			next = NextDue(u, time.Unix(0, last.Int64), interval)
		}
		_, err := tx.ExecContext(ctx, `
INSERT INTO pages(url, host, interval_seconds, added_at, next_due) VALUES(?, ?, ?, ?, ?)
ON CONFLICT(url) DO UPDATE SET interval_seconds = excluded.interval_seconds, next_due = excluded.next_due`,
			u, hostOf(u), int64(interval/time.Second), FmtTime(now), FmtTime(next))
		if err != nil {
			return s.wrap(err)
		}
	}
	return s.wrap(tx.Commit())
}

// Untrack removes pages and their snapshots; it returns the URLs that were not tracked.
func (s *Store) Untrack(ctx context.Context, urls []string) (missing []string, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer tx.Rollback()
	for _, u := range urls {
		// The page's texts go with it, unless another page's state has the
		// same text (contents are shared across pages).
		var contentIDs []int64
		rows, err := tx.QueryContext(ctx, `SELECT DISTINCT content_id FROM snapshot_states
WHERE page_id = (SELECT id FROM pages WHERE url = ?) AND content_id IS NOT NULL`, u)
		if err != nil {
			return nil, s.wrap(err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, s.wrap(err)
			}
			contentIDs = append(contentIDs, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, s.wrap(err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM pages WHERE url = ?`, u)
		if err != nil {
			return nil, s.wrap(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			missing = append(missing, u)
		}
		for _, id := range contentIDs {
			if _, err := tx.ExecContext(ctx, `DELETE FROM contents WHERE id = ?
AND NOT EXISTS (SELECT 1 FROM snapshot_states WHERE content_id = ?)`, id, id); err != nil {
				return nil, s.wrap(err)
			}
		}
	}
	return missing, s.wrap(tx.Commit())
}

const pageColumns = `url, host, interval_seconds, added_at, next_due, retry_at, last_attempt_at, last_outcome,
	last_detail, last_status, last_change, last_change_at`

func scanPage(rows interface{ Scan(...any) error }) (Page, error) {
	var (
		p                       Page
		secs                    int64
		added, next             string
		host, retry, last, oc   sql.NullString
		detail, change, changed sql.NullString
		status                  sql.NullInt64
	)
	if err := rows.Scan(&p.URL, &host, &secs, &added, &next, &retry, &last, &oc, &detail, &status, &change, &changed); err != nil {
		return p, err
	}
	p.Host = host.String
	p.Interval = time.Duration(secs) * time.Second
	var err1, err2 error
	p.Added, err1 = parseTime(added)
	p.NextDue, err2 = parseTime(next)
	if err := errors.Join(err1, err2); err != nil {
		return p, fmt.Errorf("page %s: %w", p.URL, err)
	}
	if retry.Valid {
		p.RetryAt, _ = parseTime(retry.String)
	}
	if last.Valid {
		p.LastAttempt, _ = parseTime(last.String)
	}
	if changed.Valid {
		p.LastChanged, _ = parseTime(changed.String)
	}
	p.LastOutcome, p.LastDetail, p.LastChange = oc.String, detail.String, change.String
	p.LastStatus = int(status.Int64)
	return p, nil
}

func (s *Store) queryPages(ctx context.Context, query string, args ...any) ([]Page, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	var out []Page
	for rows.Next() {
		p, err := scanPage(rows)
		if err != nil {
			return nil, s.wrap(err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Pages returns every tracked page ordered by URL.
func (s *Store) Pages(ctx context.Context) ([]Page, error) {
	return s.queryPages(ctx, `SELECT `+pageColumns+` FROM pages ORDER BY url`)
}

// Page returns one tracked page; ok is false when it is not tracked.
func (s *Store) Page(ctx context.Context, url string) (Page, bool, error) {
	ps, err := s.queryPages(ctx, `SELECT `+pageColumns+` FROM pages WHERE url = ?`, url)
	if err != nil || len(ps) == 0 {
		return Page{}, false, s.wrap(err)
	}
	return ps[0], true, nil
}

// PageFilter selects pages for the dashboard and the API.
type PageFilter struct {
	Host    string // scheme://host[:port]; "" = all
	Outcome string // an outcome*, "new" for never checked; "" = all
}

func (f PageFilter) where() (string, []any) {
	var conds []string
	var args []any
	if f.Host != "" {
		conds = append(conds, "host = ?")
		args = append(args, f.Host)
	}
	switch f.Outcome {
	case "":
	case "new":
		conds = append(conds, "last_outcome IS NULL")
	default:
		conds = append(conds, "last_outcome = ?")
		args = append(args, f.Outcome)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// ListPages returns one page of the filtered list, ordered by URL, and the
// number of pages the filter matches. Both queries use an index (pages_host,
// pages_outcome or the primary key), so the dashboard's cost does not grow
// with the number of snapshots.
func (s *Store) ListPages(ctx context.Context, f PageFilter, limit, offset int) ([]Page, int, error) {
	where, args := f.where()
	// Counting a million pages on every view would cost more than the
	// view: without a host the count is a counter kept by triggers.
	count, countArgs := `SELECT count(*) FROM pages`+where, args
	if f.Host == "" {
		count = `SELECT coalesce((SELECT value FROM counters WHERE name = ?), (` + count + `))`
		countArgs = append([]any{pageCounter(f.Outcome)}, args...)
	}
	var total int
	if err := s.db.QueryRowContext(ctx, count, countArgs...).Scan(&total); err != nil {
		return nil, 0, s.wrap(err)
	}
	ps, err := s.queryPages(ctx, `SELECT `+pageColumns+` FROM pages`+where+` ORDER BY url LIMIT ? OFFSET ?`,
		append(args, limit, offset)...)
	return ps, total, s.wrap(err)
}

// HostCount returns how many distinct hosts have tracked pages.
func (s *Store) HostCount(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM hosts`).Scan(&n)
	return n, s.wrap(err)
}

// Hosts returns the distinct hosts of tracked pages, for the filter.
func (s *Store) Hosts(ctx context.Context) ([]string, error) {
	// The hosts table (kept by triggers), not a read of every page's
	// entry in pages_host.
	rows, err := s.db.QueryContext(ctx, `SELECT host FROM hosts ORDER BY host`)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, s.wrap(err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// Totals are the dashboard's and status's summary figures.
type Totals struct {
	Pages, Snapshots, NotModified int
	BytesSaved                    int64
}

// Totals reads the summary figures (the counters kept by triggers).
func (s *Store) Totals(ctx context.Context) (Totals, error) {
	var t Totals
	var saved sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT (SELECT value FROM counters WHERE name = 'pages'),
	(SELECT value FROM counters WHERE name = 'snapshots'), (SELECT value FROM counters WHERE name = 'not_modified'),
	(SELECT value FROM counters WHERE name = 'bytes_saved')`).
		Scan(&t.Pages, &t.Snapshots, &t.NotModified, &saved)
	t.BytesSaved = saved.Int64
	return t, s.wrap(err)
}

// DuePages returns the pages whose check is due at now, the earliest due
// first.
func (s *Store) DuePages(ctx context.Context, now time.Time) ([]Page, error) {
	return s.DuePagesLimit(ctx, now, -1)
}

// DuePagesLimit returns at most limit (-1: all) of the pages whose check is
// due at now, the earliest due first. It reads the pages_due index (on
// next_due, which a claim does not change) from its start to the first page
// not yet due: its cost is in what is due (and what is claimed or waiting
// for robots.txt), not in what is tracked.
func (s *Store) DuePagesLimit(ctx context.Context, now time.Time, limit int) ([]Page, error) {
	n := FmtTime(now)
	ps, err := s.queryPages(ctx, dueQuery, n, n, limit)
	return ps, s.wrap(err)
}

const dueQuery = `SELECT ` + pageColumns + ` FROM pages INDEXED BY pages_due
WHERE next_due <= ? AND (retry_at IS NULL OR retry_at <= ?) ORDER BY next_due LIMIT ?`

// nextDueQuery reads pages in next_due order; NextDue stops at the first
// page whose next_due is past the earliest due time seen.
const nextDueQuery = `SELECT next_due, retry_at FROM pages INDEXED BY pages_due ORDER BY next_due`

// NextDue returns the earliest time a page becomes due; ok is false when
// nothing is tracked. A page is due at the later of next_due and retry_at;
// the pages read are those with an earlier next_due than the answer (the
// ones claimed or waiting for robots.txt), and one more.
func (s *Store) NextDue(ctx context.Context) (t time.Time, ok bool, err error) {
	rows, err := s.db.QueryContext(ctx, nextDueQuery)
	if err != nil {
		return time.Time{}, false, s.wrap(err)
	}
	defer rows.Close()
	var best string
	for rows.Next() {
		var next string
		var retry sql.NullString
		if err := rows.Scan(&next, &retry); err != nil {
			return time.Time{}, false, s.wrap(err)
		}
		if ok && next >= best {
			break
		}
		due := max(next, retry.String)
		if !ok || due < best {
			best, ok = due, true
		}
	}
	if err := rows.Err(); err != nil {
		return time.Time{}, false, s.wrap(err)
	}
	if !ok {
		return time.Time{}, false, nil
	}
	if t, err = parseTime(best); err != nil {
		return time.Time{}, false, s.wrap(fmt.Errorf("next due time %q: %w", best, err))
	}
	return t, true, nil
}

func nullStr(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

func jsonOrNull(v any, empty bool) (sql.NullString, error) {
	if empty {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(v)
	return sql.NullString{String: string(b), Valid: err == nil}, err
}

// SaveSnapshot stores a snapshot and schedules the page's next check one
// interval later, in one transaction: a snapshot is either fully recorded
// or not at all. It also classifies the snapshot's changes against the
// page's history (snapshot.Classify) and records them (snapshots.changes,
// the page's last_change, the change log) with, in the same transaction,
// the alert deliveries of every matching channel (the outbox).
func (s *Store) SaveSnapshot(ctx context.Context, sn *snapshot.Snapshot) error {
	// The comparison with the previous snapshot (a word diff of up to
	// 100 KiB of text) is made before the write transaction, so it never
	// holds the database's write lock. Only the process that claimed the
	// page writes its snapshots, so the previous one cannot change meanwhile.
	cs, err := s.classify(ctx, sn)
	if err != nil {
		return s.wrap(err)
	}
	sn.Changes = snapshot.Kinds(cs)
	changeLine := snapshot.ChangesLine(cs)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap(err)
	}
	defer tx.Rollback()
	var pageID, secs int64
	if err := tx.QueryRowContext(ctx, `SELECT id, interval_seconds FROM pages WHERE url = ?`, sn.PageURL).Scan(&pageID, &secs); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			// Untracked while the check was in flight: nothing to record.
			return nil
		}
		return s.wrap(err)
	}
	if sn.ID, err = insertSnapshot(ctx, tx, nil, pageID, sn, 0); err != nil {
		return s.wrap(err)
	}
	if err := s.recordChanges(ctx, tx, sn, cs); err != nil {
		return s.wrap(err)
	}
	var status sql.NullInt64
	if !sn.Blocked {
		status = sql.NullInt64{Int64: int64(sn.Status), Valid: sn.Status != 0}
	}
	oc, detail := sn.Outcome()
	next := NextDue(sn.PageURL, sn.TakenAt, time.Duration(secs)*time.Second)
	if sn.NotModified && !sn.Blocked {
		status.Int64 = http.StatusNotModified // what the server answered this time
	}
	if _, err := tx.ExecContext(ctx, `
UPDATE pages SET next_due = ?, retry_at = NULL, last_attempt_at = ?, last_outcome = ?, last_detail = ?, last_status = ?
WHERE url = ?`,
		FmtTime(next), FmtTime(sn.TakenAt), oc, nullStr(detail), status, sn.PageURL); err != nil {
		return s.wrap(err)
	}
	if changeLine != "" {
		if _, err := tx.ExecContext(ctx, `UPDATE pages SET last_change = ?, last_change_at = ? WHERE url = ?`,
			changeLine, FmtTime(sn.TakenAt), sn.PageURL); err != nil {
			return s.wrap(err)
		}
	}
	return s.wrap(tx.Commit())
}

// Claim takes page url for one check until leaseEnd, if it is still due at
// now: two monitor processes on one database (a cron run during a watch)
// then never check one page twice. It reports false when another process
// holds the page or has already checked it.
func (s *Store) Claim(ctx context.Context, url string, now, leaseEnd time.Time) (bool, error) {
	n := FmtTime(now)
	res, err := s.db.ExecContext(ctx, `
UPDATE pages SET retry_at = ? WHERE url = ? AND next_due <= ? AND (retry_at IS NULL OR retry_at <= ?)`,
		FmtTime(leaseEnd), url, n, n)
	if err != nil {
		return false, s.wrap(err)
	}
	rows, err := res.RowsAffected()
	return rows == 1, s.wrap(err)
}

// Release gives back a claimed page that was not checked (the run was
// interrupted): it is due again at once.
func (s *Store) Release(ctx context.Context, url string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE pages SET retry_at = NULL WHERE url = ?`, url)
	return s.wrap(err)
}

// DeferPage records a check that took no snapshot because robots.txt was
// unreachable: the page stays due, but not before retryAt.
func (s *Store) DeferPage(ctx context.Context, url string, at, retryAt time.Time, detail string) error {
	_, err := s.db.ExecContext(ctx, `
UPDATE pages SET retry_at = ?, last_attempt_at = ?, last_outcome = ?, last_detail = ? WHERE url = ?`,
		FmtTime(retryAt), FmtTime(at), snapshot.OutcomeRobotsWait, nullStr(detail), url)
	return s.wrap(err)
}

// LastGood returns the page's latest snapshot that holds a 200 response
// (a 304 carries its 200 over): the base of the next conditional GET and
// what a 304 carries over. ok is false when there is none.
func (s *Store) LastGood(ctx context.Context, url string) (*snapshot.Snapshot, bool, error) {
	sn, err := scanSnapshotRow(s.db.QueryRowContext(ctx, `SELECT `+snapshotColumns+` FROM snapshots
WHERE page_url = ? AND blocked_by_robots = 0 AND bot_protection IS NULL ORDER BY taken_ns DESC, id DESC LIMIT 1`, url))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.wrap(err)
	}
	if sn.Status != http.StatusOK || sn.Error != "" {
		return nil, false, nil
	}
	return sn, true, nil
}

// Snapshots returns the snapshots of every page, ordered by page then time.
func (s *Store) Snapshots(ctx context.Context) ([]snapshot.Snapshot, error) {
	var out []snapshot.Snapshot
	err := s.EachSnapshot(ctx, func(sn *snapshot.Snapshot) error {
		out = append(out, *sn)
		return nil
	})
	return out, s.wrap(err)
}

// PageSnapshots returns up to limit snapshots of one page, newest first,
// skipping offset, and how many the page has.
func (s *Store) PageSnapshots(ctx context.Context, url string, limit, offset int) ([]*snapshot.Snapshot, int, error) {
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM snapshot_log WHERE page_id = (SELECT id FROM pages WHERE url = ?)`, url).Scan(&total); err != nil {
		return nil, 0, s.wrap(err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+snapshotColumns+` FROM snapshots WHERE page_url = ?
ORDER BY taken_ns DESC, id DESC LIMIT ? OFFSET ?`, url, limit, offset)
	if err != nil {
		return nil, 0, s.wrap(err)
	}
	defer rows.Close()
	var out []*snapshot.Snapshot
	for rows.Next() {
		sn, err := scanSnapshotRow(rows)
		if err != nil {
			return nil, 0, s.wrap(err)
		}
		out = append(out, sn)
	}
	return out, total, rows.Err()
}

const snapshotColumns = `id, page_url, taken_at, blocked_by_robots, robots_rule, status, final_url, redirects, title,
	meta_description, canonical, meta_robots, x_robots_tag, h1, hreflang, content_hash, word_count,
	response_ms, error, text, text_truncated, etag, last_modified, not_modified, body_bytes, bytes_saved, changes,
	bot_protection`

// scanSnapshotRow reads one row of snapshotColumns, then extra.
func scanSnapshotRow(row interface{ Scan(...any) error }, extra ...any) (*snapshot.Snapshot, error) {
	var (
		sn                                                  snapshot.Snapshot
		taken                                               string
		rule, final, redirects, title, desc, canon, mrobots sql.NullString
		xrobots, h1, hreflang, hash, errText                sql.NullString
		etag, lastMod, changes, bot                         sql.NullString
		status, words, ms, bodyBytes, saved                 sql.NullInt64
	)
	if err := row.Scan(append([]any{&sn.ID, &sn.PageURL, &taken, &sn.Blocked, &rule, &status, &final, &redirects, &title,
		&desc, &canon, &mrobots, &xrobots, &h1, &hreflang, &hash, &words, &ms, &errText,
		&sn.TextZ, &sn.TextCut, &etag, &lastMod, &sn.NotModified, &bodyBytes, &saved, &changes, &bot}, extra...)...); err != nil {
		return nil, err
	}
	var err error
	if sn.TakenAt, err = parseTime(taken); err != nil {
		return nil, fmt.Errorf("snapshot %d of %s: %w", sn.ID, sn.PageURL, err)
	}
	sn.RobotsRule, sn.FinalURL, sn.Title, sn.MetaDescription = rule.String, final.String, title.String, desc.String
	sn.Canonical, sn.MetaRobots, sn.XRobotsTag, sn.H1 = canon.String, mrobots.String, xrobots.String, h1.String
	sn.ContentHash, sn.Error = hash.String, errText.String
	sn.ETag, sn.LastModified = etag.String, lastMod.String
	sn.BotProtection = bot.String
	sn.Status, sn.WordCount = int(status.Int64), int(words.Int64)
	sn.ResponseTime = time.Duration(ms.Int64) * time.Millisecond
	sn.BodyBytes, sn.BytesSaved = bodyBytes.Int64, saved.Int64
	if redirects.Valid {
		if err := json.Unmarshal([]byte(redirects.String), &sn.Redirects); err != nil {
			return nil, fmt.Errorf("snapshot %d of %s: redirects: %w", sn.ID, sn.PageURL, err)
		}
	}
	if hreflang.Valid {
		if err := json.Unmarshal([]byte(hreflang.String), &sn.Hreflang); err != nil {
			return nil, fmt.Errorf("snapshot %d of %s: hreflang: %w", sn.ID, sn.PageURL, err)
		}
	}
	if changes.Valid {
		if err := json.Unmarshal([]byte(changes.String), &sn.Changes); err != nil {
			return nil, fmt.Errorf("snapshot %d of %s: changes: %w", sn.ID, sn.PageURL, err)
		}
	}
	return &sn, nil
}

// EachSnapshot calls fn with every snapshot, ordered by page then time,
// one row at a time: a report over years of snapshots does not hold them
// all in memory. fn must not use the store (its one connection is busy).
func (s *Store) EachSnapshot(ctx context.Context, fn func(*snapshot.Snapshot) error) error {
	rows, err := s.db.QueryContext(ctx, `SELECT `+snapshotColumns+` FROM snapshots ORDER BY page_url, taken_ns, id`)
	if err != nil {
		return s.wrap(err)
	}
	defer rows.Close()
	for rows.Next() {
		sn, err := scanSnapshotRow(rows)
		if err != nil {
			return s.wrap(err)
		}
		if err := fn(sn); err != nil {
			return s.wrap(err)
		}
	}
	return rows.Err()
}

// robotsRow is one row of robots_cache: the raw robots.txt answer for one
// authority (scheme://host:port), kept so later runs re-parse it instead of
// refetching.
type robotsRow struct {
	Host      string // scheme://host[:port]
	URL       string // the robots.txt URL asked for
	Status    int
	Body      []byte
	FetchedAt time.Time
	ExpiresAt time.Time
	Err       string
}

func (s *Store) loadRobots(ctx context.Context, host string) (robotsRow, bool, error) {
	var (
		r             robotsRow
		fetched, exp  string
		errText, rurl sql.NullString
	)
	err := s.db.QueryRowContext(ctx,
		`SELECT host, url, status, body, fetched_at, expires_at, error FROM robots_cache WHERE host = ?`, host).
		Scan(&r.Host, &rurl, &r.Status, &r.Body, &fetched, &exp, &errText)
	if errors.Is(err, sql.ErrNoRows) {
		return robotsRow{}, false, nil
	}
	if err != nil {
		return robotsRow{}, false, s.wrap(err)
	}
	var err1, err2 error
	r.FetchedAt, err1 = parseTime(fetched)
	r.ExpiresAt, err2 = parseTime(exp)
	if err := errors.Join(err1, err2); err != nil {
		// A damaged row is treated as absent: the worst case is one refetch.
		return robotsRow{}, false, nil
	}
	r.Err, r.URL = errText.String, rurl.String
	return r, true, nil
}

// What the robots.txt cache keeps for hosts with no tracked page (the free
// tool's anonymous checks): the newest maxUntrackedRobots rows, and no more
// than maxUntrackedRobotsBytes of their bodies. Tracked hosts' rows are never
// cut: the one-hour promise is about them.
const (
	maxUntrackedRobots      = 64
	maxUntrackedRobotsBytes = 2 << 20
)

// saveRobots stores r and, in the same transaction, evicts every expired
// copy (robots.Cache refetches those anyway) and trims untracked hosts' rows
// to the caps above, so anonymous checks cannot grow the file without bound.
func (s *Store) saveRobots(ctx context.Context, r robotsRow) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `
INSERT INTO robots_cache(host, url, status, body, fetched_at, expires_at, error) VALUES(?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(host) DO UPDATE SET url = excluded.url, status = excluded.status, body = excluded.body,
	fetched_at = excluded.fetched_at, expires_at = excluded.expires_at, error = excluded.error`,
		r.Host, nullStr(r.URL), r.Status, r.Body, FmtTime(r.FetchedAt), FmtTime(r.ExpiresAt), nullStr(r.Err)); err != nil {
		return s.wrap(err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM robots_cache WHERE expires_at < ?`, FmtTime(r.FetchedAt)); err != nil {
		return s.wrap(err)
	}
	// Only an untracked host's copy adds to what the caps bound; a tracked
	// host's save skips the trim, which reads every untracked row (at
	// 10,000 tracked hosts, once per save it would be most of a run's work).
	var tracked bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pages WHERE host = ?)`, r.Host).Scan(&tracked); err != nil {
		return s.wrap(err)
	}
	if tracked {
		return s.wrap(tx.Commit())
	}
	if _, err := tx.ExecContext(ctx, `
DELETE FROM robots_cache WHERE host IN (
	SELECT host FROM (
		SELECT host, row_number() OVER w AS n, sum(coalesce(length(body), 0)) OVER w AS bytes
		FROM robots_cache c WHERE NOT EXISTS (SELECT 1 FROM pages p WHERE p.host = c.host)
		WINDOW w AS (ORDER BY fetched_at DESC, host))
	WHERE n > ? OR bytes > ?)`, maxUntrackedRobots, maxUntrackedRobotsBytes); err != nil {
		return s.wrap(err)
	}
	return s.wrap(tx.Commit())
}
