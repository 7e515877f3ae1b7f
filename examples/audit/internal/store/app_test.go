package store

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The search box's trigram index gives exactly the rows of a plain substring scan (LIKE over the URL and
// the title), for pages written before the index was added and after (its triggers), a page written
// twice (INSERT OR REPLACE), short searches the index cannot answer, and text that is FTS5 syntax.
func TestSearchIndexMatchesSubstringScan(t *testing.T) {
	ctx := t.Context()
	st, err := OpenStore(ctx, filepath.Join(t.TempDir(), "s.db"))
	require.NoError(t, err)
	defer st.Close()
	require.NoError(t, st.BeginCrawl(ctx, CrawlInfo{StartURL: "http://shop.test/", UserAgent: "x", Token: "x", Started: time.Now(), Settings: struct{}{}}))
	page := func(u, title string) {
		st.Page(&PageRecord{URL: u, Source: "link", Depth: 1, Title: title, Parsed: true})
	}
	page("http://shop.test/", "Home | Shop")
	page("http://shop.test/shoes/red", `Red "Runner" shoes`)
	page("http://shop.test/a_b%c", "Percent AND underscore OR not")
	flushForTest(t, st)
	require.NoError(t, st.AddAppIndexes(ctx)) // fills the index from the rows already there
	page("http://shop.test/shoes/blue", "Blue Runner – Café")
	page("http://shop.test/shoes/red", "Red trail shoes") // written again: INSERT OR REPLACE
	page("http://shop.test/x", "")
	flushForTest(t, st)
	require.NoError(t, st.AddAppIndexes(ctx)) // a second open adds nothing twice

	scan := func(search string) []string {
		rows, err := st.Reader().Query(`SELECT url FROM pages WHERE crawl_id = ? AND (url LIKE ? ESCAPE '\' OR title LIKE ? ESCAPE '\') ORDER BY url`,
			st.CrawlID, likePattern(search), likePattern(search))
		require.NoError(t, err)
		defer rows.Close()
		var out []string
		for rows.Next() {
			var u string
			require.NoError(t, rows.Scan(&u))
			out = append(out, u)
		}
		return out
	}
	for _, q := range []string{"shoes", "SHOES", "runner", "Runner\"", `"Runner"`, "trail", "Red \"Runner", "caf", "Café", "a_b%", "_b%", "AND", "OR not",
		"sh", "x", "shop.test/", "nothing-like-this", "NEAR(", "*", "hoe"} {
		rows, _, err := ListURLs(ctx, st.Reader(), st.CrawlID, URLQuery{Search: q, Limit: 500})
		require.NoError(t, err, q)
		var got []string
		for _, r := range rows {
			got = append(got, r.URL)
		}
		assert.Equal(t, scan(q), got, "search %q", q)
		n, err := CountURLs(ctx, st.Reader(), st.CrawlID, URLQuery{Search: q})
		require.NoError(t, err)
		assert.Equal(t, len(got), n, "count of %q", q)
	}
	var inIndex string
	require.NoError(t, st.Reader().QueryRow(`SELECT COUNT(*) FROM app_search WHERE app_search MATCH '"trail"'`).Scan(&inIndex))
	assert.Equal(t, "1", inIndex, "the rewritten page's new title is in the index")
}
