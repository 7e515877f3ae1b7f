package report

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html"
	"html/template"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/politecrawl/polite/frontier"
)

// The HTML report is one self-contained file: CSS, SVG charts and a few lines of script are inline, and
// its Content-Security-Policy forbids every fetch (default-src 'none'), so opening it never makes a
// request, not even if a crawled page's text slipped past the escaping. Charts are SVG drawn here, in Go.

const (
	// TablePageSize is the rows of a long table shown at once. The rest of its rows sit in <template>
	// elements, which the browser parses but keeps out of the document until the pager shows them: a
	// 10,000-row table never puts 10,000 rows into the DOM.
	TablePageSize = 50
)

// TableRowsMax is the most rows a table carries into the file at all; the CSV export has every row. A
// variable only so that a test can lower it.
var TableRowsMax = 2000

// reportScript pages long tables and opens every collapsed section before printing. It is the only
// script the policy allows (by its hash).
const reportScript = `(function () {
"use strict";
function fmt(n) { return n.toLocaleString("en-US"); }
document.querySelectorAll(".tbl[data-paged]").forEach(function (box) {
	var tbody = box.querySelector("tbody");
	var tpls = box.querySelectorAll("template");
	var size = Number(box.dataset.size), total = Number(box.dataset.rows);
	var pages = [Array.prototype.slice.call(tbody.rows)];
	var pager = box.querySelector(".pager"), pos = pager.querySelector(".pos");
	var prev = pager.querySelector("[data-dir='-1']"), next = pager.querySelector("[data-dir='1']");
	var cur = 0;
	function show(k) {
		if (!pages[k]) {
			pages[k] = Array.prototype.slice.call(document.importNode(tpls[k - 1].content, true).children);
		}
		tbody.replaceChildren.apply(tbody, pages[k]);
		cur = k;
		pos.textContent = "Rows " + fmt(k * size + 1) + "\u2013" + fmt(Math.min(total, (k + 1) * size)) + " of " + fmt(total);
		prev.disabled = k === 0;
		next.disabled = k === tpls.length;
	}
	prev.addEventListener("click", function () { show(cur - 1); });
	next.addEventListener("click", function () { show(cur + 1); });
	pager.hidden = false;
	show(0);
});
function openTarget() {
	var id = decodeURIComponent(location.hash.slice(1));
	var el = id && document.getElementById(id);
	if (el && el.tagName === "DETAILS") { el.open = true; }
}
window.addEventListener("hashchange", openTarget);
openTarget();
window.addEventListener("beforeprint", function () {
	document.querySelectorAll("details:not([open])").forEach(function (d) { d.dataset.printOpened = "1"; d.open = true; });
});
window.addEventListener("afterprint", function () {
	document.querySelectorAll("details[data-print-opened]").forEach(function (d) { d.open = false; delete d.dataset.printOpened; });
});
})();`

// reportCSP allows the inline style and the one script above, and nothing that could fetch: no images,
// fonts, frames, connections or forms. Links still work: navigation is not a fetch of the report.
var reportCSP = func() string {
	sum := sha256.Sum256([]byte(reportScript))
	return "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; img-src data:; base-uri 'none'; form-action 'none'"
}()

const reportCSS = `
:root { --fg:#1d2330; --muted:#5d6577; --line:#dde1e8; --bg:#f6f7f9; --card:#fff; --accent:#1f5fbf;
	--error:#c62828; --warning:#b76e00; --notice:#1f6fb2; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
	color:var(--fg); background:var(--bg); -webkit-print-color-adjust:exact; print-color-adjust:exact; }
main { max-width:1180px; margin:0 auto; padding:24px 28px 40px; }
header.top { background:#17263f; color:#fff; }
header.top .in { max-width:1180px; margin:0 auto; padding:22px 28px 18px; }
header.top h1 { margin:0 0 4px; font-size:24px; font-weight:650; }
header.top p { margin:2px 0; color:#c9d3e3; }
header.top a { color:#fff; }
nav.toc { margin:14px 0 0; display:flex; flex-wrap:wrap; gap:4px 14px; font-size:13px; }
nav.toc a { color:#c9d3e3; text-decoration:none; }
nav.toc a:hover { color:#fff; text-decoration:underline; }
h2 { font-size:19px; margin:34px 0 10px; padding-bottom:6px; border-bottom:2px solid var(--line); }
h3 { font-size:15px; margin:0 0 8px; }
a { color:var(--accent); overflow-wrap:anywhere; }
code { font:12.5px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background:#eef1f5; padding:1px 4px; border-radius:3px; }
.tiles { display:grid; grid-template-columns:repeat(auto-fill, minmax(128px, 1fr)); gap:12px; margin:20px 0 0; }
.tile { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:12px 14px; }
.tile .n { font-size:26px; font-weight:650; display:block; }
.tile .l { color:var(--muted); font-size:12.5px; }
.tile.error .n { color:var(--error); } .tile.warning .n { color:var(--warning); } .tile.notice .n { color:var(--notice); }
.charts { display:grid; grid-template-columns:repeat(auto-fill, minmax(520px, 1fr)); gap:16px; }
figure.chart { margin:0; background:var(--card); border:1px solid var(--line); border-radius:8px; padding:12px 14px 8px;
	break-inside:avoid; }
figure.chart figcaption { font-weight:600; margin-bottom:6px; }
figure.chart p.cnote { color:var(--muted); font-size:12.5px; margin:4px 0 0; }
figure.chart svg { display:block; width:100%; height:auto; }
svg text { font:12px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; fill:var(--fg); }
svg text.val { fill:var(--muted); }
svg text.cl { font-size:11px; }
.tbl { background:var(--card); border:1px solid var(--line); border-radius:8px; overflow-x:auto; margin:8px 0 4px; }
table { border-collapse:collapse; width:100%; }
th, td { text-align:left; vertical-align:top; padding:6px 10px; border-bottom:1px solid var(--line); }
th { background:#eef1f5; font-size:12.5px; color:var(--muted); font-weight:600; white-space:nowrap; }
td.num, th.num { text-align:right; white-space:nowrap; font-variant-numeric:tabular-nums; }
td.url { min-width:220px; max-width:420px; overflow-wrap:anywhere; }
td.detail { overflow-wrap:anywhere; }
tbody tr:last-child td { border-bottom:0; }
.pager { display:flex; align-items:center; gap:10px; padding:8px 10px; border-top:1px solid var(--line); font-size:13px; }
.pager button { font:inherit; padding:3px 10px; border:1px solid var(--line); border-radius:5px; background:#fff; cursor:pointer; }
.pager button:disabled { opacity:.45; cursor:default; }
p.note, p.empty { color:var(--muted); margin:6px 2px; }
.badge { display:inline-block; min-width:62px; text-align:center; font-size:11.5px; font-weight:650; text-transform:uppercase;
	letter-spacing:.03em; padding:1px 6px; border-radius:10px; color:#fff; }
.badge.error { background:var(--error); } .badge.warning { background:var(--warning); } .badge.notice { background:var(--notice); }
.badge.finished { background:#2e7d32; } .badge.interrupted, .badge.running { background:var(--warning); }
.badge.off_limits, .badge.refused, .badge.failed { background:var(--error); }
details.kind { background:var(--card); border:1px solid var(--line); border-left:4px solid var(--notice); border-radius:8px;
	margin:10px 0; padding:8px 12px; }
details.kind.error { border-left-color:var(--error); } details.kind.warning { border-left-color:var(--warning); }
details.kind summary { cursor:pointer; display:flex; flex-wrap:wrap; align-items:center; gap:8px; }
details.kind summary .cnt { margin-left:auto; color:var(--muted); }
details.kind p.advice { margin:6px 0; color:var(--muted); }
details.kind .tbl { margin-bottom:6px; }
section.category { margin:26px 0 10px; }
section.category h3.cat { font-size:17px; margin:0 0 6px; padding-bottom:4px; border-bottom:1px solid var(--line); }
section.category p.sevcounts { margin:4px 0 10px; display:flex; gap:6px; }
section.category figure.chart { max-width:640px; margin:0 0 10px; }
dl.kv { display:grid; grid-template-columns:max-content 1fr; gap:6px 18px; background:var(--card); border:1px solid var(--line);
	border-radius:8px; padding:14px 16px; margin:8px 0; }
dl.kv dt { color:var(--muted); } dl.kv dd { margin:0; }
.change-new { color:#2e7d32; } .change-gone { color:var(--error); }
footer { max-width:1180px; margin:0 auto; padding:0 28px 30px; color:var(--muted); font-size:12.5px; }
@media print {
	body { background:#fff; font-size:11px; }
	header.top { background:#fff; color:#000; border-bottom:2px solid #000; }
	header.top p, nav.toc a { color:#333; }
	nav.toc, .pager button, noscript { display:none; }
	main { padding:0; max-width:none; }
	.charts { grid-template-columns:1fr 1fr; }
	figure.chart, .tile, tr, dl.kv { break-inside:avoid; }
	h2 { break-after:avoid; }
	.tbl { overflow:visible; }
	a { color:inherit; text-decoration:none; }
}
`

// cell is one table cell: text, optionally a link, optionally a class (num, url, detail), or a badge
// (error, warning, notice) around the text.
type cell struct{ Text, Href, Class, Badge string }

type row []cell

// htmlTable is a table as the template renders it: the first page of rows in the document, the other
// pages in <template> elements, and rows past tableRowsMax left out with a note.
type htmlTable struct {
	ID      string
	SQL     string // where every row is, when some are not in the file: a query over the database
	Columns []cell // Class "num" right-aligns the column head
	First   []row
	Later   [][]row
	Size    int
	Shown   int
	Omitted int
	Empty   string
}

// TableBytes bounds the table rows of one HTML file, in bytes of text plus an allowance for markup per
// cell, so that no crawl makes a file too large to open: past it, tables carry no more rows and say how
// many the CSV export has. Tables are filled in document order, so the errors come first. A variable
// only so that a test can lower it.
var TableBytes = 7 << 20

// cellMarkup is the allowance for the markup around one cell's text.
const cellMarkup = 40

// rowBudget is what is left of tableBytes while one file's tables are built.
type rowBudget struct{ left int }

func newBudget() *rowBudget { return &rowBudget{left: TableBytes} }

// table builds a table of total rows, of which avail can be asked of rowAt: at most TableRowsMax are
// carried, and none once the budget is spent.
func (b *rowBudget) table(id string, cols []cell, total, avail int, rowAt func(i int) row, empty string) htmlTable {
	t := htmlTable{ID: id, Columns: cols, Size: TablePageSize, Empty: empty}
	for i := 0; i < min(avail, total, TableRowsMax) && b.left > 0; i++ {
		r := rowAt(i)
		for _, c := range r {
			b.left -= len(c.Text) + len(c.Href) + cellMarkup
		}
		t.Shown++
		if i < TablePageSize {
			t.First = append(t.First, r)
			continue
		}
		if (i-TablePageSize)%TablePageSize == 0 {
			t.Later = append(t.Later, nil)
		}
		t.Later[len(t.Later)-1] = append(t.Later[len(t.Later)-1], r)
	}
	t.Omitted = total - t.Shown
	return t
}

func cols(names ...string) []cell {
	out := make([]cell, len(names))
	for i, n := range names {
		out[i] = cell{Text: n}
		if strings.HasPrefix(n, "#") {
			out[i] = cell{Text: n[1:], Class: "num"}
		}
	}
	return out
}

// shortener shows the site's own URLs as paths and links them to the full URL.
type shortener struct{ origins []string }

func newShortener(startURL string) shortener {
	u, err := url.Parse(startURL)
	if err != nil || u.Host == "" {
		return shortener{}
	}
	s := shortener{origins: []string{u.Scheme + "://" + u.Host}}
	if tw := frontier.Twin(u.Host); tw != "" {
		s.origins = append(s.origins, u.Scheme+"://"+tw)
	}
	return s
}

// Only the start host's origin is shortened: its twin's URLs stay whole, so that two URLs with the
// same path on the two hosts never look alike.
func (s shortener) short(u string) string {
	if len(s.origins) > 0 {
		if rest, ok := strings.CutPrefix(u, s.origins[0]); ok && strings.HasPrefix(rest, "/") {
			return rest
		}
	}
	return u
}

// all shortens every URL of the start host in a text.
func (s shortener) all(text string) string {
	if len(s.origins) > 0 {
		text = strings.ReplaceAll(text, s.origins[0]+"/", "/")
	}
	return text
}

// urlCell shows u shortened and links to it when it is an http(s) URL.
func (s shortener) urlCell(u string) cell {
	c := cell{Text: s.short(u), Class: "url"}
	if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
		c.Href = u
	}
	return c
}

func num(n int) cell { return cell{Text: Thousands(n), Class: "num"} }

// Thousands formats 12345 as "12,345".
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Colours, shared by the charts and the CSS.
const (
	colGreen  = "#2e7d32"
	colBlue   = "#1f6fb2"
	colAmber  = "#b76e00"
	colRed    = "#c62828"
	colGrey   = "#8a93a3"
	colPurple = "#6a3fa0"
	colTeal   = "#00838f"
)

// SeverityColor is the chart colour of a severity, so a finding's bar has the same colour wherever it
// appears (and the browser test can check it from the kinds table alone).
func SeverityColor(s string) string {
	switch s {
	case "error":
		return colRed
	case "warning":
		return colAmber
	}
	return colBlue
}

// chartBar is one bar of a chart.
type chartBar struct {
	Label string
	N     int
	Color string
	Tip   string // tooltip; "" = "label: n"
}

// chart is one figure of the report: a horizontal bar chart (categories) or a column chart
// (distributions). Every bar carries data-label and data-value, so tests and scripts read the figures.
type chart struct {
	ID, Title, Unit, Note string
	Bars                  []chartBar
	Columns               bool
	Empty                 string // said instead of the chart when every bar is 0
}

func (c chart) total() int {
	t := 0
	for _, b := range c.Bars {
		t += b.N
	}
	return t
}

// svg draws the chart. Every text that reaches it is escaped here.
func (c chart) svg() template.HTML {
	var b strings.Builder
	esc := html.EscapeString
	fmt.Fprintf(&b, `<figure class="chart" id="chart-%s"><figcaption>%s</figcaption>`, esc(c.ID), esc(c.Title))
	maxN, total := 0, c.total()
	for _, bar := range c.Bars {
		maxN = max(maxN, bar.N)
	}
	if total == 0 && c.Empty != "" {
		fmt.Fprintf(&b, `<p class="cnote">%s</p>`, esc(c.Empty))
	}
	tip := func(bar chartBar) string {
		if bar.Tip != "" {
			return bar.Tip
		}
		s := fmt.Sprintf("%s: %s %s", bar.Label, Thousands(bar.N), c.Unit)
		if total > 0 {
			s += fmt.Sprintf(" (%.1f%%)", 100*float64(bar.N)/float64(total))
		}
		return s
	}
	if c.Columns {
		const w, h, top, base, left = 560.0, 200.0, 18.0, 170.0, 8.0
		n := float64(max(1, len(c.Bars)))
		slot := (w - 2*left) / n
		barW := min(60, slot*0.7)
		fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" role="img" aria-label="%s">`, w, h+4, esc(c.Title))
		fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#c5cbd5"/>`, left, base, w-left, base)
		for i, bar := range c.Bars {
			x := left + slot*float64(i) + (slot-barW)/2
			bh := 0.0
			if maxN > 0 {
				bh = (base - top) * float64(bar.N) / float64(maxN)
			}
			fmt.Fprintf(&b, `<g class="bar" data-label="%s" data-value="%d"><title>%s</title>`, esc(bar.Label), bar.N, esc(tip(bar)))
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="2" fill="%s"/>`, x, base-bh, barW, bh, esc(bar.Color))
			fmt.Fprintf(&b, `<text class="val" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x+barW/2, base-bh-4, Thousands(bar.N))
			fmt.Fprintf(&b, `<text class="cl" x="%.1f" y="%.1f" text-anchor="middle">%s</text></g>`, x+barW/2, base+16, esc(bar.Label))
		}
		b.WriteString(`</svg>`)
	} else {
		const w, labelW, valueW, rowH, barH = 560.0, 190.0, 80.0, 24.0, 16.0
		h := rowH*float64(len(c.Bars)) + 6
		fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" role="img" aria-label="%s">`, w, h, esc(c.Title))
		for i, bar := range c.Bars {
			y := 3 + rowH*float64(i)
			bw := 0.0
			if maxN > 0 {
				bw = (w - labelW - valueW) * float64(bar.N) / float64(maxN)
			}
			fmt.Fprintf(&b, `<g class="bar" data-label="%s" data-value="%d"><title>%s</title>`, esc(bar.Label), bar.N, esc(tip(bar)))
			fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end">%s</text>`, labelW-8, y+barH-4, esc(bar.Label))
			fmt.Fprintf(&b, `<rect x="%g" y="%.1f" width="%.1f" height="%g" rx="2" fill="%s"/>`, labelW, y, bw, barH, esc(bar.Color))
			fmt.Fprintf(&b, `<text class="val" x="%.1f" y="%.1f">%s</text></g>`, labelW+bw+6, y+barH-4, Thousands(bar.N))
		}
		b.WriteString(`</svg>`)
	}
	if c.Note != "" {
		fmt.Fprintf(&b, `<p class="cnote">%s</p>`, esc(c.Note))
	}
	b.WriteString(`</figure>`)
	return template.HTML(b.String()) // #nosec: built above with every text escaped
}

var statusColors = map[string]string{"2xx": colGreen, "3xx": colBlue, "4xx": colAmber, "5xx": colRed,
	classNoResponse: colGrey, classBotProtection: colTeal, classBlocked: colPurple}
var indexColors = map[string]string{idxIndexable: colGreen, idxNoindex: colAmber, idxCanonical: colBlue, idxNon200: colRed,
	idxBlocked: colPurple}
var sitemapColors = map[string]string{smCrawled: colGreen, smBlocked: colPurple, smBroken: colRed, smNotCrawled: colGrey}

func colorOr(m map[string]string, k, def string) string {
	if c, ok := m[k]; ok {
		return c
	}
	return def
}

// charts are the report's six figures, in order.
func (d *reportData) charts(s Summary) []chart {
	var out []chart
	st := chart{ID: "status", Title: "Pages by status class", Unit: "pages",
		Note: "A URL that redirected counts as 3xx, whatever its chain ended in; blocked URLs were never requested."}
	for _, c := range s.Status {
		st.Bars = append(st.Bars, chartBar{Label: c.Label, N: c.N, Color: colorOr(statusColors, c.Label, colGrey)})
	}
	out = append(out, st)

	dp := chart{ID: "depth", Title: "Crawl depth", Unit: "pages", Columns: true, Empty: "No pages.",
		Note: "Link hops from the start page (0); sitemap-only URLs are depth 1."}
	for _, c := range s.Depth {
		dp.Bars = append(dp.Bars, chartBar{Label: c.Label, N: c.N, Color: colTeal})
	}
	out = append(out, dp)

	rt := chart{ID: "response", Title: "Response time", Unit: "pages", Columns: true, Empty: "No page was answered."}
	for _, c := range s.Response {
		rt.Bars = append(rt.Bars, chartBar{Label: c.Label, N: c.N, Color: colBlue})
	}
	if s.ResponseP50 > 0 || s.ResponseP90 > 0 {
		rt.Note = fmt.Sprintf("Median %s ms, 90th percentile %s ms: the server's time for each page answered, first byte plus download (never the crawler's own waits).",
			strconv.FormatFloat(s.ResponseP50, 'f', 1, 64), strconv.FormatFloat(s.ResponseP90, 'f', 1, 64))
	}
	out = append(out, rt)

	fk := chart{ID: "findings", Title: "Findings by kind and severity", Unit: "findings", Empty: "No findings."}
	for _, k := range s.Kinds {
		fk.Bars = append(fk.Bars, chartBar{Label: k.Kind, N: k.N, Color: SeverityColor(k.Severity),
			Tip: fmt.Sprintf("%s (%s): %s", findings.InfoOf(k.Kind).Title, k.Severity, Thousands(k.N))})
	}
	var sev []string
	for _, c := range s.Severity {
		sev = append(sev, fmt.Sprintf("%s %s", Thousands(c.N), c.Label+store.Plural(c.N)))
	}
	fk.Note = "Red: errors, amber: warnings, blue: notices. " + strings.Join(sev, ", ") + "."
	out = append(out, fk)

	sm := chart{ID: "sitemap", Title: "Sitemap coverage", Unit: "URLs",
		Empty: "No sitemap: robots.txt advertises none, and Crawl Cove never guesses one."}
	if s.SitemapTotal > 0 {
		sm.Bars = append(sm.Bars, chartBar{Label: "listed", N: s.SitemapTotal, Color: colTeal,
			Tip: fmt.Sprintf("listed: %s distinct URLs in the sitemaps", Thousands(s.SitemapTotal))})
		sm.Note = "Of the distinct URLs the sitemaps list: crawled and working, blocked by robots.txt, broken, or not crawled (left out by the page limit)."
	}
	for _, c := range s.Sitemap {
		sm.Bars = append(sm.Bars, chartBar{Label: c.Label, N: c.N, Color: colorOr(sitemapColors, c.Label, colGrey)})
	}
	out = append(out, sm)

	ix := chart{ID: "indexability", Title: "Indexability", Unit: "URLs",
		Note: "Each URL once: blocked, else not answering 200 itself, else noindex, else a canonical naming another URL."}
	for _, c := range s.Index {
		ix.Bars = append(ix.Bars, chartBar{Label: c.Label, N: c.N, Color: colorOr(indexColors, c.Label, colGrey)})
	}
	out = append(out, ix)
	return out
}

// tile is one figure at the top of the report.
type tile struct {
	N     string
	Label string
	Class string
}

// kindSection is one finding kind with its affected URLs (the first KindRowsMax of them).
type kindSection struct {
	Info     findings.KindInfo
	Severity string
	N        int
	Open     bool
	Table    htmlTable
}

// categorySection is one category of finding kinds: its count per severity, its chart and its kinds.
type categorySection struct {
	ID    string
	Count CategoryCount
	Chart template.HTML
	Kinds []kindSection
}

// kv is one line of a definition list.
type kv struct {
	K string
	V string
}

// reportHead is the report's top: the crawl, the tiles and the charts.
type reportHead struct {
	Crawl    *store.CrawlRow
	Site     string
	Duration string
	Tiles    []tile
	Charts   []template.HTML
}

// findingsHead opens the findings section: the kinds found and the categories' counts.
type findingsHead struct {
	Overview   htmlTable
	Categories htmlTable
	Clean      string // the categories without a finding
}

// tableSection is one section holding one table.
type tableSection struct {
	ID, Title, Note string
	Table           htmlTable
}

// pageView is the document's frame: the report's or the comparison's sections are written between
// its head and its foot.
type pageView struct {
	Title     string
	CSP       string
	CSS       template.CSS
	JS        template.JS
	Generated string
}

func newPage(title string, now time.Time) *pageView {
	return &pageView{Title: title, CSP: reportCSP, CSS: template.CSS(reportCSS), JS: template.JS(reportScript),
		Generated: now.UTC().Format("2006-01-02 15:04 UTC")}
}

// pageTemplate holds the document's parts. The report is written part by part (head, each section,
// foot), each executed as soon as its rows are read, so the whole report is never in memory.
var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{"thousands": Thousands}).Parse(`
{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>{{.CSS}}</style>
</head>
<body>
{{end}}
{{define "foot"}}
<footer>Generated {{.Generated}} by Crawl Cove (<code>go run ./examples/audit report</code>). Self-contained: this file makes no request of any kind. Its lists are capped to keep it small; every row of every table: <code>audit report -format csv</code> or <code>-format json</code>, or SQL on the database.</footer>
<script>{{.JS}}</script>
</body></html>
{{end}}
{{define "table"}}{{if or .Shown .Omitted}}<div class="tbl" id="{{.ID}}"{{if .Later}} data-paged data-size="{{.Size}}" data-rows="{{.Shown}}"{{end}}>
<table><thead><tr>{{range .Columns}}<th scope="col"{{if .Class}} class="{{.Class}}"{{end}}>{{.Text}}</th>{{end}}</tr></thead>
<tbody>{{range .First}}{{template "row" .}}{{end}}</tbody>{{range .Later}}
<template>{{range .}}{{template "row" .}}{{end}}</template>{{end}}
</table>{{if .Later}}
<div class="pager" hidden><button type="button" data-dir="-1">‹ Previous</button><span class="pos"></span><button type="button" data-dir="1">Next ›</button></div>
<noscript><p class="note">Showing the first {{.Size}} of {{thousands .Shown}} rows; the others need JavaScript (or see the CSV export).</p></noscript>{{end}}{{if .Omitted}}
<p class="note more">and {{thousands .Omitted}} more rows are not in this file: <code>audit report -format csv</code> has every one{{if .SQL}}, or the SQL <code>{{.SQL}}</code>{{end}}.</p>{{end}}
</div>{{else}}<p class="empty" id="{{.ID}}">{{.Empty}}</p>{{end}}{{end}}
{{define "row"}}<tr>{{range .}}<td{{if .Class}} class="{{.Class}}"{{end}}>{{if .Badge}}<span class="badge {{.Badge}}">{{.Text}}</span>{{else if .Href}}<a href="{{.Href}}" rel="noreferrer">{{.Text}}</a>{{else}}{{.Text}}{{end}}</td>{{end}}</tr>
{{end}}
{{define "reporthead"}}<header class="top"><div class="in">
<h1>Crawl Cove audit: {{.Site}}</h1>
<p>Crawl {{.Crawl.ID}} of <a href="{{.Crawl.StartURL}}" rel="noreferrer">{{.Crawl.StartURL}}</a> · started {{.Crawl.Started.UTC.Format "2006-01-02 15:04:05 UTC"}}{{if .Duration}} · took {{.Duration}}{{end}} · <span class="badge {{.Crawl.Outcome}}" id="outcome">{{.Crawl.Outcome}}</span></p>
{{if .Crawl.Message}}<p id="message">{{.Crawl.Message}}</p>{{end}}
<nav class="toc"><a href="#summary">Summary</a><a href="#charts">Charts</a><a href="#findings">Findings</a><a href="#linkscore">Top pages by link score</a><a href="#inlinks">Top pages by inlinks</a><a href="#orphans">Orphan pages</a><a href="#redirects">Redirect chains</a><a href="#blocked">Blocked URLs</a><a href="#politeness">Politeness record</a></nav>
</div></header>
<main>
<section id="summary"><div class="tiles">{{range .Tiles}}<div class="tile {{.Class}}" data-tile="{{.Label}}"><span class="n">{{.N}}</span><span class="l">{{.Label}}</span></div>{{end}}</div></section>
<section id="charts"><h2>Charts</h2><div class="charts">{{range .Charts}}{{.}}{{end}}</div></section>
{{end}}
{{define "findingshead"}}<section id="findings"><h2>Findings</h2>
<h3>By category</h3>
{{template "table" .Categories}}{{if .Clean}}<p class="note" id="clean-categories">No finding in: {{.Clean}}.</p>{{end}}
<h3>Every kind found</h3>
{{template "table" .Overview}}
{{end}}
{{define "category"}}<section class="category" id="{{.ID}}" data-category="{{.Count.Category}}">
<h3 class="cat">{{.Count.Category}}</h3>
<p class="sevcounts"><span class="badge error" data-severity="error">{{thousands .Count.Errors}} error{{if ne .Count.Errors 1}}s{{end}}</span> <span class="badge warning" data-severity="warning">{{thousands .Count.Warnings}} warning{{if ne .Count.Warnings 1}}s{{end}}</span> <span class="badge notice" data-severity="notice">{{thousands .Count.Notices}} notice{{if ne .Count.Notices 1}}s{{end}}</span></p>
{{.Chart}}
{{range .Kinds}}<details class="kind {{.Severity}}" id="kind-{{.Info.Kind}}" data-kind="{{.Info.Kind}}" data-count="{{.N}}"{{if .Open}} open{{end}}>
<summary><span class="badge {{.Severity}}">{{.Severity}}</span><b>{{.Info.Title}}</b><code>{{.Info.Kind}}</code><span class="cnt">{{thousands .N}}</span></summary>
<p class="advice">{{.Info.Advice}}</p>
{{template "table" .Table}}
</details>
{{end}}</section>
{{end}}
{{define "findingsfoot"}}</section>
{{end}}
{{define "tablesection"}}<section id="{{.ID}}"><h2>{{.Title}}</h2>{{if .Note}}<p class="note">{{.Note}}</p>{{end}}{{template "table" .Table}}</section>
{{end}}
{{define "politeness"}}<section id="politeness"><h2>Politeness record</h2><dl class="kv">{{range .}}<dt>{{.K}}</dt><dd>{{.V}}</dd>{{end}}</dl></section>
</main>{{end}}
`))

// siteName is the host of the start URL, for titles.
func siteName(start string) string {
	if u, err := url.Parse(start); err == nil && u.Host != "" {
		return u.Host
	}
	return start
}

// KindRowsMax is the most pages a kind's list carries into the report (the CSV export and the SQL its
// note names have all of them): with a hundred kinds and more, it is what keeps the file small. A
// variable only so that a test can change it.
var KindRowsMax = 50

// topPagesMax is the length of the "top pages" tables (by link score, by inlinks).
const topPagesMax = 50

// categoryID is the element id of a category's section.
func categoryID(cat string) string {
	return "cat-" + strings.ToLower(strings.Join(strings.Fields(cat), "-"))
}

// sqlQuote is s as an SQL string literal.
func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// scoreCell is a page's link score, or a dash when it has none (not computed, or an older database).
func scoreCell(p pageRow, ok bool) cell {
	if !ok || !p.Score.Valid {
		return cell{Text: "–", Class: "num"}
	}
	return num(int(p.Score.Int64))
}

// reportWriter writes one report, section by section.
type reportWriter struct {
	d   *reportData
	w   io.Writer
	sh  shortener
	b   *rowBudget
	sum Summary
}

func (rw *reportWriter) exec(name string, v any) error {
	return pageTemplate.ExecuteTemplate(rw.w, name, v)
}

// WriteHTML writes the report of d to w, streaming: each section is read from the database and written
// before the next is read, and every list is capped (KindRowsMax, TableRowsMax, TableBytes), so memory
// and the file's size stay bounded however large the crawl.
func WriteHTML(w io.Writer, d *reportData, now time.Time) error {
	p := newPage(fmt.Sprintf("Crawl Cove audit: %s, crawl %d", siteName(d.Crawl.StartURL), d.Crawl.ID), now)
	s, err := d.summarize()
	if err != nil {
		return err
	}
	rw := &reportWriter{d: d, w: w, sh: newShortener(d.Crawl.StartURL), b: newBudget(), sum: s}
	steps := []func() error{
		func() error { return rw.exec("head", p) },
		rw.head, rw.findings, rw.linkScore, rw.inlinks, rw.orphans, rw.redirects, rw.blocked,
		func() error { return rw.exec("politeness", d.politeness(s)) },
		func() error { return rw.exec("foot", p) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

func (rw *reportWriter) head() error {
	d, s := rw.d, rw.sum
	v := reportHead{Crawl: d.Crawl, Site: siteName(d.Crawl.StartURL)}
	if dur := d.Crawl.Duration(); dur > 0 {
		v.Duration = dur.Round(time.Millisecond).String()
	}
	sev := map[string]int{}
	for _, c := range s.Severity {
		sev[c.Label] = c.N
	}
	v.Tiles = []tile{
		{Thousands(s.Pages), "URLs in the crawl", ""},
		{Thousands(s.Fetched), "fetched", ""},
		{Thousands(s.Blocked), "blocked by robots.txt", ""},
		{Thousands(s.Errors), ErrorsCard, ""},
		{Thousands(sev["error"]), "errors", "error"},
		{Thousands(sev["warning"]), "warnings", "warning"},
		{Thousands(sev["notice"]), "notices", "notice"},
		{Thousands(d.Crawl.Requests), "HTTP requests", ""},
	}
	for _, c := range d.charts(s) {
		v.Charts = append(v.Charts, c.svg())
	}
	return rw.exec("reporthead", v)
}

// findings writes the findings section: the categories' counts, the kinds, then one section per
// category with its chart and a capped page list per kind.
func (rw *reportWriter) findings() error {
	s := rw.sum
	b := rw.b
	var fh findingsHead
	fh.Categories = b.table("categories-table", cols("Category", "#Errors", "#Warnings", "#Notices", "#Kinds found"), len(s.Categories), len(s.Categories),
		func(i int) row {
			c := s.Categories[i]
			return row{{Text: c.Category, Href: "#" + categoryID(c.Category)}, num(c.Errors), num(c.Warnings), num(c.Notices), num(c.Kinds)}
		}, "No findings.")
	found := map[string]bool{}
	for _, c := range s.Categories {
		found[c.Category] = true
	}
	var clean []string
	for _, c := range findings.Categories {
		if !found[c] && len(findings.KindsOf(c)) > 0 {
			clean = append(clean, c)
		}
	}
	fh.Clean = strings.Join(clean, ", ")
	fh.Overview = b.table("findings-overview", cols("Severity", "Finding", "Kind", "#Count", "Why it matters / how to fix"), len(s.Kinds), len(s.Kinds),
		func(i int) row {
			k := s.Kinds[i]
			info := findings.InfoOf(k.Kind)
			return row{{Text: k.Severity, Badge: k.Severity}, {Text: info.Title, Href: "#kind-" + info.Kind},
				{Text: info.Kind}, num(k.N), {Text: info.Advice, Class: "detail"}}
		}, "No findings.")
	if err := rw.exec("findingshead", fh); err != nil {
		return err
	}
	for _, c := range s.Categories {
		sec, err := rw.category(c)
		if err != nil {
			return err
		}
		if err := rw.exec("category", sec); err != nil {
			return err
		}
	}
	return rw.exec("findingsfoot", nil)
}

// category reads one category's kinds: their first KindRowsMax findings each, with the pages' inlinks
// and link scores.
func (rw *reportWriter) category(c CategoryCount) (categorySection, error) {
	d := rw.d
	sec := categorySection{ID: categoryID(c.Category), Count: c}
	ch := chart{ID: "cat-" + strings.TrimPrefix(sec.ID, "cat-"), Title: c.Category + ": findings by kind", Unit: "findings"}
	for _, k := range rw.sum.Kinds {
		if k.Category != c.Category {
			continue
		}
		info := findings.InfoOf(k.Kind)
		ch.Bars = append(ch.Bars, chartBar{Label: k.Kind, N: k.N, Color: SeverityColor(k.Severity),
			Tip: fmt.Sprintf("%s (%s): %s", info.Title, k.Severity, Thousands(k.N))})
		var fs []store.FindingRecord
		err := eachRow(d.ctx, d.db, `SELECT url, detail FROM findings WHERE crawl_id = ? AND kind = ? ORDER BY id LIMIT ?`,
			[]any{d.Crawl.ID, k.Kind, min(KindRowsMax, TableRowsMax)}, func(scan func(...any) error) error {
				f := store.FindingRecord{Kind: k.Kind}
				if err := scan(&f.URL, &f.Detail); err != nil {
					return err
				}
				fs = append(fs, f)
				return nil
			})
		if err != nil {
			return sec, fmt.Errorf("read findings: %w", err)
		}
		urls := make([]string, len(fs))
		for i, f := range fs {
			urls[i] = f.URL
		}
		in, err := d.inlinksOf(urls)
		if err != nil {
			return sec, fmt.Errorf("read links: %w", err)
		}
		pages, err := d.pagesOf(urls)
		if err != nil {
			return sec, fmt.Errorf("read pages: %w", err)
		}
		ks := kindSection{Info: info, Severity: k.Severity, N: k.N, Open: info.Severity == findings.SevError}
		ks.Table = rw.b.table("kind-"+k.Kind+"-urls", cols("URL", "Detail", "Linked from", "#Link score"), k.N, len(fs), func(i int) row {
			p, ok := pages[fs[i].URL]
			return row{rw.sh.urlCell(fs[i].URL), {Text: rw.sh.all(fs[i].Detail), Class: "detail"},
				{Text: linkedFrom(in[fs[i].URL], rw.sh), Class: "detail"}, scoreCell(p, ok)}
		}, "")
		ks.Table.SQL = fmt.Sprintf("SELECT url, detail FROM findings WHERE crawl_id = %d AND kind = %s", d.Crawl.ID, sqlQuote(k.Kind))
		sec.Kinds = append(sec.Kinds, ks)
	}
	sec.Chart = ch.svg()
	return sec, nil
}

// pageColumnsOf is the status, title and depth cells of a listed URL.
func pageCells(p pageRow, ok bool) []cell {
	if !ok {
		return []cell{{Text: "not crawled"}, {}, {}}
	}
	return []cell{{Text: statusText(p.PageRecord)}, {Text: p.Title}, num(p.Depth)}
}

func (rw *reportWriter) linkScore() error {
	d := rw.d
	sec := tableSection{ID: "linkscore", Title: "Top pages by link score",
		Note: "Link score: the internal PageRank of each page over the crawl's links (damping 0.85, nofollow links left out, redirects passing to their target), scaled 0–100."}
	if !d.cols.LinkScore {
		sec.Table = htmlTable{ID: "linkscore-table", Empty: "No link score: this database was written by a version of Crawl Cove before the link score. Crawl again to get it."}
		return rw.exec("tablesection", sec)
	}
	top, _, err := d.pageList(`WHERE p.crawl_id = ? AND p.link_score IS NOT NULL`, `ORDER BY p.link_score DESC, p.url`, topPagesMax, d.Crawl.ID)
	if err != nil {
		return fmt.Errorf("read link scores: %w", err)
	}
	urls := make([]string, len(top))
	for i, p := range top {
		urls[i] = p.URL
	}
	in, err := d.inlinksOf(urls)
	if err != nil {
		return fmt.Errorf("read links: %w", err)
	}
	sec.Table = rw.b.table("linkscore-table", cols("URL", "#Link score", "#Inlinks", "Status", "Title", "#Depth"), len(top), len(top), func(i int) row {
		p := top[i]
		return append(row{rw.sh.urlCell(p.URL), scoreCell(p, true), num(in[p.URL].N)}, pageCells(p, true)...)
	}, "No link score yet: the pass after the crawl has not written one (an interrupted crawl gets it when it is resumed to the end).")
	return rw.exec("tablesection", sec)
}

func (rw *reportWriter) inlinks() error {
	d := rw.d
	top, err := d.topInlinks(topPagesMax)
	if err != nil {
		return fmt.Errorf("read links: %w", err)
	}
	urls := make([]string, len(top))
	for i, t := range top {
		urls[i] = t.URL
	}
	pages, err := d.pagesOf(urls)
	if err != nil {
		return fmt.Errorf("read pages: %w", err)
	}
	sec := tableSection{ID: "inlinks", Title: "Top pages by inlinks"}
	sec.Table = rw.b.table("inlinks-table", cols("URL", "#Inlinks", "Status", "Title", "#Depth", "#Link score"), len(top), len(top), func(i int) row {
		p, ok := pages[top[i].URL]
		return append(append(row{rw.sh.urlCell(top[i].URL), num(top[i].N)}, pageCells(p, ok)...), scoreCell(p, ok))
	}, "No internal links.")
	return rw.exec("tablesection", sec)
}

func (rw *reportWriter) orphans() error {
	d := rw.d
	orph, total, err := d.orphans(TableRowsMax)
	if err != nil {
		return fmt.Errorf("read sitemap URLs: %w", err)
	}
	urls := make([]string, len(orph))
	for i, o := range orph {
		urls[i] = o.URL
	}
	pages, err := d.pagesOf(urls)
	if err != nil {
		return fmt.Errorf("read pages: %w", err)
	}
	sec := tableSection{ID: "orphans", Title: "Orphan pages", Note: "Listed in a sitemap, but no crawled page links to them."}
	sec.Table = rw.b.table("orphans-table", cols("URL", "Status", "Listed in"), total, len(orph), func(i int) row {
		o := orph[i]
		st := "not crawled"
		if p, ok := pages[o.URL]; ok {
			st = statusText(p.PageRecord)
		}
		return row{rw.sh.urlCell(o.URL), {Text: st}, rw.sh.urlCell(o.Sitemap)}
	}, "No orphan pages: every URL the sitemaps list is linked from a crawled page (or no sitemap was advertised).")
	return rw.exec("tablesection", sec)
}

func (rw *reportWriter) redirects() error {
	d := rw.d
	red, total, err := d.pageList(`WHERE p.crawl_id = ? AND p.redirect_count > 0`, `ORDER BY p.redirect_count DESC, p.url`, TableRowsMax, d.Crawl.ID)
	if err != nil {
		return fmt.Errorf("read redirects: %w", err)
	}
	sec := tableSection{ID: "redirects", Title: "Redirect chains"}
	sec.Table = rw.b.table("redirects-table", cols("URL", "#Hops", "Chain", "Ends in"), total, len(red), func(i int) row {
		p := red[i].PageRecord
		return row{rw.sh.urlCell(p.URL), num(len(p.Redirects)), {Text: rw.sh.all(findings.Chain(p)), Class: "detail"}, {Text: rw.sh.all(endText(p)), Class: "detail"}}
	}, "No redirects.")
	sec.Table.SQL = fmt.Sprintf("SELECT url, redirects FROM pages WHERE crawl_id = %d AND redirect_count > 0", d.Crawl.ID)
	return rw.exec("tablesection", sec)
}

func (rw *reportWriter) blocked() error {
	d := rw.d
	bl, total, err := d.pageList(`WHERE p.crawl_id = ? AND p.blocked_by_robots = 1`, `ORDER BY p.url`, TableRowsMax, d.Crawl.ID)
	if err != nil {
		return fmt.Errorf("read blocked URLs: %w", err)
	}
	sec := tableSection{ID: "blocked", Title: "Blocked URLs", Note: "Disallowed by robots.txt: kept out of the queue, never requested."}
	sec.Table = rw.b.table("blocked-table", cols("URL", "Robots rule", "Found on"), total, len(bl), func(i int) row {
		p := bl[i].PageRecord
		found := p.FoundOn
		if found == "" {
			found = p.Source
		}
		return row{rw.sh.urlCell(p.URL), {Text: findings.OrDash(p.RobotsRule), Class: "detail"}, {Text: rw.sh.short(found), Class: "url"}}
	}, "robots.txt kept no URL of this crawl out.")
	sec.Table.SQL = fmt.Sprintf("SELECT url, robots_rule FROM pages WHERE crawl_id = %d AND blocked_by_robots = 1", d.Crawl.ID)
	return rw.exec("tablesection", sec)
}

// linkedFrom names the first pages linking to a URL, for the findings tables.
func linkedFrom(in store.Inlinks, sh shortener) string {
	if in.N == 0 {
		return "–"
	}
	names := make([]string, len(in.First))
	for i, f := range in.First {
		names[i] = sh.short(f)
	}
	s := fmt.Sprintf("%s page%s: %s", Thousands(in.N), store.Plural(in.N), strings.Join(names, ", "))
	if in.N > len(in.First) {
		s += ", …"
	}
	return s
}

// ErrorsCard is the summary card of the URLs that answered 4xx/5xx or not at all, counted as in the status
// chart: by each URL's own answer (a redirect is 3xx, whatever its chain ended in).
const ErrorsCard = "answered 4xx/5xx or not at all (own answer: a redirect is 3xx)"

// statusText is a URL's own answer, as the tables show it.
func statusText(p *store.PageRecord) string {
	switch {
	case p.Blocked:
		return "blocked"
	case len(p.Redirects) > 0:
		return fmt.Sprintf("%d → %s", p.Redirects[0].Status, p.Redirects[0].Location)
	case p.Status == 0 && p.ErrKind != "":
		return "no response (" + p.ErrKind + ")"
	case p.Status == 0:
		return "no response"
	}
	return strconv.Itoa(p.Status)
}

// endText is where a redirect chain ended.
func endText(p *store.PageRecord) string {
	switch {
	case p.Err != "":
		return p.Err
	case p.Status != 0:
		return fmt.Sprintf("%d %s", p.Status, p.FinalURL)
	}
	return "–"
}

// politeness is the crawl's record of manners: what it sent, how fast, and whether a 429 slowed it.
func (d *reportData) politeness(s Summary) []kv {
	c := d.Crawl
	set := c.Settings
	out := []kv{
		{"User-Agent sent", c.UserAgent},
		{"robots.txt tokens", c.Token + " (the first a group names decides; robots.txt fetched first and obeyed; Crawl-delay not read)"},
		{"Requests", fmt.Sprintf("%s in all: %s for pages (%s retries; redirect hops included), %s for robots.txt, sitemaps, llms.txt and probes",
			Thousands(c.Requests), Thousands(s.Attempts), Thousands(s.Retries), Thousands(max(0, c.Requests-s.Attempts)))},
		{"In flight at most", fmt.Sprintf("%d", set.Concurrency)},
		{"Gap between request starts", findings.OrDash(set.Gap)},
		{"Timeout per request", findings.OrDash(set.Timeout)},
		{"Limits", fmt.Sprintf("%d pages, depth %d", set.MaxPages, set.MaxDepth)},
	}
	if dur := c.Duration(); dur > 0 {
		out = append(out, kv{"Duration", fmt.Sprintf("%s (%.1f requests/s on average)", dur.Round(time.Millisecond),
			float64(c.Requests)/dur.Seconds())})
	}
	if c.SlowedBy != "" {
		at := "at an unrecorded time"
		if !c.SlowedAt.IsZero() {
			at = "at " + c.SlowedAt.UTC().Format("15:04:05 UTC")
			if !c.Started.IsZero() {
				at += fmt.Sprintf(", %s into the crawl", c.SlowedAt.Sub(c.Started).Round(time.Millisecond))
			}
		}
		out = append(out, kv{"Slowed down by a 429", fmt.Sprintf("yes: %s answered 429 %s; the rest of the run went one request at a time with a 3 s gap",
			c.SlowedBy, at)})
	} else {
		out = append(out, kv{"Slowed down by a 429", "no: no 429 was answered, the run kept its limits"})
	}
	out = append(out, kv{"URLs kept out by robots.txt", Thousands(s.Blocked) + " (never requested)"})
	return out
}
