package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"modernc.org/sqlite"
)

// The passes over the whole crawl (package findings) read the crawl with the named queries of this file
// and write their findings through a Pass, in one transaction. All their SQL is here, on the logical
// tables and columns of Schema, so that it can be tuned in one place. Every query takes the crawl's id as
// ?1 and streams: none holds the crawl in Go memory; SQLite sorts and groups in its own bounded cache and
// temporary files.

// Functions the passes' SQL calls, registered with the driver for every connection:
//   - audit_norm(url): the URL normalized as the crawl stores pages.url (NormalizeOrSelf), trimmed;
//   - audit_key(text): a title, description or heading as compared for duplicates: lower-case words
//     joined by one space;
//   - audit_noindex(meta_robots, x_robots_tag): 1 when either says noindex or none;
//   - audit_elsewhere(canonical, url): 1 when canonical names a URL other than url.
func init() {
	str := func(v driver.Value) string {
		switch v := v.(type) {
		case string:
			return v
		case []byte:
			return string(v)
		}
		return ""
	}
	sqlite.MustRegisterDeterministicScalarFunction("audit_norm", 1, func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
		return NormalizeOrSelf(strings.TrimSpace(str(a[0]))), nil
	})
	sqlite.MustRegisterDeterministicScalarFunction("audit_key", 1, func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
		return DupKey(str(a[0])), nil
	})
	sqlite.MustRegisterDeterministicScalarFunction("audit_noindex", 2, func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
		return int64(B2i(HasRobotsToken(str(a[0]), "noindex") || HasRobotsToken(str(a[1]), "noindex"))), nil
	})
	sqlite.MustRegisterDeterministicScalarFunction("audit_elsewhere", 2, func(_ *sqlite.FunctionContext, a []driver.Value) (driver.Value, error) {
		return int64(B2i(CanonicalElsewhere(str(a[0]), str(a[1])))), nil
	})
}

// DupKey is a text as the duplicate checks compare it: lower case, runs of white space as one space.
func DupKey(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// HasRobotsToken says whether a meta robots or X-Robots-Tag value holds token ("noindex", "nofollow"),
// "none" counting as both.
func HasRobotsToken(v, token string) bool {
	for _, f := range strings.FieldsFunc(strings.ToLower(v), func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		if f == token || f == "none" {
			return true
		}
	}
	return false
}

// CanonicalElsewhere says whether a page at url naming canonical as its canonical defers to another URL.
func CanonicalElsewhere(canonical, url string) bool {
	c := strings.TrimSpace(canonical)
	return c != "" && NormalizeOrSelf(c) != NormalizeOrSelf(url)
}

// refsCreate counts the distinct referrers of every linked URL (links from a page to itself left out),
// by its urls.id, for QueryPages: one reading of the crawl's entries of link_rows_to, the index by target
// (to_id, crawl_id, then the key's from_id), which holds every column it needs, in the index's order, so
// SQLite groups as it reads, sorts nothing and never reads a link row. External links are not told
// apart: external is whether the crawl's scope holds the target URL, so a page row's URL (in scope, or
// the crawl would not have queued it) is the target of internal links only, and QueryPages reads the
// counts of page rows alone.
const refsCreate = `CREATE TEMP TABLE audit_refs (to_id INTEGER PRIMARY KEY, n INTEGER NOT NULL);
INSERT INTO audit_refs SELECT to_id, COUNT(DISTINCT from_id) FROM link_rows INDEXED BY link_rows_to
	WHERE crawl_id = ?1 AND from_id <> to_id GROUP BY to_id`

// PassQuery is one of the named queries of the passes.
type PassQuery string

// docsCreate materialises the crawl's documents once for the content checks (temp.audit_docs, dropped
// with the transaction's end): parsed pages that answered 200, named by their own URL (u, where the
// redirects ended); a URL that redirected to a page crawled in its own right is left out, and of several
// URLs ending at one uncrawled document the first (by depth, url) stands for it. Whether each is
// indexable (audit_indexable: not canonicalised elsewhere, not noindex) is decided here once, not by
// every query that reads the indexable ones.
const docsCreate = `CREATE TEMP TABLE audit_docs AS SELECT * FROM (
	SELECT p.rowid AS rid, p.*, COALESCE(NULLIF(p.final_url, ''), p.url) AS u,
		audit_elsewhere(p.canonical, COALESCE(NULLIF(p.final_url, ''), p.url)) = 0 AND audit_noindex(p.meta_robots, p.x_robots_tag) = 0 AS audit_indexable,
		ROW_NUMBER() OVER (PARTITION BY COALESCE(NULLIF(p.final_url, ''), p.url) ORDER BY p.depth, p.url) AS k
	FROM pages p
	WHERE p.crawl_id = ?1 AND p.title IS NOT NULL AND p.status = 200
		AND NOT (COALESCE(NULLIF(p.final_url, ''), p.url) <> p.url
			AND EXISTS (SELECT 1 FROM pages q WHERE q.crawl_id = p.crawl_id AND q.url = p.final_url AND q.title IS NOT NULL))
) WHERE k = 1`

// contentCTE names the documents (docs) and those of them that are indexable: not canonicalised
// elsewhere, not noindex.
const contentCTE = `docs AS (
	SELECT * FROM temp.audit_docs WHERE ?1 = ?1
), indexable AS (
	SELECT * FROM docs WHERE audit_indexable
)`

// pageColumns are the columns ScanPage reads, of a pages row aliased p (NULL-safe: p may be the
// missing side of a LEFT JOIN).
const pageColumns = `COALESCE(p.url,''), COALESCE(p.final_url,''), COALESCE(p.status,0), COALESCE(p.redirects,''), COALESCE(p.depth,0), COALESCE(p.source,''),
	p.title IS NOT NULL, COALESCE(p.title,''), COALESCE(p.title_count,0), COALESCE(p.meta_description,''), COALESCE(p.description_count,0),
	COALESCE(p.canonical,''), COALESCE(p.meta_robots,''), COALESCE(p.x_robots_tag,''), COALESCE(p.h1,''), COALESCE(p.h1_count,0),
	COALESCE(p.word_count,0), COALESCE(p.wordpress,0), COALESCE(p.wordpress_hint,''), COALESCE(p.blocked_by_robots,0), COALESCE(p.robots_rule,''),
	COALESCE(p.error,''), COALESCE(p.error_kind,'')`

// ScanPage reads the pageColumns of a row into a PageRecord, after the extra destinations before.
func ScanPage(scan func(...any) error, before ...any) (*PageRecord, error) {
	p := &PageRecord{}
	var redirects string
	var wp, blocked int
	dest := append(before, &p.URL, &p.FinalURL, &p.Status, &redirects, &p.Depth, &p.Source, &p.Parsed, &p.Title, &p.TitleCount,
		&p.Description, &p.DescriptionCount, &p.Canonical, &p.MetaRobots, &p.XRobots, &p.H1, &p.H1Count, &p.WordCount, &wp,
		&p.WordPressHint, &blocked, &p.RobotsRule, &p.Err, &p.ErrKind)
	if err := scan(dest...); err != nil {
		return nil, err
	}
	p.WordPress, p.Blocked = wp == 1, blocked == 1
	if redirects != "" {
		_ = json.Unmarshal([]byte(redirects), &p.Redirects)
	}
	return p, nil
}

// RefsListed is how many referrers (or members of a group) a query lists; the count is always whole.
const RefsListed = 10

// The named queries.
var (
	// QueryPages: every page row in (depth, url) order, with how many distinct pages link to it (links
	// from a page to itself left out; temp.audit_refs, refsCreate) and whether a sitemap lists it.
	// Columns: refs, in_sitemap, then pageColumns.
	QueryPages = PassQuery(`SELECT COALESCE((SELECT r.n FROM urls u JOIN temp.audit_refs r ON r.to_id = u.id WHERE u.url = p.url), 0),
		EXISTS (SELECT 1 FROM sitemap_urls s WHERE s.crawl_id = p.crawl_id AND s.url = p.url), ` + pageColumns + `
	FROM pages p WHERE p.crawl_id = ?1 ORDER BY p.depth, p.url`)
	// QueryReferrers: the first RefsListed distinct pages (by URL) linking to URL ?2. Column: from_url.
	// It runs once per page, so it reads the target's links by link_rows_to whatever the statistics
	// (without them SQLite's planner would read the crawl's links by the primary key's crawl_id, every time).
	QueryReferrers = PassQuery(fmt.Sprintf(`SELECT DISTINCT f.url AS fu FROM urls t
	JOIN link_rows l INDEXED BY link_rows_to ON l.to_id = t.id AND l.crawl_id = ?1 JOIN urls f ON f.id = l.from_id
	WHERE t.url = ?2 AND l.flags & 1 = 0 AND l.from_id <> l.to_id ORDER BY fu LIMIT %d`, RefsListed))

	// QueryDocs: the crawl's documents (contentCTE), with their own URL first. Columns: u, then pageColumns.
	QueryDocs = PassQuery(`WITH ` + contentCTE + `
	SELECT p.u, ` + pageColumns + ` FROM docs p ORDER BY p.depth, p.url`)

	// QueryDupTitles, QueryDupDescriptions, QueryDupH1s, QueryDupText: the groups of indexable documents
	// sharing a title, a description, a first <h1> or the text hash. Columns: the shared value, the
	// group's size, its first RefsListed URLs one per line.
	QueryDupTitles       = dupQuery(`audit_key(title)`, `title_count > 0`)
	QueryDupDescriptions = dupQuery(`audit_key(meta_description)`, `description_count > 0`)
	QueryDupH1s          = dupQuery(`audit_key(h1)`, `h1_count > 0`)
	QueryDupText         = dupQuery(`text_hash`, `word_count > 0`)

	// QueryFingerprints: the indexable documents with a fingerprint and at least ?2 words, by text hash
	// (exact copies next to each other). Columns: rid, text_hash, fingerprint.
	QueryFingerprints = PassQuery(`WITH ` + contentCTE + `
	SELECT rid, COALESCE(text_hash, ''), fingerprint FROM indexable
	WHERE fingerprint IS NOT NULL AND word_count >= ?2 ORDER BY text_hash, url`)
	// QueryCountFingerprints counts the rows of QueryFingerprints.
	QueryCountFingerprints = PassQuery(`WITH ` + contentCTE + `
	SELECT COUNT(*) FROM indexable WHERE fingerprint IS NOT NULL AND word_count >= ?2`)
	// QueryDocURL: the document URL of the page with rowid ?2.
	QueryDocURL = PassQuery(`SELECT COALESCE(NULLIF(final_url, ''), url) FROM pages WHERE crawl_id = ?1 AND rowid = ?2`)
	// QueryNotFound: the site's real 404 pages with a fingerprint, the first ?2 by (depth, url), one per
	// distinct text. Columns: url, fingerprint.
	QueryNotFound = PassQuery(`SELECT MIN(url), fingerprint FROM pages WHERE crawl_id = ?1 AND status = 404 AND fingerprint IS NOT NULL
	GROUP BY fingerprint ORDER BY MIN(depth), MIN(url) LIMIT ?2`)

	// QueryCanonicalTargets: each document canonicalised elsewhere, joined with the page its canonical
	// names when the crawl has it. Columns: u, canonical, then pageColumns of the target.
	QueryCanonicalTargets = PassQuery(`WITH ` + contentCTE + `
	SELECT d.u, TRIM(d.canonical), ` + pageColumns + `
	FROM docs d JOIN pages p ON p.crawl_id = ?1 AND p.url = audit_norm(d.canonical)
	WHERE audit_elsewhere(d.canonical, d.u) = 1 ORDER BY d.depth, d.url`)

	// QueryHreflang: each hreflang annotation of each document, with its target when crawled and whether
	// the target annotates the document back. Columns: u, url, hreflang, target url, crawled, returns,
	// then pageColumns of the target (NULL-safe).
	QueryHreflang = PassQuery(`WITH ` + contentCTE + `
	SELECT d.u, d.url, COALESCE(json_extract(h.value, '$.hreflang'), ''), COALESCE(json_extract(h.value, '$.url'), ''),
		p.url IS NOT NULL,
		p.url IS NOT NULL AND EXISTS (SELECT 1 FROM json_each(p.hreflang) b
			WHERE audit_norm(json_extract(b.value, '$.url')) IN (d.url, d.u)),
		` + pageColumns + `
	FROM docs d JOIN json_each(d.hreflang) h LEFT JOIN pages p ON p.crawl_id = ?1 AND p.url = audit_norm(json_extract(h.value, '$.url'))
	WHERE d.hreflang IS NOT NULL ORDER BY d.depth, d.url`)

	// QuerySitemapPages: each URL a sitemap lists and the crawl has, once, with the first sitemap (by
	// URL) listing it. Columns: sitemap, then pageColumns.
	QuerySitemapPages = PassQuery(`WITH listed AS (
		SELECT url, sitemap, ROW_NUMBER() OVER (PARTITION BY url ORDER BY sitemap) AS n FROM sitemap_urls WHERE crawl_id = ?1
	)
	SELECT s.sitemap, ` + pageColumns + ` FROM listed s JOIN pages p ON p.crawl_id = ?1 AND p.url = s.url
	WHERE s.n = 1 ORDER BY s.url`)
	// QueryPageExists: 1 when the crawl has a row for URL ?2.
	QueryPageExists = PassQuery(`SELECT COUNT(*) FROM pages WHERE crawl_id = ?1 AND url = ?2`)

	// QueryExternal: each external URL with how many pages link to it and the first RefsListed of
	// them. Columns: url, count, referrers joined by ", ".
	QueryExternal = PassQuery(fmt.Sprintf(`WITH ids AS (
		SELECT DISTINCT to_id, from_id FROM link_rows WHERE crawl_id = ?1 AND flags & 1 = 1
	), pairs AS (
		SELECT t.url AS to_url, f.url AS from_url FROM ids JOIN urls t ON t.id = ids.to_id JOIN urls f ON f.id = ids.from_id
	), numbered AS (
		SELECT to_url, from_url, ROW_NUMBER() OVER (PARTITION BY to_url ORDER BY from_url) AS n FROM pairs
	)
	SELECT to_url, MAX(n), group_concat(CASE WHEN n <= %d THEN from_url END, ', ' ORDER BY n) FROM numbered
	GROUP BY to_url ORDER BY to_url`, RefsListed))

	// QuerySitemaps and QueryRequests: the sitemaps fetched and the llms.txt and WordPress answers.
	QuerySitemaps = PassQuery(`SELECT url, COALESCE(parent,''), level, COALESCE(status,0), COALESCE(kind,''),
		COALESCE(entries,0), COALESCE(skipped,0), COALESCE(error,'') FROM sitemaps WHERE crawl_id = ?1 ORDER BY rowid`)
	QueryRequests = PassQuery(`SELECT url, purpose, COALESCE(status,0), COALESCE(content_type,''), COALESCE(location,''),
		COALESCE(bytes,0), COALESCE(error,'') FROM requests WHERE crawl_id = ?1 ORDER BY rowid`)

	// The link score pass: linkIDs numbers the crawl's pages 0..n-1 (by URL) in a temporary table;
	// QueryLinkIDs counts them; QueryGraphLinks streams each page's followed links as urls ids;
	// QueryGraphRedirects each redirecting page and where its chain ended, as page numbers;
	// updateScores writes the scores.
	linkIDsCreate = `CREATE TEMP TABLE audit_ids (id INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE, rid INTEGER NOT NULL)`
	linkIDsFill   = `INSERT INTO audit_ids SELECT ROW_NUMBER() OVER (ORDER BY url) - 1, url, rowid FROM pages WHERE crawl_id = ?1`
	// linkUIDsFill maps the pages' urls.id to their numbers (pages without links have no urls row);
	// QueryLinkUIDs reads the map, for the link stream's ends.
	linkUIDsCreate = `CREATE TEMP TABLE audit_uids (uid INTEGER PRIMARY KEY, id INTEGER NOT NULL)`
	linkUIDsFill   = `INSERT INTO audit_uids SELECT u.id, a.id FROM audit_ids a JOIN urls u ON u.url = a.url WHERE ?1 = ?1`
	linkIDsDrop    = `DROP TABLE IF EXISTS temp.audit_ids; DROP TABLE IF EXISTS temp.audit_uids`
	QueryLinkIDs   = PassQuery(`SELECT COUNT(*) FROM audit_ids WHERE ?1 = ?1`)
	// QueryLinkUIDs columns: urls.id, page number.
	QueryLinkUIDs = PassQuery(`SELECT uid, id FROM audit_uids WHERE ?1 = ?1`)
	// QueryGraphLinks: each page's followed links as urls ids, one row per page (joined by commas), so a
	// reading is n rows, not one per link: link_rows in primary key order, grouped as read, no look-up per
	// link (the caller maps the ids to page numbers; targets that are not crawled pages are left out).
	// Columns: from urls.id, the urls ids it links to.
	QueryGraphLinks = PassQuery(`SELECT from_id, group_concat(to_id) FROM link_rows WHERE crawl_id = ?1 AND flags & 3 = 0 GROUP BY from_id`)
	// QueryGraphRedirects columns: from id, to id.
	QueryGraphRedirects = PassQuery(`SELECT f.id, t.id FROM pages p
	JOIN audit_ids f ON f.url = p.url JOIN audit_ids t ON t.url = audit_norm(p.final_url)
	WHERE p.crawl_id = ?1 AND p.redirect_count > 0 AND f.id <> t.id`)
	// updateScores writes the scores of JSON array ?2 (the score of page id i at index i) in one
	// statement: each page row found by its rowid, no statement per page.
	updateScores = `UPDATE pages SET link_score = s.score FROM (
		SELECT a.rid AS rid, j.value AS score FROM json_each(?2) j JOIN temp.audit_ids a ON a.id = j.key
	) s WHERE pages.rowid = s.rid AND ?1 = ?1`
)

// dupQuery is the query of groups of indexable documents sharing key (an SQL expression), among those
// where cond holds.
func dupQuery(key, cond string) PassQuery {
	return PassQuery(fmt.Sprintf(`WITH %s, keyed AS (
		SELECT %s AS key, u FROM indexable WHERE %s
	), numbered AS (
		SELECT key, u, COUNT(*) OVER (PARTITION BY key) AS size, ROW_NUMBER() OVER (PARTITION BY key ORDER BY u) AS n
		FROM keyed WHERE key IS NOT NULL AND key <> ''
	)
	SELECT key, size, group_concat(u, char(10) ORDER BY n) FROM numbered WHERE size > 1 AND n <= %d
	GROUP BY key ORDER BY MIN(u)`, contentCTE, key, cond, RefsListed))
}

// Pass is the transaction of the passes over the whole crawl: it reads the crawl with the named queries
// and writes findings (and link scores) into the same transaction.
type Pass struct {
	ctx   context.Context
	tx    *sql.Tx
	crawl int64
	ins   *sql.Stmt
	batch []any // rows waiting for ins, four values each
	rows  int
}

// findingsBatch is how many findings one INSERT writes.
const findingsBatch = 200

// ReplaceFindings replaces the crawl's findings from the passes over the whole crawl (page_check = 0) with
// those run emits through the Pass, in one transaction: if run or a write fails nothing is replaced. The
// findings written with each page stay. Flush the writer first.
func (s *Store) ReplaceFindings(ctx context.Context, run func(*Pass) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("findings of crawl %d: %w", s.CrawlID, err)
	}
	defer tx.Rollback()
	for _, q := range []string{`DELETE FROM findings WHERE crawl_id = ?1 AND page_check = 0`, `DROP TABLE IF EXISTS temp.audit_docs`, docsCreate,
		`DROP TABLE IF EXISTS temp.audit_refs`, refsCreate} {
		if _, err := tx.ExecContext(ctx, q, s.CrawlID); err != nil {
			return fmt.Errorf("findings of crawl %d: %w", s.CrawlID, err)
		}
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO findings (crawl_id, url, kind, detail) VALUES `+
		strings.TrimSuffix(strings.Repeat("(?,?,?,?),", findingsBatch), ","))
	if err != nil {
		return err
	}
	defer ins.Close()
	p := &Pass{ctx: ctx, tx: tx, crawl: s.CrawlID, ins: ins}
	if err := run(p); err != nil {
		return err
	}
	if err := p.flush(); err != nil {
		return err
	}
	// The temporary tables go with the transaction: a rollback drops them, and so does this.
	if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS temp.audit_docs; DROP TABLE IF EXISTS temp.audit_refs`); err != nil {
		return err
	}
	return tx.Commit()
}

// Context is the context the pass runs under.
func (p *Pass) Context() context.Context { return p.ctx }

// Emit writes one finding (batched; the batch is written by the next Emit or at the end).
func (p *Pass) Emit(f FindingRecord) error {
	p.batch = append(p.batch, p.crawl, f.URL, f.Kind, f.Detail)
	p.rows++
	if p.rows == findingsBatch {
		if _, err := p.ins.ExecContext(p.ctx, p.batch...); err != nil {
			return fmt.Errorf("write findings: %w", err)
		}
		p.batch, p.rows = p.batch[:0], 0
	}
	return nil
}

func (p *Pass) flush() error {
	for i := 0; i < p.rows; i++ {
		if _, err := p.tx.ExecContext(p.ctx, `INSERT INTO findings (crawl_id, url, kind, detail) VALUES (?,?,?,?)`, p.batch[4*i:4*i+4]...); err != nil {
			return fmt.Errorf("write findings: %w", err)
		}
	}
	p.batch, p.rows = p.batch[:0], 0
	return nil
}

// Each runs query q (with the crawl's id as ?1 and args after it) and calls fn for every row with the
// row's Scan. It stops at fn's first error.
func (p *Pass) Each(q PassQuery, fn func(scan func(...any) error) error, args ...any) error {
	rows, err := p.tx.QueryContext(p.ctx, string(q), append([]any{p.crawl}, args...)...)
	if err != nil {
		return fmt.Errorf("crawl %d: %w", p.crawl, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("crawl %d: %w", p.crawl, err)
	}
	return nil
}

// One runs query q, which yields one row, into dest; it reports false when there is no row.
func (p *Pass) One(q PassQuery, dest []any, args ...any) (bool, error) {
	err := p.tx.QueryRowContext(p.ctx, string(q), append([]any{p.crawl}, args...)...).Scan(dest...)
	if err == sql.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("crawl %d: %w", p.crawl, err)
	}
	return true, nil
}

// LinkIDs numbers the crawl's pages 0..n-1 for the link score pass (QueryGraphLinks, QueryGraphRedirects and
// WriteLinkScores read the numbers) and returns n and a function that drops the numbering.
func (p *Pass) LinkIDs() (int, func() error, error) {
	drop := func() error {
		_, err := p.tx.ExecContext(p.ctx, linkIDsDrop)
		return err
	}
	if err := drop(); err != nil {
		return 0, nil, err
	}
	for _, q := range []string{linkIDsCreate, linkIDsFill, linkUIDsCreate, linkUIDsFill} {
		if _, err := p.tx.ExecContext(p.ctx, q, p.crawl); err != nil {
			return 0, nil, fmt.Errorf("crawl %d: numbering the pages: %w", p.crawl, err)
		}
	}
	var n int
	if _, err := p.One(QueryLinkIDs, []any{&n}); err != nil {
		return 0, nil, err
	}
	return n, drop, nil
}

// WriteLinkScores writes score(id) into pages.link_score of every page numbered by LinkIDs, in one
// statement (the scores go to SQLite as one JSON array: a few bytes a page).
func (p *Pass) WriteLinkScores(n int, score func(id uint32) int) error {
	b := make([]byte, 0, 4*n+2)
	b = append(b, '[')
	for id := range n {
		if id > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(score(uint32(id))), 10)
	}
	b = append(b, ']')
	if _, err := p.tx.ExecContext(p.ctx, updateScores, p.crawl, string(b)); err != nil {
		return fmt.Errorf("crawl %d: write the link scores: %w", p.crawl, err)
	}
	return nil
}

// EachPageFindingKind calls fn for each kind of the findings written with the pages during the crawl
// (page_check = 1), with their count and the first of them, for the closing summary. passes is the count
// of each kind the passes over the whole crawl wrote (every page_check = 0 row of the crawl, as
// ReplaceFindings leaves them): the counts come from one reading of findings_kind, which holds the kind,
// less those, so no row is read but the first of each kind.
func (s *Store) EachPageFindingKind(ctx context.Context, passes map[string]int, fn func(kind string, n int, first FindingRecord)) error {
	type count struct {
		kind string
		n    int
	}
	var counts []count // a few dozen kinds
	rows, err := s.db.QueryContext(ctx, `SELECT kind, COUNT(*) FROM findings INDEXED BY findings_kind WHERE crawl_id = ? GROUP BY kind`, s.CrawlID)
	if err != nil {
		return fmt.Errorf("findings of crawl %d: %w", s.CrawlID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var c count
		if err := rows.Scan(&c.kind, &c.n); err != nil {
			return err
		}
		if c.n -= passes[c.kind]; c.n > 0 {
			counts = append(counts, c)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("findings of crawl %d: %w", s.CrawlID, err)
	}
	rows.Close()
	for _, c := range counts {
		f := FindingRecord{Kind: c.kind}
		err := s.db.QueryRowContext(ctx, `SELECT url, detail FROM findings INDEXED BY findings_kind
			WHERE crawl_id = ? AND kind = ? AND page_check = 1 ORDER BY id LIMIT 1`, s.CrawlID, c.kind).Scan(&f.URL, &f.Detail)
		if err != nil {
			return fmt.Errorf("findings of crawl %d: %w", s.CrawlID, err)
		}
		fn(c.kind, c.n, f)
	}
	return nil
}
