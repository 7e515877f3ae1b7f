package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	_ "modernc.org/sqlite" // pure-Go SQLite driver, no cgo
)

// schema is applied on every open; every statement is idempotent so old
// databases keep working. Times are fixed-width UTC text (timeLayout) so that
// string comparison in SQL is time comparison and a person reading the file
// with sqlite3 sees real dates.
const schema = `
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

// timeLayout is RFC 3339 with a fixed nine-digit fraction: fixed width keeps
// lexical order equal to chronological order.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func fmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		// Accept any RFC 3339 text a person may have written by hand.
		t, err = time.Parse(time.RFC3339Nano, s)
	}
	return t, err
}

// Outcomes of one check of a page, stored in pages.last_outcome.
const (
	outcomeOK         = "ok"                 // fetched, snapshot stored
	outcomeError      = "error"              // fetch failed, snapshot row stored with the error
	outcomeBlocked    = "blocked"            // robots.txt disallows; snapshot row with blocked_by_robots = 1
	outcomeRobotsWait = "robots-unreachable" // robots.txt 5xx/unreachable; no snapshot, retried later
)

// store is the monitor's SQLite database.
type store struct {
	db *sql.DB
}

// maxDBPathLen bounds the -db flag; the driver treats '?' as the start of
// its own options, so such paths are refused rather than misread.
const maxDBPathLen = 4096

func openStore(ctx context.Context, path string) (*store, error) {
	if path == "" {
		return nil, errors.New("no database path")
	}
	if strings.Contains(path, "?") || len(path) > maxDBPathLen {
		return nil, fmt.Errorf("database path %q: must not contain '?' nor be longer than %d bytes", path, maxDBPathLen)
	}
	// A plain file name, not a "file:" URI: SQLite would percent-decode a URI
	// ("a%20b.db" would open "a b.db"). A relative path that itself starts
	// with "file:" is made explicit so it stays a plain name.
	if strings.HasPrefix(path, "file:") {
		path = "./" + path
	}
	// WAL lets status/report read while run/watch write; synchronous=NORMAL in
	// WAL mode loses nothing when the process dies (Ctrl-C), only possibly the
	// last commits on power loss. busy_timeout makes concurrent processes wait
	// instead of failing.
	dsn := path + "?_busy_timeout=10000&_journal_mode=WAL&_foreign_keys=1&_synchronous=NORMAL&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// One connection: SQLite serialises writers anyway, and a single
	// connection rules out SQLITE_BUSY between our own goroutines.
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &store{db: db}, nil
}

func (s *store) Close() error { return s.db.Close() }

// page is one row of pages.
type page struct {
	URL         string
	Interval    time.Duration
	Added       time.Time
	NextDue     time.Time
	RetryAt     time.Time // zero: none
	LastAttempt time.Time // zero: never checked
	LastOutcome string
	LastDetail  string
}

// due reports when the page may next be checked: its interval, and for a host
// whose robots.txt was unreachable, not before the robots re-check.
func (p page) due() time.Time {
	if p.RetryAt.After(p.NextDue) {
		return p.RetryAt
	}
	return p.NextDue
}

// track adds pages or changes their interval. A new page is due at once; a
// page already tracked keeps its history and its next due time is
// recomputed from its last snapshot with the new interval.
func (s *store) track(ctx context.Context, urls []string, interval time.Duration, now time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, u := range urls {
		var last sql.NullString
		if err := tx.QueryRowContext(ctx, `SELECT MAX(taken_at) FROM snapshots WHERE page_url = ?`, u).Scan(&last); err != nil {
			return err
		}
		next := now
		if last.Valid {
			t, err := parseTime(last.String)
			if err != nil {
				return fmt.Errorf("snapshot time of %s: %w", u, err)
			}
			next = t.Add(interval)
		}
		_, err := tx.ExecContext(ctx, `
INSERT INTO pages(url, interval_seconds, added_at, next_due) VALUES(?, ?, ?, ?)
ON CONFLICT(url) DO UPDATE SET interval_seconds = excluded.interval_seconds, next_due = excluded.next_due`,
			u, int64(interval/time.Second), fmtTime(now), fmtTime(next))
		if err != nil {
			return err
		}
	}
	return tx.Commit()
}

// untrack removes pages and their snapshots; it returns the URLs that were not tracked.
func (s *store) untrack(ctx context.Context, urls []string) (missing []string, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	for _, u := range urls {
		res, err := tx.ExecContext(ctx, `DELETE FROM pages WHERE url = ?`, u)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			missing = append(missing, u)
		}
	}
	return missing, tx.Commit()
}

// pages returns every tracked page ordered by URL.
func (s *store) pages(ctx context.Context) ([]page, error) {
	rows, err := s.db.QueryContext(ctx, `
SELECT url, interval_seconds, added_at, next_due, retry_at, last_attempt_at, last_outcome, last_detail
FROM pages ORDER BY url`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []page
	for rows.Next() {
		var (
			p                       page
			secs                    int64
			added, next             string
			retry, last, oc, detail sql.NullString
		)
		if err := rows.Scan(&p.URL, &secs, &added, &next, &retry, &last, &oc, &detail); err != nil {
			return nil, err
		}
		p.Interval = time.Duration(secs) * time.Second
		var err1, err2 error
		p.Added, err1 = parseTime(added)
		p.NextDue, err2 = parseTime(next)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("page %s: %w", p.URL, err)
		}
		if retry.Valid {
			p.RetryAt, _ = parseTime(retry.String)
		}
		if last.Valid {
			p.LastAttempt, _ = parseTime(last.String)
		}
		p.LastOutcome, p.LastDetail = oc.String, detail.String
		out = append(out, p)
	}
	return out, rows.Err()
}

// duePages returns the pages whose check is due at now.
func (s *store) duePages(ctx context.Context, now time.Time) ([]page, error) {
	all, err := s.pages(ctx)
	if err != nil {
		return nil, err
	}
	var due []page
	for _, p := range all {
		if !p.due().After(now) {
			due = append(due, p)
		}
	}
	return due, nil
}

// nextDue returns the earliest time a page becomes due; ok is false when
// nothing is tracked.
func (s *store) nextDue(ctx context.Context) (t time.Time, ok bool, err error) {
	all, err := s.pages(ctx)
	if err != nil {
		return time.Time{}, false, err
	}
	for _, p := range all {
		if d := p.due(); !ok || d.Before(t) {
			t, ok = d, true
		}
	}
	return t, ok, nil
}

// hop is one redirect of a snapshot's chain.
type hop struct {
	URL      string `json:"url"`
	Status   int    `json:"status"`
	Location string `json:"location,omitempty"`
}

// alternate is one hreflang link of a snapshot.
type alternate struct {
	Hreflang string `json:"hreflang"`
	URL      string `json:"url"`
}

// snapshot is one row of snapshots. A blocked snapshot carries no SEO fields.
type snapshot struct {
	ID              int64
	PageURL         string
	TakenAt         time.Time
	Blocked         bool
	RobotsRule      string // why it was blocked, e.g. `disallowed by "Disallow: /" (line 2, ...)`
	Status          int    // 0: no response
	FinalURL        string
	Redirects       []hop
	Title           string
	MetaDescription string
	Canonical       string
	MetaRobots      string
	XRobotsTag      string
	H1              string
	Hreflang        []alternate
	ContentHash     string
	WordCount       int
	ResponseTime    time.Duration
	Error           string
}

// outcome classifies a stored snapshot for pages.last_outcome.
func (sn *snapshot) outcome() (outcome, detail string) {
	switch {
	case sn.Blocked:
		return outcomeBlocked, sn.RobotsRule
	case sn.Error != "":
		return outcomeError, sn.Error
	default:
		return outcomeOK, fmt.Sprintf("HTTP %d", sn.Status)
	}
}

func nullStr(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

func jsonOrNull(v any, empty bool) (sql.NullString, error) {
	if empty {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(v)
	return sql.NullString{String: string(b), Valid: err == nil}, err
}

// saveSnapshot stores a snapshot and schedules the page's next check one
// interval later, in one transaction: a snapshot is either fully recorded
// or not at all.
func (s *store) saveSnapshot(ctx context.Context, sn *snapshot) error {
	redirects, err := jsonOrNull(sn.Redirects, len(sn.Redirects) == 0)
	if err != nil {
		return err
	}
	hreflang, err := jsonOrNull(sn.Hreflang, len(sn.Hreflang) == 0)
	if err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var secs int64
	if err := tx.QueryRowContext(ctx, `SELECT interval_seconds FROM pages WHERE url = ?`, sn.PageURL).Scan(&secs); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			// Untracked while the check was in flight: nothing to record.
			return nil
		}
		return err
	}
	var status, words, ms sql.NullInt64
	if !sn.Blocked {
		status = sql.NullInt64{Int64: int64(sn.Status), Valid: sn.Status != 0}
		words = sql.NullInt64{Int64: int64(sn.WordCount), Valid: sn.Error == ""}
		ms = sql.NullInt64{Int64: sn.ResponseTime.Milliseconds(), Valid: sn.Status != 0 || sn.Error != ""}
	}
	res, err := tx.ExecContext(ctx, `
INSERT INTO snapshots(page_url, taken_at, blocked_by_robots, robots_rule, status, final_url, redirects,
	title, meta_description, canonical, meta_robots, x_robots_tag, h1, hreflang, content_hash, word_count,
	response_ms, error)
VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		sn.PageURL, fmtTime(sn.TakenAt), sn.Blocked, nullStr(sn.RobotsRule), status, nullStr(sn.FinalURL), redirects,
		nullStr(sn.Title), nullStr(sn.MetaDescription), nullStr(sn.Canonical), nullStr(sn.MetaRobots),
		nullStr(sn.XRobotsTag), nullStr(sn.H1), hreflang, nullStr(sn.ContentHash), words, ms, nullStr(sn.Error))
	if err != nil {
		return err
	}
	sn.ID, _ = res.LastInsertId()
	oc, detail := sn.outcome()
	next := sn.TakenAt.Add(time.Duration(secs) * time.Second)
	if _, err := tx.ExecContext(ctx, `
UPDATE pages SET next_due = ?, retry_at = NULL, last_attempt_at = ?, last_outcome = ?, last_detail = ? WHERE url = ?`,
		fmtTime(next), fmtTime(sn.TakenAt), oc, nullStr(detail), sn.PageURL); err != nil {
		return err
	}
	return tx.Commit()
}

// claim takes page url for one check until leaseEnd, if it is still due at
// now: two monitor processes on one database (a cron run during a watch)
// then never check one page twice. It reports false when another process
// holds the page or has already checked it.
func (s *store) claim(ctx context.Context, url string, now, leaseEnd time.Time) (bool, error) {
	n := fmtTime(now)
	res, err := s.db.ExecContext(ctx, `
UPDATE pages SET retry_at = ? WHERE url = ? AND next_due <= ? AND (retry_at IS NULL OR retry_at <= ?)`,
		fmtTime(leaseEnd), url, n, n)
	if err != nil {
		return false, err
	}
	rows, err := res.RowsAffected()
	return rows == 1, err
}

// release gives back a claimed page that was not checked (the run was
// interrupted): it is due again at once.
func (s *store) release(ctx context.Context, url string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE pages SET retry_at = NULL WHERE url = ?`, url)
	return err
}

// deferPage records a check that took no snapshot because robots.txt was
// unreachable: the page stays due, but not before retryAt.
func (s *store) deferPage(ctx context.Context, url string, at, retryAt time.Time, detail string) error {
	_, err := s.db.ExecContext(ctx, `
UPDATE pages SET retry_at = ?, last_attempt_at = ?, last_outcome = ?, last_detail = ? WHERE url = ?`,
		fmtTime(retryAt), fmtTime(at), outcomeRobotsWait, nullStr(detail), url)
	return err
}

// snapshots returns the snapshots of every page, ordered by page then time.
func (s *store) snapshots(ctx context.Context) ([]snapshot, error) {
	var out []snapshot
	err := s.eachSnapshot(ctx, func(sn *snapshot) error {
		out = append(out, *sn)
		return nil
	})
	return out, err
}

// eachSnapshot calls fn with every snapshot, ordered by page then time,
// one row at a time: a report over years of snapshots does not hold them
// all in memory. fn must not use the store (its one connection is busy).
func (s *store) eachSnapshot(ctx context.Context, fn func(*snapshot) error) error {
	rows, err := s.db.QueryContext(ctx, `
SELECT id, page_url, taken_at, blocked_by_robots, robots_rule, status, final_url, redirects, title,
	meta_description, canonical, meta_robots, x_robots_tag, h1, hreflang, content_hash, word_count,
	response_ms, error
FROM snapshots ORDER BY page_url, taken_at, id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			sn                                                  snapshot
			taken                                               string
			rule, final, redirects, title, desc, canon, mrobots sql.NullString
			xrobots, h1, hreflang, hash, errText                sql.NullString
			status, words, ms                                   sql.NullInt64
		)
		if err := rows.Scan(&sn.ID, &sn.PageURL, &taken, &sn.Blocked, &rule, &status, &final, &redirects, &title,
			&desc, &canon, &mrobots, &xrobots, &h1, &hreflang, &hash, &words, &ms, &errText); err != nil {
			return err
		}
		var err error
		if sn.TakenAt, err = parseTime(taken); err != nil {
			return fmt.Errorf("snapshot %d of %s: %w", sn.ID, sn.PageURL, err)
		}
		sn.RobotsRule, sn.FinalURL, sn.Title, sn.MetaDescription = rule.String, final.String, title.String, desc.String
		sn.Canonical, sn.MetaRobots, sn.XRobotsTag, sn.H1 = canon.String, mrobots.String, xrobots.String, h1.String
		sn.ContentHash, sn.Error = hash.String, errText.String
		sn.Status, sn.WordCount = int(status.Int64), int(words.Int64)
		sn.ResponseTime = time.Duration(ms.Int64) * time.Millisecond
		if redirects.Valid {
			if err := json.Unmarshal([]byte(redirects.String), &sn.Redirects); err != nil {
				return fmt.Errorf("snapshot %d of %s: redirects: %w", sn.ID, sn.PageURL, err)
			}
		}
		if hreflang.Valid {
			if err := json.Unmarshal([]byte(hreflang.String), &sn.Hreflang); err != nil {
				return fmt.Errorf("snapshot %d of %s: hreflang: %w", sn.ID, sn.PageURL, err)
			}
		}
		if err := fn(&sn); err != nil {
			return err
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

func (s *store) loadRobots(ctx context.Context, host string) (robotsRow, bool, error) {
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
		return robotsRow{}, false, err
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

func (s *store) saveRobots(ctx context.Context, r robotsRow) error {
	_, err := s.db.ExecContext(ctx, `
INSERT INTO robots_cache(host, url, status, body, fetched_at, expires_at, error) VALUES(?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(host) DO UPDATE SET url = excluded.url, status = excluded.status, body = excluded.body,
	fetched_at = excluded.fetched_at, expires_at = excluded.expires_at, error = excluded.error`,
		r.Host, nullStr(r.URL), r.Status, r.Body, fmtTime(r.FetchedAt), fmtTime(r.ExpiresAt), nullStr(r.Err))
	return err
}
