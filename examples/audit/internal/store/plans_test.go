package store

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// INSERT INTO links, the table of earlier versions, writes through the view (links_insert): the URLs
// interned once, each link after its page's others, read back as written.
func TestLinksViewInsert(t *testing.T) {
	st, err := OpenStore(t.Context(), filepath.Join(t.TempDir(), "a.db"))
	require.NoError(t, err)
	defer st.Close()
	db := st.Reader()
	_, err = db.Exec(`INSERT INTO crawls (id, start_url, user_agent, robots_token, started_at, settings, outcome) VALUES (1, 'http://shop.test/', 'x', 'x', '2026-01-01T00:00:00Z', '{}', 'finished');
		INSERT INTO links (crawl_id, from_url, to_url, external, nofollow, anchor, tag) VALUES
			(1, 'http://shop.test/', 'http://shop.test/a', 0, 0, 'A page', 'a'),
			(1, 'http://shop.test/', 'https://partner.example/', 1, 1, '', 'a'),
			(1, 'http://shop.test/a', 'http://shop.test/', 0, 0, 'Home', 'link'),
			(1, 'http://shop.test/a', 'http://shop.test/x.css', 0, 0, NULL, 'style'),
			(1, 'http://shop.test/', 'http://shop.test/', 0, 0, 'Self', 'area');`)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{
		"http://shop.test/ http://shop.test/a 00 A page a",
		"http://shop.test/ https://partner.example/ 11  a",
		"http://shop.test/ http://shop.test/ 00 Self area",
		"http://shop.test/a http://shop.test/ 00 Home link",
		"http://shop.test/a http://shop.test/x.css 00  style",
	}, queryStrings(t, db, `SELECT from_url || ' ' || to_url || ' ' || external || nofollow || ' ' || anchor || ' ' || COALESCE(tag, '-') FROM links WHERE crawl_id = 1`))
	assert.Equal(t, []string{
		"http://shop.test/ 0 http://shop.test/a", "http://shop.test/ 1 https://partner.example/", "http://shop.test/ 2 http://shop.test/",
		"http://shop.test/a 0 http://shop.test/", "http://shop.test/a 1 http://shop.test/x.css",
	}, queryStrings(t, db, `SELECT f.url || ' ' || l.seq || ' ' || t.url FROM link_rows l JOIN urls f ON f.id = l.from_id JOIN urls t ON t.id = l.to_id ORDER BY f.url, l.seq`),
		"in their order on each page")
	assert.Equal(t, []string{"4"}, queryStrings(t, db, `SELECT COUNT(*) FROM urls`), "each URL once")
}

// The passes' queries over the links (the view over link_rows and urls) read link_rows by its primary
// key or by link_rows_to and find each URL by its key: no query scans link_rows or urls whole, and none
// looks a link up per row without an index. Checked on a file with ANALYZE statistics, as Flush leaves it,
// and on one without.
func TestPassQueryPlans(t *testing.T) {
	for _, analyzed := range []bool{false, true} {
		st, err := OpenStore(t.Context(), filepath.Join(t.TempDir(), "a.db"))
		require.NoError(t, err)
		db := st.Reader()
		_, err = db.Exec(`INSERT INTO crawls (id, start_url, user_agent, robots_token, started_at, settings, outcome) VALUES (1, 'http://shop.test/', 'x', 'x', '2026-01-01T00:00:00Z', '{}', 'finished');
			WITH RECURSIVE i(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM i WHERE i < 199)
			INSERT INTO pages (crawl_id, url, depth, source, title, status) SELECT 1, 'http://shop.test/' || i, 1, 'link', 't', 200 FROM i;
			WITH RECURSIVE i(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM i WHERE i < 199), j(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM j WHERE j < 9)
			INSERT INTO links (crawl_id, from_url, to_url, external, nofollow, anchor, tag)
			SELECT 1, 'http://shop.test/' || i, CASE WHEN j = 9 THEN 'https://ext.example/' || i ELSE 'http://shop.test/' || ((i * 7 + j) % 200) END, j = 9, 0, 'x', 'a' FROM i, j`)
		require.NoError(t, err)
		if analyzed {
			_, err = db.Exec(`ANALYZE`)
			require.NoError(t, err)
		}
		_, err = db.Exec(linkIDsCreate + `; ` + strings.ReplaceAll(linkIDsFill, "?1", "1") + `; ` + linkUIDsCreate)
		require.NoError(t, err)
		selectOf := func(q string) string { return q[strings.Index(q, "SELECT"):] }
		// Whole-crawl queries read the crawl's link_rows once by the primary key (the referrer counts: its
		// entries of link_rows_to, which cover them); a per-URL query by link_rows_to. None scans the
		// link rows or urls.
		for name, q := range map[string]string{
			"refs":       selectOf(refsCreate[strings.Index(refsCreate, "INSERT"):]),
			"referrers":  string(QueryReferrers),
			"external":   string(QueryExternal),
			"link score": string(QueryGraphLinks),
		} {
			plan := planOf(t, db, q, 1, "http://shop.test/3")
			joined := strings.Join(plan, "\n")
			for _, line := range plan {
				if name == "refs" && strings.Contains(line, "USING COVERING INDEX link_rows_to") {
					continue // the whole-crawl count reads the index by target, never a link row
				}
				if f := strings.Fields(line); len(f) > 1 && f[0] == "SCAN" && strings.Contains(" link_rows l urls t f ", " "+f[1]+" ") {
					t.Errorf("analyzed %v: %s scans a table:\n%s", analyzed, name, joined)
				}
			}
			want := "USING PRIMARY KEY (crawl_id=?)"
			switch name {
			case "referrers":
				want = "USING INDEX link_rows_to (to_id=? AND crawl_id=?)"
			case "refs":
				want = "SCAN link_rows USING COVERING INDEX link_rows_to"
			}
			assert.Contains(t, joined, want, "analyzed %v: %s", analyzed, name)
			if name == "refs" || name == "link score" {
				assert.NotContains(t, joined, "FOR GROUP BY", "analyzed %v: %s groups as it reads, sorting nothing", analyzed, name)
			}
		}
		require.NoError(t, st.Close())
	}
}

// planOf is the lines of SQLite's EXPLAIN QUERY PLAN of q with args.
func planOf(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(`EXPLAIN QUERY PLAN `+q, args...)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		out = append(out, detail)
	}
	require.NoError(t, rows.Err())
	return out
}
