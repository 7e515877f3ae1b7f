package main

import (
	"bytes"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// compareCmd runs `audit compare` in-process.
func compareCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runEnv(t.Context(), append([]string{"compare"}, args...), &out, &errb, crawl.Env{})
	return code, out.String(), errb.String()
}

// Two crawls of a site changed between them: a page removed, a title changed, a 404 fixed, a new
// redirect. compare reports exactly those, and the findings they fixed and caused, nothing else.
func TestCompareTwoCrawlsOfAChangedSite(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", page("Home", "/a", "/gone", "/missing", "/old"))
	s.HTML("/a", page("A"))
	s.HTML("/gone", page("Gone"))
	s.Status("/missing", http.StatusNotFound)
	s.HTML("/old", page("Old"))
	db := filepath.Join(t.TempDir(), "shop.db")
	r := auditDB(t, db, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	dropPageChecks(t, r)

	s.HTML("/", page("Home", "/a", "/missing", "/old")) // /gone is no longer linked, and gone
	s.Status("/gone", http.StatusNotFound)
	s.HTML("/a", `<!doctype html><title>A new</title><meta name=description content="About A"><h1>A</h1><a href="/">home</a>`)
	s.HTML("/missing", page("Missing"))
	s.Redirect("/old", "/a", http.StatusMovedPermanently)
	r = auditDB(t, db, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	dropPageChecks(t, r)

	a, b, err := report.PickCrawls(t.Context(), r.db, nil)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2}, []int64{a.ID, b.ID}, "by default the two latest crawls of the site")
	c, err := report.CompareCrawls(t.Context(), r.db, a, b)
	require.NoError(t, err)
	assert.Empty(t, c.New)
	assert.Equal(t, []report.DiffEntry{{What: "removed", URL: "http://shop.test/gone", Before: "200"}}, c.Removed)
	assert.Equal(t, []report.DiffEntry{
		{What: "title", URL: "http://shop.test/a", Before: "A", After: "A new"},
		{What: "status", URL: "http://shop.test/missing", Before: "404", After: "200"},
		{What: "status", URL: "http://shop.test/old", Before: "200", After: "301 → /a"}, // the Location header as sent
	}, c.Changed)
	require.Len(t, c.Appeared, 1)
	assert.Equal(t, [2]string{findings.KindRedirect, "http://shop.test/old"}, [2]string{c.Appeared[0].What, c.Appeared[0].URL})
	require.Len(t, c.Fixed, 1)
	assert.Equal(t, [2]string{findings.KindBrokenLink, "http://shop.test/missing"}, [2]string{c.Fixed[0].What, c.Fixed[0].URL})
	assert.Equal(t, []string{"broken_link -1", "redirect +1"}, c.ByKind())

	// The terminal table and the HTML page say the same, exit 0: differences are the report.
	out := filepath.Join(t.TempDir(), "changes.html")
	code, stdout, stderr := compareCmd(t, "-db", db, "1", "2", "-o", out)
	require.Equal(t, crawl.ExitOK, code, stderr)
	assert.Equal(t, `Comparing crawl 1 (`+a.Started.UTC().Format("2006-01-02 15:04")+`, finished) with crawl 2 (`+b.Started.UTC().Format("2006-01-02 15:04")+`, finished) of shop.test
URLs 5 -> 4, findings 2 -> 2: 0 new, 1 removed, 3 changed, 1 findings appeared, 1 fixed.
Findings by kind: broken_link -1, redirect +1.
Kinds: 1 appeared, 1 disappeared, 0 changed count.

KIND         CATEGORY        SEVERITY  BEFORE  AFTER  CHANGE
broken_link  Links           error     1       0      disappeared
redirect     Response codes  notice    0       1      appeared

CHANGE         URL       BEFORE                           AFTER
removed URL    /gone     200                              -
title          /a        A                                A new
status         /missing  404                              200
status         /old      200                              301 → /a
+ redirect     /old      -                                /old -301-> /a (200)
- broken_link  /missing  HTTP 404; linked from 1 page: /  -

Comparison written to `+out+"\n", stdout)

	doc := parseHTMLFile(t, out)
	assert.Contains(t, textOf(byTag(doc, "h1")[0]), "what changed on shop.test")
	assert.Equal(t, "No new URLs.", textOf(byID(t, doc, "new-table")))
	assert.Equal(t, [][]string{{"/gone", "200"}}, tableRowsOf(t, doc, "removed-table"))
	assert.Equal(t, [][]string{{"/a", "title", "A", "A new"}, {"/missing", "status", "404", "200"}, {"/old", "status", "200", "301 → /a"}},
		tableRowsOf(t, doc, "changed-table"))
	assert.Equal(t, [][]string{{"notice", "redirect", "/old", "/old -301-> /a (200)"}}, tableRowsOf(t, doc, "appeared-table"))
	assert.Equal(t, [][]string{{"error", "broken_link", "/missing", "HTTP 404; linked from 1 page: /"}}, tableRowsOf(t, doc, "fixed-table"))
	assertSelfContained(t, doc)

	// The same crawl twice over: no differences, still exit 0.
	r = auditDB(t, db, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	dropPageChecks(t, r)
	code, stdout, _ = compareCmd(t, "-db", db)
	assert.Equal(t, crawl.ExitOK, code)
	assert.Contains(t, stdout, "Comparing crawl 2 (")
	assert.Contains(t, stdout, "with crawl 3 (")
	assert.True(t, strings.HasSuffix(stdout, "No differences.\n"), stdout)
}

// Without ids compare takes the latest crawl and the one before it of the same site (its www twin and
// another scheme included); one id compares that crawl with its site's previous one; bad ids exit 2.
func TestCompareChoosesCrawlsAndRefusesBadIDs(t *testing.T) {
	n, e := loopNet(t)
	for _, h := range []string{"shop.test", "www.shop.test", "other.test"} {
		s := n.Add(h)
		s.Robots("")
		s.HTML("/", page("Home "+h))
	}
	db := filepath.Join(t.TempDir(), "multi.db")
	for _, u := range []string{"http://shop.test/", "http://other.test/", "http://www.shop.test/"} {
		r := auditDB(t, db, e, "-gap", "0", u)
		require.Equal(t, crawl.ExitOK, r.code, r)
	}

	code, stdout, stderr := compareCmd(t, "-db", db)
	require.Equal(t, crawl.ExitOK, code, stderr)
	assert.Contains(t, stdout, "Comparing crawl 1 (", "crawl 2 is another site")
	assert.Contains(t, stdout, "with crawl 3 (")

	code, stdout, _ = compareCmd(t, "-db", db, "3")
	require.Equal(t, crawl.ExitOK, code)
	assert.Contains(t, stdout, "Comparing crawl 1 (")

	code, stdout, _ = compareCmd(t, "-db", db, "2", "3") // any two crawls, when asked for by id
	require.Equal(t, crawl.ExitOK, code)
	assert.Contains(t, stdout, "Comparing crawl 2 (")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"2"}, "crawl 2 is the only crawl of other.test in the database"},
		{[]string{"1", "9"}, "crawl 9 is not in the database"},
		{[]string{"9"}, "crawl 9 is not in the database"},
		{[]string{"1", "1"}, "crawl 1 cannot be compared with itself"},
		{[]string{"one", "2"}, `"one" is not a crawl id`},
		{[]string{"0", "2"}, `"0" is not a crawl id`},
		{[]string{"1", "2", "3"}, "at most two crawl ids"},
		{[]string{"-format", "x"}, "flag provided but not defined"},
	} {
		code, stdout, stderr := compareCmd(t, append([]string{"-db", db}, tc.args...)...)
		assert.Equal(t, crawl.ExitUsage, code, tc.args)
		assert.Contains(t, stderr, tc.want, tc.args)
		assert.Empty(t, stdout, tc.args)
	}
	code, _, stderr = compareCmd(t, "-db", filepath.Join(t.TempDir(), "none.db"))
	assert.Equal(t, crawl.ExitUsage, code)
	assert.Contains(t, stderr, "no such file")

	one := filepath.Join(t.TempDir(), "one.db")
	r := auditDB(t, one, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	code, _, stderr = compareCmd(t, "-db", one)
	assert.Equal(t, crawl.ExitUsage, code)
	assert.Contains(t, stderr, "crawl 1 is the only crawl of shop.test in the database; give two crawl ids")

	code, _, stderr = compareCmd(t, "-h")
	assert.Equal(t, crawl.ExitOK, code)
	assert.Contains(t, stderr, "usage: audit compare")
}

// dropPageChecks deletes the findings of the pages' own responses (the minimal test pages have many:
// no viewport, thin content...), so that a test of compare's arithmetic counts only the findings it is
// about; the page checks have their own tests (pagecheck_test.go).
func dropPageChecks(t *testing.T, r *result) {
	t.Helper()
	_, err := r.db.Exec(`DELETE FROM findings WHERE page_check = 1`)
	require.NoError(t, err)
	// And the kinds of the passes over the whole crawl (link graph, duplicates...), which these small
	// sites show on many pages: the compare tests count the core kinds.
	for _, row := range r.strs(t, `SELECT DISTINCT kind FROM findings`) {
		if findings.IsSiteKind(row) {
			_, err := r.db.Exec(`DELETE FROM findings WHERE kind = ?`, row)
			require.NoError(t, err)
		}
	}
}
