package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/politecrawl/polite/examples/internal/cmdline"
)

// The report, the exports and compare read a crawl back from the database alone: they run the same
// right after a crawl, on a file copied from another machine, or years later.

// ErrBadCrawl is a crawl id that is not in the file, or a file without crawls: exit 2.
var ErrBadCrawl = errors.New("no such crawl")

// OpenReadDB opens an existing audit database for reading. It never creates a file: a mistyped -db
// must not leave an empty database behind.
func OpenReadDB(ctx context.Context, path string) (*sql.DB, error) {
	if path == "" {
		return nil, Usagef("-db: no database path")
	}
	if strings.Contains(path, "?") {
		return nil, Usagef("-db %q: the path must not contain '?'", path)
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, Usagef("-db %s: no such file (crawl first: audit -db %s URL)", path, path)
		}
		return nil, fmt.Errorf("-db %s: %w", path, err)
	}
	if strings.HasPrefix(path, "file:") {
		path = "./" + path // a plain name, not a URI the driver would percent-decode
	}
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	var id int64
	if err := db.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&id); err == nil && id != 0 && uint32(id) != ApplicationID {
		db.Close()
		return nil, Usagef("-db %s: not an audit database: it belongs to another program (SQLite application_id 0x%08X; Crawl Cove's is 0x%08X)", path, uint32(id), ApplicationID)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM crawls`).Scan(&n); err != nil {
		db.Close()
		return nil, Usagef("-db %s: not an audit database (%v)", path, err)
	}
	if old, err := linksIsTable(ctx, db); err != nil || old {
		db.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		return nil, &UsageError{msg: fmt.Sprintf("-db %s: %v: convert it once with: audit migrate -db %s", path, ErrOldLayout, path), err: ErrOldLayout}
	}
	return db, nil
}

// ErrOldLayout is an audit database written by a version before the interned layout (links in a table of
// URL pairs), which only a write opening (OpenStore: a crawl, -resume, audit migrate) converts.
var ErrOldLayout = errors.New("written by an earlier version of the audit (layout 1: links kept as a table of URL pairs)")

// CrawlRow is one crawls row as read back: the run's identity, limits and outcome, which the report's
// header, compare and -resume all start from.
type CrawlRow struct {
	ID                   int64     // the crawl's number in this database (-crawl N)
	StartURL             string    // the URL given on the command line
	UserAgent, Token     string    // the User-Agent header sent; robots.txt product tokens, comma-separated
	Started, Finished    time.Time // Finished is zero while it runs or when it was killed
	Settings             Settings  // the limits it ran with
	Outcome, Message     string    // running | finished | interrupted | off_limits | failed; why it stopped early
	Pages, Requests      int       // page rows written; HTTP requests sent, all kinds
	SlowedAt             time.Time // when a 429 slowed the rest of the run down (zero if never)
	SlowedBy             string    // the URL that answered that 429
	settingsJSON         string
	startedRaw, endedRaw string
}

// Duration is how long the crawl ran; 0 while it runs or when it never finished.
func (c *CrawlRow) Duration() time.Duration {
	if c.Finished.IsZero() || c.Started.IsZero() {
		return 0
	}
	return c.Finished.Sub(c.Started)
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

const crawlColumns = `id, start_url, user_agent, robots_token, started_at, COALESCE(finished_at,''), settings, outcome,
	COALESCE(message,''), COALESCE(pages,0), COALESCE(requests,0), COALESCE(slowed_at,''), COALESCE(slowed_by,'')`

func scanCrawl(sc interface{ Scan(...any) error }) (*CrawlRow, error) {
	c := &CrawlRow{}
	var slowed string
	if err := sc.Scan(&c.ID, &c.StartURL, &c.UserAgent, &c.Token, &c.startedRaw, &c.endedRaw, &c.settingsJSON, &c.Outcome,
		&c.Message, &c.Pages, &c.Requests, &slowed, &c.SlowedBy); err != nil {
		return nil, err
	}
	c.Started, c.Finished, c.SlowedAt = parseTime(c.startedRaw), parseTime(c.endedRaw), parseTime(slowed)
	_ = json.Unmarshal([]byte(c.settingsJSON), &c.Settings) // shown as far as it could be read
	return c, nil
}

// LoadCrawl reads crawl id, or the latest crawl when id is 0.
func LoadCrawl(ctx context.Context, db *sql.DB, id int64) (*CrawlRow, error) {
	q := `SELECT ` + crawlColumns + ` FROM crawls WHERE id = ?`
	args := []any{id}
	if id == 0 {
		q, args = `SELECT `+crawlColumns+` FROM crawls ORDER BY id DESC LIMIT 1`, nil
	}
	c, err := scanCrawl(db.QueryRowContext(ctx, q, args...))
	if errors.Is(err, sql.ErrNoRows) {
		if id == 0 {
			return nil, fmt.Errorf("%w: the database holds no crawl yet", ErrBadCrawl)
		}
		return nil, fmt.Errorf("%w: crawl %d is not in the database%s", ErrBadCrawl, id, crawlList(ctx, db))
	}
	return c, err
}

// crawlListMax is how many crawls a "no such crawl" message lists (the latest ones).
const crawlListMax = 20

// crawlList is the crawls the database holds, for a message about a crawl id that is not there: one
// line each (id, start, outcome, URL), the latest crawlListMax of them.
func crawlList(ctx context.Context, db *sql.DB) string {
	rows, err := db.QueryContext(ctx, `SELECT id, started_at, outcome, start_url, (SELECT COUNT(*) FROM crawls) FROM crawls ORDER BY id DESC LIMIT ?`, crawlListMax)
	if err != nil {
		return ""
	}
	defer rows.Close()
	var lines []string
	total := 0
	for rows.Next() {
		var id int64
		var started, outcome, start string
		if rows.Scan(&id, &started, &outcome, &start, &total) != nil {
			return ""
		}
		lines = append(lines, fmt.Sprintf("\n  %d  %s  %s  %s", id, parseTime(started).Format("2006-01-02 15:04"), outcome, cmdline.Safe(start)))
	}
	if len(lines) == 0 {
		return "; it holds no crawl yet"
	}
	slices.Reverse(lines)
	head := "; the crawls it holds:"
	if total > len(lines) {
		head = fmt.Sprintf("; the latest %d of its %d crawls:", len(lines), total)
	}
	return head + strings.Join(lines, "")
}

// LoadCrawls reads every crawls row, oldest first.
func LoadCrawls(ctx context.Context, db *sql.DB) ([]*CrawlRow, error) {
	rows, err := db.QueryContext(ctx, `SELECT `+crawlColumns+` FROM crawls ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*CrawlRow
	for rows.Next() {
		c, err := scanCrawl(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// LoadFullPages reads every pages row of a crawl with all the columns the report shows.
func LoadFullPages(ctx context.Context, db *sql.DB, crawlID int64) ([]*PageRecord, error) {
	return queryFullPages(ctx, db, `WHERE crawl_id = ? ORDER BY depth, url`, crawlID)
}

// queryFullPages reads the pages rows that where (a WHERE clause, with args) selects, all columns.
func queryFullPages(ctx context.Context, db *sql.DB, where string, args ...any) ([]*PageRecord, error) {
	rows, err := db.QueryContext(ctx, `SELECT url, COALESCE(final_url,''), COALESCE(status,0), COALESCE(redirects,''), depth,
		COALESCE(found_on,''), source, COALESCE(content_type,''), COALESCE(response_ms,-1), COALESCE(ttfb_ms,-1), COALESCE(bytes,0),
		truncated, COALESCE(attempts,0), title IS NOT NULL, COALESCE(title,''), COALESCE(title_count,0),
		COALESCE(meta_description,''), COALESCE(description_count,0), COALESCE(canonical,''), COALESCE(meta_robots,''),
		COALESCE(x_robots_tag,''), COALESCE(h1,''), COALESCE(h1_count,0), COALESCE(word_count,0), COALESCE(links_internal,0),
		COALESCE(links_external,0), COALESCE(links_nofollow,0), wordpress, COALESCE(wordpress_hint,''), blocked_by_robots,
		COALESCE(robots_rule,''), COALESCE(error,''), COALESCE(error_kind,''), COALESCE(fetched_at,'')
		FROM pages `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*PageRecord
	for rows.Next() {
		p := &PageRecord{}
		var redirects, fetched string
		var resp, ttfb float64
		var trunc, wp, blocked int
		if err := rows.Scan(&p.URL, &p.FinalURL, &p.Status, &redirects, &p.Depth, &p.FoundOn, &p.Source, &p.ContentType,
			&resp, &ttfb, &p.Bytes, &trunc, &p.Attempts, &p.Parsed, &p.Title, &p.TitleCount, &p.Description,
			&p.DescriptionCount, &p.Canonical, &p.MetaRobots, &p.XRobots, &p.H1, &p.H1Count, &p.WordCount, &p.Internal,
			&p.External, &p.Nofollow, &wp, &p.WordPressHint, &blocked, &p.RobotsRule, &p.Err, &p.ErrKind, &fetched); err != nil {
			return nil, err
		}
		p.Truncated, p.WordPress, p.Blocked = trunc == 1, wp == 1, blocked == 1
		p.Response, p.TTFB = msDuration(resp), msDuration(ttfb)
		p.FetchedAt = parseTime(fetched)
		if redirects != "" {
			_ = json.Unmarshal([]byte(redirects), &p.Redirects)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// msDuration turns a stored millisecond figure back into a Duration; -1 (NULL) stays -1 ns, "not measured".
func msDuration(ms float64) time.Duration {
	if ms < 0 {
		return -1
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// Inlinks is how many distinct pages link to a URL (links to itself left out) and the first few of them.
type Inlinks struct {
	N        int      // distinct linking pages
	First    []string // the first few of them, for the report's detail
	External bool     // the target is on another site
}

// inlinksShown is how many referrers the report names next to a URL; the links table has them all.
const inlinksShown = 3

// LoadInlinks counts, for every link target of the crawl, the distinct pages linking to it, and names the
// first few (in URL order). A 10,000-page crawl has some 200,000 links: one ordered scan, aggregated here, is several times faster than SQL's DISTINCT and window functions over them.
// Walking the sources in URL order makes the first sources met for a target its first ones by URL.
func LoadInlinks(ctx context.Context, db *sql.DB, crawlID int64) (map[string]Inlinks, error) {
	// CROSS JOIN keeps this join order: the URLs in order by their index, each page's links by link_rows'
	// primary key, so the order costs no sort (a temporary B-tree of every link of the crawl).
	rows, err := db.QueryContext(ctx, `SELECT f.url, t.url, l.flags & 1 FROM urls f CROSS JOIN link_rows l CROSS JOIN urls t
		WHERE l.crawl_id = ? AND l.from_id = f.id AND t.id = l.to_id ORDER BY f.url`, crawlID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]*Inlinks{}
	var from, to, prev string
	var ext int
	seen := map[string]bool{} // targets of the current source page
	for rows.Next() {
		if err := rows.Scan(&from, &to, &ext); err != nil {
			return nil, err
		}
		if from != prev {
			clear(seen)
			prev = from
		}
		if from == to || seen[to] {
			continue
		}
		seen[to] = true
		in := out[to]
		if in == nil {
			in = &Inlinks{External: ext == 1}
			out[to] = in
		}
		in.N++
		if len(in.First) < inlinksShown {
			in.First = append(in.First, from)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	res := make(map[string]Inlinks, len(out))
	for k, v := range out {
		res[k] = *v
	}
	return res, nil
}

// LoadFindings reads the crawl's findings in the order they were written.
func LoadFindings(ctx context.Context, db *sql.DB, crawlID int64) ([]FindingRecord, error) {
	rows, err := db.QueryContext(ctx, `SELECT url, kind, detail FROM findings WHERE crawl_id = ? ORDER BY id`, crawlID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []FindingRecord
	for rows.Next() {
		var f FindingRecord
		if err := rows.Scan(&f.URL, &f.Kind, &f.Detail); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// Settings is what the crawls row records about the run, as JSON: a resume continues with the same
// limits, and the report states them next to the figures they shaped.
type Settings struct {
	MaxPages    int               `json:"max_pages"`         // -max-pages
	MaxDepth    int               `json:"max_depth"`         // -max-depth
	Concurrency int               `json:"concurrency"`       // -concurrency
	Gap         string            `json:"gap"`               // -gap, the least time between two requests to a host
	Timeout     string            `json:"timeout"`           // -timeout per request
	Resolve     map[string]string `json:"resolve,omitempty"` // -resolve host:port to address
	Demo        bool              `json:"demo,omitempty"`    // the run crawled the built-in demo shop
	Render      int               `json:"render,omitempty"`  // -render N (a resumed crawl renders too)
	// Fingerprint is the neardup.Version of the pages' fingerprints; 0 for crawls written before it was
	// recorded, whose fingerprints are version 1. A resume must make the same ones.
	Fingerprint int `json:"fingerprint,omitempty"`
}

// UsageError is a command-line mistake: exit 2.
type UsageError struct {
	msg string
	err error // what it wraps, if anything (ErrOldLayout)
}

// Unwrap is the error the message wraps, so that errors.Is(err, ErrOldLayout) holds.
func (e *UsageError) Unwrap() error { return e.err }

// Error is the message as the person should read it, without a program prefix.
func (e *UsageError) Error() string { return e.msg }

// Usagef makes a UsageError, so that main exits with 2 (a mistake on the command line) and not 1.
func Usagef(format string, args ...any) error { return &UsageError{msg: fmt.Sprintf(format, args...)} }

// Plural is the "s" of an English count: "" for 1, "s" otherwise.
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// IsHTML reports whether a Content-Type is an HTML page (text/html or XHTML), the only bodies parsed
// for links and on-page fields.
func IsHTML(ct string) bool {
	ct = strings.ToLower(ct)
	return strings.HasPrefix(ct, "text/html") || strings.HasPrefix(ct, "application/xhtml+xml")
}
