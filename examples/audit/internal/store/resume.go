package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/robots"
	"github.com/politecrawl/polite/sitemap"
)

// Resumable says whether a crawl can be continued, and why not.
func Resumable(ctx context.Context, db *sql.DB, row *CrawlRow) error {
	switch row.Outcome {
	case "finished":
		return Usagef("crawl %d of %s finished: there is nothing to resume (a new crawl of the site: audit -db FILE URL)", row.ID, row.StartURL)
	case "off_limits":
		return Usagef("crawl %d of %s stopped because the site's robots.txt could not be read: it is not resumed; start a new crawl when the site answers", row.ID, row.StartURL)
	case "refused":
		return Usagef("crawl %d of %s stopped because the site refuses this crawler (401/403 to robots.txt and the start page): it is not resumed", row.ID, row.StartURL)
	case "running":
		if pid, host, ok := lastRun(ctx, db, row.ID); ok && runningHere(pid, host) {
			return Usagef("crawl %d seems to be running still, in process %d on this machine: stop it first (Ctrl-C), then resume", row.ID, pid)
		}
	}
	var queued, pages int
	if err := db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM queue WHERE crawl_id = ?), (SELECT COUNT(*) FROM pages WHERE crawl_id = ?)`,
		row.ID, row.ID).Scan(&queued, &pages); err != nil {
		return err
	}
	if queued == 0 && pages > 0 {
		return Usagef("crawl %d was not recorded for resuming (its frontier is not in the file): start a new crawl", row.ID)
	}
	return nil
}

// lastRun is the process that last ran crawl id.
func lastRun(ctx context.Context, db querier, id int64) (pid int, host string, ok bool) {
	err := db.QueryRowContext(ctx, `SELECT pid, host FROM crawl_runs WHERE crawl_id = ? ORDER BY rowid DESC LIMIT 1`, id).Scan(&pid, &host)
	return pid, host, err == nil
}

// runningHere reports whether process pid of machine host is alive (and not this process).
func runningHere(pid int, host string) bool {
	me, _ := os.Hostname()
	if host != me || pid == os.Getpid() || pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// ResumeProgress is the one-line state of crawl id for -resume's message: pages written, URLs still queued.
func ResumeProgress(ctx context.Context, db *sql.DB, id int64) string {
	var pages, queued int
	_ = db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM pages WHERE crawl_id = ?), (SELECT COUNT(*) FROM queue WHERE crawl_id = ? AND state = 0)`,
		id, id).Scan(&pages, &queued)
	return fmt.Sprintf("%d URL%s crawled, %d queued", pages, Plural(pages), queued)
}

// What a crawl keeps in its database so that it can be resumed after a crash: the robots.txt copies it
// obeys (robots_cache), the sitemaps it has read (sitemap_fetches) and its frontier (queue, queue_hosts:
// see queue.go). All of it is per crawl; a new crawl starts empty, as the bot page promises ("fetches
// /robots.txt before anything else").
const resumeSchema = `
CREATE TABLE IF NOT EXISTS robots_cache (
	crawl_id   INTEGER NOT NULL REFERENCES crawls(id),
	authority  TEXT NOT NULL,             -- scheme://host[:port]
	url        TEXT NOT NULL,             -- the robots.txt URL requested
	status     INTEGER NOT NULL,          -- 0 when no response arrived
	body       BLOB,                      -- the 2xx body as fetched
	fetched_at TEXT NOT NULL,
	expires_at TEXT NOT NULL,             -- fetched again after this, also by a resumed crawl
	error      TEXT,                      -- why it was unreachable
	PRIMARY KEY (crawl_id, authority)
);
CREATE TABLE IF NOT EXISTS queue (
	crawl_id  INTEGER NOT NULL REFERENCES crawls(id),
	url       TEXT NOT NULL,              -- normalized, as the frontier queued it
	host      TEXT NOT NULL,
	depth     INTEGER NOT NULL,
	from_url  TEXT NOT NULL,
	seq       INTEGER NOT NULL,           -- push order: a resumed crawl keeps the breadth-first order
	state     INTEGER NOT NULL,           -- 0 queued (or in flight), 1 done, 2 failed, 3 dropped (host stopped)
	PRIMARY KEY (crawl_id, url)
);
CREATE TABLE IF NOT EXISTS queue_hosts (
	crawl_id  INTEGER NOT NULL REFERENCES crawls(id),
	host      TEXT NOT NULL,
	stopped   INTEGER NOT NULL DEFAULT 0, -- robots.txt of the host became unreachable: its URLs are refused
	PRIMARY KEY (crawl_id, host)
);
CREATE TABLE IF NOT EXISTS crawl_runs (
	crawl_id   INTEGER NOT NULL REFERENCES crawls(id),
	pid        INTEGER NOT NULL,          -- the process that ran (or resumed) the crawl
	host       TEXT NOT NULL,             -- on which machine
	started_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sitemap_fetches (
	crawl_id  INTEGER NOT NULL REFERENCES crawls(id),
	url       TEXT NOT NULL,              -- as listed in robots.txt or an index
	final_url TEXT,
	status    INTEGER NOT NULL,
	truncated INTEGER NOT NULL DEFAULT 0,
	body      BLOB,                       -- replayed by a resumed crawl instead of a second request
	error     TEXT,
	PRIMARY KEY (crawl_id, url)
);
`

// RobotsStore keeps a crawl's robots.txt copies in its database (robots.Store). A resumed crawl obeys the
// same copies, and fetches a robots.txt again only when its copy has expired. Writes are synchronous:
// robots.txt is fetched a few times per crawl.
type RobotsStore struct {
	St *Store // the crawl's database and id
}

// Load returns the saved copy of authority's robots.txt; false when this crawl never fetched it.
func (s *RobotsStore) Load(ctx context.Context, authority string) (robots.Entry, bool, error) {
	var e robots.Entry
	var fetched, expires string
	var errText sql.NullString
	err := s.St.db.QueryRowContext(ctx, `SELECT authority, url, status, body, fetched_at, expires_at, error FROM robots_cache
		WHERE crawl_id = ? AND authority = ?`, s.St.CrawlID, authority).Scan(&e.Authority, &e.URL, &e.Status, &e.Body, &fetched, &expires, &errText)
	if errors.Is(err, sql.ErrNoRows) {
		return robots.Entry{}, false, nil
	}
	if err != nil {
		return robots.Entry{}, false, fmt.Errorf("read robots.txt copy of %s: %w", authority, err)
	}
	e.FetchedAt, e.ExpiresAt, e.Err = parseTime(fetched), parseTime(expires), errText.String
	return e, true, nil
}

// Save keeps e as the crawl's copy, for a resume to obey. A failed write stops the crawl, as every write error does.
func (s *RobotsStore) Save(ctx context.Context, e robots.Entry) error {
	_, err := s.St.db.ExecContext(ctx, `INSERT OR REPLACE INTO robots_cache (crawl_id, authority, url, status, body, fetched_at, expires_at, error)
		VALUES (?,?,?,?,?,?,?,?)`, s.St.CrawlID, e.Authority, e.URL, e.Status, e.Body, fmtTime(e.FetchedAt), fmtTime(e.ExpiresAt), nullStr(e.Err))
	if err != nil {
		err = fmt.Errorf("save robots.txt copy of %s: %w", e.Authority, err)
		s.St.SetErr(err) // every write error stops the crawl
		return err
	}
	return nil
}

// SitemapCache fetches sitemaps through the crawl's polite client and keeps each answer in the database,
// so that a crawl resumed in the middle of its sitemap expansion replays the sitemaps it had read instead
// of requesting them again (only the one in flight at the crash is requested twice). The expansion is
// deterministic, so the replay finds the same entries in the same order. The answers are deleted when the
// crawl ends.
type SitemapCache struct {
	F  sitemap.Fetcher // the crawl's polite fetcher, for answers not yet kept
	St *Store          // where the answers are kept
}

// replayedError is a sitemap fetch error read back from the database: the message survives, the type not.
type replayedError struct{ msg string }

func (e *replayedError) Error() string { return e.msg }

// Get returns rawURL's kept answer, or fetches it through F and keeps it before returning it.
func (c *SitemapCache) Get(ctx context.Context, rawURL string) (*fetch.Result, error) {
	res := &fetch.Result{URL: rawURL}
	var final, errText sql.NullString
	var trunc int
	err := c.St.db.QueryRowContext(ctx, `SELECT final_url, status, truncated, body, error FROM sitemap_fetches WHERE crawl_id = ? AND url = ?`,
		c.St.CrawlID, rawURL).Scan(&final, &res.Status, &trunc, &res.Body, &errText)
	switch {
	case err == nil:
		res.FinalURL, res.Truncated = final.String, trunc == 1
		if errText.Valid {
			return res, &replayedError{errText.String}
		}
		return res, nil
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("read sitemap %s from the database: %w", rawURL, err)
	}
	res, ferr := c.F.Get(ctx, rawURL)
	if ctx.Err() != nil {
		return res, ferr // an interrupted fetch is not an answer: a resumed crawl asks again
	}
	var status int
	var body []byte
	var fin string
	if res != nil {
		status, body, fin, trunc = res.Status, res.Body, res.FinalURL, B2i(res.Truncated)
	}
	var msg any
	if ferr != nil {
		msg = ferr.Error()
	}
	if _, err := c.St.db.ExecContext(ctx, `INSERT OR REPLACE INTO sitemap_fetches (crawl_id, url, final_url, status, truncated, body, error)
		VALUES (?,?,?,?,?,?,?)`, c.St.CrawlID, rawURL, nullStr(fin), status, trunc, body, msg); err != nil {
		err = fmt.Errorf("save sitemap %s: %w", rawURL, err)
		c.St.SetErr(err) // every write error stops the crawl
		return nil, err
	}
	return res, ferr
}
