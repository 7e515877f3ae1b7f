package htmlx

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html/atom"
)

// Headings end where a browser's tree construction ends them.
func TestHeadingsEndLikeInABrowser(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		h1        []string
	}{
		{"</h2> closes an open <h1>", `<h1>Title</h2><p>Body text</p>`, []string{"Title"}},
		{"<h2> closes an <h1> that is the current node", `<h1>One<h2>Two</h2>Three`, []string{"One"}},
		{"</div> closes the <h1> inside it", `<div><h1>In div</div><p>after</p>`, []string{"In div"}},
		{"</li> closes the <h1> inside it", `<ul><li><h1>Item</li><li>next</ul>`, []string{"Item"}},
		{"a stray </div> does not", `<h1>Head</div>line</h1>tail`, []string{"Headline"}},
		{"an inline end tag does not", `<b><h1>Bold</b> head</h1>tail`, []string{"Bold head"}},
		{"<h1> nested through an inline element", `<h1>a<span><h1>b</h1>c</span></h1>d`, []string{"a b c", "b"}},
		{"self-closing syntax does not close an <h1>", `<h1/>Open<p>para</p></h1>after`, []string{"Open para"}},
		{"</h1> inside a table cell does not reach out", `<h1>x<table><tr><td>cell</h1>more</td></tr></table>y</h1>z`, []string{"x cellmore y"}},
		{"<td> ends an <h1> opened in the previous cell", `<table><tr><td><h1>a<td>b</table>`, []string{"a"}},
		{"an <h1> breaks out of <svg>", `<svg><h1>Out</h1><title>t</title></svg>`, []string{"Out"}},
		{"unclosed at the end of the input", `<h1>Runs <b>to the end`, []string{"Runs to the end"}},
		// The standard reopens a formatting element closed with the
		// heading it was in, before text and inline start tags: the
		// next <h1> then nests in it rather than ending the open one.
		{"an <a> closed with its <h1> is reopened by text", `<h1><a>x</h1><h1>y<h1>z`, []string{"x", "y z", "z"}},
		{"and <b> <i> in order", `<h1><b><i>x</h1><h1>y</i><h1>z`, []string{"x", "y z", "z"}},
		{"not after its own end tag", `<h1><b>x</h1></b><h1>y<h1>z`, []string{"x", "y", "z"}},
		{"not by a heading start tag", `<h1><b>x</h1><h1><h1>z`, []string{"x", "", "z"}},
		{"not by <textarea> or its text", `<h1><b>x</h1><h1><textarea>t</textarea><h1>z`, []string{"x", "t", "z"}},
		{"not inside a marker once it ends", `<h1><b>x</h1><object><h1>y<h1>z</object>`, []string{"x", "y", "z"}},
		{"a custom element's end tag closes only its own element", `<h1><x-a></x-b><h1>in</h1>still</h1>`, []string{"in still", "in"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := parse(t, "https://s.example/", tc.doc)
			assert.Equal(t, tc.h1, p.H1)
		})
	}
}

// A heading end tag with no heading open is ignored, and does not end an
// open <a> (nor split its words).
func TestStrayHeadingEndTagInAnchor(t *testing.T) {
	p := parse(t, "https://s.example/", `<a href=/x>link</h2>text</a>`)
	require.Len(t, p.Links, 1)
	assert.Equal(t, "linktext", p.Links[0].Text)
	assert.Equal(t, 1, p.WordCount)
}

// Template content is inert: a browser neither shows it nor counts its
// title, links, metadata or headings.
func TestTemplateContentIsInert(t *testing.T) {
	doc := `<head><template><title>T</title><meta name=description content=d><link rel=canonical href=/c>
<base href="https://x.example/"><meta name=robots content=noindex><script src=/t.js></script></template>
<title>Real</title></head><body><template><h1>h</h1><a href=/in>in</a><img src=/in.png><noscript><a href=/ns>ns</a></noscript>
<template><a href=/deeper>d</a></template><p>more inert</p></template><a href=/out>out</a><h1>Seen</h1></body>`
	p := parse(t, "https://s.example/", doc)
	assert.Equal(t, "Real", p.Title)
	assert.Equal(t, 1, p.TitleCount)
	assert.Equal(t, []string{"https://s.example/out"}, urls(p))
	assert.Equal(t, []string{"Seen"}, p.H1)
	assert.Zero(t, p.DescriptionCount)
	assert.Zero(t, p.CanonicalCount)
	assert.Empty(t, p.MetaRobots)
	assert.Equal(t, "https://s.example/", p.Base)
	assert.Equal(t, sum("out Seen"), p.TextHash)

	// A <template> inside <svg> is an SVG element, not an inert template.
	p = parse(t, "https://s.example/", `<svg><template><a href="/svg-link"><text>icon</text></a></template></svg>`)
	assert.Equal(t, []string{"https://s.example/svg-link"}, urls(p))
	assert.Equal(t, "icon", p.Links[0].Text)
}

// <center> and the other block-level elements separate words; stray end
// tags, which a browser ignores, do not.
func TestBlockElementsSeparateWords(t *testing.T) {
	for _, tc := range []struct{ doc, text string }{
		{`<center>one</center>two`, "one two"},
		{`<menu><li>a</menu>b<dir>c</dir><hgroup>d</hgroup><search>e</search><listing>f</listing>g`, "a b c d e f g"},
		{`one</div>two`, "onetwo"},
		{`one</h2>two`, "onetwo"},
		{`one</p>two`, "one two"},
		{`one</br>two`, "one two"},
		{`one<body>two`, "onetwo"},
		{`<xmp><b>raw</b></xmp>shown`, "<b>raw</b> shown"},
	} {
		p := parse(t, "https://s.example/", tc.doc)
		assert.Equal(t, sum(tc.text), p.TextHash, tc.doc)
		assert.Equal(t, len(strings.Fields(tc.text)), p.WordCount, tc.doc)
	}
}

// The HTML standard drops NUL from text (U+FFFD in SVG and MathML).
func TestNULIsNotText(t *testing.T) {
	p := parse(t, "https://s.example/", "<h1>x\x00y</h1><p>a\x00b \x00 c</p><a href=/l>li\x00nk</a><title>t\x00t</title><p><svg><text>s\x00</text></svg>")
	assert.Equal(t, []string{"xy"}, p.H1)
	assert.Equal(t, sum("xy ab c link s\ufffd"), p.TextHash)
	require.Len(t, p.Links, 1)
	assert.Equal(t, "link", p.Links[0].Text)
	assert.Equal(t, "t\ufffdt", p.Title)
}

// Frames are pages a browser loads: their src is a link, with Tag "frame".
func TestFrameLinks(t *testing.T) {
	p := parse(t, "https://s.example/dir/", `<frameset cols="20%,80%"><frame src="nav.html"><frame src="/main.html" name=main></frameset>
<noframes><a href="/noframes.html">no frames</a></noframes>`)
	require.Len(t, p.Links, 2)
	assert.Equal(t, Link{URL: "https://s.example/dir/nav.html", Raw: "nav.html", Tag: "frame"}, p.Links[0])
	assert.Equal(t, "https://s.example/main.html", p.Links[1].URL)
}

// SVG and MathML: raw-text names are ordinary elements there, an <a> is a
// link, and tags that do not belong there end them.
func TestForeignContent(t *testing.T) {
	p := parse(t, "https://s.example/", `<svg><style><a href="/in-style">s</a></style><title>tip</title><desc>d</desc>
<a href="/svg"><text>Icon</text></a><foreignObject><p>html <a href="/fo">fo</a></p></foreignObject></svg>
<math><mi><b>x</b></mi><annotation-xml encoding="text/html"><title>inner</title></annotation-xml></math><title>Doc</title>`)
	assert.Equal(t, []string{"https://s.example/in-style", "https://s.example/svg", "https://s.example/fo"}, urls(p))
	assert.Equal(t, "inner", p.Title, "an HTML <title> in an HTML integration point is the document's (Chromium agrees)")
	assert.Equal(t, 2, p.TitleCount, "the <svg> title is not counted")
	assert.Equal(t, sum("Icon html fo x"), p.TextHash, "svg style, title and desc text is not shown")
}

// The class table answers as the rules it caches, for the names of HTML
// and for names it does not hold.
func TestClassTable(t *testing.T) {
	names := append(strings.Fields(elementNames), "href", "foreignobject", "mi", "annotation-xml", "x-custom")
	for _, name := range names {
		a := atom.Lookup([]byte(name))
		assert.Equal(t, computeClass(a), classOf(a), name)
	}
	assert.NotZero(t, classOf(atom.Div)&cBlock)
	assert.NotZero(t, classOf(atom.H3)&cHeading)
	assert.Zero(t, classOf(atom.Abbr))
}
