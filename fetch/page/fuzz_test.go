package page

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"html"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	whatwg "github.com/nlnwa/whatwg-url/url"
	"github.com/stretchr/testify/require"
	xhtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"

	"github.com/politecrawl/polite/internal/htmlx"
)

var fuzzSeeds = []string{
	``,
	`<!doctype html><html lang=en><head><meta charset=utf-8><title> A  title </title><meta name=description content=" d ">
<meta name=robots content=noindex><link rel=canonical href=/c><base href=/b/></head><body><h1>Head <b>line</b></h1>
<p>Hello<br>world <a href="x?y#z" rel=nofollow>link <img src=i.png alt=alt></a></p><area href=/area alt=Area></body></html>`,
	`<h1>Title</h2><p>Body</p><h1>One<h2>Two</h2>Three<div><h1>In div</div>after<ul><li><h1>Item</li></ul>`,
	`<h1>a<span><h1>b</h1>c</span></h1><b><h1>x</b>y</h1><h1/>open<form><h1>f</form>g</h1>`,
	`<template><title>T</title><a href=/in>in</a><h1>h</h1><link rel=canonical href=/t></template><title>Real</title><a href=/out>o</a>`,
	`<svg><style><a href=/s>s</a></style><title>tip</title><a href=/svg><text>Icon</text></a><foreignObject><h1>fo</h1></foreignObject>
<![CDATA[cdata <a href=/no>]]><h1>out</h1></svg><math><mi><b>x</b></mi><annotation-xml encoding=text/html><title>i</title></annotation-xml></math>`,
	"\xef\xbb\xbf<p>bom \x00nul</p><center>c</center>d</div>e</p>f</br>g<xmp><b>x</b></xmp>",
	"\xff\xfe<\x00p\x00>\x00h\x00i\x00",
	"<title>caf\xe9</title><p>na\xefve</p>",
	`<a href="https:/p">1</a><a href="\x\y">2</a><a href="///h.example/">3</a><a href="http:\\h.example\z">4</a><link rel=canonical href="#">`,
	`<p><a href=/p>in p</p>after</a><a href=/1>one<a href=/2>two</a><a href=/3><div>block</div>three</a>`,
	`<table><tr><td>cell<a href=/t>t</a></table><select><option><a href=/sel>s</a></select><frameset><frame src=/f></frameset>`,
	`<noscript><a href=/ns>ns</a></noscript><meta http-equiv=refresh content="0;url=/r"><image src=/old.png>`,
	`<dl><dt>t<dd>d<dt>t2</dl><button>b<button>c</button></button><p>one<p>two<hr>three<pre>four</pre>`,
	`<h1>a<template>hidden</template>b</h1><h1><script>x</script>c<style>y</style></h1><textarea>t &amp; x</textarea>`,
	// A browser keeps the empty segment after ".." (net/url does not,
	// golang/go#80282) and does not re-escape '(' ')' "'" in a path.
	`<a href="..//a">1</a><a href="/p/..//q">2</a><a href="https://h.org/a/..//b">3</a><img src="./..//i.png">`,
	`<a href="/my page (draft)">1</a><a href="/café(1)">2</a><a href="/a(b c">3</a><a href="/it's here?q=it's">4</a><a href="/q/z(x) y">5</a><a href="/a<(b">6</a>`,
	`<base href="/d/e/"><a href="..//x">1</a><a href="HTTPS://H.ORG/%7e/../(y)">2</a><a href="//h.org:443/%2e%2E//z">3</a>`,
}

// FuzzParse checks the public API's promises on any input: no panic, no
// error without a read error, capped fields, valid UTF-8, absolute http(s)
// links without fragments, and the same result however the input is cut
// into reads.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	opt := Options{MaxBytes: 1 << 16, MaxLinks: 50, MaxTextBytes: 64}
	const pageURL = "https://fuzz.example/dir/page?q=1"
	f.Fuzz(func(t *testing.T, doc string) {
		p, err := opt.Parse(strings.NewReader(doc), pageURL)
		require.NoError(t, err)
		require.LessOrEqual(t, len(p.Links)+p.LinksDropped, len(doc))
		require.LessOrEqual(t, len(p.Links), opt.MaxLinks)
		require.Len(t, p.TextHash, 64)
		for _, s := range append([]string{p.Title, p.MetaDescription, p.Canonical, p.MetaRobots, p.Lang, p.Generator}, p.H1...) {
			require.True(t, utf8.ValidString(s), "%q", s)
		}
		for _, s := range append([]string{p.Title, p.MetaDescription}, p.H1...) {
			require.LessOrEqual(t, len(s), opt.MaxTextBytes)
		}
		for _, l := range p.Links {
			require.LessOrEqual(t, len(l.Text), opt.MaxTextBytes)
			require.True(t, utf8.ValidString(l.Text) && utf8.ValidString(l.URL), "%q", l)
			u, err := url.Parse(l.URL)
			require.NoError(t, err, l.URL)
			require.Contains(t, []string{"http", "https"}, u.Scheme, l.URL)
			require.NotEmpty(t, u.Host, l.URL)
			require.NotContains(t, l.URL, "#")
		}
		for _, u := range []string{p.Canonical, p.Refresh} {
			if u != "" {
				v, err := url.Parse(u)
				require.NoError(t, err)
				require.True(t, v.IsAbs())
			}
		}
		q, err := opt.Parse(iotest.OneByteReader(strings.NewReader(doc)), pageURL)
		require.NoError(t, err)
		require.Equal(t, p, q, "one byte at a time")
	})
}

// FuzzAgainstDOM compares the fields both can compute with a DOM built by
// golang.org/x/net/html.Parse, the reference implementation of the HTML
// standard's tree construction: title, meta description, canonical, meta
// robots, headings, visible words and links. The DOM is read by the rules
// of the package doc (visible text, block elements), from the page decoded
// in the encoding Parse chose; where the package doc lists a deliberate
// difference (tables, <select>, <frameset>, <noscript>, cloned anchors),
// the fields it affects are not compared.
func FuzzAgainstDOM(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	const pageURL = "https://fuzz.example/dir/page?q=1"
	f.Fuzz(func(t *testing.T, doc string) {
		p, err := Parse(strings.NewReader(doc), pageURL)
		require.NoError(t, err)
		text := decode(t, doc, p.Encoding)
		root, err := xhtml.Parse(strings.NewReader(text))
		if err != nil {
			t.Skip("x/net/html.Parse failed:", err)
		}
		lower := strings.ToLower(text)
		if strings.Contains(lower, "<select") || strings.Contains(lower, "<frameset") {
			return // tree construction there drops what the page package keeps
		}
		d := readDOM(root)
		table := strings.Contains(lower, "<table")
		if !table { // foster parenting reorders what comes in a table
			require.Equal(t, len(d.titles), p.TitleCount, "titles %q", d.titles)
			if len(d.titles) > 0 {
				require.Equal(t, capText(d.titles[0], defaultText), p.Title)
			}
			require.Equal(t, d.h1, emptyNil(p.H1), "h1")
			require.Equal(t, len(d.words), p.WordCount, "words %q", d.words)
			sum := sha256.Sum256([]byte(strings.Join(d.words, " ")))
			require.Equal(t, hex.EncodeToString(sum[:]), p.TextHash, "words %q", d.words)
			require.Equal(t, d.descriptions, p.DescriptionCount, "descriptions")
			require.Equal(t, capText(d.description, defaultText), p.MetaDescription)
			require.Equal(t, d.canonicals, p.CanonicalCount, "canonicals")
			require.Equal(t, keptSelf(t, d.canonical, p.Base), p.Canonical, "canonical %q", d.canonical)
			require.Equal(t, strings.Join(d.robots, ", "), p.MetaRobots)
		}
		if strings.Contains(lower, "<noscript") {
			return // the DOM holds <noscript> content as text
		}
		// Each link's URL is the one the WHATWG URL parser (a browser)
		// makes of the DOM's href against the page's base.
		base := p.Base
		if base == "" {
			base = pageURL
		}
		want := map[[3]string]bool{}
		for _, l := range d.links {
			if l[0] != "frame" && kept(t, l[1], p.Base) {
				want[[3]string{l[0], l[1], browserURL(base, l[1])}] = true
			}
		}
		got := map[[3]string]bool{}
		for _, l := range p.Links {
			if l.Tag != "meta" && l.Tag != "frame" {
				got[[3]string{l.Tag, l.Raw, l.URL}] = true
			}
		}
		require.Equal(t, want, got, "links")
	})
}

const defaultText = 2048

// decode returns doc in the encoding Parse reported, without its byte
// order mark, invalid bytes as U+FFFD.
func decode(t *testing.T, doc, name string) string {
	enc, _ := charset.Lookup(name)
	require.NotNil(t, enc, name)
	for _, bom := range []string{"\xef\xbb\xbf", "\xfe\xff", "\xff\xfe"} {
		if strings.HasPrefix(doc, bom) {
			doc = doc[len(bom):]
			break
		}
	}
	s, err := enc.NewDecoder().String(doc)
	require.NoError(t, err)
	return s
}

type dom struct {
	titles       []string
	h1           []string
	words        []string
	links        [][2]string // tag, raw
	description  string
	descriptions int
	canonical    string
	canonicals   int
	robots       []string
}

// readDOM reads the fields from a DOM, skipping template contents (which
// x/net/html keeps as the template's children).
func readDOM(root *xhtml.Node) *dom {
	d := &dom{canonical: "\x00"}
	d.words = words(root)
	var walk func(n *xhtml.Node)
	walk = func(n *xhtml.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != xhtml.ElementNode {
				continue
			}
			if c.Namespace == "" {
				d.element(c)
				if c.DataAtom == atom.Template {
					continue
				}
			} else if c.Data == "a" {
				if v, ok := attr(c, "href"); ok && v != "" {
					d.links = append(d.links, [2]string{"a", v})
				}
			}
			walk(c)
		}
	}
	walk(root)
	if d.canonical == "\x00" {
		d.canonical = ""
	}
	return d
}

func (d *dom) element(c *xhtml.Node) {
	switch c.DataAtom {
	case atom.Title:
		var b strings.Builder
		for t := c.FirstChild; t != nil; t = t.NextSibling {
			if t.Type == xhtml.TextNode {
				b.WriteString(t.Data)
			}
		}
		d.titles = append(d.titles, strings.Join(strings.Fields(b.String()), " "))
	case atom.H1:
		if len(d.h1) < 100 {
			var text string
			if !hiddenAncestor(c) {
				text = capText(strings.Join(words(c), " "), defaultText)
			}
			d.h1 = append(d.h1, text)
		}
	case atom.Meta:
		name, _ := attr(c, "name")
		content, _ := attr(c, "content")
		content = capText(strings.TrimSpace(content), defaultText)
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "description":
			d.descriptions++
			if d.descriptions == 1 {
				d.description = content
			}
		case "robots":
			if content != "" && len(d.robots) < 20 {
				d.robots = append(d.robots, content)
			}
		}
	case atom.Link:
		rel, _ := attr(c, "rel")
		href, _ := attr(c, "href")
		for _, r := range strings.Fields(rel) {
			if strings.EqualFold(r, "canonical") {
				d.canonicals++
				if d.canonical == "\x00" && href != "" {
					d.canonical = href
				}
				break
			}
		}
		if href != "" {
			d.links = append(d.links, [2]string{"link", href})
		}
	case atom.A, atom.Area:
		if v, _ := attr(c, "href"); v != "" {
			d.links = append(d.links, [2]string{c.Data, v})
		}
	case atom.Img, atom.Script, atom.Iframe, atom.Frame:
		if v, _ := attr(c, "src"); v != "" {
			d.links = append(d.links, [2]string{c.Data, v})
		}
	}
}

func attr(n *xhtml.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// hiddenAncestor reports an element inside one whose text is not visible.
func hiddenAncestor(n *xhtml.Node) bool {
	for a := n.Parent; a != nil; a = a.Parent {
		if a.Type == xhtml.ElementNode && hidden(a) {
			return true
		}
	}
	return false
}

// words returns the visible words under n by the package rules.
func words(n *xhtml.Node) []string {
	var b bytes.Buffer
	var walk func(n *xhtml.Node)
	walk = func(n *xhtml.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch c.Type {
			case xhtml.TextNode:
				b.WriteString(c.Data)
			case xhtml.ElementNode:
				if hidden(c) {
					continue
				}
				block := c.Namespace == "" && htmlx.SeparatesWords(c.DataAtom)
				if block {
					b.WriteByte(' ')
				}
				walk(c)
				if block {
					b.WriteByte(' ')
				}
			}
		}
	}
	walk(n)
	return strings.Fields(b.String())
}

func hidden(n *xhtml.Node) bool {
	if n.Namespace == "" {
		switch n.DataAtom {
		case atom.Script, atom.Style, atom.Noscript, atom.Iframe, atom.Noembed, atom.Noframes, atom.Title, atom.Template:
			return true
		}
		return false
	}
	return slices.Contains([]string{"script", "style", "title", "desc"}, strings.ToLower(n.Data))
}

// kept reports whether Parse keeps a link written raw on a page with base:
// resolution has its own tests; here it only decides what to compare.
func kept(t *testing.T, raw, base string) bool {
	p, err := Parse(strings.NewReader(`<a href="`+html.EscapeString(raw)+`">`), base)
	require.NoError(t, err)
	return len(p.Links) == 1
}

// browserURL is the URL a browser requests for href on a page whose base
// is base, by the WHATWG URL standard (github.com/nlnwa/whatwg-url).
func browserURL(base, href string) string {
	u, err := whatwg.ParseRef(base, href)
	if err != nil {
		return ""
	}
	return u.Href(true)
}

// keptSelf resolves a canonical href as Parse does, on a page with base.
func keptSelf(t *testing.T, raw, base string) string {
	if raw == "" {
		return ""
	}
	p, err := Parse(strings.NewReader(`<link rel=canonical href="`+html.EscapeString(raw)+`">`), base)
	require.NoError(t, err)
	return p.Canonical
}

// capText caps s at max bytes on a rune boundary, as the package does.
func capText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max]
}

func emptyNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}
