package report

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/politecrawl/polite/examples/audit/internal/store"
)

var genNow = time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC)

// writeAll writes everything the report package writes of crawl a and b: the report of b, its CSV
// tables and JSON, and the comparison of a with b as text and HTML.
func writeAll(tb testing.TB, path string, a, b int64, out io.Writer) {
	tb.Helper()
	ctx := context.Background()
	db := openGen(tb, path)
	d, err := LoadReport(ctx, db, b, NeedAll)
	require.NoError(tb, err)
	require.NoError(tb, WriteHTML(out, d, genNow))
	for _, table := range []string{"pages", "links", "findings"} {
		require.NoError(tb, WriteCSV(ctx, out, db, b, table))
	}
	require.NoError(tb, WriteJSON(ctx, out, db, d))
	ca, err := LoadReport(ctx, db, a, NeedCrawl)
	require.NoError(tb, err)
	c, err := CompareCrawls(ctx, db, ca.Crawl, d.Crawl)
	require.NoError(tb, err)
	c.PrintText(out)
	require.NoError(tb, c.WriteHTML(out, genNow))
}

// A database written by the version before the checks issue (no link_score and the other new columns,
// links a table) is refused by the read-only opening with the command that converts it; converted, it
// gets its report, exports and comparison.
func TestDatabaseOfThePreviousSchema(t *testing.T) {
	path := genPath(t)
	newGenDB(t, path, oldSchema)
	a := genCrawl(t, path, genSite{N: 300})
	b := genCrawl(t, path, genSite{N: 320, Retitled: true})
	_, err := store.OpenReadDB(t.Context(), path)
	require.ErrorIs(t, err, store.ErrOldLayout)
	assert.Contains(t, err.Error(), "audit migrate -db "+path)
	st, err := store.OpenStore(t.Context(), path)
	require.NoError(t, err, "converted")
	require.NoError(t, st.Close())
	var out bytes.Buffer
	writeAll(t, path, a, b, &out)
	doc, err := html.Parse(strings.NewReader(reportOf(t, path, b)))
	require.NoError(t, err)
	assert.NotNil(t, byID(t, doc, "linkscore"))
	assert.NotEmpty(t, find(doc, func(n *html.Node) bool { return hasClass(n, "category") }), "findings by category")
	assert.Contains(t, out.String(), "Kinds: ")
}

// reportOf is the HTML report of crawl id.
func reportOf(tb testing.TB, path string, id int64) string {
	tb.Helper()
	db := openGen(tb, path)
	d, err := LoadReport(context.Background(), db, id, NeedAll)
	require.NoError(tb, err)
	var b strings.Builder
	require.NoError(tb, WriteHTML(&b, d, genNow))
	return b.String()
}

// The report groups the findings by category in findings.Categories order, each with its count per
// severity (equal to SQL's), a chart with a bar per kind, and a page list per kind capped at
// KindRowsMax with a note naming the SQL that has them all; the top pages by link score are the
// database's, in order.
func TestReportByCategory(t *testing.T) {
	path := genPath(t)
	newGenDB(t, path, "")
	id := genCrawl(t, path, genSite{N: 3000})
	doc, err := html.Parse(strings.NewReader(reportOf(t, path, id)))
	require.NoError(t, err)
	db := openGen(t, path)

	counts := map[string]map[string]int{}
	kindsOf := map[string]int{}
	rows, err := db.Query(`SELECT kind, COUNT(*) FROM findings WHERE crawl_id = ? GROUP BY kind`, id)
	require.NoError(t, err)
	kindN := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		require.NoError(t, rows.Scan(&k, &n))
		info := findings.InfoOf(k)
		if counts[info.Category] == nil {
			counts[info.Category] = map[string]int{}
		}
		counts[info.Category][info.Severity.String()] += n
		kindsOf[info.Category]++
		kindN[k] = n
	}
	require.NoError(t, rows.Close())
	require.Greater(t, len(kindN), 40, "findings of many kinds")

	var wantCats []string
	for _, c := range findings.Categories {
		if counts[c] != nil {
			wantCats = append(wantCats, c)
		}
	}
	secs := find(doc, func(n *html.Node) bool { return n.Data == "section" && hasClass(n, "category") })
	var gotCats []string
	for _, s := range secs {
		cat := attrOf(s, "data-category")
		gotCats = append(gotCats, cat)
		for _, sev := range []string{"error", "warning", "notice"} {
			badge := find(s, func(n *html.Node) bool { return attrOf(n, "data-severity") == sev })
			require.Len(t, badge, 1)
			assert.True(t, strings.HasPrefix(text(badge[0]), Thousands(counts[cat][sev])+" "+sev), "%s %s: %q", cat, sev, text(badge[0]))
		}
		bars := find(s, func(n *html.Node) bool { return n.Data == "g" && hasClass(n, "bar") })
		assert.Len(t, bars, kindsOf[cat], "%s: a bar per kind", cat)
		for _, g := range bars {
			assert.Equal(t, fmt.Sprint(kindN[attrOf(g, "data-label")]), attrOf(g, "data-value"))
		}
	}
	assert.Equal(t, wantCats, gotCats, "categories in findings.Categories order")

	for k, n := range kindN {
		box := byID(t, doc, "kind-"+k+"-urls")
		trs := find(box, func(x *html.Node) bool {
			return x.Data == "tr" && len(find(x, func(y *html.Node) bool { return y.Data == "td" })) > 0
		})
		assert.Len(t, trs, min(n, KindRowsMax), k)
		if n > KindRowsMax {
			note := text(box)
			assert.Contains(t, note, fmt.Sprintf("and %s more rows are not in this file", Thousands(n-KindRowsMax)))
			assert.Contains(t, note, fmt.Sprintf("SELECT url, detail FROM findings WHERE crawl_id = %d AND kind = '%s'", id, k))
		}
	}

	var want []string
	rows, err = db.Query(`SELECT url, link_score FROM pages WHERE crawl_id = ? ORDER BY link_score DESC, url LIMIT 50`, id)
	require.NoError(t, err)
	for rows.Next() {
		var u string
		var s int
		require.NoError(t, rows.Scan(&u, &s))
		want = append(want, fmt.Sprintf("%s %d", strings.TrimPrefix(u, "http://gen.test"), s))
	}
	require.NoError(t, rows.Close())
	var got []string
	for _, tr := range find(byID(t, doc, "linkscore-table"), func(n *html.Node) bool { return n.Data == "tr" }) {
		tds := find(tr, func(n *html.Node) bool { return n.Data == "td" })
		if len(tds) > 0 {
			got = append(got, text(tds[0])+" "+text(tds[1]))
		}
	}
	assert.Equal(t, want, got)
}

// Compare says which kinds appeared, disappeared or changed count between two crawls, with their
// category and severity, and which findings appeared and went, in the text and the HTML.
func TestCompareKinds(t *testing.T) {
	ks := allKinds()
	gone, kept, grown, added := ks[0], ks[1], ks[2], ks[3]
	path := genPath(t)
	newGenDB(t, path, "")
	a := genCrawl(t, path, genSite{N: 200, Kinds: []string{gone, kept, grown}, Density: 4})
	b := genCrawl(t, path, genSite{N: 200, Kinds: []string{added, kept, grown}, Density: 4}) // kept and grown on the same pages
	db := openGen(t, path)
	// One more finding of grown in b, on a page that had none.
	_, err := db.Exec(`INSERT INTO findings (crawl_id, url, kind, detail) VALUES (?, 'http://gen.test/p/1', ?, 'extra')`, b, grown)
	require.NoError(t, err)

	ctx := t.Context()
	da, err := LoadReport(ctx, db, a, NeedCrawl)
	require.NoError(t, err)
	dbb, err := LoadReport(ctx, db, b, NeedCrawl)
	require.NoError(t, err)
	c, err := CompareCrawls(ctx, db, da.Crawl, dbb.Crawl)
	require.NoError(t, err)
	count := func(id int64, k string) int {
		var n int
		require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM findings WHERE crawl_id = ? AND kind = ?`, id, k).Scan(&n))
		return n
	}
	byKind := map[string]KindChange{}
	for _, k := range c.KindChanges() {
		byKind[k.Kind] = k
	}
	info := findings.InfoOf
	assert.Equal(t, KindChange{Kind: gone, Category: info(gone).Category, Severity: info(gone).Severity.String(), Before: count(a, gone), Fixed: count(a, gone)}, byKind[gone])
	assert.Equal(t, "disappeared", byKind[gone].Change())
	assert.Equal(t, KindChange{Kind: added, Category: info(added).Category, Severity: info(added).Severity.String(), After: count(b, added), Appeared: count(b, added)}, byKind[added])
	assert.Equal(t, "appeared", byKind[added].Change())
	assert.Equal(t, KindChange{Kind: grown, Category: info(grown).Category, Severity: info(grown).Severity.String(), Before: count(a, grown), After: count(a, grown) + 1, Appeared: 1}, byKind[grown])
	assert.Equal(t, "changed", byKind[grown].Change())
	assert.NotContains(t, byKind, kept, "a kind with the same findings is not a change")
	assert.Len(t, c.KindChanges(), 3)
	assert.Equal(t, count(a, gone)+count(b, added)+1, c.NAppeared+c.NFixed)

	var out bytes.Buffer
	c.PrintText(&out)
	assert.Contains(t, out.String(), "Kinds: 1 appeared, 1 disappeared, 1 changed count.")
	for _, k := range []string{gone, added, grown} {
		kc := byKind[k]
		assert.Regexp(t, fmt.Sprintf(`(?m)^%s +%s +%s +%d +%d +%s$`, k, kc.Category, kc.Severity, kc.Before, kc.After, kc.Change()), out.String())
	}
	out.Reset()
	require.NoError(t, c.WriteHTML(&out, genNow))
	doc, err := html.Parse(&out)
	require.NoError(t, err)
	var got []string
	for _, tr := range find(byID(t, doc, "kinds-table"), func(n *html.Node) bool { return n.Data == "tr" }) {
		if tds := find(tr, func(n *html.Node) bool { return n.Data == "td" }); len(tds) > 0 {
			got = append(got, text(tds[1])+" "+text(tds[5]))
		}
	}
	assert.ElementsMatch(t, []string{gone + " disappeared", added + " appeared", grown + " changed"}, got)
}

// peakHeap runs fn and returns the highest live heap (as of the last collection) meanwhile, sampled
// every millisecond, with the collector running often (GOGC 20) so that the live heap is measured often.
// The heap's objects, garbage included, would measure the collector's pacing rather than what fn keeps.
func peakHeap(fn func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var peak uint64
	var mu sync.Mutex
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			mu.Lock()
			peak = max(peak, sample[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	<-done
	return peak
}

// reportGrowthMax is the most the peak live heap of the report, the exports and compare may grow per
// page of the crawl: nothing of theirs is kept per page, so this is only the noise of sampling the live
// heap (measured: −15 to 213 B a page with one run a size, −21 and −20 B with the least of three). Holding
// 300 B a page during the run measures 379 B a page and fails it; keeping a copy of every page row, as the
// report did before (about 3.9 KB a page), fails it by far.
const reportGrowthMax = 120 // bytes per page

// The report, the exports and compare stream: their peak live heap at 10,000 pages is about the one at
// 2,000 (the lists are capped low here, so that both sizes fill them and only growth with the pages could
// show). It compares growth, not time. The race detector changes what is allocated and makes SQLite
// many times slower, so this runs without it (.ci/run's memory step).
func TestMemoryFlatInPages(t *testing.T) {
	if testing.Short() {
		t.Skip("generates two databases of 2,000 and 10,000 pages")
	}
	if raceEnabled {
		t.Skip("a heap measure: run it without -race (go test -run TestMemoryFlatInPages ./examples/audit/internal/report)")
	}
	defer func(k, r, c int) { KindRowsMax, TableRowsMax, CompareRowsMax = k, r, c }(KindRowsMax, TableRowsMax, CompareRowsMax)
	KindRowsMax, TableRowsMax, CompareRowsMax = 5, 100, 100
	const small, large = 2_000, 10_000
	peak := map[int]uint64{}
	for _, n := range []int{small, large} {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("gen-%d.db", n))
		newGenDB(t, path, "")
		a := genCrawl(t, path, genSite{N: n})
		b := genCrawl(t, path, genSite{First: n / 20, N: n, Retitled: true})
		writeAll(t, path, a, b, io.Discard) // warm: templates, driver, caches
		// The least of three runs: a sample of the live heap can catch rows in flight, never less than
		// what is kept, so the least is the closest to what the outputs hold.
		peak[n] = peakHeap(func() { writeAll(t, path, a, b, io.Discard) })
		for range 2 {
			peak[n] = min(peak[n], peakHeap(func() { writeAll(t, path, a, b, io.Discard) }))
		}
		t.Logf("%d pages: peak live heap %.2f MB", n, float64(peak[n])/1e6)
	}
	perPage := float64(int64(peak[large])-int64(peak[small])) / (large - small)
	t.Logf("growth: %.0f B a page", perPage)
	assert.Less(t, perPage, float64(reportGrowthMax), "peak heap must not grow with the pages: %v", peak)
}

func find(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, c string) bool { return contains(strings.Fields(attrOf(n, "class")), c) }

func byID(t *testing.T, doc *html.Node, id string) *html.Node {
	t.Helper()
	ns := find(doc, func(n *html.Node) bool { return attrOf(n, "id") == id })
	require.Len(t, ns, 1, id)
	return ns[0]
}

// text is what a person reads in n: its text with white space runs made one space.
func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data + " ")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}
