package main

import (
	"database/sql"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/report"
	"github.com/politecrawl/polite/internal/testsite"
)

// xssTitle is a page title that would run script if the report did not escape it.
const xssTitle = `<img src=x onerror=alert(1)>`

// reportShop is the site the report tests crawl: one URL for each status class, redirect, robots and
// indexability case, a sitemap with orphans, and a title that is an XSS attempt. Expected figures (17
// URLs; default flags but -gap 0 -max-pages 15: the 13 pages links reach, then two of the sitemap's,
// the third, /extra, left out by the limit):
//
//	status: 2xx 9 (/ /a /b /noindex /canon /xss /slow /deep /orphan), 3xx 2 (/moved /chain), 4xx 2
//	        (/broken /gone-listed), 5xx 1 (/err), no response 1 (/reset), blocked 2 (/private/x /private/listed)
//	depth:  0: 1, 1: 15 (12 linked from /, 3 sitemap-only), 2: 1 (/deep)
//	index:  indexable 7, noindex 1, canonicalised 1, non-200 6, blocked 2
//	sitemap: listed 6 (/, /a, /gone-listed, /orphan, /private/listed, /extra; other.test/x is skipped as
//	        outside the sitemap's scope): crawled 3, blocked 1, broken 1, not crawled 1 (/extra)
func reportShop(t *testing.T) (*testsite.Network, crawl.Env) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("User-agent: *\nDisallow: /private/\nSitemap: http://shop.test/sitemap.xml\n")
	s.Page("/sitemap.xml", "application/xml",
		`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+
			`<url><loc>http://shop.test/</loc></url><url><loc>http://shop.test/a</loc></url>`+
			`<url><loc>http://shop.test/gone-listed</loc></url><url><loc>http://shop.test/orphan</loc></url>`+
			`<url><loc>http://shop.test/private/listed</loc></url><url><loc>http://shop.test/extra</loc></url>`+
			`<url><loc>http://other.test/x</loc></url></urlset>`)
	s.HTML("/", page("Home", "/a", "/b", "/broken", "/moved", "/chain", "/private/x", "/noindex", "/canon", "/xss",
		"/err", "/reset", "/slow", "https://other.example/"))
	s.HTML("/a", page("A", "/"))
	s.HTML("/b", page("B", "/a", "/broken", "/deep"))
	s.HTML("/deep", page("Deep"))
	s.Status("/broken", http.StatusNotFound)
	s.Status("/gone-listed", http.StatusNotFound)
	s.Status("/err", http.StatusInternalServerError)
	s.Redirect("/moved", "/a", http.StatusMovedPermanently)
	s.Redirect("/chain", "/moved", http.StatusMovedPermanently)
	s.HTML("/noindex", `<!doctype html><title>Hidden</title><meta name="robots" content="noindex"><meta name="description" content="Hidden page"><h1>Hidden</h1>`)
	s.HTML("/canon", `<!doctype html><title>Variant</title><link rel="canonical" href="http://shop.test/a"><meta name="description" content="Variant page"><h1>Variant</h1>`)
	s.HTML("/xss", `<!doctype html><title>`+strings.ReplaceAll(strings.ReplaceAll(xssTitle, "<", "&lt;"), ">", "&gt;")+
		`</title><meta name="description" content="x"><h1>x</h1>`)
	s.Handle("/reset", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }) // connection dropped: no response
	s.Route("/slow", testsite.Response{Body: page("Slow"), ContentType: "text/html", Delay: 120 * time.Millisecond})
	s.HTML("/orphan", page("Orphan"))
	s.HTML("/extra", page("Extra"))
	return n, e
}

// reportPath is the path the crawl printed after "Report: ".
func reportPath(t *testing.T, r *result) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^Report: (.+)$`).FindStringSubmatch(r.stdout)
	require.NotNil(t, m, "the crawl says where its report is:\n%s", r)
	return m[1]
}

func parseHTMLFile(t *testing.T, path string) *html.Node {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	doc, err := html.Parse(f)
	require.NoError(t, err)
	return doc
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func attrOr(n *html.Node, key string) string {
	v, _ := attr(n, key)
	return v
}

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attrOr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

// findAll returns the element nodes under n (n included) for which match is true, in document order.
func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
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

func byTag(n *html.Node, tag string) []*html.Node {
	return findAll(n, func(x *html.Node) bool { return x.Data == tag })
}

func byID(t *testing.T, doc *html.Node, id string) *html.Node {
	t.Helper()
	ns := findAll(doc, func(x *html.Node) bool { return attrOr(x, "id") == id })
	require.Len(t, ns, 1, "exactly one element with id %q", id)
	return ns[0]
}

// textOf is the text of n with runs of white space made one space, as a person reads it.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// bars reads a chart: label -> value, and the labels in order. Every bar's visible label and value must
// say the same as its data attributes.
func bars(t *testing.T, doc *html.Node, id string) (map[string]int, []string) {
	t.Helper()
	fig := byID(t, doc, "chart-"+id)
	require.Equal(t, "figure", fig.Data)
	require.Len(t, byTag(fig, "svg"), 1, "chart %s is one inline SVG", id)
	m := map[string]int{}
	var order []string
	for _, g := range findAll(fig, func(x *html.Node) bool { return x.Data == "g" && hasClass(x, "bar") }) {
		label := attrOr(g, "data-label")
		v := attrOr(g, "data-value")
		n := 0
		for _, r := range v {
			require.True(t, r >= '0' && r <= '9', "data-value %q", v)
			n = n*10 + int(r-'0')
		}
		texts := byTag(g, "text")
		require.Len(t, texts, 2, "bar %s of %s: a label and a value", label, id)
		var shown []string
		for _, tx := range texts {
			shown = append(shown, textOf(tx))
		}
		require.Contains(t, shown, label)
		require.Contains(t, shown, report.Thousands(n))
		require.Len(t, byTag(g, "rect"), 1)
		m[label] = n
		order = append(order, label)
	}
	return m, order
}

// tableRows reads the rows of the table in the element with id: the first page and the pages kept in
// <template> elements, each row as its cells' text.
func tableRowsOf(t *testing.T, doc *html.Node, id string) [][]string {
	t.Helper()
	box := byID(t, doc, id)
	var out [][]string
	for _, tr := range byTag(box, "tr") {
		if len(byTag(tr, "th")) > 0 {
			continue
		}
		var cells []string
		for _, td := range byTag(tr, "td") {
			cells = append(cells, textOf(td))
		}
		out = append(out, cells)
	}
	return out
}

func sqlOpen(path string) (*sql.DB, error) { return sql.Open("sqlite", path) }
