package report

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/stretchr/testify/require"
)

// oldSchema is the database as the version before the checks issue wrote it: no link_score, text_hash,
// fingerprint, html_lang, hreflang, findings.page_check.
//
//go:embed testdata/schema-fa4fa85.sql
var oldSchema string

// genSite is what a generated crawl holds. Pages are http://gen.test/p/<i> for i in [First, First+N),
// each with 60 internal links to other pages of the range, a title shared by every fifth page, one in
// 97 a 404 and one in 101 a redirect; every third page is listed in the sitemap; findings of every kind
// of the kinds table are spread over the pages (Kinds, or all of them), about Density per page.
type genSite struct {
	First, N int
	Kinds    []string // the kinds to write; nil: every kind of the table
	Density  int      // a page gets kind k when (page + k) % Density == 0; 0: 50, about two kinds a page
	Retitled bool     // every tenth page has another title than in a crawl without it
}

// allKinds is every kind of findings' table, in its order.
func allKinds() []string {
	var ks []string
	for _, c := range findings.Categories {
		ks = append(ks, findings.KindsOf(c)...)
	}
	return ks
}

// newGenDB creates a database at path with schema (store's current one when ""), the way the given
// version would, with no crawl yet.
func newGenDB(tb testing.TB, path, schema string) {
	tb.Helper()
	ctx := context.Background()
	if schema == "" {
		st, err := store.OpenStore(ctx, path)
		require.NoError(tb, err)
		require.NoError(tb, st.Close())
		return
	}
	db, err := sql.Open("sqlite", path)
	require.NoError(tb, err)
	defer db.Close()
	_, err = db.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d;\n", store.ApplicationID)+schema)
	require.NoError(tb, err)
}

// genCrawl writes one finished crawl of s into the database at path, with SQL straight into the
// tables (no crawl): recursive CTEs make the pages and the links, so 100,000 pages take seconds.
func genCrawl(tb testing.TB, path string, s genSite) int64 {
	tb.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(OFF)")
	require.NoError(tb, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	exec := func(q string, args ...any) {
		tb.Helper()
		_, err := db.ExecContext(ctx, q, args...)
		require.NoError(tb, err, q)
	}
	res, err := db.ExecContext(ctx, `INSERT INTO crawls (start_url, user_agent, robots_token, started_at, finished_at, settings, outcome, pages, requests)
		VALUES ('http://gen.test/p/0', 'CrawlCove-Crawler', 'CrawlCove-Crawler', '2026-01-02T03:04:05Z', '2026-01-02T03:14:05Z',
		?, 'finished', ?, ?)`, fmt.Sprintf(`{"max_pages":%d,"max_depth":100,"concurrency":16,"gap":"0s","timeout":"15s"}`, s.N), s.N, s.N+2)
	require.NoError(tb, err)
	id, err := res.LastInsertId()
	require.NoError(tb, err)
	title := "'Product ' || (i / 5)"
	if s.Retitled {
		title = "CASE WHEN i % 10 = 0 THEN 'New product ' || i ELSE 'Product ' || (i / 5) END"
	}
	// The links' indexes (link_rows_to on the interned layout) are dropped while the rows go in and made
	// again after: one sort instead of millions of inserts into random places of the b-trees. Their
	// definitions are the database's own.
	var indexes []string
	rows, err := db.QueryContext(ctx, `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('links', 'link_rows') AND sql IS NOT NULL`)
	require.NoError(tb, err)
	var names []string
	for rows.Next() {
		var name, def string
		require.NoError(tb, rows.Scan(&name, &def))
		names, indexes = append(names, name), append(indexes, def)
	}
	require.NoError(tb, rows.Close())
	exec(`BEGIN`)
	for _, n := range names {
		exec(`DROP INDEX "` + n + `"`)
	}
	exec(`WITH RECURSIVE seq(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?)
		INSERT INTO pages (crawl_id, url, final_url, status, redirects, redirect_count, depth, found_on, source, content_type,
			response_ms, ttfb_ms, bytes, attempts, title, title_count, meta_description, description_count, h1, h1_count,
			word_count, links_internal, links_external, links_nofollow, fetched_at)
		SELECT ?, 'http://gen.test/p/' || i,
			CASE WHEN i % 101 = 0 THEN 'http://gen.test/p/' || (i + 1) ELSE 'http://gen.test/p/' || i END,
			CASE WHEN i % 97 = 0 THEN 404 ELSE 200 END,
			CASE WHEN i % 101 = 0 THEN '[{"url":"http://gen.test/p/' || i || '","status":301,"location":"/p/' || (i + 1) || '"}]' END,
			CASE WHEN i % 101 = 0 THEN 1 ELSE 0 END,
			MIN(i, 1 + i % 9), 'http://gen.test/p/' || (i / 60), CASE WHEN i = 0 THEN 'start' ELSE 'link' END, 'text/html; charset=utf-8',
			5 + i % 300, 2 + i % 100, 22700, 1, `+title+`, 1, 'About product ' || i, 1, 'Product ' || i, 1,
			400 + i % 500, 60, 0, 0, '2026-01-02T03:05:00Z'
		FROM seq`, s.First, s.First+s.N, id)
	var view bool
	require.NoError(tb, db.QueryRowContext(ctx, `SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'view' AND name = 'links'`).Scan(&view))
	if !view {
		exec(`WITH RECURSIVE seq(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?),
		j(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM j WHERE k + 1 < 60)
		INSERT INTO links (crawl_id, from_url, to_url, external, nofollow, anchor, tag)
		SELECT ?, 'http://gen.test/p/' || i, 'http://gen.test/p/' || (? + (i * 7 + k * 131 + k * k) % ?), 0, 0, 'Product ' || k, 'a'
		FROM seq, j`, s.First, s.First+s.N, id, s.First, s.N)
	} else {
		// The same links written as the store's layout keeps them (INSERT INTO links, through the view's
		// trigger, would take a statement per link): the URLs interned, then the links as id pairs, tag a.
		exec(`WITH RECURSIVE seq(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?)
		INSERT OR IGNORE INTO urls (url) SELECT 'http://gen.test/p/' || i FROM seq`, s.First, s.First+s.N)
		exec(`WITH RECURSIVE seq(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?),
		j(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM j WHERE k + 1 < 60)
		INSERT INTO link_rows (crawl_id, from_id, seq, to_id, flags, anchor, tag)
		SELECT ?, f.id, k, t.id, 4, 'Product ' || k, NULL
		FROM seq, j JOIN urls f ON f.url = 'http://gen.test/p/' || i JOIN urls t ON t.url = 'http://gen.test/p/' || (? + (i * 7 + k * 131 + k * k) % ?)`,
			s.First, s.First+s.N, id, s.First, s.N)
	}
	for _, def := range indexes {
		exec(def)
	}
	exec(`INSERT INTO sitemaps (crawl_id, url, parent, level, status, kind, entries, skipped) VALUES (?, 'http://gen.test/sitemap.xml', '', 0, 200, 'urlset', ?, 0)`,
		id, s.N/3)
	exec(`INSERT INTO sitemap_urls (crawl_id, sitemap, url) SELECT crawl_id, 'http://gen.test/sitemap.xml', url FROM pages
		WHERE crawl_id = ? AND CAST(SUBSTR(url, 19) AS INTEGER) % 3 = 0`, id)
	exec(`CREATE TEMP TABLE IF NOT EXISTS gen_kinds (idx INTEGER, kind TEXT)`)
	exec(`DELETE FROM gen_kinds`)
	kinds := s.Kinds
	if kinds == nil {
		kinds = allKinds()
	}
	for i, k := range kinds {
		exec(`INSERT INTO gen_kinds VALUES (?, ?)`, i, k)
	}
	density := s.Density
	if density == 0 {
		density = 50
	}
	exec(`INSERT INTO findings (crawl_id, url, kind, detail)
		SELECT ?, p.url, k.kind, 'generated ' || k.kind || ' on ' || p.url FROM pages p, gen_kinds k
		WHERE p.crawl_id = ? AND (CAST(SUBSTR(p.url, 19) AS INTEGER) + k.idx) % ? = 0`, id, id, density)
	var hasScore bool
	require.NoError(tb, db.QueryRowContext(ctx, `SELECT COUNT(*) > 0 FROM pragma_table_info('pages') WHERE name = 'link_score'`).Scan(&hasScore))
	if hasScore {
		exec(`UPDATE pages SET link_score = (CAST(SUBSTR(url, 19) AS INTEGER) * 37) % 101 WHERE crawl_id = ?`, id)
	}
	exec(`COMMIT`)
	return id
}

// openGen opens a generated database as the report command does.
func openGen(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db, err := store.OpenReadDB(context.Background(), path)
	require.NoError(tb, err)
	tb.Cleanup(func() { db.Close() })
	return db
}

// genPath is a database file in a temp dir.
func genPath(tb testing.TB) string { return filepath.Join(tb.TempDir(), "gen.db") }

// fileSize is a file's size, or fails.
func fileSize(tb testing.TB, path string) int64 {
	tb.Helper()
	fi, err := os.Stat(path)
	require.NoError(tb, err)
	return fi.Size()
}
