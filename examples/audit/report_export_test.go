package main

import (
	"bytes"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/report"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Titles that test a spreadsheet export: a comma and quotes, a formula, non-ASCII text.
var (
	quotedTitle  = `Say "hi", friend; then leave`
	formulaTitle = `=HYPERLINK("http://evil.example/","click")`
	unicodeTitle = "Café – 日本語 ✓"
)

func exportShop(t *testing.T) *result {
	t.Helper()
	_, e := reportShop(t)
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	return r
}

// The CSV export read back with encoding/csv gives the database's values, table by table, row by row,
// column by column.
func TestCSVRoundTrip(t *testing.T) {
	netw, e := reportShop(t)
	s := netw.Site("shop.test")
	s.HTML("/", page("Home", "/a", "/q", "/f", "/u", "/xss"))
	s.HTML("/q", `<title>`+strings.ReplaceAll(quotedTitle, `"`, "&quot;")+`</title><h1>q</h1>`)
	s.HTML("/f", `<title>`+strings.ReplaceAll(formulaTitle, `"`, "&quot;")+`</title><h1>f</h1>`)
	s.HTML("/u", `<title>`+unicodeTitle+`</title><h1>u</h1>`)
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)

	dir := filepath.Join(t.TempDir(), "csv")
	var out, errb bytes.Buffer
	require.Equal(t, crawl.ExitOK, runEnv(t.Context(), []string{"report", "-db", r.dbPath, "-format", "csv", "-o", dir}, &out, &errb, crawl.Env{}), errb.String())
	assert.Equal(t, "Crawl 1 exported to "+dir+": pages.csv, links.csv, findings.csv, sitemaps.csv, sitemap_urls.csv, requests.csv\n", out.String())

	for _, table := range store.ExportTables {
		t.Run(table, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, table+".csv"))
			require.NoError(t, err)
			require.True(t, bytes.HasPrefix(raw, []byte(report.Utf8BOM)), "a UTF-8 BOM, for spreadsheets")
			assert.Contains(t, string(raw), "\r\n", "RFC 4180 line ends")
			recs, err := csv.NewReader(bytes.NewReader(raw[len(report.Utf8BOM):])).ReadAll()
			require.NoError(t, err)

			rows, err := r.db.Query(`SELECT * FROM ` + table + ` WHERE crawl_id = 1 ORDER BY ` + store.ExportOrder(table))
			require.NoError(t, err)
			defer rows.Close()
			names, err := rows.Columns()
			require.NoError(t, err)
			head := names
			if table == "findings" {
				head = append(append([]string{}, names...), "severity", "advice", "category")
			}
			require.Equal(t, head, recs[0], "a header row with the table's columns")
			i := 1
			for rows.Next() {
				vals := make([]any, len(names))
				ptrs := make([]any, len(names))
				for j := range vals {
					ptrs[j] = &vals[j]
				}
				require.NoError(t, rows.Scan(ptrs...))
				require.Less(t, i, len(recs), "as many CSV rows as database rows")
				rec := recs[i]
				require.Len(t, rec, len(head))
				for j, v := range vals {
					assertCell(t, fmt.Sprintf("%s row %d %s", table, i, names[j]), v, rec[j])
				}
				if table == "findings" {
					info := findings.InfoOf(rec[indexOf(names, "kind")])
					assert.Equal(t, []string{info.Severity.String(), info.Advice, info.Category}, rec[len(names):])
				}
				i++
			}
			require.NoError(t, rows.Err())
			assert.Equal(t, len(recs), i, "no extra CSV rows")
			assert.Greater(t, i, 1, "the table has rows to compare")
		})
	}

	// The titles came through as written; the formula is neutralised for spreadsheets only.
	recs := readCSV(t, filepath.Join(dir, "pages.csv"))
	col := indexOf(recs[0], "title")
	titles := map[string]string{}
	for _, rec := range recs[1:] {
		titles[rec[indexOf(recs[0], "url")]] = rec[col]
	}
	assert.Equal(t, quotedTitle, titles["http://shop.test/q"])
	assert.Equal(t, unicodeTitle, titles["http://shop.test/u"])
	assert.Equal(t, xssTitle, titles["http://shop.test/xss"])
	assert.Equal(t, "'"+formulaTitle, titles["http://shop.test/f"], "a spreadsheet shows it as text instead of running it")
	assert.Equal(t, formulaTitle, r.strs(t, `SELECT title FROM pages WHERE url = 'http://shop.test/f'`)[0])
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	recs, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(raw, []byte(report.Utf8BOM)))).ReadAll()
	require.NoError(t, err)
	return recs
}

// assertCell compares a database value with its CSV cell read back.
func assertCell(t *testing.T, where string, v any, cell string) {
	t.Helper()
	switch x := v.(type) {
	case nil:
		assert.Equal(t, "", cell, "%s: NULL is an empty cell", where)
	case int64:
		n, err := strconv.ParseInt(cell, 10, 64)
		assert.NoError(t, err, where)
		assert.Equal(t, x, n, where)
	case float64:
		f, err := strconv.ParseFloat(cell, 64)
		assert.NoError(t, err, where)
		assert.Equal(t, math.Float64bits(x), math.Float64bits(f), "%s: %v vs %s", where, x, cell)
	case string:
		assert.Equal(t, x, report.UndoCSVNeutral(cell), where)
	case []byte:
		assert.Equal(t, hex.EncodeToString(x), cell, "%s: a BLOB is hex", where)
	default:
		t.Errorf("%s: unexpected type %T", where, v)
	}
}

// The JSON export is one document: the crawl, the chart figures, and every row of the tables.
func TestJSONExport(t *testing.T) {
	r := exportShop(t)
	var out, errb bytes.Buffer
	require.Equal(t, crawl.ExitOK, runEnv(t.Context(), []string{"report", "-db", r.dbPath, "-format", "json", "-o", "-"}, &out, &errb, crawl.Env{}), errb.String())
	var doc struct {
		Crawl struct {
			ID       int            `json:"id"`
			StartURL string         `json:"start_url"`
			Settings map[string]any `json:"settings"`
			Outcome  string         `json:"outcome"`
		} `json:"crawl"`
		Summary  report.Summary   `json:"summary"`
		Pages    []map[string]any `json:"pages"`
		Links    []map[string]any `json:"links"`
		Findings []map[string]any `json:"findings"`
		Sitemaps []map[string]any `json:"sitemaps"`
		SMURLs   []map[string]any `json:"sitemap_urls"`
		Requests []map[string]any `json:"requests"`
	}
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(out.Bytes(), &top))
	var keys []string
	for k := range top {
		keys = append(keys, k)
	}
	assert.ElementsMatch(t, []string{"crawl", "summary", "pages", "links", "findings", "sitemaps", "sitemap_urls", "requests"}, keys)
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc))
	assert.Equal(t, 1, doc.Crawl.ID)
	assert.Equal(t, "http://shop.test/", doc.Crawl.StartURL)
	assert.Equal(t, "finished", doc.Crawl.Outcome)
	assert.Equal(t, float64(4), doc.Crawl.Settings["concurrency"], "settings is an object, not a string")
	for _, c := range []struct {
		name string
		n    int
	}{{"pages", len(doc.Pages)}, {"links", len(doc.Links)}, {"findings", len(doc.Findings)}, {"sitemaps", len(doc.Sitemaps)},
		{"sitemap_urls", len(doc.SMURLs)}, {"requests", len(doc.Requests)}} {
		assert.Equal(t, r.int(t, `SELECT COUNT(*) FROM `+c.name+` WHERE crawl_id = 1`), c.n, c.name)
	}
	assert.Equal(t, 18, doc.Summary.Pages, "reportShop without -max-pages: /extra too")
	assert.Equal(t, []report.Count{{Label: "2xx", N: 10}, {Label: "3xx", N: 2}, {Label: "4xx", N: 2}, {Label: "5xx", N: 1}, {Label: "no response", N: 1}, {Label: "blocked by robots.txt", N: 2}},
		doc.Summary.Status, "/extra crawled too without -max-pages")
	titles := map[string]any{}
	for _, p := range doc.Pages {
		titles[p["url"].(string)] = p["title"]
		if p["url"] == "http://shop.test/chain" {
			hops, ok := p["redirects"].([]any)
			require.True(t, ok, "redirects is JSON, not a string: %T", p["redirects"])
			assert.Len(t, hops, 2)
		}
	}
	assert.Equal(t, xssTitle, titles["http://shop.test/xss"])
	assert.Nil(t, titles["http://shop.test/broken"], "NULL is null")
	for _, f := range doc.Findings {
		info := findings.InfoOf(f["kind"].(string))
		assert.Equal(t, info.Severity.String(), f["severity"])
		assert.Equal(t, info.Category, f["category"])
	}
}

// A crawl with a rendered pass exports its render_* tables too, row for row; one without does not.
func TestExportsCarryTheRenderedPass(t *testing.T) {
	r := exportShop(t)
	_, err := r.db.Exec(`INSERT INTO render_runs (crawl_id, browser, user_agent, requested, sampled, rendered, site_requests, started_at, outcome)
		VALUES (1, '/usr/bin/chromium', 'Mozilla/5.0 HeadlessChrome', 20, 2, 2, 9, '2026-01-01T00:00:00Z', 'finished')`)
	require.NoError(t, err)
	for i, u := range []string{"http://shop.test/", "http://shop.test/a"} {
		_, err = r.db.Exec(`INSERT INTO render_pages (crawl_id, url, depth, section, rendered_at, title, site_requests, other_requests,
			blocked_robots, not_loaded, not_sent, failed, console_errors, exceptions) VALUES (1, ?, ?, '/', '2026-01-01T00:00:01Z', ?, 3, 0, 0, 1, 0, 0, 0, 0)`,
			u, i, fmt.Sprint("Rendered ", i))
		require.NoError(t, err)
	}
	dir := filepath.Join(t.TempDir(), "csv")
	var out, errb bytes.Buffer
	require.Equal(t, crawl.ExitOK, runEnv(t.Context(), []string{"report", "-db", r.dbPath, "-format", "csv", "-o", dir}, &out, &errb, crawl.Env{}), errb.String())
	assert.Contains(t, out.String(), "requests.csv, render_runs.csv, render_pages.csv, render_links.csv, render_console.csv, render_requests.csv")
	recs := readCSV(t, filepath.Join(dir, "render_pages.csv"))
	require.Len(t, recs, 3)
	assert.Equal(t, []string{"Rendered 0", "Rendered 1"}, []string{recs[1][indexOf(recs[0], "title")], recs[2][indexOf(recs[0], "title")]})
	assert.Len(t, readCSV(t, filepath.Join(dir, "render_runs.csv")), 2)

	out.Reset()
	require.Equal(t, crawl.ExitOK, runEnv(t.Context(), []string{"report", "-db", r.dbPath, "-format", "json", "-o", "-"}, &out, &errb, crawl.Env{}), errb.String())
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc))
	var pages []map[string]any
	require.NoError(t, json.Unmarshal(doc["render_pages"], &pages))
	assert.Len(t, pages, 2)
}
