package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/robots"
	"github.com/politecrawl/polite/sitemap"
)

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

// robotsStore keeps a crawl's robots.txt copies in its database (robots.Store). A resumed crawl obeys the
// same copies, and fetches a robots.txt again only when its copy has expired. Writes are synchronous:
// robots.txt is fetched a few times per crawl.
type robotsStore struct{ st *store }

func (s *robotsStore) Load(ctx context.Context, authority string) (robots.Entry, bool, error) {
	var e robots.Entry
	var fetched, expires string
	var errText sql.NullString
	err := s.st.db.QueryRowContext(ctx, `SELECT authority, url, status, body, fetched_at, expires_at, error FROM robots_cache
		WHERE crawl_id = ? AND authority = ?`, s.st.crawlID, authority).Scan(&e.Authority, &e.URL, &e.Status, &e.Body, &fetched, &expires, &errText)
	if errors.Is(err, sql.ErrNoRows) {
		return robots.Entry{}, false, nil
	}
	if err != nil {
		return robots.Entry{}, false, fmt.Errorf("read robots.txt copy of %s: %w", authority, err)
	}
	e.FetchedAt, e.ExpiresAt, e.Err = parseTime(fetched), parseTime(expires), errText.String
	return e, true, nil
}

func (s *robotsStore) Save(ctx context.Context, e robots.Entry) error {
	_, err := s.st.db.ExecContext(ctx, `INSERT OR REPLACE INTO robots_cache (crawl_id, authority, url, status, body, fetched_at, expires_at, error)
		VALUES (?,?,?,?,?,?,?,?)`, s.st.crawlID, e.Authority, e.URL, e.Status, e.Body, fmtTime(e.FetchedAt), fmtTime(e.ExpiresAt), nullStr(e.Err))
	if err != nil {
		err = fmt.Errorf("save robots.txt copy of %s: %w", e.Authority, err)
		s.st.setErr(err) // every write error stops the crawl
		return err
	}
	return nil
}

// sitemapCache fetches sitemaps through the crawl's polite client and keeps each answer in the database,
// so that a crawl resumed in the middle of its sitemap expansion replays the sitemaps it had read instead
// of requesting them again (only the one in flight at the crash is requested twice). The expansion is
// deterministic, so the replay finds the same entries in the same order. The answers are deleted when the
// crawl ends.
type sitemapCache struct {
	f  sitemap.Fetcher
	st *store
}

// replayedError is a sitemap fetch error read back from the database: the message survives, the type not.
type replayedError struct{ msg string }

func (e *replayedError) Error() string { return e.msg }

func (c *sitemapCache) Get(ctx context.Context, rawURL string) (*fetch.Result, error) {
	res := &fetch.Result{URL: rawURL}
	var final, errText sql.NullString
	var trunc int
	err := c.st.db.QueryRowContext(ctx, `SELECT final_url, status, truncated, body, error FROM sitemap_fetches WHERE crawl_id = ? AND url = ?`,
		c.st.crawlID, rawURL).Scan(&final, &res.Status, &trunc, &res.Body, &errText)
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
	res, ferr := c.f.Get(ctx, rawURL)
	if ctx.Err() != nil {
		return res, ferr // an interrupted fetch is not an answer: a resumed crawl asks again
	}
	var status int
	var body []byte
	var fin string
	if res != nil {
		status, body, fin, trunc = res.Status, res.Body, res.FinalURL, b2i(res.Truncated)
	}
	var msg any
	if ferr != nil {
		msg = ferr.Error()
	}
	if _, err := c.st.db.ExecContext(ctx, `INSERT OR REPLACE INTO sitemap_fetches (crawl_id, url, final_url, status, truncated, body, error)
		VALUES (?,?,?,?,?,?,?)`, c.st.crawlID, rawURL, nullStr(fin), status, trunc, body, msg); err != nil {
		err = fmt.Errorf("save sitemap %s: %w", rawURL, err)
		c.st.setErr(err) // every write error stops the crawl
		return nil, err
	}
	return res, ferr
}
