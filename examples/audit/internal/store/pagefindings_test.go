package store

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

// A page's own findings are written with the page and survive the pass over the whole crawl, which
// replaces only its own findings.
func TestPageFindingsSurviveWriteFindings(t *testing.T) {
	st, err := OpenStore(t.Context(), filepath.Join(t.TempDir(), "f.db"))
	require.NoError(t, err)
	defer st.Close()
	require.NoError(t, st.BeginCrawl(t.Context(), CrawlInfo{StartURL: "http://shop.test/", UserAgent: "x", Token: "x", Started: time.Now(), Settings: struct{}{}}))
	st.Page(&PageRecord{URL: "http://shop.test/", Source: "start", Findings: []FindingRecord{{URL: "http://shop.test/", Kind: "page_kind", Detail: "from the page"}}})
	require.NoError(t, st.Flush())
	require.NoError(t, st.WriteFindings(t.Context(), []FindingRecord{{URL: "http://shop.test/", Kind: "site_kind", Detail: "first pass"}}))
	require.NoError(t, st.WriteFindings(t.Context(), []FindingRecord{{URL: "http://shop.test/", Kind: "site_kind", Detail: "second pass"}}))
	assert.Equal(t, []string{"page_kind:from the page:1", "site_kind:second pass:0"}, findingRows(t, st.Reader()))
}

// A database written before findings.page_check existed gets the column when opened for writing; its
// findings read as those of the pass over the crawl.
func TestOldFindingsTableMigrated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	old := regexp.MustCompile(`(?s),\s*page_check[^\n]*\n[^\n]*\n`).ReplaceAllString(Schema, "\n")
	require.NotContains(t, old, "page_check")
	_, err = db.Exec(old + `INSERT INTO crawls (id, start_url, user_agent, robots_token, started_at, settings, outcome) VALUES (1, 'http://shop.test/', 'x', 'x', '2026-01-01T00:00:00Z', '{}', 'finished');
		INSERT INTO findings (crawl_id, url, kind, detail) VALUES (1, 'http://shop.test/', 'title_missing', 'old');`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	st, err := OpenStore(t.Context(), path)
	require.NoError(t, err)
	defer st.Close()
	assert.Equal(t, []string{"title_missing:old:0"}, findingRows(t, st.Reader()))
}

func findingRows(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT kind || ':' || detail || ':' || page_check FROM findings ORDER BY kind`)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

// The closing summary's count of the pages' own findings: each kind's page_check rows, also of a kind the
// passes wrote too, with the first of them.
func TestEachPageFindingKind(t *testing.T) {
	st, err := OpenStore(t.Context(), filepath.Join(t.TempDir(), "f.db"))
	require.NoError(t, err)
	defer st.Close()
	require.NoError(t, st.BeginCrawl(t.Context(), CrawlInfo{StartURL: "http://shop.test/", UserAgent: "x", Token: "x", Started: time.Now(), Settings: struct{}{}}))
	require.NoError(t, st.WriteFindings(t.Context(), []FindingRecord{{URL: "http://shop.test/", Kind: "shared", Detail: "pass"}, {URL: "http://shop.test/", Kind: "pass_only", Detail: "pass"}}))
	for _, u := range []string{"http://shop.test/", "http://shop.test/a", "http://shop.test/b"} {
		st.Page(&PageRecord{URL: u, Source: "link", Findings: []FindingRecord{{URL: u, Kind: "page_only", Detail: "of " + u}, {URL: u, Kind: "shared", Detail: "of " + u}}})
	}
	require.NoError(t, st.Flush())
	got := map[string]string{}
	require.NoError(t, st.EachPageFindingKind(t.Context(), map[string]int{"shared": 1, "pass_only": 1}, func(kind string, n int, first FindingRecord) {
		got[kind] = fmt.Sprintf("%d %s %s", n, first.URL, first.Detail)
	}))
	assert.Equal(t, map[string]string{"page_only": "3 http://shop.test/ of http://shop.test/", "shared": "3 http://shop.test/ of http://shop.test/"}, got)
}
