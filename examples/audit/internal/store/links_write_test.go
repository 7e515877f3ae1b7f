package store

import (
	"fmt"
	"hash/maphash"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two crawls of the same shop into one file: the first interns every URL (inserted first), the second
// finds them all in the file (looked up first, once the writer has seen that); both read back through the
// links view as the pages had them, in their order, and each URL is in urls once.
func TestLinksWrittenAsThePagesHadThem(t *testing.T) {
	st, err := OpenStore(t.Context(), filepath.Join(t.TempDir(), "a.db"))
	require.NoError(t, err)
	recs := shopRecords(t, 5)
	var want []string
	distinct := map[string]bool{}
	for _, p := range recs {
		distinct[p.URL] = true
		for _, l := range p.Links {
			want = append(want, l.From+" "+l.To+" "+l.Anchor+" "+l.Tag)
			distinct[l.To] = true
		}
	}
	for crawl := 1; crawl <= 2; crawl++ {
		if crawl == 2 {
			st, err = OpenStore(t.Context(), st.path)
			require.NoError(t, err)
		}
		require.NoError(t, st.BeginCrawl(t.Context(), CrawlInfo{StartURL: recs[0].URL, UserAgent: "x", Token: "x", Started: time.Now(), Settings: struct{}{}}))
		for _, p := range recs {
			st.Page(p)
		}
		require.NoError(t, st.Flush())
		db := st.Reader()
		assert.ElementsMatch(t, want, queryStrings(t, db, fmt.Sprintf(`SELECT from_url || ' ' || to_url || ' ' || anchor || ' ' || tag FROM links WHERE crawl_id = %d`, crawl)), "crawl %d", crawl)
		for _, p := range recs {
			var order []string
			for _, l := range p.Links {
				order = append(order, l.To)
			}
			assert.Equal(t, order, queryStrings(t, db, fmt.Sprintf(`SELECT t.url FROM link_rows r JOIN urls t ON t.id = r.to_id
				WHERE r.crawl_id = %d AND r.from_id = (SELECT id FROM urls WHERE url = '%s') ORDER BY r.seq`, crawl, p.URL)), "in their order on %s", p.URL)
		}
		assert.Equal(t, []string{strconv.Itoa(len(distinct))}, queryStrings(t, db, `SELECT count(*) FROM urls`), "each URL once")
		require.NoError(t, st.Close())
	}
}

// The writer's cache of URL ids stays within two generations of urlIDsMax entries, and keeps an id that
// keeps being asked for (a page every page links to).
func TestURLIDsCacheBounded(t *testing.T) {
	c := urlIDs{seed: maphash.MakeSeed()}
	hot := c.key("http://shop.test/")
	c.put(hot, 1)
	for i := range 3 * urlIDsMax {
		c.put(uint64(i)<<1|1, int64(i+2))
		if i%1000 == 0 {
			id, ok := c.get(hot)
			require.True(t, ok, "after %d others", i)
			require.Equal(t, int64(1), id)
		}
	}
	assert.LessOrEqual(t, len(c.cur)+len(c.old), 2*urlIDsMax)
	_, ok := c.get(1)
	assert.False(t, ok, "the first URLs are forgotten")
}
