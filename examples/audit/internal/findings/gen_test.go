package findings

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/politecrawl/polite/examples/audit/internal/neardup"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/stretchr/testify/require"
)

// genShop writes a generated shop of n pages with perPage internal links each straight into the crawl's
// tables (the store's writer would take minutes at 100,000 pages × 60 links): every page 200 with a
// title, a fingerprint and a text hash; one page in 100 shares its title with the next and is a
// near-copy of it; one in 50 redirects to the next page; one link in 17 is nofollow. It uses the logical
// tables of store.Schema only.
func genShop(tb testing.TB, st *store.Store, n, perPage int) {
	tb.Helper()
	ctx := tb.Context()
	db := st.Reader()
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(tb, err)
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO pages (crawl_id, url, final_url, status, redirects, redirect_count, depth, source,
		content_type, title, title_count, meta_description, description_count, canonical, meta_robots, h1, h1_count, word_count,
		links_internal, text_hash, fingerprint) VALUES (?,?,?,?,?,?,?,?,'text/html',?,1,?,1,'','',?,1,300,?,?,?)`)
	require.NoError(tb, err)
	url := func(i int) string { return fmt.Sprintf("https://shop.test/p/%07d", i) }
	rng := rand.New(rand.NewPCG(1, 2))
	var fp neardup.Fingerprint
	blob := make([]byte, 2*neardup.Hashes)
	for i := range n {
		title, final, status, redirects, hops := fmt.Sprintf("Product %d", i), url(i), 200, any(nil), 0
		if i%100 == 1 {
			title = fmt.Sprintf("Product %d", i-1) // a duplicate title pair
		} else {
			for k := range fp {
				fp[k] = uint16(rng.Uint32())
			}
		}
		if i%100 == 1 {
			fp[i%neardup.Hashes]++ // a near-copy of page i-1
		}
		if i%50 == 49 && i+1 < n {
			final, hops = url(i+1), 1
			redirects = fmt.Sprintf(`[{"url":%q,"status":301,"location":%q}]`, url(i), url(i+1))
		}
		for k, v := range fp {
			binary.LittleEndian.PutUint16(blob[2*k:], v)
		}
		depth := 1 + i%6
		if i == 0 {
			depth = 0
		}
		_, err := ins.ExecContext(ctx, st.CrawlID, url(i), final, status, redirects, hops, depth, "link", title,
			"About "+title, title, perPage, fmt.Sprintf("%064x", i), blob)
		require.NoError(tb, err)
	}
	_, err = tx.ExecContext(ctx, `WITH RECURSIVE i(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM i WHERE i < ?2 - 1),
		j(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM j WHERE j < ?3 - 1)
		INSERT INTO links (crawl_id, from_url, to_url, external, nofollow, anchor, tag)
		SELECT ?1, printf('https://shop.test/p/%07d', i), printf('https://shop.test/p/%07d', CASE WHEN j < 20 THEN j ELSE (i * 7 + j * 13 + 1) % ?2 END),
			0, j % 17 = 16, 'Related product', 'a' FROM i, j`, st.CrawlID, n, perPage)
	require.NoError(tb, err)
	require.NoError(tb, tx.Commit())
	require.NoError(tb, st.Flush()) // as a crawl's end does: the writer stops and builds link_rows_to
}
