package store

import (
	"github.com/politecrawl/polite/examples/audit/internal/benchshop"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The links' index by target is off while a crawl writes and built once when its writes end (Flush), so
// the passes find it; a file whose crawl was killed before that gets it back when it is next opened for
// writing. The links written without it read back in full through the index.
func TestLinksIndexBuiltWhenTheCrawlsWritesEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	hasIndex := func(st *Store) bool {
		var n int
		require.NoError(t, st.Reader().QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'link_rows_to'`).Scan(&n))
		return n == 1
	}
	crawl := func() *Store {
		st, err := OpenStore(t.Context(), path)
		require.NoError(t, err)
		require.True(t, hasIndex(st), "a file opened for writing has the index")
		require.NoError(t, st.BeginCrawl(t.Context(), CrawlInfo{StartURL: "http://shop.test/", UserAgent: "x", Token: "x", Started: time.Now(), Settings: struct{}{}}))
		for _, p := range shopRecords(t, 3) {
			st.Page(p)
		}
		flushForTest(t, st)
		assert.False(t, hasIndex(st), "no index while the crawl writes")
		inlinksOfHome(t, st) // the app reads a running crawl's inlinks all the same
		return st
	}
	st := crawl()
	require.NoError(t, st.Flush())
	assert.True(t, hasIndex(st), "built when the writes end")
	assert.Positive(t, st.IndexTime())
	inlinksOfHome(t, st)
	assert.Equal(t, linksHome(t, st, "NOT INDEXED", 1), linksHome(t, st, "INDEXED BY link_rows_to", 1), "the index finds every link")
	require.NoError(t, st.Close())

	// Killed while crawling: the writer's commits are in the file, the index is not (the database is
	// closed under the writer, as a kill leaves it).
	st = crawl()
	require.NoError(t, st.db.Close())
	st, err := OpenStore(t.Context(), path)
	require.NoError(t, err)
	defer st.Close()
	assert.True(t, hasIndex(st), "built again when the file is next opened for writing")
	assert.Equal(t, linksHome(t, st, "NOT INDEXED", 2), linksHome(t, st, "INDEXED BY link_rows_to", 2), "the index finds every link")
}

// linksHome counts crawl's links to the shop's home page, reading link_rows as how says.
func linksHome(t *testing.T, st *Store, how string, crawl int) int {
	var n int
	require.NoError(t, st.Reader().QueryRow(`SELECT count(*) FROM link_rows `+how+` WHERE to_id = (SELECT id FROM urls WHERE url = 'http://127.0.0.1:8080/') AND crawl_id = ?`, crawl).Scan(&n))
	require.Positive(t, n)
	return n
}

// shopRecords are the first n pages of an n-page generated shop, as shopRecord makes them.
func shopRecords(tb testing.TB, n int) []*PageRecord {
	shop := benchshop.Handler(n)
	recs := make([]*PageRecord, n)
	for i := range recs {
		recs[i] = shopRecord(tb, shop, i)
	}
	return recs
}

// inlinksOfHome checks the app's detail of the shop's home page lists its inlinks, whether the file has
// the links' index or not.
func inlinksOfHome(t *testing.T, st *Store) {
	d, err := LoadURL(t.Context(), st.Reader(), st.CrawlID, "http://127.0.0.1:8080/")
	require.NoError(t, err)
	assert.Equal(t, linksHome(t, st, "NOT INDEXED", int(st.CrawlID)), d.InlinksTotal)
	assert.NotEmpty(t, d.Inlinks)
}
