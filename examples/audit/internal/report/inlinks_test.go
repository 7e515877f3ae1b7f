package report

import (
	"context"
	"fmt"
	"testing"

	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A URL's inlinks read by its id (the count from link_rows_to, the first referrers by a walk of the URLs
// in order or by sorting its referrers) are those the links view gives: distinct referrers, links to
// itself left out, the first by URL. Both ways are taken for every URL.
func TestInlinksOfURL(t *testing.T) {
	path := genPath(t)
	newGenDB(t, path, "")
	genCrawl(t, path, genSite{N: 300})
	id := genCrawl(t, path, genSite{First: 100, N: 300}) // a second crawl sharing URLs with the first
	db := openGen(t, path)
	ctx := context.Background()
	d, err := LoadReport(ctx, db, id, NeedAll)
	require.NoError(t, err)

	want := func(u string) store.Inlinks {
		var in store.Inlinks
		require.NoError(t, db.QueryRow(`SELECT COUNT(DISTINCT from_url) FROM links WHERE crawl_id = ? AND to_url = ? AND from_url <> to_url`, id, u).Scan(&in.N))
		rows, err := db.Query(`SELECT DISTINCT from_url FROM links WHERE crawl_id = ? AND to_url = ? AND from_url <> to_url ORDER BY from_url LIMIT ?`, id, u, inlinksShown)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var f string
			require.NoError(t, rows.Scan(&f))
			in.First = append(in.First, f)
		}
		require.NoError(t, rows.Err())
		return in
	}
	urls := []string{"http://gen.test/p/missing", "http://gen.test/p/5"} // not in the file; only the other crawl's
	for i := 100; i < 400; i += 7 {
		urls = append(urls, fmt.Sprintf("http://gen.test/p/%d", i))
	}
	defer func(r int64) { inlinksWalkRatio = r }(inlinksWalkRatio)
	linked := 0
	for _, ratio := range []int64{0, 1 << 40} { // sorted; walked
		inlinksWalkRatio = ratio
		for _, u := range urls {
			got, err := d.inlinksOfURL(u)
			require.NoError(t, err)
			w := want(u)
			assert.Equal(t, w, got, "%s, walk ratio %d", u, ratio)
			if w.N > inlinksShown {
				linked++
			}
		}
	}
	assert.Positive(t, linked, "some URLs have more referrers than are named")
}
