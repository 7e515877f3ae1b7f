package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/politecrawl/polite/internal/urlnorm"
	_ "modernc.org/sqlite" // pure-Go SQLite driver, registered as "sqlite"
)

// Schema is the audit database. Every table carries crawl_id so one file holds the whole audit history;
// a new crawl is a new crawls row, never a rewrite of earlier ones. Times are RFC 3339 UTC text. The one
// table without crawl_id is urls, every URL the links mention, once for the whole file: links are stored
// as integer pairs in link_rows and read through the links view, with the columns of the links table of
// earlier versions (migrate converts such a file).
const Schema = `
CREATE TABLE IF NOT EXISTS crawls (
	id            INTEGER PRIMARY KEY,
	start_url     TEXT NOT NULL,
	user_agent    TEXT NOT NULL,
	robots_token  TEXT NOT NULL,          -- robots.txt product tokens in order of preference, comma-separated
	started_at    TEXT NOT NULL,
	finished_at   TEXT,
	settings      TEXT NOT NULL,          -- JSON: max_pages, max_depth, concurrency, gap, timeout, resolve, demo, render, fingerprint
	outcome       TEXT NOT NULL,          -- running | finished | interrupted | off_limits | refused | failed
	message       TEXT,                   -- why it stopped, when it did not finish
	pages         INTEGER,                -- page rows written (fetched + blocked)
	requests      INTEGER,                -- HTTP requests sent, all kinds
	slowed_at     TEXT,                   -- when a 429 slowed the rest of the run down
	slowed_by     TEXT                    -- the URL that answered that 429
);
CREATE TABLE IF NOT EXISTS pages (
	crawl_id          INTEGER NOT NULL REFERENCES crawls(id),
	url               TEXT NOT NULL,      -- normalized URL as queued
	final_url         TEXT,               -- after redirects
	status            INTEGER,            -- final HTTP status; NULL when no response (blocked, error)
	redirects         TEXT,               -- JSON [{"url","status","location"}...], one per hop
	redirect_count    INTEGER NOT NULL DEFAULT 0,
	depth             INTEGER NOT NULL,
	found_on          TEXT,               -- the page it was first found on ('' = start page / sitemap)
	source            TEXT NOT NULL,      -- start | link | sitemap | redirect
	content_type      TEXT,
	response_ms       REAL,               -- the server's time for the final request: ttfb_ms plus the download of the body
	                                      -- (never time waiting at the politeness gate, for robots.txt or between retries)
	ttfb_ms           REAL,               -- final request: sent -> response headers
	bytes             INTEGER,
	truncated         INTEGER NOT NULL DEFAULT 0,
	attempts          INTEGER,            -- requests sent for it: retries and redirect hops included
	title             TEXT,
	title_count       INTEGER,
	meta_description  TEXT,
	description_count INTEGER,
	canonical         TEXT,
	meta_robots       TEXT,
	x_robots_tag      TEXT,
	h1                TEXT,               -- first h1
	h1_count          INTEGER,
	word_count        INTEGER,
	links_internal    INTEGER,
	links_external    INTEGER,
	links_nofollow    INTEGER,
	wordpress         INTEGER NOT NULL DEFAULT 0, -- the page looks like WordPress
	wordpress_hint    TEXT,               -- why, e.g. generator "WordPress 6.4"
	blocked_by_robots INTEGER NOT NULL DEFAULT 0,
	robots_rule       TEXT,               -- the rule that blocked it
	error             TEXT,               -- transport error, timeout, redirect problem
	error_kind        TEXT,               -- timeout | network | too_many_redirects | redirect_loop | bad_redirect | disallowed_redirect | offsite_redirect | off_limits | other
	fetched_at        TEXT,
	text_hash         TEXT,               -- hex SHA-256 of the visible words: equal for exact duplicates
	fingerprint       BLOB,               -- MinHash of the visible text's word shingles (neardup.Fingerprint), for near-duplicates
	html_lang         TEXT,               -- <html lang> as written
	hreflang          TEXT,               -- JSON [{"hreflang","url"}...]: the page's rel=alternate hreflang annotations
	link_score        INTEGER,            -- 0-100: internal PageRank over the crawl's links, written by the pass after the crawl
	PRIMARY KEY (crawl_id, url)
);
CREATE TABLE IF NOT EXISTS urls (          -- every URL the links mention, once: link_rows refer to it by id
	id        INTEGER PRIMARY KEY,
	url       TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS link_rows (     -- the links, compactly; read them through the links view
	crawl_id  INTEGER NOT NULL,
	from_id   INTEGER NOT NULL,           -- urls.id of the page it is on
	seq       INTEGER NOT NULL,           -- its place among that page's links
	to_id     INTEGER NOT NULL,           -- urls.id of the target
	flags     INTEGER NOT NULL,           -- 1 external, 2 nofollow, plus 4 x the tag's code (linkTags; 0: in tag)
	anchor    TEXT,                       -- NULL when empty
	tag       TEXT,                       -- NULL when flags has its code
	PRIMARY KEY (crawl_id, from_id, seq)  -- outlinks by source
) WITHOUT ROWID;
` + linkRowsTo + ` -- inlinks by target (to_id first: SQLite without ANALYZE statistics would prefer the primary key's crawl_id alone)
-- links is every link of every crawl, one row each: the table of earlier versions, now a view.
CREATE VIEW IF NOT EXISTS links AS SELECT l.crawl_id AS crawl_id,
	f.url AS from_url,                    -- the page it is on
	t.url AS to_url,                      -- absolute, normalized when internal
	l.flags & 1 AS external,
	(l.flags >> 1) & 1 AS nofollow,
	IFNULL(l.anchor, '') AS anchor,
	COALESCE(l.tag, CASE l.flags >> 2 ` + linkTagCases + ` END) AS tag -- a, link, area, img, script...
	FROM link_rows l JOIN urls f ON f.id = l.from_id JOIN urls t ON t.id = l.to_id;
CREATE TABLE IF NOT EXISTS findings (
	id        INTEGER PRIMARY KEY,
	crawl_id  INTEGER NOT NULL REFERENCES crawls(id),
	url       TEXT NOT NULL,
	kind      TEXT NOT NULL,
	detail    TEXT NOT NULL,
	page_check INTEGER NOT NULL DEFAULT 0 -- 1: from the page's own response, written with the page during the crawl;
	                                      -- 0: from the passes over the whole crawl, rewritten after it
);
CREATE INDEX IF NOT EXISTS findings_kind ON findings(crawl_id, kind);
CREATE TABLE IF NOT EXISTS sitemaps (
	crawl_id  INTEGER NOT NULL REFERENCES crawls(id),
	url       TEXT NOT NULL,
	parent    TEXT,                       -- '' for a sitemap named in robots.txt
	level     INTEGER NOT NULL,           -- 0 = named in robots.txt
	status    INTEGER,
	kind      TEXT,                       -- urlset | sitemapindex | text | rss | atom
	entries   INTEGER,
	skipped   INTEGER,                    -- entries skipped: invalid, duplicate, outside the sitemap's scope
	not_followed INTEGER,                 -- index children not fetched: deeper than two levels
	error     TEXT
);
CREATE TABLE IF NOT EXISTS sitemap_urls (
	crawl_id  INTEGER NOT NULL REFERENCES crawls(id),
	sitemap   TEXT NOT NULL,
	url       TEXT NOT NULL               -- as listed
);
CREATE INDEX IF NOT EXISTS sitemap_urls_url ON sitemap_urls(crawl_id, url);
CREATE TABLE IF NOT EXISTS requests (
	crawl_id  INTEGER NOT NULL REFERENCES crawls(id),
	url       TEXT NOT NULL,
	purpose   TEXT NOT NULL,              -- llms | wordpress
	status    INTEGER,
	content_type TEXT,
	location  TEXT,
	bytes     INTEGER,
	error     TEXT
);
`

// linkRowsTo is the index of the links by target, which the passes and the app read inlinks by. A crawl
// writes its links without it (StartWriter drops it, Flush builds it again with one sort): kept up to date
// it costs a B-tree insert a link at a random place, and the crawl's CPU per page grew with the crawl
// (BenchmarkWritePage: 0.76 ms a page at 10,000 pages, 1.29 ms at 40,000; without it 0.48 and 0.43, the
// build included). The build covers every crawl of the file. A file whose crawl was killed before the
// build gets it back from Schema the next time it is opened for writing; until then, and while a crawl
// runs, inlink queries (the app's on a running crawl) scan link_rows: slower, never wrong.
const linkRowsTo = `CREATE INDEX IF NOT EXISTS link_rows_to ON link_rows(to_id, crawl_id);`

// ByTarget is the INDEXED BY clause with which a query reads link_rows by to_id on db: link_rows_to when
// the file has it (naming it, since a running crawl's file has no statistics for the planner to prefer it
// to the primary key's crawl_id), "" while a crawl of the file writes without it, when the planner reads
// the crawl's links by the primary key instead: slower, never an error.
func ByTarget(ctx context.Context, db *sql.DB) (string, error) {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'link_rows_to'`).Scan(&n); err != nil {
		return "", err
	}
	if n == 0 {
		return "", nil
	}
	return "INDEXED BY link_rows_to", nil
}

// HopRecord is one redirect of a page's chain as stored in pages.redirects (JSON, one per hop), so the
// report can show every step a visitor's browser would take.
type HopRecord struct {
	URL      string `json:"url"`      // the URL requested at this hop
	Status   int    `json:"status"`   // the 3xx it answered
	Location string `json:"location"` // where its Location header pointed, as sent
}

// PageRecord is one pages row: everything the crawl learned about one URL it queued, whether it was
// fetched, blocked by robots.txt or failed. The findings and the report are computed from these rows alone.
type PageRecord struct {
	URL, FinalURL       string        // normalized URL as queued; where its redirects ended
	Status              int           // final HTTP status; 0 = no response (blocked, error)
	Redirects           []HopRecord   // one per hop, in order
	Depth               int           // clicks from the start page
	FoundOn, Source     string        // the page it was first found on ("" = start page or sitemap); start | link | sitemap | redirect
	ContentType         string        // the final response's Content-Type
	Response, TTFB      time.Duration // server time of the final request (never time waiting at the gate); time to headers
	Bytes               int           // body bytes read, up to the size cap
	Truncated           bool          // the body was cut at the size cap
	Attempts            int           // requests sent for it: retries and redirect hops included
	Title               string        // the first <title>
	TitleCount          int           // how many <title> elements; 0 and 2+ are findings
	Description         string        // the first meta description
	DescriptionCount    int           // how many meta descriptions
	Canonical           string        // rel=canonical, resolved against the final URL
	MetaRobots, XRobots string        // the robots meta tag; the X-Robots-Tag header
	H1                  string        // the first h1
	H1Count, WordCount  int           // how many h1 elements; visible words
	Internal, External  int           // outgoing links on the site and off it
	Nofollow            int           // outgoing links marked rel=nofollow
	WordPress           bool          // the page looks like WordPress (the probes depend on it)
	WordPressHint       string        // why, e.g. generator "WordPress 6.4"
	Blocked             bool          // robots.txt disallowed it, so it was never requested
	RobotsRule          string        // the rule that blocked it
	Err, ErrKind        string        // transport error, timeout or redirect problem; its class (timeout, network, redirect_loop...)
	FetchedAt           time.Time     // when the final response arrived
	Parsed              bool          // HTML fields are meaningful
	Links               []LinkRecord  // the page's outgoing links, written with it
	// Findings are what the page's own response shows (its HTML, headers and timings), found while it was
	// fetched and written in the page's transaction (findings.page_check = 1). WriteFindings, the pass over
	// the whole crawl, never replaces them.
	Findings []FindingRecord
	// What the passes over the whole crawl compare between pages (exact and near duplicates, hreflang
	// return links, language), written with the page.
	TextHash    string           // hex SHA-256 of the visible words
	Fingerprint []byte           // neardup.Fingerprint of the visible text, little-endian; nil when not computed
	Lang        string           // <html lang> as written
	Hreflang    []HreflangRecord // rel=alternate hreflang annotations, in document order
}

// HreflangRecord is one rel=alternate hreflang annotation of a page, as stored in pages.hreflang (JSON).
type HreflangRecord struct {
	Hreflang string `json:"hreflang"` // as written, trimmed
	URL      string `json:"url"`      // absolute
}

// LinkRecord is one links row: a reference from a page to a URL, kept for the inlink counts, the
// broken-link findings and the link-score pass.
type LinkRecord struct {
	From, To    string // the page it is on; the target, absolute and normalized when internal
	External    bool   // the target is off the crawled site
	Nofollow    bool   // rel=nofollow: it passes no link score
	Anchor, Tag string // the anchor text; the element (a, link, area, img, script...)
}

// SitemapRecord is one sitemaps row: a sitemap the crawl fetched (or failed to), so the report can
// show the tree from robots.txt down and the findings can name a broken or redirected one.
type SitemapRecord struct {
	URL, Parent      string // the sitemap; the index that listed it ("" for one named in robots.txt)
	Level, Status    int    // 0 = named in robots.txt; the HTTP status (0 = no response)
	Kind             string // urlset | sitemapindex | text | rss | atom
	Entries, Skipped int    // URLs listed; entries skipped as invalid, duplicate or outside its scope
	NotFollowed      int    // index children not fetched: deeper than two levels
	Err              string // why it could not be read
}

// RequestRecord is one requests row: a request that is not a page fetch (llms.txt, the WordPress
// probes), recorded so that every request the audit sent is accounted for in the database.
type RequestRecord struct {
	URL, Purpose string // what was requested; why: llms | wordpress
	Status       int    // HTTP status; 0 = no response
	ContentType  string // the response's Content-Type
	Location     string // the Location header of a redirect
	Bytes        int    // body bytes read
	Err          string // transport error, if any
}

// FindingRecord is one findings row: a problem of one kind found on one URL, with the detail a
// person needs to fix it. Findings are computed from the rows and written after the crawl.
type FindingRecord struct {
	URL    string // the page (or sitemap) it is about
	Kind   string // one of the kinds in findings' table, which gives its severity and advice
	Detail string // what exactly is wrong here, e.g. the duplicate title's text
}

// CrawlInfo is the crawls row written when a crawl starts.
type CrawlInfo struct {
	StartURL, UserAgent, Token string    // the URL given; the User-Agent header; robots.txt product tokens, comma-separated
	Started                    time.Time // when the run began
	Settings                   any       // stored as JSON, so a resume and the report see the limits used
}

// Store writes one crawl into the SQLite file. Writes go through one goroutine that commits whatever has
// queued up in a single transaction: under load rows are batched, when idle each row commits at once, so a
// crash or Ctrl-C loses at most the rows of the transaction in progress.
type Store struct {
	db      *sql.DB
	CrawlID int64 // the crawls row every write belongs to

	insPage, insFinding *sql.Stmt  // prepared once: the writer inserts thousands of rows
	lw                  linkWriter // the writer's statements, cache and buffers for the links (links_write.go)
	// the frontier's queue (queue.go)
	insQueue, ackQueue *sql.Stmt
	ops                chan writeOp
	wg                 sync.WaitGroup
	mu                 sync.Mutex
	err                error         // first write error
	failed             chan struct{} // closed at the first write error: the crawl stops there
	closing            sync.Once
	// onCommit, if set, runs last in every transaction of the writer (the running totals of a crawl,
	// kept current for a resume).
	onCommit func(*sql.Tx) error
	// path is the file, for the messages of write errors.
	path string
	// indexTime is how long Flush took to build link_rows_to.
	indexTime time.Duration
}

const batchMax = 1000

// ApplicationID marks a SQLite file as a Crawl Cove audit database (PRAGMA application_id, the 32-bit
// number at offset 68 of the file's header): "CCov" in ASCII. The monitor marks its own files with
// another number, so that neither program ever alters the other's database.
const ApplicationID = 0x43436F76

// auditTables are the tables by which an audit database made before the mark existed is recognised.
var auditTables = []string{"crawls", "pages", "links", "findings"}

// ErrNotAudit is a file that is not an audit database: another program's, or an unknown one.
var ErrNotAudit = errors.New("not an audit database")

// checkFile makes sure path is an audit database, or none yet, before anything is written to it. It
// reads the file's mark: ours is fine; another number is another program's file, refused; none (0) is a
// new file when it holds no table, an audit database of an earlier version when it has the audit's
// tables (openStore marks it), and refused otherwise. It opens the file read-only, so a refused
// file is left exactly as it was (not even switched to WAL).
func checkFile(ctx context.Context, path string) error {
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return nil // nothing there yet (or an error openStore reports in the system's words)
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("open database %s: %w", path, err)
	}
	defer db.Close()
	var id int64
	if err := db.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&id); err != nil {
		return fmt.Errorf("%w: %s cannot be read as SQLite (%v)", ErrNotAudit, path, err)
	}
	switch id = int64(uint32(id)); id {
	case ApplicationID:
		return nil
	case 0:
	default:
		return fmt.Errorf("%w: %s belongs to another program (SQLite application_id 0x%08X; Crawl Cove's is 0x%08X): it is left untouched",
			ErrNotAudit, path, id, ApplicationID)
	}
	tables := map[string]bool{}
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return fmt.Errorf("%w: %s cannot be read as SQLite (%v)", ErrNotAudit, path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return err
		}
		tables[name] = true
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(tables) == 0 {
		return nil
	}
	for _, t := range auditTables {
		if !tables[t] {
			return fmt.Errorf("%w: %s holds other tables (no %q table) and no Crawl Cove mark: it is left untouched", ErrNotAudit, path, t)
		}
	}
	return nil // an audit database of an earlier version: marked when opened
}

// OpenStore opens (or creates) the audit database at path for writing one crawl: it refuses a file that is
// not an audit database before touching it, marks and migrates an audit database of an earlier version,
// and starts the single writer goroutine.
func OpenStore(ctx context.Context, path string) (*Store, error) {
	if err := checkFile(ctx, path); err != nil {
		return nil, err
	}
	// cache_size: 32 MB of pages, so that the indexes' upper levels stay cached as they grow (a fixed
	// amount, whatever the crawl's size; temporary B-trees stay in files: a sort of a million-page crawl's
	// links must not be held in memory);
	// wal_autocheckpoint: a checkpoint every 32 MB of WAL rather than 4, so that the pages the writes keep
	// touching (the indexes' inner pages) are copied back once per checkpoint, not eight times.
	dsn := path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(ON)" +
		"&_pragma=cache_size(-32000)&_pragma=wal_autocheckpoint(8000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	// One connection: a single writer is what SQLite wants, and it keeps the pragmas on the connection we use.
	db.SetMaxOpenConns(1)
	// The mark and the tables in one transaction: a crash in the middle leaves no half-made, unmarked file
	// that the next run would have to refuse.
	if _, err := db.ExecContext(ctx, "BEGIN IMMEDIATE;\n"+fmt.Sprintf("PRAGMA application_id = %d;\n", ApplicationID)+Schema+renderSchema+resumeSchema+"COMMIT;"); err != nil {
		db.Close()
		return nil, openError(path, err)
	}
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate database %s: %w", path, err)
	}
	return &Store{db: db, path: path, failed: make(chan struct{})}, nil
}

// addedColumns are the columns added to Schema's tables since the first release, which migrate adds to an
// older database (ALTER TABLE ADD COLUMN is not idempotent, so each is checked first).
var addedColumns = []struct{ table, column, decl string }{
	{"findings", "page_check", "INTEGER NOT NULL DEFAULT 0"},
	{"pages", "text_hash", "TEXT"},
	{"pages", "fingerprint", "BLOB"},
	{"pages", "html_lang", "TEXT"},
	{"pages", "hreflang", "TEXT"},
	{"pages", "link_score", "INTEGER"},
	{"render_pages", "hreflang", "TEXT"},
}

// migrate brings the tables of an earlier version up to Schema: CREATE TABLE IF NOT EXISTS adds missing
// tables but not the columns added since, and a links table of before the interned layout is moved into
// urls and link_rows and replaced by the view.
func migrate(ctx context.Context, db *sql.DB) error {
	for _, c := range addedColumns {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, c.table, c.column).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			if _, err := db.ExecContext(ctx, `ALTER TABLE `+c.table+` ADD COLUMN `+c.column+` `+c.decl); err != nil {
				return err
			}
		}
	}
	old, err := linksIsTable(ctx, db)
	if err != nil {
		return err
	}
	if old {
		if err := migrateLinks(ctx, db); err != nil {
			return err
		}
	}
	// After the view exists (a layout-1 file has a links table until migrateLinks replaces it).
	_, err = db.ExecContext(ctx, linksInsertTrigger)
	return err
}

// linksInsertTrigger lets INSERT INTO links, as the table of earlier versions took it, write through the
// view: each URL interned, the link appended after its page's others. The crawl writes link_rows itself,
// many links a statement (writeLinks); the trigger serves SQL written against the logical table (a tool's
// or a test's generated crawl).
var linksInsertTrigger = `CREATE TRIGGER IF NOT EXISTS links_insert INSTEAD OF INSERT ON links BEGIN
	INSERT OR IGNORE INTO urls (url) VALUES (NEW.from_url), (NEW.to_url);
	INSERT INTO link_rows (crawl_id, from_id, seq, to_id, flags, anchor, tag)
		SELECT NEW.crawl_id, f.id, IFNULL((SELECT MAX(seq) + 1 FROM link_rows WHERE crawl_id = NEW.crawl_id AND from_id = f.id), 0), t.id,
			(NEW.external != 0) | ((NEW.nofollow != 0) << 1) | (` + linkTagCodeSQL("NEW.tag") + ` << 2),
			NULLIF(NEW.anchor, ''), CASE WHEN ` + linkTagCodeSQL("NEW.tag") + ` = 0 THEN NULLIF(NEW.tag, '') END
		FROM urls f, urls t WHERE f.url = NEW.from_url AND t.url = NEW.to_url;
END`

// linkTagCodeSQL is linkTagCode as an SQL expression of the tag expression expr.
func linkTagCodeSQL(expr string) string {
	tags := make([]string, 0, 8)
	for _, t := range []string{"a", "link", "area", "img", "script", "iframe", "frame", "meta"} {
		tags = append(tags, fmt.Sprintf("WHEN '%s' THEN %d", t, linkTagCode(t)))
	}
	return "(CASE " + expr + " " + strings.Join(tags, " ") + " ELSE 0 END)"
}

// linksIsTable reports whether the file keeps its links in the links table of the layout before urls and
// link_rows (then it needs migrateLinks).
func linksIsTable(ctx context.Context, db *sql.DB) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'links'`).Scan(&n)
	return n > 0, err
}

// migrateLinks moves the links table of the earlier layout into urls and link_rows, in the order it was
// written, and puts the links view in its place: all in one transaction, so a crash leaves the old layout.
func migrateLinks(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	view := Schema[strings.Index(Schema, "CREATE VIEW IF NOT EXISTS links"):]
	view = view[:strings.Index(view, ";")+1]
	for _, q := range []string{
		`INSERT OR IGNORE INTO urls (url) SELECT from_url FROM links ORDER BY rowid`,
		`INSERT OR IGNORE INTO urls (url) SELECT to_url FROM links ORDER BY rowid`,
		`INSERT INTO link_rows (crawl_id, from_id, seq, to_id, flags, anchor, tag)
			SELECT l.crawl_id, f.id, ROW_NUMBER() OVER (PARTITION BY l.crawl_id, l.from_url ORDER BY l.rowid) - 1, t.id,
				(l.external != 0) | ((l.nofollow != 0) << 1) | (` + linkTagCodeSQL("l.tag") + ` << 2), -- | and << bind alike
				NULLIF(l.anchor, ''), CASE WHEN l.tag IN ('a', 'link', 'area', 'img', 'script', 'iframe', 'frame', 'meta') THEN NULL ELSE l.tag END
			FROM links l JOIN urls f ON f.url = l.from_url JOIN urls t ON t.url = l.to_url`,
		`DROP TABLE links`,
		view,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("moving the links into the interned layout: %w", err)
		}
	}
	return tx.Commit()
}

// openError says why the database file could not be opened in the operating system's words ("permission
// denied", "is a directory") with the path: SQLite itself only says "unable to open database file (14)".
func openError(path string, err error) error {
	f, oerr := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if oerr == nil {
		f.Close()
		return fmt.Errorf("create schema in %s: %w", path, err)
	}
	var pe *fs.PathError
	if errors.As(oerr, &pe) {
		oerr = pe.Err // the path is said once, first
	}
	return fmt.Errorf("database %s: %w", path, oerr)
}

func fmtTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func nullInt(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// B2i is SQLite's boolean: 1 for true, 0 for false.
func B2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// BeginCrawl adds the crawls row, running, and this process's crawl_runs row, and starts the writer. It
// refuses with a *BusyError when another live process runs a crawl of the file: the check and the new
// row are one transaction, so of two starts at the same instant exactly one wins.
func (s *Store) BeginCrawl(ctx context.Context, c CrawlInfo) error {
	settings, err := json.Marshal(c.Settings)
	if err != nil {
		return err
	}
	id, err := s.claim(ctx, func(conn *sql.Conn) (int64, error) {
		res, err := conn.ExecContext(ctx, `INSERT INTO crawls (start_url, user_agent, robots_token, started_at, settings, outcome) VALUES (?,?,?,?,?, 'running')`,
			c.StartURL, c.UserAgent, c.Token, fmtTime(c.Started), string(settings))
		if err != nil {
			return 0, err
		}
		return res.LastInsertId()
	})
	if err != nil {
		if _, busy := err.(*BusyError); busy {
			return err
		}
		return fmt.Errorf("add crawl: %w", err)
	}
	s.CrawlID = id
	return s.StartWriter(ctx)
}

// StartWriter prepares the statements of the writer and starts it, for crawl s.crawlID. It drops the
// links' index by target until Flush (see linkRowsTo): a crawl's links are written without it.
func (s *Store) StartWriter(ctx context.Context) (err error) {
	if s.insPage, err = s.db.PrepareContext(ctx, insertPage); err != nil {
		return err
	}
	if err = s.lw.prepare(ctx, s.db); err != nil {
		return err
	}
	if s.insFinding, err = s.db.PrepareContext(ctx, insertPageFinding); err != nil {
		return err
	}
	if s.insQueue, err = s.db.PrepareContext(ctx, insertQueue); err != nil {
		return err
	}
	if s.ackQueue, err = s.db.PrepareContext(ctx, ackQueue); err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `DROP INDEX IF EXISTS link_rows_to`); err != nil {
		return fmt.Errorf("drop the links' index of %s for the crawl: %w", s.path, err)
	}
	s.ops = make(chan writeOp, 4096)
	s.wg.Add(1)
	go s.writer()
	return nil
}

// writeOp is one entry of the writer's stream: rows to write, or a function to run once everything
// before it is committed (or has failed to be).
type writeOp struct {
	write func(*sql.Tx) error
	after func()
}

// writer commits whatever has queued up in one transaction, in the order it was queued. At the first
// failed transaction (a full disk, an I/O error) it writes nothing more: a later batch committed after a
// failed one would leave a hole in the middle of the crawl (its start page missing, its links missing),
// where a crash only ever loses a suffix. The functions waiting for a commit still run, so nothing
// waiting on the writer hangs; the crawl sees the failure through failed and stops.
func (s *Store) writer() {
	defer s.wg.Done()
	for op := range s.ops {
		batch := []writeOp{op}
	drain:
		for len(batch) < batchMax {
			select {
			case more, ok := <-s.ops:
				if !ok {
					break drain
				}
				batch = append(batch, more)
			default:
				break drain
			}
		}
		if s.Err() == nil {
			if err := s.commit(batch); err != nil {
				s.SetErr(err)
			}
		}
		for _, op := range batch {
			if op.after != nil {
				op.after()
			}
		}
	}
}

// AfterCommit runs fn in the writer once everything queued so far is committed (or failed to be).
func (s *Store) AfterCommit(fn func()) { s.ops <- writeOp{after: fn} }

func (s *Store) commit(batch []writeOp) error {
	// A background context on purpose: rows of a cancelled (Ctrl-C) crawl must still reach the file.
	tx, err := s.db.BeginTx(context.Background(), nil)
	if err != nil {
		return err
	}
	for _, op := range batch {
		if op.write == nil {
			continue
		}
		if err := op.write(tx); err != nil {
			tx.Rollback()
			return err
		}
	}
	if s.onCommit != nil {
		if err := s.onCommit(tx); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// SetErr records the first write error and closes the channel the crawl watches, so a full disk stops
// the run instead of losing rows silently. Later errors are dropped: the first one is the cause.
func (s *Store) SetErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
		close(s.failed)
	}
}

// Failed is closed at the first write error.
func (s *Store) Failed() <-chan struct{} { return s.failed }

// Err reports the first write error, if any.
func (s *Store) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// enqueue hands a write to the writer goroutine; it commits in the writer's next transaction, in order.
func (s *Store) enqueue(op func(*sql.Tx) error) { s.ops <- writeOp{write: op} }

// Flush stops the writer after everything queued so far is committed, builds the links' index by target
// again (link_rows_to, dropped while the crawl wrote), and refreshes SQLite's statistics of the tables
// (ANALYZE, sampled) for the passes' queries: without them its planner would read a crawl's links by the
// primary key's crawl_id where link_rows_to finds the few to one URL. Later writes are synchronous.
func (s *Store) Flush() error {
	s.closing.Do(func() {
		if s.ops != nil {
			close(s.ops)
			s.wg.Wait()
			// The writer is gone: drop what only it used, so that nothing of the crawl stays reachable
			// through the store while the passes run (onCommit reads the crawler's counters; the URL-id
			// cache is up to 10 MB).
			s.onCommit = nil
			s.lw.ids = urlIDs{}
			if s.Err() == nil {
				start := time.Now()
				if _, err := s.db.Exec(linkRowsTo); err != nil {
					s.SetErr(fmt.Errorf("index the links of %s: %w", s.path, err))
				}
				s.indexTime = time.Since(start)
			}
			if s.Err() == nil {
				if _, err := s.db.Exec(`PRAGMA analysis_limit = 1000; ANALYZE`); err != nil {
					s.SetErr(fmt.Errorf("ANALYZE %s: %w", s.path, err))
				}
			}
			// Before the passes read the file: 53 MB of the process's 136 MB at 100,000 pages.
			s.ShrinkMemory()
		}
	})
	return s.Err()
}

// ShrinkMemory gives back what the connection's page cache and sorters hold outside the Go heap
// (PRAGMA shrink_memory), between phases that need it no more. A shrink that fails loses nothing but
// that memory, so its error is nobody's.
func (s *Store) ShrinkMemory() { _, _ = s.db.Exec(`PRAGMA shrink_memory`) }

// IndexTime is how long Flush took to build the links' index by target (link_rows_to) when the crawl's
// writes ended: part of the crawl's time, shown apart by -timings. Zero before Flush.
func (s *Store) IndexTime() time.Duration { return s.indexTime }

// Close flushes every queued write and closes the prepared statements and the database. Its error joins
// the first write error, if any, with the database's own, so a crawl not saved in full is reported.
func (s *Store) Close() error {
	err := s.Flush()
	for _, st := range []*sql.Stmt{s.insPage, s.insFinding, s.insQueue, s.ackQueue} {
		if st != nil {
			st.Close()
		}
	}
	s.lw.close()
	return errors.Join(err, s.db.Close())
}

const insertPageFinding = `INSERT INTO findings (crawl_id, url, kind, detail, page_check) VALUES (?,?,?,?,1)`

// linkTagCases decodes the tag code of link_rows.flags in the links view; linkTagCode is its inverse.
const linkTagCases = `WHEN 1 THEN 'a' WHEN 2 THEN 'link' WHEN 3 THEN 'area' WHEN 4 THEN 'img' WHEN 5 THEN 'script' WHEN 6 THEN 'iframe' WHEN 7 THEN 'frame' WHEN 8 THEN 'meta'`

// linkTagCode is the code of tag in link_rows.flags (>> 2), 0 for a tag linkTagCases does not name.
func linkTagCode(tag string) int {
	switch tag {
	case "a":
		return 1
	case "link":
		return 2
	case "area":
		return 3
	case "img":
		return 4
	case "script":
		return 5
	case "iframe":
		return 6
	case "frame":
		return 7
	case "meta":
		return 8
	}
	return 0
}

const insertPage = `INSERT OR REPLACE INTO pages (crawl_id, url, final_url, status, redirects, redirect_count, depth, found_on, source,
	content_type, response_ms, ttfb_ms, bytes, truncated, attempts, title, title_count, meta_description, description_count,
	canonical, meta_robots, x_robots_tag, h1, h1_count, word_count, links_internal, links_external, links_nofollow,
	wordpress, wordpress_hint, blocked_by_robots, robots_rule, error, error_kind, fetched_at, text_hash, fingerprint, html_lang, hreflang)
	VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`

func ms(d time.Duration) any {
	if d == 0 {
		return nil
	}
	return float64(d.Microseconds()) / 1000
}

// Page queues a page row and its outgoing links.
func (s *Store) Page(p *PageRecord) {
	id := s.CrawlID
	s.enqueue(func(tx *sql.Tx) error {
		var redirects any
		if len(p.Redirects) > 0 {
			b, _ := json.Marshal(p.Redirects)
			redirects = string(b)
		}
		var html []any
		if p.Parsed {
			html = []any{p.Title, p.TitleCount, p.Description, p.DescriptionCount, p.Canonical, p.MetaRobots,
				nullStr(p.XRobots), p.H1, p.H1Count, p.WordCount, p.Internal, p.External, p.Nofollow}
		} else {
			html = []any{nil, nil, nil, nil, nil, nil, nullStr(p.XRobots), nil, nil, nil, nil, nil, nil}
		}
		args := []any{id, p.URL, nullStr(p.FinalURL), nullInt(p.Status), redirects, len(p.Redirects), p.Depth, p.FoundOn, p.Source,
			nullStr(p.ContentType), ms(p.Response), ms(p.TTFB), p.Bytes, B2i(p.Truncated), p.Attempts}
		args = append(args, html...)
		args = append(args, B2i(p.WordPress), nullStr(p.WordPressHint), B2i(p.Blocked), nullStr(p.RobotsRule), nullStr(p.Err), nullStr(p.ErrKind), fmtTime(p.FetchedAt))
		var hreflang, fingerprint any
		if len(p.Hreflang) > 0 {
			b, _ := json.Marshal(p.Hreflang)
			hreflang = string(b)
		}
		if len(p.Fingerprint) > 0 {
			fingerprint = p.Fingerprint
		}
		args = append(args, nullStr(p.TextHash), fingerprint, nullStr(p.Lang), hreflang)
		if _, err := tx.Stmt(s.insPage).Exec(args...); err != nil {
			return fmt.Errorf("write page %s: %w", p.URL, err)
		}
		if len(p.Findings) > 0 {
			st := tx.Stmt(s.insFinding)
			for _, f := range p.Findings {
				if _, err := st.Exec(id, f.URL, f.Kind, f.Detail); err != nil {
					return fmt.Errorf("write finding %s of %s: %w", f.Kind, f.URL, err)
				}
			}
		}
		if len(p.Links) == 0 {
			return nil
		}
		for links := p.Links; len(links) > 0; {
			n := 1 // the run of links on one page (all of them, as the crawler records them)
			for n < len(links) && links[n].From == links[0].From {
				n++
			}
			if err := s.lw.write(tx, id, links[:n]); err != nil {
				return err
			}
			links = links[n:]
		}
		return nil
	})
}

// Sitemap queues one sitemaps row.
func (s *Store) Sitemap(r SitemapRecord) {
	id := s.CrawlID
	s.enqueue(func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO sitemaps (crawl_id, url, parent, level, status, kind, entries, skipped, not_followed, error) VALUES (?,?,?,?,?,?,?,?,?,?)`,
			id, r.URL, r.Parent, r.Level, nullInt(r.Status), nullStr(r.Kind), r.Entries, r.Skipped, r.NotFollowed, nullStr(r.Err))
		return err
	})
}

// SitemapURL queues one URL listed in a sitemap, for the report's sitemap coverage.
func (s *Store) SitemapURL(sitemapURL, pageURL string) {
	id := s.CrawlID
	s.enqueue(func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO sitemap_urls (crawl_id, sitemap, url) VALUES (?,?,?)`, id, sitemapURL, pageURL)
		return err
	})
}

// Request queues one requests row (llms.txt, a WordPress probe).
func (s *Store) Request(r RequestRecord) {
	id := s.CrawlID
	s.enqueue(func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO requests (crawl_id, url, purpose, status, content_type, location, bytes, error) VALUES (?,?,?,?,?,?,?,?)`,
			id, r.URL, r.Purpose, nullInt(r.Status), nullStr(r.ContentType), nullStr(r.Location), r.Bytes, nullStr(r.Err))
		return err
	})
}

// WriteFindings replaces the crawl's findings from the passes over the whole crawl in one transaction
// (after the writer has been flushed). The findings written with each page (PageRecord.Findings) stay.
func (s *Store) WriteFindings(ctx context.Context, fs []FindingRecord) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`DELETE FROM findings WHERE crawl_id = ? AND page_check = 0`, s.CrawlID); err != nil {
		return err
	}
	st, err := tx.Prepare(`INSERT INTO findings (crawl_id, url, kind, detail) VALUES (?,?,?,?)`)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, f := range fs {
		if _, err := st.Exec(s.CrawlID, f.URL, f.Kind, f.Detail); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// ChainEnd is where the redirect chain of Page ended, and ContentOf the row that requested that end,
// whose page fields (title, description, headings, link counts...) Page shares as if it had followed the
// chain itself; "" for none (a loop, too many hops).
type ChainEnd struct {
	Page      *PageRecord
	ContentOf string
}

// UpdateChains rewrites where the redirect chains of pages ended (final URL, status, hops, content type,
// error, and the page fields): for redirects the crawl stopped at a target it had already, once that
// target's row is known.
func (s *Store) UpdateChains(ctx context.Context, ends []ChainEnd) error {
	if len(ends) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	st, err := tx.Prepare(`UPDATE pages SET final_url = ?, status = ?, redirects = ?, redirect_count = ?, content_type = ?, error = ?, error_kind = ?
		WHERE crawl_id = ? AND url = ?`)
	if err != nil {
		return err
	}
	defer st.Close()
	const fields = `title, title_count, meta_description, description_count, canonical, meta_robots, x_robots_tag, h1, h1_count,
		word_count, links_internal, links_external, links_nofollow, wordpress, wordpress_hint, bytes, truncated`
	content, err := tx.Prepare(`UPDATE pages SET (` + fields + `) = (SELECT ` + fields + ` FROM pages WHERE crawl_id = ? AND url = ?)
		WHERE crawl_id = ? AND url = ? AND EXISTS (SELECT 1 FROM pages WHERE crawl_id = ? AND url = ?)`)
	if err != nil {
		return err
	}
	defer content.Close()
	for _, e := range ends {
		p := e.Page
		b, _ := json.Marshal(p.Redirects)
		if _, err := st.Exec(nullStr(p.FinalURL), nullInt(p.Status), string(b), len(p.Redirects), nullStr(p.ContentType), nullStr(p.Err), nullStr(p.ErrKind),
			s.CrawlID, p.URL); err != nil {
			return fmt.Errorf("write page %s: %w", p.URL, err)
		}
		if e.ContentOf == "" {
			continue
		}
		if _, err := content.Exec(s.CrawlID, e.ContentOf, s.CrawlID, p.URL, s.CrawlID, e.ContentOf); err != nil {
			return fmt.Errorf("write page %s: %w", p.URL, err)
		}
	}
	return tx.Commit()
}

// CrawlEnd is what FinishCrawl writes to the crawls row when the run stops, however it stops.
type CrawlEnd struct {
	Finished         time.Time // when the run stopped
	Outcome, Message string    // finished | interrupted | off_limits | failed; why, when it did not finish
	Pages, Requests  int       // page rows written; HTTP requests sent, all kinds
	SlowedAt         time.Time // when a 429 slowed the rest of the run down (zero if never)
	SlowedBy         string    // the URL that answered that 429
}

// FinishCrawl writes the crawl's outcome and totals into its crawls row, after the last page row: a
// crawls row still "running" is one that was killed, which is what -resume looks for.
func (s *Store) FinishCrawl(ctx context.Context, e CrawlEnd) error {
	_, err := s.db.ExecContext(ctx, `UPDATE crawls SET finished_at=?, outcome=?, message=?, pages=?, requests=?, slowed_at=?, slowed_by=? WHERE id=?`,
		fmtTime(e.Finished), e.Outcome, nullStr(e.Message), e.Pages, e.Requests, fmtTime(e.SlowedAt), nullStr(e.SlowedBy), s.CrawlID)
	return err
}

// LoadPages reads the crawl's pages back for the analysis.
func (s *Store) LoadPages(ctx context.Context) ([]*PageRecord, error) {
	return s.LoadPagesWhere(ctx, "")
}

// LoadPagesWhere reads the crawl's pages rows for which cond holds (an SQL condition over the pages
// columns, with args after the crawl's id; "" for all), in LoadPages' order.
func (s *Store) LoadPagesWhere(ctx context.Context, cond string, args ...any) ([]*PageRecord, error) {
	if cond != "" {
		cond = " AND (" + cond + ")"
	}
	rows, err := s.db.QueryContext(ctx, `SELECT url, COALESCE(final_url,''), COALESCE(status,0), COALESCE(redirects,''), depth,
		COALESCE(found_on,''), source, COALESCE(content_type,''), title IS NOT NULL, COALESCE(title,''), COALESCE(title_count,0),
		COALESCE(meta_description,''), COALESCE(description_count,0), COALESCE(canonical,''), COALESCE(meta_robots,''),
		COALESCE(x_robots_tag,''), COALESCE(h1_count,0), COALESCE(word_count,0), wordpress, COALESCE(wordpress_hint,''), blocked_by_robots,
		COALESCE(robots_rule,''), COALESCE(error,''), COALESCE(error_kind,'')
		FROM pages WHERE crawl_id = ?`+cond+` ORDER BY depth, url`, append([]any{s.CrawlID}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*PageRecord
	for rows.Next() {
		p := &PageRecord{}
		var redirects string
		var wp, blocked int
		if err := rows.Scan(&p.URL, &p.FinalURL, &p.Status, &redirects, &p.Depth, &p.FoundOn, &p.Source, &p.ContentType,
			&p.Parsed, &p.Title, &p.TitleCount, &p.Description, &p.DescriptionCount, &p.Canonical, &p.MetaRobots, &p.XRobots,
			&p.H1Count, &p.WordCount, &wp, &p.WordPressHint, &blocked, &p.RobotsRule, &p.Err, &p.ErrKind); err != nil {
			return nil, err
		}
		p.WordPress, p.Blocked = wp == 1, blocked == 1
		if redirects != "" {
			_ = json.Unmarshal([]byte(redirects), &p.Redirects)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// LoadLinks reads every link of the crawl.
func (s *Store) LoadLinks(ctx context.Context) ([]LinkRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT from_url, to_url, external, nofollow, COALESCE(anchor,''), COALESCE(tag,'') FROM links WHERE crawl_id = ?`, s.CrawlID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []LinkRecord
	for rows.Next() {
		var l LinkRecord
		var ext, nf int
		if err := rows.Scan(&l.From, &l.To, &ext, &nf, &l.Anchor, &l.Tag); err != nil {
			return nil, err
		}
		l.External, l.Nofollow = ext == 1, nf == 1
		out = append(out, l)
	}
	return out, rows.Err()
}

// LoadLinkOwners reads the pages whose links are recorded (links.from_url, distinct).
func (s *Store) LoadLinkOwners(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT from_url FROM links WHERE crawl_id = ?`, s.CrawlID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// LoadSitemapURLs reads the (sitemap, URL) pairs the crawl's sitemaps listed, for the analysis.
func (s *Store) LoadSitemapURLs(ctx context.Context) ([][2]string, error) {
	return s.loadStrings(ctx, `SELECT sitemap, url FROM sitemap_urls WHERE crawl_id = ?`)
}

// LoadSitemapURLsInOrder is LoadSitemapURLs in the order the sitemaps listed them, for the report.
func (s *Store) LoadSitemapURLsInOrder(ctx context.Context) ([][2]string, error) {
	return s.loadStrings(ctx, `SELECT sitemap, url FROM sitemap_urls WHERE crawl_id = ? ORDER BY rowid`)
}

// ForCrawl is a Store that reads crawl id of an open database (from OpenReadDB or Reader); it has no
// writer.
func ForCrawl(db *sql.DB, id int64) *Store { return &Store{db: db, CrawlID: id} }

func (s *Store) loadStrings(ctx context.Context, query string) ([][2]string, error) {
	rows, err := s.db.QueryContext(ctx, query, s.CrawlID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var a, b string
		if err := rows.Scan(&a, &b); err != nil {
			return nil, err
		}
		out = append(out, [2]string{a, b})
	}
	return out, rows.Err()
}

// LoadSitemaps reads the crawl's sitemap reports.
func (s *Store) LoadSitemaps(ctx context.Context) ([]SitemapRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT url, COALESCE(parent,''), level, COALESCE(status,0), COALESCE(kind,''),
		COALESCE(entries,0), COALESCE(skipped,0), COALESCE(error,'') FROM sitemaps WHERE crawl_id = ?`, s.CrawlID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SitemapRecord
	for rows.Next() {
		var r SitemapRecord
		if err := rows.Scan(&r.URL, &r.Parent, &r.Level, &r.Status, &r.Kind, &r.Entries, &r.Skipped, &r.Err); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// LoadRequests reads the llms.txt and WordPress probe answers.
func (s *Store) LoadRequests(ctx context.Context) ([]RequestRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT url, purpose, COALESCE(status,0), COALESCE(content_type,''), COALESCE(location,''),
		COALESCE(bytes,0), COALESCE(error,'') FROM requests WHERE crawl_id = ? ORDER BY rowid`, s.CrawlID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RequestRecord
	for rows.Next() {
		var r RequestRecord
		if err := rows.Scan(&r.URL, &r.Purpose, &r.Status, &r.ContentType, &r.Location, &r.Bytes, &r.Err); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// NormalizeOrSelf normalizes a URL for comparison, or returns it unchanged when it cannot be parsed.
func NormalizeOrSelf(raw string) string {
	if n, err := urlnorm.Normalize(raw); err == nil {
		return n
	}
	return raw
}

// ReopenCrawl makes crawl id the store's crawl again, running in this process, for a resume: the
// sitemaps are read again from sitemap_fetches, so their rows are cleared first. Like BeginCrawl it
// refuses with a *BusyError, in the same transaction, when another live process runs a crawl of the file.
func (s *Store) ReopenCrawl(ctx context.Context, id int64) error {
	_, err := s.claim(ctx, func(conn *sql.Conn) (int64, error) {
		for _, q := range []string{
			`UPDATE crawls SET outcome = 'running', finished_at = NULL, message = NULL WHERE id = ?`,
			`DELETE FROM sitemaps WHERE crawl_id = ?`,
			`DELETE FROM sitemap_urls WHERE crawl_id = ?`,
		} {
			if _, err := conn.ExecContext(ctx, q, id); err != nil {
				return 0, err
			}
		}
		return id, nil
	})
	if err != nil {
		if _, busy := err.(*BusyError); busy {
			return err
		}
		return fmt.Errorf("resume crawl %d: %w", id, err)
	}
	s.CrawlID = id
	return nil
}

// KeepTotals keeps the crawls row's request and page counts current: totals is asked in every
// transaction of the writer, and its answer written in it.
func (s *Store) KeepTotals(totals func() (requests, pages int64)) {
	id := s.CrawlID
	s.onCommit = func(tx *sql.Tx) error {
		requests, pages := totals()
		_, err := tx.Exec(`UPDATE crawls SET requests = ?, pages = ? WHERE id = ?`, requests, pages, id)
		return err
	}
}

// RecordSlowdown writes when and by which URL a 429 slowed the crawl, in the writer's stream.
func (s *Store) RecordSlowdown(at time.Time, url string) {
	id := s.CrawlID
	s.enqueue(func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE crawls SET slowed_at = ?, slowed_by = ? WHERE id = ?`, fmtTime(at), nullStr(url), id)
		return err
	})
}

// DropResumeState deletes what only a resume needs, once the crawl is over: the sitemap answers and the
// queue.
func (s *Store) DropResumeState() error {
	for _, q := range []string{`DELETE FROM sitemap_fetches WHERE crawl_id = ?`, `DELETE FROM queue WHERE crawl_id = ?`,
		`DELETE FROM queue_hosts WHERE crawl_id = ?`} {
		if _, err := s.db.Exec(q, s.CrawlID); err != nil {
			return fmt.Errorf("clearing the resume state of crawl %d: %w", s.CrawlID, err)
		}
	}
	return nil
}

// Reader is the open database, for the read functions of this package (LoadCrawl, LoadReport's
// loaders, the exports): callers hand it back to them and never query it themselves.
func (s *Store) Reader() *sql.DB { return s.db }
