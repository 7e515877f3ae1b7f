package store

import (
	"database/sql"
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
