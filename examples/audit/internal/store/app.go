package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"time"
)

// The queries of the app (examples/audit/internal/app): one crawl at a time per file, the URL tables of
// its explore view, one URL's detail, and the robots.txt answers of a running crawl. Every table query
// is one page of rows (LIMIT/OFFSET on an index), so the app stays fast at any crawl size.

// BusyError says that another live process of this machine is running a crawl of the file: one crawl at a
// time per database.
type BusyError struct {
	Path    string
	CrawlID int64
	PID     int
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("%s: crawl %d is running in process %d on this machine (audit or audit app): one crawl at a time per database; wait for it to end or stop it first",
		e.Path, e.CrawlID, e.PID)
}

// CheckNotBusy returns a *BusyError when a crawl of the file is running in another live process of this
// machine (the process recorded in crawl_runs). A crawl whose process died (killed, power loss) does not
// count: it is resumable, and the file is free. It is the early, friendly refusal; the claim itself is
// BeginCrawl's or ReopenCrawl's, checked again in the transaction that makes it.
func (s *Store) CheckNotBusy(ctx context.Context) error {
	return s.checkNotBusy(ctx, s.db)
}

// querier is a *sql.DB or a *sql.Conn.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) checkNotBusy(ctx context.Context, q querier) error {
	rows, err := q.QueryContext(ctx, `SELECT id FROM crawls WHERE outcome = 'running' ORDER BY id`)
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		if pid, host, ok := lastRun(ctx, q, id); ok && runningHere(pid, host) {
			return &BusyError{Path: s.path, CrawlID: id, PID: pid}
		}
	}
	return nil
}

// claim runs write (which makes a crawl running and returns its id) in one BEGIN IMMEDIATE transaction
// with the busy check and the crawl_runs row of this process: the write lock is taken before the check,
// so of two processes starting crawls of one file at the same instant exactly one gets it, and the other
// then sees its running crawl (*BusyError).
func (s *Store) claim(ctx context.Context, write func(*sql.Conn) (int64, error)) (id int64, err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)
		}
	}()
	if err := s.checkNotBusy(ctx, conn); err != nil {
		return 0, err
	}
	if id, err = write(conn); err != nil {
		return 0, err
	}
	host, _ := os.Hostname()
	if _, err := conn.ExecContext(ctx, `INSERT INTO crawl_runs (crawl_id, pid, host, started_at) VALUES (?,?,?,?)`,
		id, os.Getpid(), host, fmtTime(time.Now())); err != nil {
		return 0, err
	}
	if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
		return 0, err
	}
	return id, nil
}

// URLQuery selects one page of a crawl's URL table.
type URLQuery struct {
	Kinds  []string // finding kinds (a category's, or one): the URLs of their findings; none = every URL of the crawl
	Search string   // a substring of the URL or the title ("" = all)
	Sort   string   // url | status | title | depth | response (anything else: url)
	Desc   bool
	Offset int
	Limit  int // at most 500; 0 = 100
}

// URLRow is one row of a URL table.
type URLRow struct {
	URL      string
	Status   int // 0: no response
	Title    string
	Depth    int
	Response time.Duration // -1: not measured
	Blocked  bool
	ErrKind  string
	Kind     string // the finding's kind, in a table of kinds
	Detail   string // the finding's detail, in a table of kinds
	Crawled  bool   // the URL has a pages row (an external link or a URL left out has none)
}

var urlSorts = map[string]string{"url": "url", "status": "status", "title": "title", "depth": "depth", "response": "response_ms"}

// likePattern is s as a LIKE pattern matching any text containing it.
func likePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// AppIndexes are the indexes the app's sorted tables read, created when the app opens a file: every
// sort is then a walk of an index that stops after one page of rows, at any crawl size. They cost a crawl
// a little on each pages row written, so only files the app has opened have them.
const AppIndexes = `
CREATE INDEX IF NOT EXISTS app_pages_status ON pages(crawl_id, status, url);
CREATE INDEX IF NOT EXISTS app_pages_title ON pages(crawl_id, title, url);
CREATE INDEX IF NOT EXISTS app_pages_depth ON pages(crawl_id, depth, url);
CREATE INDEX IF NOT EXISTS app_pages_response ON pages(crawl_id, response_ms, url);
CREATE INDEX IF NOT EXISTS app_findings_kind_url ON findings(crawl_id, kind, url);
` + appSearch

// appSearch is the search box's index: an FTS5 trigram table of each pages row's URL and title, keyed by
// the row's rowid and kept by triggers, so a crawl of a file the app has opened keeps it too. It only
// narrows a search down (every row whose URL or title contains the text is among its matches); the LIKE
// of the query decides, so results are those of a plain substring scan. A row replaced by INSERT OR
// REPLACE leaves its old rowid behind here, which matches no pages row: stale, never wrong.
const appSearch = `
CREATE VIRTUAL TABLE IF NOT EXISTS app_search USING fts5(url, title, tokenize = 'trigram');
CREATE TRIGGER IF NOT EXISTS app_search_insert AFTER INSERT ON pages BEGIN
	INSERT OR REPLACE INTO app_search(rowid, url, title) VALUES (new.rowid, new.url, COALESCE(new.title, ''));
END;
CREATE TRIGGER IF NOT EXISTS app_search_update AFTER UPDATE OF url, title ON pages BEGIN
	INSERT OR REPLACE INTO app_search(rowid, url, title) VALUES (new.rowid, new.url, COALESCE(new.title, ''));
END;
CREATE TRIGGER IF NOT EXISTS app_search_delete AFTER DELETE ON pages BEGIN
	DELETE FROM app_search WHERE rowid = old.rowid;
END;
`

// searchMinRunes is the shortest search the trigram index answers; a shorter one is a scan.
const searchMinRunes = 3

// AddAppIndexes creates AppIndexes (once per file: they are kept), filling the search index from the
// pages already written when it is new.
func (s *Store) AddAppIndexes(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: adding the app's indexes: %w", s.path, err)
	}
	defer tx.Rollback()
	var had int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE name = 'app_search'`).Scan(&had); err != nil {
		return fmt.Errorf("%s: adding the app's indexes: %w", s.path, err)
	}
	if _, err := tx.ExecContext(ctx, AppIndexes); err != nil {
		return fmt.Errorf("%s: adding the app's indexes: %w", s.path, err)
	}
	if had == 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO app_search(rowid, url, title) SELECT rowid, url, COALESCE(title, '') FROM pages`); err != nil {
			return fmt.Errorf("%s: filling the app's search index: %w", s.path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: adding the app's indexes: %w", s.path, err)
	}
	return nil
}

// searchIndexMaxRows is the most rows the search index may hand a search: past that, a scan of the
// crawl's pages is quicker (BenchmarkURLTableFirstByte: search-every-page).
const searchIndexMaxRows = 10_000

// searchMatch is the FTS5 query narrowing a search for s down, "" when a scan is quicker: s shorter
// than a trigram, or so common that the index has more than searchIndexMaxRows rows for it (a search for
// "Product" on a shop whose every title says it), which a first look at most that many rows tells.
func searchMatch(ctx context.Context, db *sql.DB, s string) (string, error) {
	m := trigramQuery(s)
	if m == "" {
		return "", nil
	}
	var n int
	err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT rowid FROM app_search WHERE app_search MATCH ? LIMIT ?)`, m, searchIndexMaxRows+1).Scan(&n)
	if err != nil || n > searchIndexMaxRows {
		return "", err
	}
	return m, nil
}

// trigramQuery is an FTS5 query matching every row that has each three-character piece of s somewhere
// (a superset of the rows containing s), "" when s is shorter than that: an AND of one-trigram phrases,
// which FTS5 answers by seeking through the pieces' lists, where a phrase of a common word
// ("Product 42") reads every row's positions.
func trigramQuery(s string) string {
	r := []rune(s)
	seen := map[string]bool{}
	var terms []string
	for i := 0; i+searchMinRunes <= len(r); i++ {
		t := string(r[i : i+searchMinRunes])
		if !seen[t] {
			seen[t] = true
			terms = append(terms, `"`+strings.ReplaceAll(t, `"`, `""`)+`"`)
		}
	}
	return strings.Join(terms, " AND ")
}

// urlFrom is the FROM and WHERE of q, its arguments and the URL column.
func urlFrom(crawlID int64, q URLQuery, match string) (from string, args []any, urlCol string) {
	args = []any{crawlID}
	switch {
	case match != "":
		// The index's few rows first (CROSS JOIN keeps that order: no walk of the crawl's pages by the
		// sort's index); the LIKE below decides.
		from, urlCol = `FROM app_search CROSS JOIN pages p ON p.rowid = app_search.rowid WHERE p.crawl_id = ? AND app_search MATCH ?`, "p.url"
		args = append(args, match)
	case len(q.Kinds) == 0:
		from, urlCol = `FROM pages p WHERE p.crawl_id = ?`, "p.url"
	default:
		marks := strings.Repeat(",?", len(q.Kinds))[1:]
		from, urlCol = `FROM findings f LEFT JOIN pages p ON p.crawl_id = f.crawl_id AND p.url = f.url WHERE f.crawl_id = ? AND f.kind IN (`+marks+`)`, "f.url"
		for _, k := range q.Kinds {
			args = append(args, k)
		}
	}
	if q.Search != "" {
		from += ` AND (` + urlCol + ` LIKE ? ESCAPE '\' OR p.title LIKE ? ESCAPE '\')`
		pat := likePattern(q.Search)
		args = append(args, pat, pat)
	}
	return from, args, urlCol
}

// queryMatch is the search index's query for q, "" for a scan: a table of kinds is their findings' rows,
// which the index (of pages) does not cover, and is short anyway.
func queryMatch(ctx context.Context, db *sql.DB, q URLQuery) (string, error) {
	if len(q.Kinds) > 0 || q.Search == "" {
		return "", nil
	}
	m, err := searchMatch(ctx, db, q.Search)
	if err != nil {
		return "", fmt.Errorf("search %q: %w", q.Search, err)
	}
	return m, nil
}

// CountURLs counts the URLs q selects (its Offset and Limit aside). Without a search the caller knows
// the count already (crawls.pages, FindingCounts): a count is a walk of every row.
func CountURLs(ctx context.Context, db *sql.DB, crawlID int64, q URLQuery) (int, error) {
	match, err := queryMatch(ctx, db, q)
	if err != nil {
		return 0, err
	}
	from, args, _ := urlFrom(crawlID, q, match)
	var n int
	err = db.QueryRowContext(ctx, `SELECT COUNT(*) `+from, args...).Scan(&n)
	return n, err
}

// ListURLs returns one page of the crawl's URLs as q selects them, and whether more follow.
func ListURLs(ctx context.Context, db *sql.DB, crawlID int64, q URLQuery) (rows []URLRow, more bool, err error) {
	if q.Limit <= 0 {
		q.Limit = 100
	}
	q.Limit = min(q.Limit, 500)
	q.Offset = max(q.Offset, 0)
	col, ok := urlSorts[q.Sort]
	if !ok {
		col = "url"
	}
	dir := "ASC"
	if q.Desc {
		dir = "DESC"
	}
	match, err := queryMatch(ctx, db, q)
	if err != nil {
		return nil, false, err
	}
	from, args, urlCol := urlFrom(crawlID, q, match)
	detail := "'', ''"
	if len(q.Kinds) > 0 {
		detail = "f.kind, f.detail"
	}
	order := urlCol
	if col != "url" {
		order = "p." + col + " " + dir + ", " + urlCol
	}
	query := `SELECT ` + urlCol + `, COALESCE(p.status,0), COALESCE(p.title,''), COALESCE(p.depth,0), COALESCE(p.response_ms,-1),
		COALESCE(p.blocked_by_robots,0), COALESCE(p.error_kind,''), ` + detail + `, p.url IS NOT NULL ` + from +
		` ORDER BY ` + order + ` ` + dir + ` LIMIT ? OFFSET ?`
	res, err := db.QueryContext(ctx, query, append(args, q.Limit+1, q.Offset)...)
	if err != nil {
		return nil, false, err
	}
	defer res.Close()
	rows = make([]URLRow, 0, q.Limit)
	for res.Next() {
		var r URLRow
		var resp float64
		var blocked int
		if err := res.Scan(&r.URL, &r.Status, &r.Title, &r.Depth, &resp, &blocked, &r.ErrKind, &r.Kind, &r.Detail, &r.Crawled); err != nil {
			return nil, false, err
		}
		r.Response, r.Blocked = msDuration(resp), blocked == 1
		rows = append(rows, r)
	}
	if len(rows) > q.Limit {
		rows, more = rows[:q.Limit], true
	}
	return rows, more, res.Err()
}

// FindingCounts counts the crawl's findings by kind.
func FindingCounts(ctx context.Context, db *sql.DB, crawlID int64) (map[string]int, error) {
	rows, err := db.QueryContext(ctx, `SELECT kind, COUNT(*) FROM findings WHERE crawl_id = ? GROUP BY kind`, crawlID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, rows.Err()
}

// URLDetail is everything the crawl holds about one URL.
type URLDetail struct {
	URL      string
	Page     *PageRecord     // nil when the URL has no pages row (an external link, a URL left out)
	Inlinks  []LinkRecord    // links to it, with their anchor text (at most DetailLinksMax)
	Outlinks []LinkRecord    // links on it (at most DetailLinksMax)
	Findings []FindingRecord // about it
	// InlinksTotal and OutlinksTotal count all of them.
	InlinksTotal, OutlinksTotal int
}

// DetailLinksMax caps the inlinks and outlinks a URL's detail lists.
const DetailLinksMax = 200

// LoadURL reads one URL's detail.
func LoadURL(ctx context.Context, db *sql.DB, crawlID int64, u string) (*URLDetail, error) {
	d := &URLDetail{URL: u}
	pages, err := queryFullPages(ctx, db, `WHERE crawl_id = ? AND url = ?`, crawlID, u)
	if err != nil {
		return nil, err
	}
	if len(pages) > 0 {
		d.Page = pages[0]
	}
	owner := u
	if d.Page != nil && d.Page.FinalURL != "" {
		owner = NormalizeOrSelf(d.Page.FinalURL) // a redirect's links are those of where it ended
	}
	if d.Inlinks, d.InlinksTotal, err = loadLinks(ctx, db, `to_id`, crawlID, u); err != nil {
		return nil, err
	}
	if d.Outlinks, d.OutlinksTotal, err = loadLinks(ctx, db, `from_id`, crawlID, owner); err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT url, kind, detail FROM findings WHERE crawl_id = ? AND url = ? ORDER BY id`, crawlID, u)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var f FindingRecord
		if err := rows.Scan(&f.URL, &f.Kind, &f.Detail); err != nil {
			return nil, err
		}
		d.Findings = append(d.Findings, f)
	}
	return d, rows.Err()
}

// loadLinks reads the links whose column col (to_id or from_id of link_rows, on their indexes) is u's:
// by from_id on the primary key, by to_id on link_rows_to (ByTarget).
func loadLinks(ctx context.Context, db *sql.DB, col string, crawlID int64, u string) ([]LinkRecord, int, error) {
	linksIndex := map[string]string{"from_id": ""}
	var err error
	if linksIndex["to_id"], err = ByTarget(ctx, db); err != nil {
		return nil, 0, err
	}
	var total int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM link_rows `+linksIndex[col]+` WHERE crawl_id = ? AND `+col+` = (SELECT id FROM urls WHERE url = ?)`,
		crawlID, u).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.QueryContext(ctx, `SELECT f.url, t.url, l.flags & 1, (l.flags >> 1) & 1, IFNULL(l.anchor, ''),
		COALESCE(l.tag, CASE l.flags >> 2 `+linkTagCases+` END, '')
		FROM link_rows l `+linksIndex[col]+` JOIN urls f ON f.id = l.from_id JOIN urls t ON t.id = l.to_id
		WHERE l.crawl_id = ?1 AND l.`+col+` = (SELECT id FROM urls WHERE url = ?2) ORDER BY l.from_id, l.seq LIMIT ?3`, crawlID, u, DetailLinksMax)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []LinkRecord
	for rows.Next() {
		var l LinkRecord
		var ext, nf int
		if err := rows.Scan(&l.From, &l.To, &ext, &nf, &l.Anchor, &l.Tag); err != nil {
			return nil, 0, err
		}
		l.External, l.Nofollow = ext == 1, nf == 1
		out = append(out, l)
	}
	return out, total, rows.Err()
}

// RobotsStatus is what one host's robots.txt answered a crawl.
type RobotsStatus struct {
	Authority string // scheme://host[:port]
	Status    int    // 0: no response
	Err       string
	FetchedAt time.Time
}

// LoadRobotsStatus reads the robots.txt answers of a crawl, by host.
func LoadRobotsStatus(ctx context.Context, db *sql.DB, crawlID int64) ([]RobotsStatus, error) {
	rows, err := db.QueryContext(ctx, `SELECT authority, status, COALESCE(error,''), fetched_at FROM robots_cache WHERE crawl_id = ? ORDER BY authority`, crawlID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RobotsStatus
	for rows.Next() {
		var r RobotsStatus
		var at string
		if err := rows.Scan(&r.Authority, &r.Status, &r.Err, &at); err != nil {
			return nil, err
		}
		r.FetchedAt = parseTime(at)
		out = append(out, r)
	}
	return out, rows.Err()
}
