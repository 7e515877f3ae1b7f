package findings

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/stretchr/testify/require"
)

// crawlRows are the rows of a crawl a test writes into a database for the passes to read.
type crawlRows struct {
	Pages       []*store.PageRecord   // written with the links whose From they are
	Links       []store.LinkRecord    // every From must be one of Pages
	SitemapURLs [][2]string           // (sitemap, page URL)
	Sitemaps    []store.SitemapRecord // the sitemaps fetched
	Requests    []store.RequestRecord // llms.txt and the WordPress probes
	Extra       Extra                 // what the crawl knew beyond the rows
}

// newCrawl opens a database in a temporary directory with one crawl begun.
func newCrawl(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.OpenStore(t.Context(), filepath.Join(t.TempDir(), "audit.db"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	require.NoError(t, st.BeginCrawl(t.Context(), store.CrawlInfo{StartURL: "http://shop.test/", UserAgent: "x", Token: "x", Started: time.Now(), Settings: struct{}{}}))
	return st
}

// write stores the rows and flushes the writer.
func (in crawlRows) write(t testing.TB, st *store.Store) {
	t.Helper()
	byFrom := map[string][]store.LinkRecord{}
	for _, l := range in.Links {
		byFrom[l.From] = append(byFrom[l.From], l)
	}
	for _, p := range in.Pages {
		q := *p
		q.Links = byFrom[p.URL]
		delete(byFrom, p.URL)
		if q.Source == "" {
			q.Source = "link"
		}
		st.Page(&q)
	}
	require.Empty(t, byFrom, "links from pages not in the rows")
	for _, sm := range in.Sitemaps {
		st.Sitemap(sm)
	}
	for _, su := range in.SitemapURLs {
		st.SitemapURL(su[0], su[1])
	}
	for _, r := range in.Requests {
		st.Request(r)
	}
	require.NoError(t, st.Flush())
}

// analyze writes the rows, runs the passes and returns the findings they wrote, in the order written.
func analyze(t testing.TB, in crawlRows) []store.FindingRecord {
	t.Helper()
	st := newCrawl(t)
	in.write(t, st)
	_, err := Run(t.Context(), st, in.Extra)
	require.NoError(t, err)
	return passFindings(t, st)
}

// passFindings reads the findings of the passes (page_check = 0) back, in the order written.
func passFindings(t testing.TB, st *store.Store) []store.FindingRecord {
	t.Helper()
	rows, err := st.Reader().QueryContext(t.Context(), `SELECT url, kind, detail FROM findings WHERE crawl_id = ? AND page_check = 0 ORDER BY id`, st.CrawlID)
	require.NoError(t, err)
	defer rows.Close()
	var out []store.FindingRecord
	for rows.Next() {
		var f store.FindingRecord
		require.NoError(t, rows.Scan(&f.URL, &f.Kind, &f.Detail))
		out = append(out, f)
	}
	require.NoError(t, rows.Err())
	return out
}
