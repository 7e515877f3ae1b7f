package store

import (
	"database/sql"
	_ "embed"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

//go:embed testdata/layout1.sql
var layout1 string

// A database of the layout before interned URLs (links a table of URL pairs, with two text indexes) is
// refused by the read-only opening with a message naming the file, its layout and the command that
// converts it; opened for writing it is converted: the links read the same through the links view, in
// their order, and the old table and its indexes are gone.
func TestMigrateLayout1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(layout1 + `INSERT INTO crawls (id, start_url, user_agent, robots_token, started_at, settings, outcome) VALUES (1, 'http://shop.test/', 'x', 'x', '2026-01-01T00:00:00Z', '{}', 'finished');
		INSERT INTO pages (crawl_id, url, depth, source) VALUES (1, 'http://shop.test/', 0, 'start'), (1, 'http://shop.test/a', 1, 'link');
		INSERT INTO links (crawl_id, from_url, to_url, external, nofollow, anchor, tag) VALUES
			(1, 'http://shop.test/', 'http://shop.test/a', 0, 0, 'A page', 'a'),
			(1, 'http://shop.test/', 'https://partner.example/', 1, 1, '', 'a'),
			(1, 'http://shop.test/a', 'http://shop.test/', 0, 0, 'Home', 'link'),
			(1, 'http://shop.test/a', 'http://shop.test/x.css', 0, 0, NULL, 'style'),
			(1, 'http://shop.test/', 'http://shop.test/', 0, 0, 'Self', 'area');`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	const q = `SELECT from_url || ' ' || to_url || ' ' || external || nofollow || ' ' || anchor || ' ' || COALESCE(tag, '-') FROM links WHERE crawl_id = 1`
	want := []string{
		"http://shop.test/ http://shop.test/a 00 A page a",
		"http://shop.test/ https://partner.example/ 11  a",
		"http://shop.test/ http://shop.test/ 00 Self area",
		"http://shop.test/a http://shop.test/ 00 Home link",
		"http://shop.test/a http://shop.test/x.css 00  style",
	}

	_, err = OpenReadDB(t.Context(), path)
	require.ErrorIs(t, err, ErrOldLayout)
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), "audit migrate -db "+path)
	var ue *UsageError
	assert.ErrorAs(t, err, &ue, "exit status 2, like every refused -db")

	st, err := OpenStore(t.Context(), path)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	rdb, err := OpenReadDB(t.Context(), path)
	require.NoError(t, err, "converted: read commands open it")
	defer rdb.Close()
	assert.ElementsMatch(t, want, queryStrings(t, rdb, q), "the same links through the view")
	assert.Equal(t, want, queryStrings(t, rdb, `SELECT f.url || ' ' || t.url || ' ' || (l.flags & 1) || ((l.flags >> 1) & 1) || ' ' || IFNULL(l.anchor, '') || ' ' ||
		COALESCE(l.tag, CASE l.flags >> 2 `+linkTagCases+` END, '-') FROM link_rows l JOIN urls f ON f.id = l.from_id JOIN urls t ON t.id = l.to_id ORDER BY f.url, l.seq`),
		"in their order on each page")
	assert.Equal(t, []string{"table link_rows", "index link_rows_to", "view links", "trigger links_insert", "table urls"},
		queryStrings(t, rdb, `SELECT type || ' ' || name FROM sqlite_master WHERE name LIKE 'link%' OR name = 'urls' ORDER BY name`))

	// A second opening finds nothing to convert, and a crawl writes on.
	st, err = OpenStore(t.Context(), path)
	require.NoError(t, err)
	require.NoError(t, st.BeginCrawl(t.Context(), CrawlInfo{StartURL: "http://shop.test/", UserAgent: "x", Token: "x", Started: time.Now(), Settings: struct{}{}}))
	st.Page(&PageRecord{URL: "http://shop.test/", Source: "start", Links: []LinkRecord{{From: "http://shop.test/", To: "http://shop.test/a", Anchor: "A page", Tag: "a"}}})
	require.NoError(t, st.Close())
	assert.Equal(t, []string{"http://shop.test/ http://shop.test/a 00 A page a"},
		queryStrings(t, rdb, `SELECT from_url || ' ' || to_url || ' ' || external || nofollow || ' ' || anchor || ' ' || tag FROM links WHERE crawl_id = 2`))
	assert.Equal(t, 4, countOf(t, rdb, `SELECT COUNT(*) FROM urls`), "each URL once, across crawls")
}

// Every tag of a link reads back as written: the known ones by their code in flags, others in tag.
func TestLinkTagsRoundTrip(t *testing.T) {
	st, err := OpenStore(t.Context(), filepath.Join(t.TempDir(), "t.db"))
	require.NoError(t, err)
	require.NoError(t, st.BeginCrawl(t.Context(), CrawlInfo{StartURL: "http://shop.test/", UserAgent: "x", Token: "x", Started: time.Now(), Settings: struct{}{}}))
	var links []LinkRecord
	var want []string
	for i, tag := range []string{"a", "link", "area", "img", "script", "iframe", "frame", "meta", "video", ""} {
		l := LinkRecord{From: "http://shop.test/", To: "http://shop.test/" + tag, Tag: tag, External: i%2 == 1, Nofollow: i%3 == 1, Anchor: tag + " text"}
		links = append(links, l)
		want = append(want, l.To+" "+tag+" "+string(rune('0'+B2i(l.External)))+string(rune('0'+B2i(l.Nofollow)))+" "+l.Anchor)
	}
	st.Page(&PageRecord{URL: "http://shop.test/", Source: "start", Links: links})
	require.NoError(t, st.Close())
	rdb, err := OpenReadDB(t.Context(), st.path)
	require.NoError(t, err)
	defer rdb.Close()
	assert.ElementsMatch(t, want, queryStrings(t, rdb, `SELECT to_url || ' ' || COALESCE(tag, '') || ' ' || external || nofollow || ' ' || anchor FROM links`))
	d, err := LoadURL(t.Context(), rdb, 1, "http://shop.test/")
	require.NoError(t, err)
	require.Len(t, d.Outlinks, len(links))
	assert.Equal(t, links[8], d.Outlinks[8])
	d, err = LoadURL(t.Context(), rdb, 1, "http://shop.test/img")
	require.NoError(t, err)
	assert.Equal(t, []LinkRecord{links[3]}, d.Inlinks)
	assert.Equal(t, 1, d.InlinksTotal)
}

func queryStrings(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
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

func countOf(t *testing.T, db *sql.DB, q string) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRow(q).Scan(&n))
	return n
}
