package main

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/report"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

// The audit items of issue 18, each tested as the program (and, where the defect was in the shipped
// binary only, as the binary).

// Links belong to the page that contains them: with /redir 301 -> /a and /a linking to /missing, the
// link to /missing is /a's, never /redir's, and it is recorded once however many URLs lead to /a.
func TestRedirectLinksBelongToTheFinalURL(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", page("Home", "/redir", "/redir-chain", "/a"))
	s.Redirect("/redir", "/a", 301)
	s.Redirect("/redir-chain", "/redir", 302)
	s.HTML("/a", page("A", "/missing"))
	r := audit(t, e, "-gap", "0", "-concurrency", "1", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)

	assert.Equal(t, []string{"http://shop.test/a"}, r.strs(t, `SELECT from_url FROM links WHERE to_url = 'http://shop.test/missing'`),
		"the link is /a's, recorded once")
	assert.Zero(t, r.int(t, `SELECT COUNT(*) FROM links WHERE from_url IN ('http://shop.test/redir', 'http://shop.test/redir-chain')`),
		"a redirect contains no link")
	assert.Equal(t, []string{"HTTP 404; linked from 1 page: http://shop.test/a"},
		r.strs(t, `SELECT detail FROM findings WHERE kind = 'broken_link' AND url = 'http://shop.test/missing'`))
	assert.Equal(t, []string{"http://shop.test/a"}, r.strs(t, `SELECT found_on FROM pages WHERE url = 'http://shop.test/missing'`),
		"found on the page that links to it")
}

// tilesOf reads the report's summary cards, label -> number shown.
func tilesOf(t *testing.T, doc *html.Node) map[string]int {
	t.Helper()
	tiles := map[string]int{}
	for _, n := range findAll(doc, func(n *html.Node) bool { return hasClass(n, "tile") }) {
		var v int
		_, err := fmt.Sscan(strings.ReplaceAll(textOf(findAll(n, func(x *html.Node) bool { return hasClass(x, "n") })[0]), ",", ""), &v)
		require.NoError(t, err)
		tiles[attrOr(n, "data-tile")] = v
	}
	return tiles
}

// assertCardsAddUp checks that the report's cards and charts count the same URLs the same way.
func assertCardsAddUp(t *testing.T, doc *html.Node) {
	t.Helper()
	tiles := tilesOf(t, doc)
	status, _ := bars(t, doc, "status")
	sum := func(m map[string]int) int {
		n := 0
		for _, v := range m {
			n += v
		}
		return n
	}
	assert.Equal(t, tiles["URLs in the crawl"], sum(status), "every URL has one status class")
	assert.Equal(t, tiles["blocked by robots.txt"], status["blocked by robots.txt"])
	assert.Equal(t, tiles["fetched"], sum(status)-status["blocked by robots.txt"])
	assert.Equal(t, tiles[report.ErrorsCard], status["4xx"]+status["5xx"]+status["no response"],
		"the 4xx/5xx card is the chart's 4xx + 5xx + no response: %v %v", tiles, status)
	depth, _ := bars(t, doc, "depth")
	assert.Equal(t, tiles["URLs in the crawl"], sum(depth))
	idx, _ := bars(t, doc, "indexability")
	assert.Equal(t, tiles["URLs in the crawl"], sum(idx))
	assert.Equal(t, tiles["blocked by robots.txt"], idx["blocked by robots.txt"])
	kinds, _ := bars(t, doc, "findings")
	sev := map[string]int{}
	for k, n := range kinds {
		sev[findings.InfoOf(k).Severity.String()] += n
	}
	for _, l := range []string{"error", "warning", "notice"} {
		assert.Equal(t, tiles[l+"s"], sev[l], "%s card = the %s bars of the findings chart", l, l)
	}
}

// The card "answered 4xx/5xx or not at all" counted where a redirect chain ended while the status chart
// counted the redirect as 3xx, so the two disagreed: both count each URL's own answer now.
func TestReportCardsAddUpWithCharts(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("User-agent: *\nDisallow: /private\n")
	s.HTML("/", page("Home", "/redir", "/missing", "/private", "/oops", "/ok"))
	s.Redirect("/redir", "/gone", 301)
	s.Status("/gone", 404)
	s.Status("/missing", 404)
	s.Status("/oops", 500)
	s.HTML("/ok", page("OK"))
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	doc := parseHTMLFile(t, reportPath(t, r))
	status, _ := bars(t, doc, "status")
	assert.Equal(t, map[string]int{"2xx": 2, "3xx": 1, "4xx": 1, "5xx": 1, "no response": 0, "blocked by robots.txt": 1}, status)
	assert.Equal(t, 2, tilesOf(t, doc)[report.ErrorsCard], "/missing and /oops; /redir answered 301 itself")
	assertCardsAddUp(t, doc)

	_, e = reportShop(t)
	r = audit(t, e, "-gap", "0", "-max-pages", "15", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assertCardsAddUp(t, parseHTMLFile(t, reportPath(t, r)))
}

// Two databases in one folder wrote the same audit-report-1.html: the report is named after its file.
func TestReportNamedAfterTheDatabase(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", page("Home"))
	dir := t.TempDir()
	a := auditDB(t, filepath.Join(dir, "shop.db"), e, "-gap", "0", "http://shop.test/")
	b := auditDB(t, filepath.Join(dir, "staging.sqlite"), e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, a.code, a)
	require.Equal(t, crawl.ExitOK, b.code, b)
	assert.Equal(t, filepath.Join(dir, "shop-report-1.html"), reportPath(t, a))
	assert.Equal(t, filepath.Join(dir, "staging-report-1.html"), reportPath(t, b))
	assert.FileExists(t, filepath.Join(dir, "shop-report-1.html"))
	assert.FileExists(t, filepath.Join(dir, "staging-report-1.html"))
	assert.Equal(t, filepath.Join("x", "audit-report-2.json"), report.DefaultReportPath(filepath.Join("x", "audit.db"), 2, "json"))
	assert.Equal(t, filepath.Join("x", "db-report-2"), report.DefaultReportPath(filepath.Join("x", "db"), 2, "csv"), "no extension")
	assert.Equal(t, filepath.Join("x", ".db-report-2.html"), report.DefaultReportPath(filepath.Join("x", ".db"), 2, "html"), "a dot file keeps its name")
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return sha256.Sum256(b)
}

// makeDB creates a SQLite file with the statements given.
func makeDB(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	for _, s := range stmts {
		_, err := db.Exec(s)
		require.NoError(t, err, s)
	}
}

func applicationID(t *testing.T, path string) uint32 {
	t.Helper()
	db := openDB(t, path)
	var id int64
	require.NoError(t, db.QueryRow(`PRAGMA application_id`).Scan(&id))
	return uint32(id)
}

// The audit's database carries its mark (application_id "CCov"); another program's file, or an unknown
// non-empty one, is refused before anything is written to it; an audit database of the version before
// the mark is recognised by its tables, opens, and is marked.
func TestDatabaseMarkedAndOthersRefused(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", page("Home"))
	dir := t.TempDir()

	r := auditDB(t, filepath.Join(dir, "new.db"), e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Equal(t, uint32(0x43436F76), applicationID(t, r.dbPath), "a new audit database is marked CCov")

	old := filepath.Join(dir, "old.db")
	makeDB(t, old, store.Schema) // the tables of the version before the mark, no mark
	require.Zero(t, applicationID(t, old))
	r = auditDB(t, old, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Equal(t, uint32(store.ApplicationID), applicationID(t, old), "an old audit database is marked when opened")
	var out, errb bytes.Buffer
	require.Equal(t, crawl.ExitOK, runEnv(t.Context(), []string{"report", "-db", old, "-o", filepath.Join(dir, "old.html")}, &out, &errb, crawl.Env{}), errb.String())

	monitor := filepath.Join(dir, "monitor.db")
	makeDB(t, monitor, `PRAGMA application_id = 1296125513`, `CREATE TABLE pages (url TEXT)`, `CREATE TABLE snapshots (url TEXT)`)
	unknown := filepath.Join(dir, "unknown.db")
	makeDB(t, unknown, `CREATE TABLE notes (x TEXT)`, `INSERT INTO notes VALUES ('keep me')`)
	for path, want := range map[string]string{
		monitor: "audit: not an audit database: " + monitor + " belongs to another program (SQLite application_id 0x4D414E49; Crawl Cove's is 0x43436F76): it is left untouched\n",
		unknown: "audit: not an audit database: " + unknown + ` holds other tables (no "crawls" table) and no Crawl Cove mark: it is left untouched` + "\n",
	} {
		before := fileSum(t, path)
		for _, args := range [][]string{{"-gap", "0", "http://shop.test/"}, {"-resume"}} {
			var out, errb bytes.Buffer
			e.Terminal = nil
			code := runEnv(t.Context(), append([]string{"-db", path}, args...), &out, &errb, e)
			assert.Equal(t, crawl.ExitUsage, code, "%v: %s", args, errb.String())
			assert.Equal(t, want, errb.String(), args)
			assert.Equal(t, before, fileSum(t, path), "%s: not a byte written", path)
			assert.NoFileExists(t, path+"-wal", "not even switched to WAL")
		}
	}
	errb.Reset()
	assert.Equal(t, crawl.ExitUsage, runEnv(t.Context(), []string{"report", "-db", monitor}, &out, &errb, crawl.Env{}))
	assert.Contains(t, errb.String(), "not an audit database: it belongs to another program (SQLite application_id 0x4D414E49")
	errb.Reset()
	assert.Equal(t, crawl.ExitUsage, runEnv(t.Context(), []string{"compare", "-db", monitor}, &out, &errb, crawl.Env{}))
	assert.Contains(t, errb.String(), "not an audit database")
}

// `audit -resume` panicked (nil pointer) unless -quiet was given: the command the program itself
// suggests after Ctrl-C. Run as the binary, the way a user types it.
func TestResumeWithoutQuietBinary(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	flatSite(s, 12, 0)
	db := filepath.Join(t.TempDir(), "shop.db")
	ie, ctx := interruptAfter(e, "/p5")
	r := auditCtx(t, ctx, db, ie, "-gap", "0", "-concurrency", "1", "http://shop.test/")
	require.Equal(t, crawl.ExitFailure, r.code, r)
	require.Contains(t, r.stderr, "To continue it: audit -resume -db "+db+" -crawl 1")

	args := []string{"-resume", "-db", db, "-crawl", "1"}
	for hp, addr := range n.Resolve() {
		args = append(args, "-resolve", hp+":"+strings.TrimPrefix(addr, "127.0.0.1:"))
	}
	code, stdout, stderr := runBinary(t, args...)
	require.Equal(t, crawl.ExitOK, code, "%s%s", stdout, stderr)
	assert.NotContains(t, stderr, "panic")
	assert.Contains(t, stdout, "Crawl 1 of http://shop.test/ finished")
}

// Text from a site is printed through cmdline.Safe: a title or a robots.txt line with terminal escapes
// (retitle the window, clear the screen) shows as visible escapes on the summary and in compare.
func TestSiteTextIsSafeOnTheTerminal(t *testing.T) {
	const evil = "\x1b]0;owned\x07\x1b[2J"
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("User-agent: *\nDisallow: /private" + evil + "\nDisallow: /\n")
	s.HTML("/", page("Home"))
	db := filepath.Join(t.TempDir(), "shop.db")
	r := auditDB(t, db, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Contains(t, r.stderr, "the start page http://shop.test/ is blocked by robots.txt", r)
	for _, out := range []string{r.stdout, r.stderr} {
		assert.NotContains(t, out, "\x1b")
		assert.NotContains(t, out, "\x07")
	}

	s.Robots("")
	s.HTML("/", page("Home", "/a"))
	s.HTML("/a", "<title>A"+evil+"</title>")
	require.Equal(t, crawl.ExitOK, auditDB(t, db, e, "-gap", "0", "http://shop.test/").code)
	s.HTML("/a", "<title>B"+evil+"</title>")
	r = auditDB(t, db, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	var out, errb bytes.Buffer
	require.Equal(t, crawl.ExitOK, runEnv(t.Context(), []string{"compare", "-db", db}, &out, &errb, crawl.Env{}), errb.String())
	assert.Contains(t, out.String(), `A\x1b]0;owned\x07\x1b[2J`, "visible, escaped")
	for _, o := range []string{r.stdout, r.stderr, out.String()} {
		assert.NotContains(t, o, "\x1b")
		assert.NotContains(t, o, "\x07")
	}
}
