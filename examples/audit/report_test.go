package main

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/report"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

// The report written at the end of a real crawl of a loopback site: every section and chart is there
// with the figures of the site (see reportShop), and those figures agree with the database.
func TestReportAfterCrawl(t *testing.T) {
	_, e := reportShop(t)
	r := audit(t, e, "-gap", "0", "-max-pages", "15", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	path := reportPath(t, r)
	assert.Equal(t, filepath.Join(filepath.Dir(r.dbPath), "audit-report-1.html"), path, "next to the database, named after the crawl")
	doc := parseHTMLFile(t, path)

	t.Run("header", func(t *testing.T) {
		assert.Equal(t, "Crawl Cove audit: shop.test, crawl 1", textOf(byTag(doc, "title")[0]))
		assert.Equal(t, "Crawl Cove audit: shop.test", textOf(byTag(doc, "h1")[0]))
		assert.Equal(t, "finished", textOf(byID(t, doc, "outcome")))
		for _, id := range []string{"summary", "charts", "findings", "inlinks", "orphans", "redirects", "blocked", "politeness"} {
			byID(t, doc, id)
			assert.Len(t, findAll(doc, func(n *html.Node) bool { return n.Data == "a" && attrOr(n, "href") == "#"+id }), 1, "the contents link to #%s", id)
		}
	})

	t.Run("tiles", func(t *testing.T) {
		tiles := map[string]string{}
		for _, n := range findAll(doc, func(n *html.Node) bool { return hasClass(n, "tile") }) {
			tiles[attrOr(n, "data-tile")] = textOf(findAll(n, func(x *html.Node) bool { return hasClass(x, "n") })[0])
		}
		sev := func(s string) string {
			return fmt.Sprint(sumOver(t, r, s))
		}
		assert.Equal(t, map[string]string{
			"URLs in the crawl": "17", "fetched": "15", "blocked by robots.txt": "2", report.ErrorsCard: "4",
			"errors": sev("error"), "warnings": sev("warning"), "notices": sev("notice"),
			"HTTP requests": fmt.Sprint(r.int(t, `SELECT requests FROM crawls`)),
		}, tiles)
	})

	t.Run("charts", func(t *testing.T) {
		status, order := bars(t, doc, "status")
		assert.Equal(t, []string{"2xx", "3xx", "4xx", "5xx", "no response", "blocked by robots.txt"}, order)
		assert.Equal(t, map[string]int{"2xx": 9, "3xx": 2, "4xx": 2, "5xx": 1, "no response": 1, "blocked by robots.txt": 2}, status)

		depth, order := bars(t, doc, "depth")
		assert.Equal(t, []string{"0", "1", "2"}, order)
		assert.Equal(t, map[string]int{"0": 1, "1": 15, "2": 1}, depth)

		idx, _ := bars(t, doc, "indexability")
		assert.Equal(t, map[string]int{"indexable": 7, "noindex": 1, "canonicalised elsewhere": 1, "non-200": 6, "blocked by robots.txt": 2}, idx)

		sm, order := bars(t, doc, "sitemap")
		assert.Equal(t, []string{"listed", "crawled", "blocked", "broken", "not crawled"}, order)
		assert.Equal(t, map[string]int{"listed": 6, "crawled": 3, "blocked": 1, "broken": 1, "not crawled": 1}, sm)

		// Response times as stored: the chart's buckets are the database's rows, counted by SQL here.
		resp, order := bars(t, doc, "response")
		assert.Equal(t, []string{"< 100 ms", "100–250 ms", "250–500 ms", "0.5–1 s", "1–2 s", "2–5 s", "≥ 5 s"}, order)
		want := map[string]int{}
		for _, b := range r.strs(t, `SELECT CASE WHEN response_ms < 100 THEN '< 100 ms' WHEN response_ms < 250 THEN '100–250 ms'
			WHEN response_ms < 500 THEN '250–500 ms' WHEN response_ms < 1000 THEN '0.5–1 s' WHEN response_ms < 2000 THEN '1–2 s'
			WHEN response_ms < 5000 THEN '2–5 s' ELSE '≥ 5 s' END FROM pages WHERE status IS NOT NULL AND response_ms IS NOT NULL`) {
			want[b]++
		}
		for _, l := range order {
			assert.Equal(t, want[l], resp[l], "bucket %s", l)
		}
		total := 0
		for _, v := range resp {
			total += v
		}
		assert.Equal(t, 14, total, "every page that answered (17 minus 2 blocked minus /reset)")
		assert.Less(t, resp["< 100 ms"], 14, "/slow answers after 120 ms")

		kinds, order := bars(t, doc, "findings")
		want = map[string]int{}
		for _, k := range r.strs(t, `SELECT kind FROM findings`) {
			want[k]++
		}
		assert.Equal(t, want, kinds)
		assert.Equal(t, 3, kinds[findings.KindBrokenLink], "/broken, /err, /reset")
		assert.Equal(t, 1, kinds[findings.KindBrokenPage], "/gone-listed")
		ranks := make([]int, len(order))
		for i, k := range order {
			ranks[i] = findings.KindRank(k)
		}
		assert.True(t, sort.IntsAreSorted(ranks), "errors first, then warnings, then notices: %v", order)
		fig := byID(t, doc, "chart-findings")
		for _, g := range findAll(fig, func(n *html.Node) bool { return hasClass(n, "bar") }) {
			fill := attrOr(byTag(g, "rect")[0], "fill")
			assert.Equal(t, report.SeverityColor(findings.InfoOf(attrOr(g, "data-label")).Severity.String()), fill, "colour of %s", attrOr(g, "data-label"))
		}
	})

	t.Run("findings", func(t *testing.T) {
		overview := tableRowsOf(t, doc, "findings-overview")
		counts := map[string]int{}
		for _, k := range r.strs(t, `SELECT kind FROM findings`) {
			counts[k]++
		}
		require.Len(t, overview, len(counts), "one row per kind found")
		for _, row := range overview {
			info := findings.InfoOf(row[2])
			assert.Equal(t, []string{info.Severity.String(), info.Title, info.Kind, fmt.Sprint(counts[info.Kind]), info.Advice}, row)
			sec := byID(t, doc, "kind-"+info.Kind)
			assert.Equal(t, "details", sec.Data)
			assert.Equal(t, fmt.Sprint(counts[info.Kind]), attrOr(sec, "data-count"))
			_, open := attr(sec, "open")
			assert.Equal(t, info.Severity == findings.SevError, open, "errors are open, the rest collapsed: %s", info.Kind)
			rows := tableRowsOf(t, doc, "kind-"+info.Kind+"-urls")
			assert.Len(t, rows, counts[info.Kind], info.Kind)
		}
		broken := map[string][]string{}
		for _, row := range tableRowsOf(t, doc, "kind-broken_link-urls") {
			broken[row[0]] = row
		}
		assert.Equal(t, []string{"/broken", "HTTP 404; linked from 2 pages: /, /b", "2 pages: /, /b", scoreOf(t, r, "/broken")}, broken["/broken"])
		assert.Equal(t, "1 page: /", broken["/err"][2])
		assert.Contains(t, broken["/reset"][1], "EOF")
	})

	t.Run("top pages by inlinks", func(t *testing.T) {
		rows := tableRowsOf(t, doc, "inlinks-table")
		want := r.strs(t, `SELECT REPLACE(to_url, 'http://shop.test', '') || ' ' || COUNT(DISTINCT from_url) FROM links
			WHERE external = 0 AND from_url <> to_url GROUP BY to_url ORDER BY COUNT(DISTINCT from_url) DESC, to_url`)
		var got []string
		for _, row := range rows {
			got = append(got, row[0]+" "+row[1])
		}
		assert.Equal(t, want, got)
		// /a: linked from / and /b. The start page: linked from /a only; /moved and /chain redirect to /a
		// and contain no link themselves (issue 18: a redirect's links are its target's, once).
		assert.Equal(t, []string{"/a", "2", "200", "A", "1", scoreOf(t, r, "/a")}, rows[0])
		var home []string
		for _, row := range rows {
			if row[0] == "/" {
				home = row
			}
		}
		assert.Equal(t, []string{"/", "1", "200", "Home", "0", scoreOf(t, r, "/")}, home)
	})

	t.Run("orphans", func(t *testing.T) {
		assert.Equal(t, [][]string{
			{"/gone-listed", "404", "/sitemap.xml"},
			{"/orphan", "200", "/sitemap.xml"},
			{"/private/listed", "blocked", "/sitemap.xml"},
			{"/extra", "not crawled", "/sitemap.xml"},
		}, tableRowsOf(t, doc, "orphans-table"), "listed, not linked, in listing order; the start page is not an orphan")
	})

	t.Run("redirect chains", func(t *testing.T) {
		assert.Equal(t, [][]string{
			{"/chain", "2", "/chain -301-> /moved -301-> /a (200)", "200 /a"},
			{"/moved", "1", "/moved -301-> /a (200)", "200 /a"},
		}, tableRowsOf(t, doc, "redirects-table"))
	})

	t.Run("blocked URLs", func(t *testing.T) {
		assert.Equal(t, [][]string{
			{"/private/listed", `disallowed by "Disallow: /private/" (line 2, user-agent *)`, "sitemap"},
			{"/private/x", `disallowed by "Disallow: /private/" (line 2, user-agent *)`, "/"},
		}, tableRowsOf(t, doc, "blocked-table"))
	})

	t.Run("politeness record", func(t *testing.T) {
		rec := map[string]string{}
		dl := byTag(byID(t, doc, "politeness"), "dl")[0]
		for _, dt := range byTag(dl, "dt") {
			rec[textOf(dt)] = textOf(dt.NextSibling)
		}
		assert.Equal(t, "CrawlCove-Crawler", rec["User-Agent sent"])
		assert.Equal(t, "4", rec["In flight at most"])
		assert.Equal(t, "0s", rec["Gap between request starts"])
		assert.Equal(t, "15s", rec["Timeout per request"])
		assert.Equal(t, "no: no 429 was answered, the run kept its limits", rec["Slowed down by a 429"])
		assert.True(t, strings.HasPrefix(rec["Requests"], fmt.Sprint(r.int(t, `SELECT requests FROM crawls`))+" in all"), rec["Requests"])
		assert.Equal(t, "2 (never requested)", rec["URLs kept out by robots.txt"])
	})

	t.Run("self-contained", func(t *testing.T) {
		assertSelfContained(t, doc)
	})
}

// scoreOf is the link score cell of a path of shop.test as the database has it: a dash when the pass
// has written none.
func scoreOf(t *testing.T, r *result, path string) string {
	t.Helper()
	s := r.strs(t, `SELECT COALESCE(CAST(link_score AS TEXT), '–') FROM pages WHERE url = 'http://shop.test`+path+`'`)
	require.Len(t, s, 1, path)
	return s[0]
}

// sumOver counts the findings of a severity in the latest crawl.
func sumOver(t *testing.T, r *result, sev string) int {
	n := 0
	for _, k := range r.strs(t, `SELECT kind FROM findings`) {
		if findings.InfoOf(k).Severity.String() == sev {
			n++
		}
	}
	return n
}

// assertSelfContained checks that nothing in the document can fetch: no element with src, no
// stylesheet or icon link, no CSS url(), and a policy forbidding every fetch that allows exactly the
// one inline script by its hash.
func assertSelfContained(t *testing.T, doc *html.Node) {
	t.Helper()
	assert.Empty(t, findAll(doc, func(n *html.Node) bool { _, ok := attr(n, "src"); return ok }), "no src attribute anywhere")
	assert.Empty(t, findAll(doc, func(n *html.Node) bool { return n.Data == "link" || n.Data == "img" || n.Data == "iframe" }))
	for _, st := range byTag(doc, "style") {
		assert.NotContains(t, textOf(st), "url(")
		assert.NotContains(t, textOf(st), "@import")
	}
	for _, a := range findAll(doc, func(n *html.Node) bool { _, ok := attr(n, "href"); return ok }) {
		assert.Equal(t, "a", a.Data, "only links carry href")
	}
	scripts := byTag(doc, "script")
	require.Len(t, scripts, 1)
	sum := sha256.Sum256([]byte(scripts[0].FirstChild.Data))
	csp := findAll(doc, func(n *html.Node) bool { return attrOr(n, "http-equiv") == "Content-Security-Policy" })
	require.Len(t, csp, 1)
	policy := attrOr(csp[0], "content")
	assert.Contains(t, policy, "default-src 'none'")
	assert.Contains(t, policy, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'", "the script the file carries is the one the policy allows")
	assert.NotContains(t, policy, "http")
}

// A page title that is markup shows as text: no element, no attribute, in the report of the crawl.
func TestReportEscapesCrawledText(t *testing.T) {
	_, e := reportShop(t)
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	require.Equal(t, []string{xssTitle}, r.strs(t, `SELECT title FROM pages WHERE url = 'http://shop.test/xss'`))
	raw, err := os.ReadFile(reportPath(t, r))
	require.NoError(t, err)
	assert.NotContains(t, string(raw), xssTitle, "never written raw")
	doc, err := html.Parse(bytes.NewReader(raw))
	require.NoError(t, err)
	assert.Empty(t, byTag(doc, "img"), "the title did not become an element")
	assert.Empty(t, findAll(doc, func(n *html.Node) bool { _, ok := attr(n, "onerror"); return ok }))
	rows := tableRowsOf(t, doc, "inlinks-table")
	var title string
	for _, row := range rows {
		if row[0] == "/xss" {
			title = row[3]
		}
	}
	assert.Equal(t, xssTitle, title, "it shows as the text it is")
}

// The politeness record says when a 429 slowed the run and by which URL.
func TestReportPolitenessRecordsSlowdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, e := memNet(t)
		s := n.Add("shop.test")
		s.Robots("")
		flatSite(s, 3, 0)
		s.Route("/p1", responseStatus(429), responseStatus(429), responseStatus(429))
		r := audit(t, e, "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		doc := parseHTMLFile(t, reportPath(t, r))
		rec := map[string]string{}
		for _, dt := range byTag(byID(t, doc, "politeness"), "dt") {
			rec[textOf(dt)] = textOf(dt.NextSibling)
		}
		slowed := r.strs(t, `SELECT slowed_at FROM crawls`)[0]
		at, err := time.Parse(time.RFC3339Nano, slowed)
		require.NoError(t, err)
		started, err := time.Parse(time.RFC3339Nano, r.strs(t, `SELECT started_at FROM crawls`)[0])
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("yes: http://shop.test/p1 answered 429 at %s, %s into the crawl; the rest of the run went one request at a time with a 3 s gap",
			at.UTC().Format("15:04:05 UTC"), at.Sub(started).Round(time.Millisecond)), rec["Slowed down by a 429"])
		kinds, _ := bars(t, doc, "findings")
		assert.Equal(t, 1, kinds[findings.KindSlowedDown])
	})
}

// -no-report: the crawl writes no report and says nothing about one.
func TestNoReportFlag(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", page("Home"))
	r := audit(t, e, "-gap", "0", "-no-report", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.NotContains(t, r.stdout, "Report:")
	assert.NoFileExists(t, filepath.Join(filepath.Dir(r.dbPath), "audit-report-1.html"))

	// Off limits at the start: nothing was crawled, so there is no report either.
	s.Status("/robots.txt", 503)
	r = audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOffLimits, r.code, r)
	assert.NotContains(t, r.stdout, "Report:")
	assert.NoFileExists(t, filepath.Join(filepath.Dir(r.dbPath), "audit-report-1.html"))
}

// An interrupted crawl still gets its report, of what was crawled.
func TestReportAfterInterrupt(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	ctx, cancel := contextWithCancel(t)
	flatSite(s, 30, 0)
	e.Transport = &hookTransport{rt: e.Transport, path: "/p3", fn: cancel}
	r := auditCtx(t, ctx, filepath.Join(t.TempDir(), "a.db"), e, "-gap", "0", "-concurrency", "1", "http://shop.test/")
	require.Equal(t, crawl.ExitFailure, r.code, r)
	doc := parseHTMLFile(t, reportPath(t, r))
	assert.Equal(t, "interrupted", textOf(byID(t, doc, "outcome")))
	assert.Contains(t, textOf(byID(t, doc, "message")), "interrupted")
	status, _ := bars(t, doc, "status")
	assert.Equal(t, r.int(t, `SELECT COUNT(*) FROM pages`), status["2xx"])
}

// `audit report` writes the same document from the database alone; it picks crawls by id, writes where
// -o says, and refuses what it cannot do with exit 2 and no file.
func TestReportCommand(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", page("Home", "/a"))
	s.HTML("/a", page("A"))
	db := filepath.Join(t.TempDir(), "shop.db")
	e.Now = func() time.Time { return time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC) }
	r1 := auditDB(t, db, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r1.code, r1)
	s.HTML("/a", page("A changed"))
	r2 := auditDB(t, db, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r2.code, r2)
	fromCrawl, err := os.ReadFile(reportPath(t, r2))
	require.NoError(t, err)

	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := runEnv(t.Context(), append([]string{"report"}, args...), &out, &errb, crawl.Env{Now: e.Now})
		return code, out.String(), errb.String()
	}
	out := filepath.Join(t.TempDir(), "again.html")
	code, stdout, stderr := run("-db", db, "-o", out)
	require.Equal(t, crawl.ExitOK, code, stderr)
	assert.Equal(t, "Report of crawl 2 written to "+out+"\n", stdout)
	again, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, string(fromCrawl), string(again), "the crawl's report is the report command's, byte for byte")

	code, stdout, _ = run("-db", db, "-crawl", "1", "-o", "-")
	require.Equal(t, crawl.ExitOK, code)
	doc, err := html.Parse(strings.NewReader(stdout))
	require.NoError(t, err)
	assert.Contains(t, textOf(byTag(doc, "title")[0]), "crawl 1")
	rows := tableRowsOf(t, doc, "inlinks-table")
	assert.Equal(t, "A", rows[0][3], "crawl 1's title")

	code, stdout, stderr = run("-db", db)
	require.Equal(t, crawl.ExitOK, code, stderr)
	assert.Equal(t, "Report of crawl 2 written to "+filepath.Join(filepath.Dir(db), "shop-report-2.html")+"\n", stdout)

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-db", db, "-crawl", "9"}, crawl.ExitUsage, "crawl 9 is not in the database; the crawls it holds:\n  1  2026-05-04 03:02  finished  http://shop.test/\n  2  2026-05-04 03:02  finished  http://shop.test/\n"},
		{[]string{"-db", db, "-crawl", "-1"}, crawl.ExitUsage, "crawl ids start at 1"},
		{[]string{"-db", db, "-format", "pdf"}, crawl.ExitUsage, `-format "pdf": must be html, csv or json`},
		{[]string{"-db", db, "-format", "csv", "-o", "-"}, crawl.ExitUsage, "csv writes a folder"},
		{[]string{"-db", db, "extra"}, crawl.ExitUsage, `unexpected argument "extra"`},
		{[]string{"-db", filepath.Join(t.TempDir(), "missing.db")}, crawl.ExitUsage, "no such file"},
		{[]string{"-db", db, "-o", filepath.Join(t.TempDir(), "no", "such", "dir", "r.html")}, crawl.ExitFailure, "no such file or directory"},
	} {
		code, stdout, stderr := run(tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, stderr)
		assert.Contains(t, stderr, tc.want, tc.args)
		assert.Equal(t, 1, strings.Count(stderr, "audit report: "), "said once: %s", stderr)
		assert.Empty(t, stdout)
	}
	assert.NoFileExists(t, filepath.Join(t.TempDir(), "missing.db"), "a mistyped -db creates nothing")

	code, _, stderr = run("-h")
	assert.Equal(t, crawl.ExitOK, code)
	for _, f := range []string{"-db", "-crawl", "-format", "-o", "Exit status"} {
		assert.Contains(t, stderr, f)
	}

	empty := filepath.Join(t.TempDir(), "empty.db")
	st, err := store.OpenStore(t.Context(), empty)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	code, _, stderr = run("-db", empty)
	assert.Equal(t, crawl.ExitUsage, code)
	assert.Contains(t, stderr, "the database holds no crawl yet")

	notAudit := filepath.Join(t.TempDir(), "other.db")
	odb, err := sql.Open("sqlite", notAudit)
	require.NoError(t, err)
	_, err = odb.Exec(`CREATE TABLE t (x)`)
	require.NoError(t, err)
	odb.Close()
	code, _, stderr = run("-db", notAudit)
	assert.Equal(t, crawl.ExitUsage, code)
	assert.Contains(t, stderr, "not an audit database")
}

// Long lists are paged: the first page of rows is in the document, the others in <template> elements
// the browser keeps out of the DOM until the pager shows them, and past tableRowsMax rows the file says
// how many more the CSV export has.
func TestReportPagesLongTables(t *testing.T) {
	defer func(n, k int) { report.TableRowsMax, report.KindRowsMax = n, k }(report.TableRowsMax, report.KindRowsMax)
	// Three pages of rows (the first and two templates), and the shared 300-page crawl's ~195 pages
	// without a description more than that.
	report.TableRowsMax = 3 * report.TablePageSize
	report.KindRowsMax = report.TableRowsMax // a kind's list pages as the other tables do
	db := filepath.Join(t.TempDir(), "big.db")
	generatedCrawlCopy(t, db, 300)
	var out, errb bytes.Buffer
	path := filepath.Join(t.TempDir(), "r.html")
	require.Equal(t, crawl.ExitOK, runEnv(t.Context(), []string{"report", "-db", db, "-o", path}, &out, &errb, crawl.Env{}), errb.String())
	doc := parseHTMLFile(t, path)
	r := &result{}
	var err error
	r.db, err = sqlOpen(db)
	require.NoError(t, err)
	defer r.db.Close()
	n := r.int(t, `SELECT COUNT(*) FROM findings WHERE kind = 'description_missing'`)
	require.Greater(t, n, report.TableRowsMax, "the generated crawl has more rows of a kind than a table carries")

	box := byID(t, doc, "kind-description_missing-urls")
	assert.Equal(t, fmt.Sprint(report.TablePageSize), attrOr(box, "data-size"))
	assert.Equal(t, fmt.Sprint(report.TableRowsMax), attrOr(box, "data-rows"))
	tbody := byTag(box, "tbody")
	require.Len(t, tbody, 1)
	assert.Len(t, byTag(tbody[0], "tr"), report.TablePageSize, "one page of rows in the document")
	tpls := byTag(box, "template")
	assert.Len(t, tpls, report.TableRowsMax/report.TablePageSize-1)
	for _, tp := range tpls {
		assert.Len(t, byTag(tp, "tr"), report.TablePageSize)
	}
	assert.Len(t, tableRowsOf(t, doc, "kind-description_missing-urls"), report.TableRowsMax)
	assert.Contains(t, textOf(box), fmt.Sprintf("%s more rows are not in this file", report.Thousands(n-report.TableRowsMax)))
	pager := findAll(box, func(n *html.Node) bool { return hasClass(n, "pager") })
	require.Len(t, pager, 1)
	_, hidden := attr(pager[0], "hidden")
	assert.True(t, hidden, "shown by the script; without it the noscript note says what is missing")

	// No table puts more than one page of rows into the document.
	for _, tb := range byTag(doc, "tbody") {
		assert.LessOrEqual(t, len(byTag(tb, "tr")), report.TablePageSize)
	}
}

// However many findings a crawl has, the file stays small enough to open: the rows of all its tables
// together stay within tableBytes (one row past it at most), and the tables left short say so.
func TestReportSizeIsBounded(t *testing.T) {
	defer func(k int) { report.KindRowsMax = k }(report.KindRowsMax)
	report.KindRowsMax = report.TableRowsMax // the byte budget, not the per-kind cap, bounds the file here
	db := filepath.Join(t.TempDir(), "big.db")
	generatedCrawlCopy(t, db, 300)
	size := func(budget int) (int, *html.Node) {
		defer func(n int) { report.TableBytes = n }(report.TableBytes)
		report.TableBytes = budget
		path := filepath.Join(t.TempDir(), "r.html")
		var out, errb bytes.Buffer
		require.Equal(t, crawl.ExitOK, runEnv(t.Context(), []string{"report", "-db", db, "-o", path}, &out, &errb, crawl.Env{}), errb.String())
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		doc, err := html.Parse(bytes.NewReader(raw))
		require.NoError(t, err)
		return len(raw), doc
	}
	full, _ := size(report.TableBytes)
	empty, _ := size(0)
	const budget = 30_000
	bounded, doc := size(budget)
	require.Greater(t, full-empty, 3*budget, "the crawl's rows need more than the budget")
	assert.LessOrEqual(t, bounded-empty, budget+2_000, "table rows within the budget (plus at most one row)")
	assert.Greater(t, bounded-empty, budget/2, "and the budget is used")
	notes := findAll(doc, func(n *html.Node) bool {
		return hasClass(n, "note") && strings.Contains(textOf(n), "more rows are not in this file")
	})
	assert.NotEmpty(t, notes)
	assert.Contains(t, textOf(byID(t, doc, "redirects-table")), "more rows are not in this file", "the last tables got nothing and say so")
}
