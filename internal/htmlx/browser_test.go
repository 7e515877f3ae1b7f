package htmlx

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html/atom"

	"github.com/politecrawl/polite/internal/testbrowser"
)

// browserDocs are pages whose extraction must agree with what Chromium's
// DOM says (title, headings, visible words, links, canonical). They cover
// the HTML standard's tree construction rules the extractor models.
var browserDocs = []string{
	`<!doctype html><html lang=en><head><title> Blue  widgets </title><meta name=description content=" Widgets. ">
<link rel="Canonical stylesheet" href="/c"><base href="/base/"></head><body><h1>Blue <b>widgets</b></h1>
<p>Hello<br>world, <a href="x?y#z">a link</a> and <img src=i.png alt="an image">.</p></body></html>`,
	`<h1>Title</h2><p>Body text</p>`,
	`<h1>One<h2>Two</h2>Three`,
	`<div><h1>In div</div><p>after</p>`,
	`<ul><li><h1>Item</li><li>next</ul>`,
	`<h1>Head</div>line</h1>tail`,
	`<b><h1>Bold</b> head</h1>tail`,
	`<h1>a<span><h1>b</h1>c</span></h1>d`,
	`<h1/>Open<p>para</p></h1>after`,
	`<h1>x<table><tr><td>cell</h1>more</td></tr></table>y</h1>z`,
	`<table><tr><td><h1>a<td>b</table>`,
	`<svg><h1>Out</h1><title>t</title></svg><title>Doc</title>`,
	`<h1>Runs <b>to the end`,
	`<head><template><title>T</title><link rel=canonical href=/c></template><title>Real</title></head>
<body><template><h1>h</h1><a href=/in>in</a></template><a href=/out>out</a><h1>Seen</h1></body>`,
	`<svg><template><a href="/svg-link"><text>icon</text></a></template></svg>`,
	`<center>one</center>two`,
	`<menu><li>a</menu>b<dir>c</dir><hgroup>d</hgroup><search>e</search><listing>f</listing>g`,
	`one</div>two`, `one</h2>two`, `one</p>two`, `one</br>two`, `one<body>two`, `<xmp><b>raw</b></xmp>shown`,
	"<h1>x\x00y</h1><p>a\x00b \x00 c</p><a href=/l>li\x00nk</a><title>t\x00t</title><p><svg><text>s\x00</text></svg>",
	`<svg><style><a href="/in-style">s</a></style><title>tip</title><desc>d</desc>
<a href="/svg"><text>Icon</text></a><foreignObject><p>html <a href="/fo">fo</a></p></foreignObject></svg>
<math><mi><b>x</b></mi><annotation-xml encoding="text/html"><title>inner</title></annotation-xml></math><title>Doc</title>`,
	`<a href=/1>one<a href=/2>two</a></a><a href=/3><div>block</div>three</a>`,
	`<p>para <a href=/p>in p</p> after</a> done`,
	`<dl><dt>term<dd>def<dt>t2</dl><ol><li>one<li>two<ul><li>inner</ul></ol>`,
	`<button>b1<button>b2</button></button><select><option>o1<option>o2<optgroup label=g><option>o3</select>`,
	`<p>one<p>two<div>three</div><h3>four</h3><hr>five<pre>six</pre>`,
	`<title>a &amp; b &lt;c&gt; &nbsp;d</title><h1>&eacute;t&eacute;&nbsp;&nbsp;hot</h1>`,
	`<textarea><b>typed</b> &amp; text</textarea><h1><textarea>in</textarea>h</h1>`,
	`<image src=/old.png><area href=/area alt=x><iframe src=/frame.html>fallback</iframe><script src=/s.js></script>`,
	`<h1>a<template>hidden</template>b</h1><h1><script>x</script>c<style>y</style></h1>`,
	`<math><mi><h1>in mi</h1></mi></math><svg><foreignObject><h1>in fo</h1></foreignObject></svg>`,
	`<form><h1>f</form>x</h1><object><h1>o</object>y</h1></object>`,
	`<h2>a<h1>b</h2>c</h1>d`,
	`<h1>a<p>b</h1>c`,
	`<h1>a<li>b</h1>c`,
	`<h1>a<dd>b<dt>c</h1>d`,
	`<a href=/a><h1>in a</h1></a><h1><a href=/b>b</a></h1>`,
	`<a href=/x>link</h2>text</a><h1><x-a></x-b><h1>in</h1>still</h1>`,
	`<svg><style><foreignObject><h1>hidden</h1></foreignObject></style><![CDATA[cdata]]></svg><form><form>f</form>g</form>`,
}

var chromiumFlags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync"}

// domFields is what the reference script reads from Chromium's DOM.
type domFields struct {
	Title      []string   `json:"title"` // text of each HTML <title>
	H1         []string   `json:"h1"`
	Words      []string   `json:"words"`
	Links      [][]string `json:"links"` // tag, raw
	Canonical  *string    `json:"canonical"`
	Descr      *string    `json:"descr"`
	Base       *string    `json:"base"`
	AnchorText [][]string `json:"anchors"` // raw href, text
}

// browserHarness parses each document with DOMParser and reads the fields by
// the package's rules: visible text skips the raw-text elements, templates
// and SVG/MathML script, style, title and desc; the block elements of
// isBlock separate words.
const browserHarness = `<!doctype html><meta charset=utf-8><pre id=out></pre><script id=docs type=application/json>DOCS</script><script>
const HTML = "http://www.w3.org/1999/xhtml";
const BLOCK = new Set(BLOCKS);
const SKIP = new Set(["script","style","noscript","iframe","noembed","noframes","title","template"]);
const FHIDDEN = new Set(["script","style","title","desc"]);
const SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;
function words(root, alt) {
  const parts = [];
  (function walk(n) {
    for (const c of n.childNodes) {
      if (c.nodeType === Node.TEXT_NODE) { parts.push(c.data); continue; }
      if (c.nodeType !== Node.ELEMENT_NODE) continue;
      const html = c.namespaceURI === HTML, name = c.localName.toLowerCase();
      if (html ? SKIP.has(name) : FHIDDEN.has(name)) continue;
      const block = html && BLOCK.has(name);
      if (block) parts.push(" ");
      if (alt && html && name === "img" && c.getAttribute("alt")) parts.push(" " + c.getAttribute("alt"));
      walk(c);
      if (block) parts.push(" ");
    }
  })(root);
  return parts.join("").split(SPACE).filter(w => w !== "");
}
function hidden(e) {
  for (let a = e.parentElement; a; a = a.parentElement) {
    if (a.namespaceURI === HTML ? SKIP.has(a.localName) : FHIDDEN.has(a.localName)) return true;
  }
  return false;
}
const res = [];
for (const src of JSON.parse(document.getElementById("docs").textContent)) {
  const doc = new DOMParser().parseFromString(src, "text/html");
  const r = {title: [], h1: [], links: [], anchors: [], canonical: null, descr: null, base: null};
  r.words = words(doc.documentElement);
  for (const e of doc.querySelectorAll("*")) {
    const html = e.namespaceURI === HTML, name = e.localName;
    if (html && name === "title") r.title.push(e.textContent.split(SPACE).filter(w => w !== "").join(" "));
    if (html && name === "h1") r.h1.push(hidden(e) ? "" : words(e).join(" "));
    if (html && name === "base" && e.hasAttribute("href") && r.base === null) r.base = e.getAttribute("href");
    if (html && name === "meta" && (e.getAttribute("name")||"").trim().toLowerCase() === "description" && r.descr === null) r.descr = (e.getAttribute("content")||"").trim();
    if (html && name === "link" && (e.getAttribute("rel")||"").toLowerCase().split(SPACE).includes("canonical") && e.getAttribute("href") && r.canonical === null) r.canonical = e.getAttribute("href");
    const attr = (html && (name === "img" || name === "script" || name === "iframe" || name === "frame")) ? "src" :
      ((name === "a" || (html && (name === "area" || name === "link"))) ? "href" : "");
    if (attr && e.hasAttribute(attr) && e.getAttribute(attr) !== "") {
      r.links.push([name, e.getAttribute(attr)]);
      if (name === "a") r.anchors.push([e.getAttribute("href"), hidden(e) ? "" : words(e, true).join(" ")]);
    }
  }
  res.push(r);
}
document.getElementById("out").textContent = btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(res))));
</script>`

// runChromium parses docs in Chromium and returns the fields of each.
func runChromium(t *testing.T, docs []string) []domFields {
	t.Helper()
	bin := testbrowser.Path(t)
	var blocks []string
	for _, name := range strings.Fields(htmlElements) {
		if isBlock(atom.Lookup([]byte(name))) {
			blocks = append(blocks, name)
		}
	}
	bj, _ := json.Marshal(blocks)
	dj, _ := json.Marshal(docs)
	// </script> inside the JSON would end the script element early.
	dj = bytes.ReplaceAll(dj, []byte("</"), []byte(`<\/`))
	page := strings.NewReplacer("DOCS", string(dj), "BLOCKS", string(bj)).Replace(browserHarness)
	var fields []domFields
	require.NoError(t, json.Unmarshal(dumpResult(t, bin, page), &fields))
	require.Len(t, fields, len(docs))
	return fields
}

// dumpResult loads page in Chromium and returns what its script left,
// base64-encoded, in <pre id=out>.
func dumpResult(t *testing.T, bin, page string) []byte {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "harness.html")
	require.NoError(t, os.WriteFile(file, []byte(page), 0o600))

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append(slices.Clone(chromiumFlags), "--user-data-dir="+filepath.Join(dir, "profile"), "--dump-dom", "file://"+file)
	out, err := exec.CommandContext(ctx, bin, args...).Output()
	require.NoError(t, err, "chromium --dump-dom")
	m := regexp.MustCompile(`<pre id="out">([A-Za-z0-9+/=]*)</pre>`).FindSubmatch(out)
	require.NotNil(t, m, "no result in the dumped DOM:\n%.2000s", out)
	raw, err := base64.StdEncoding.DecodeString(string(m[1]))
	require.NoError(t, err)
	return raw
}

// resolveHarness resolves each [page, href] pair with the browser's URL
// parser, as an <a href> on that page would be, without the fragment ("" for a
// failure).
const resolveHarness = `<!doctype html><meta charset=utf-8><pre id=out></pre><script id=cases type=application/json>CASES</script><script>
const res = [];
for (const [page, href] of JSON.parse(document.getElementById("cases").textContent)) {
  try { const u = new URL(href, page); u.hash = ""; res.push(u.href); } catch (e) { res.push(""); }
}
document.getElementById("out").textContent = btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(res))));
</script>`

// TestResolveAgreesWithChromium checks resolveCases, and so the links the
// resolver produces, against the URL Chromium builds for the same href.
func TestResolveAgreesWithChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	bin := testbrowser.Path(t)
	pairs := make([][2]string, len(resolveCases))
	for i, tc := range resolveCases {
		pairs[i] = [2]string{tc.page, tc.href}
	}
	cj, _ := json.Marshal(pairs)
	cj = bytes.ReplaceAll(cj, []byte("</"), []byte(`<\/`))
	var got []string
	require.NoError(t, json.Unmarshal(dumpResult(t, bin, strings.Replace(resolveHarness, "CASES", string(cj), 1)), &got))
	require.Len(t, got, len(resolveCases))
	for i, tc := range resolveCases {
		assert.Equal(t, got[i], tc.want, "Chromium resolves %q on %s", tc.href, tc.page)
		page, err := url.Parse(tc.page)
		require.NoError(t, err)
		u, _ := newResolver(baseURL(page, "")).resolve(tc.href)
		assert.Equal(t, got[i], u, "resolver on %q on %s", tc.href, tc.page)
	}
}

// TestAgreesWithChromium compares the extraction of browserDocs with
// Chromium's DOM.
func TestAgreesWithChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	dom := runChromium(t, browserDocs)
	pageURL, _ := url.Parse("https://s.example/dir/page")
	for i, doc := range browserDocs {
		want := dom[i]
		p, err := Options{keepText: true}.Parse(strings.NewReader(doc), pageURL)
		require.NoError(t, err)
		if len(want.Title) > 0 {
			assert.Equal(t, want.Title[0], p.Title, "title of %q", doc)
		}
		assert.Equal(t, len(want.Title), p.TitleCount, "titles of %q", doc)
		assert.Equal(t, emptyNil(want.H1), emptyNil(p.H1), "h1 of %q", doc)
		assert.Equal(t, emptyNil(want.Words), emptyNil(strings.Fields(string(p.text))), "words of %q", doc)
		base := baseURL(pageURL, deref(want.Base))
		res := newResolver(base)
		// Links as sets: where tree construction clones a misnested <a>
		// (<p><a>x</p>y), the DOM has two; the page links there once.
		wl, gl := map[[2]string]bool{}, map[[2]string]bool{}
		for _, l := range want.Links {
			if _, r := res.resolve(l[1]); r == kept {
				wl[[2]string{l[0], l[1]}] = true
			}
		}
		hrefs := map[string]int{}
		for _, l := range p.Links {
			if l.Tag != "meta" {
				gl[[2]string{l.Tag, l.Raw}] = true
			}
			if l.Tag == "a" {
				hrefs[l.Raw]++
			}
		}
		assert.Equal(t, wl, gl, "links of %q", doc)
		for _, l := range p.Links {
			if l.Tag != "a" || hrefs[l.Raw] > 1 {
				continue
			}
			for _, a := range want.AnchorText {
				if a[0] == l.Raw {
					assert.Equal(t, a[1], l.Text, "anchor text of %q in %q", l.Raw, doc)
					break
				}
			}
		}
		if want.Canonical != nil {
			assert.Equal(t, res.self(*want.Canonical), p.Canonical, "canonical of %q", doc)
		} else {
			assert.Empty(t, p.Canonical, "canonical of %q", doc)
		}
		assert.Equal(t, deref(want.Descr), p.MetaDescription, "description of %q", doc)
	}
}

// htmlElements names the elements of HTML, obsolete ones included.
const htmlElements = `a abbr acronym address applet area article aside audio b base basefont bdi bdo bgsound big blink
blockquote body br button canvas caption center cite code col colgroup data datalist dd del details dfn dialog dir div
dl dt em embed fieldset figcaption figure font footer form frame frameset h1 h2 h3 h4 h5 h6 head header hgroup hr html
i iframe image img input ins kbd keygen label legend li link listing main map mark marquee menu meta meter nav nobr
noembed noframes noscript object ol optgroup option output p param picture plaintext pre progress q rb rp rt rtc ruby
s samp script search section select slot small source span strike strong style sub summary sup table tbody td
template textarea tfoot th thead time title tr track tt u ul var video wbr xmp`

// TestEncodingAgreesWithChromium loads pages as files (no Content-Type, as
// from a server that sends none), one after the other in one browser (each
// records what it read in window.name and goes on to the next), and
// compares the encoding and title Chromium reads with the extractor's.
func TestEncodingAgreesWithChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	bin := testbrowser.Path(t)
	docs := []string{
		"<title>Caf\xe9</title><p>na\xefve</p>",
		"<title>Plain</title>" + strings.Repeat(" ", 2000) + "<p>Caf\xe9 cr\xe8me</p>",
		"<title>Plain</title><p>" + strings.Repeat("word ", 20000) + "</p><p>\x93quoted\x94</p>",
		"<!doctype html><html><head><!-- the charset is declared below -->\n<script>" + strings.Repeat("var charset = 'utf-8'; ", 60) +
			"</script><meta charset=\"utf-8\"><title>Caf\xc3\xa9 \xe2\x98\x95</title></head><body>cr\xc3\xa8me</body>",
		"<title>T</title><body><p>" + strings.Repeat("x ", 600) + "</p><meta charset=\"shift_jis\"><p>Caf\xc3\xa9</p>",
		"\xef\xbb\xbf<title>Hi</title><p>Hello world</p>",
		"\xff\xfe" + string(utf16Bytes("<title>Sixteen</title>", false)),
		"<meta charset=utf-16><title>Caf\xc3\xa9</title>",
		"<meta charset=utf-8><title>a\xffb</title>",
		"<meta http-equiv=content-type content='text/html; charset=shift_jis'><title>\x82\xa0</title>",
	}
	dir := t.TempDir()
	for i, doc := range docs {
		var next string
		if i+1 < len(docs) {
			next = fmt.Sprintf("setTimeout(() => location.href = 'p%d.html', 0);", i+1)
		} else {
			next = `document.documentElement.setAttribute("data-r", btoa(unescape(encodeURIComponent(window.name))));`
		}
		report := "<script>window.name += JSON.stringify([document.characterSet, document.title]) + '\\n';" + next + "</script>"
		if strings.HasPrefix(doc, "\xff\xfe") {
			report = string(utf16Bytes(report, false))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%d.html", i)), []byte(doc+report), 0o600))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	args := append(slices.Clone(chromiumFlags), "--user-data-dir="+filepath.Join(dir, "profile"),
		"--virtual-time-budget=60000", "--dump-dom", "file://"+filepath.Join(dir, "p0.html"))
	out, err := exec.CommandContext(ctx, bin, args...).Output()
	require.NoError(t, err)
	m := regexp.MustCompile(`data-r="([A-Za-z0-9+/=]*)"`).FindSubmatch(out)
	require.NotNil(t, m, "no result:\n%.1000s", out)
	raw, err := base64.StdEncoding.DecodeString(string(m[1]))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	require.Len(t, lines, len(docs))
	for i, doc := range docs {
		var got [2]string
		require.NoError(t, json.Unmarshal([]byte(lines[i]), &got))
		p, err := Parse(strings.NewReader(doc), nil)
		require.NoError(t, err)
		assert.Equal(t, strings.ToLower(got[0]), p.Encoding, "encoding of page %d %.60q", i, doc)
		assert.Equal(t, strings.Join(strings.Fields(got[1]), " "), p.Title, "title of page %d %.60q", i, doc)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func emptyNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}
