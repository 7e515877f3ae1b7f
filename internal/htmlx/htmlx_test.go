package htmlx

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}

func parse(t *testing.T, pageURL, doc string) *Page {
	t.Helper()
	p, err := Parse(strings.NewReader(doc), mustURL(t, pageURL))
	require.NoError(t, err)
	return p
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func urls(p *Page) []string {
	var out []string
	for _, l := range p.Links {
		out = append(out, l.URL)
	}
	return out
}

func TestSEOFields(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want Page // only the SEO fields are compared; Links separately
	}{
		{
			name: "clean page",
			doc: `<!doctype html><html lang="en-GB"><head><title>Blue Widgets | Shop</title>
<meta name="description" content="Buy blue widgets.">
<meta name="robots" content="index, follow">
<link rel="canonical" href="/widgets/blue">
<meta name="generator" content="Hugo 0.120">
</head><body><h1>Blue widgets</h1><p>Hello   world.</p></body></html>`,
			want: Page{Title: "Blue Widgets | Shop", TitleCount: 1, MetaDescription: "Buy blue widgets.", DescriptionCount: 1,
				Canonical: "https://shop.example/widgets/blue", CanonicalCount: 1, MetaRobots: "index, follow",
				H1: []string{"Blue widgets"}, WordCount: 4, TextHash: sum("Blue widgets Hello world."),
				Generator: "Hugo 0.120", Lang: "en-GB"},
		},
		{
			name: "uppercase tags, unquoted attributes, entities",
			doc: `<HTML><HEAD><TITLE>Fish &amp; Chips &lt;3</TITLE>
<META NAME=Description CONTENT=Cheap&#32;eats>
<META name=ROBOTS content="NOINDEX,NOFOLLOW">
<LINK REL=Canonical HREF=http://Shop.Example/fish#top>
</HEAD><BODY><H1>Caf&eacute; &nbsp;menu</H1>Fish&nbsp;&amp;&nbsp;chips</BODY></HTML>`,
			want: Page{Title: "Fish & Chips <3", TitleCount: 1, MetaDescription: "Cheap eats", DescriptionCount: 1,
				Canonical: "http://shop.example/fish", CanonicalCount: 1, MetaRobots: "NOINDEX,NOFOLLOW",
				H1: []string{"Café menu"}, WordCount: 5, TextHash: sum("Café menu Fish & chips")},
		},
		{
			name: "multiple titles, descriptions, canonicals, robots; svg title ignored",
			doc: `<title> First
  title </title><title>Second</title>
<meta name="description" content="one"><meta name="description" content="two">
<meta name="robots" content="noindex"><meta name="robots" content="nofollow">
<link rel="canonical" href="https://a.example/x"><link rel="canonical" href="https://b.example/y">
<svg><title>icon</title></svg>`,
			want: Page{Title: "First title", TitleCount: 2, MetaDescription: "one", DescriptionCount: 2,
				Canonical: "https://a.example/x", CanonicalCount: 2, MetaRobots: "noindex, nofollow", TextHash: sum("")},
		},
		{
			name: "missing title, empty title counted, empty description",
			doc:  `<title></title><meta name=description content=""><h1></h1><h1>Two <em>parts</em></h1>`,
			want: Page{TitleCount: 1, DescriptionCount: 1, H1: []string{"", "Two parts"}, WordCount: 2, TextHash: sum("Two parts")},
		},
		{
			name: "invisible text excluded",
			doc: `<head><style>body{color:red}</style><script>var x = "<p>not text</p>";</script></head>
<body><noscript>enable js please</noscript><template><p>inert words</p></template>
<p>seen</p><script src="/a.js"/>still script</script><p>after</p><textarea>typed text</textarea></body>`,
			want: Page{WordCount: 4, TextHash: sum("seen after typed text")},
		},
		{
			name: "block elements split words, inline ones do not",
			doc:  `<div>one</div><div>two</div>thr<b>ee</b><br>four<span>five</span><li>six`,
			want: Page{WordCount: 5, TextHash: sum("one two three fourfive six")},
		},
		{
			name: "unclosed tags and stray end tags",
			doc:  `<html><body><div><p>Unclosed <b>bold <i>italic</div></span></p><h1>Heading`,
			want: Page{WordCount: 4, H1: []string{"Heading"}, TextHash: sum("Unclosed bold italic Heading")},
		},
		{
			name: "unterminated title runs to the end",
			doc:  `<title>Runaway <b>title`,
			want: Page{Title: "Runaway <b>title", TitleCount: 1, TextHash: sum("")},
		},
		{
			name: "WordPress by generator",
			doc:  `<meta name="generator" content="WordPress 6.4.2">`,
			want: Page{Generator: "WordPress 6.4.2", WordPress: true, WordPressHint: `generator "WordPress 6.4.2"`, TextHash: sum("")},
		},
		{
			name: "WordPress by asset",
			doc:  `<link rel='stylesheet' href='https://cdn.example/wp-content/themes/x/style.css?ver=6.4'>`,
			want: Page{WordPress: true, WordPressHint: `asset "https://cdn.example/wp-content/themes/x/style.css?ver=6.4"`, TextHash: sum("")},
		},
		{
			name: "WordPress by wp-includes script",
			doc:  `<script src="/wp-includes/js/jquery/jquery.min.js"></script>`,
			want: Page{WordPress: true, WordPressHint: `asset "/wp-includes/js/jquery/jquery.min.js"`, TextHash: sum("")},
		},
		{
			name: "WordPress by REST API link",
			doc:  `<link rel="https://api.w.org/" href="https://blog.example/wp-json/">`,
			want: Page{WordPress: true, WordPressHint: `link rel="https://api.w.org/"`, TextHash: sum("")},
		},
		{
			name: "a link to someone else's wp-content is not WordPress",
			doc:  `<a href="https://other.example/wp-content/uploads/report.pdf">report</a>`,
			want: Page{WordCount: 1, TextHash: sum("report")},
		},
		{
			name: "hreflang alternates",
			doc: `<link rel="alternate" hreflang="en" href="/en/">
<link rel=alternate hreflang=de-DE href="https://shop.example/de/">
<link rel="alternate" hreflang="x-default" href="/">
<link rel="alternate" type="application/rss+xml" href="/feed">`,
			want: Page{Hreflang: []Alternate{{"en", "https://shop.example/en/"}, {"de-DE", "https://shop.example/de/"}, {"x-default", "https://shop.example/"}}, TextHash: sum("")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := parse(t, "https://shop.example/widgets/", tc.doc)
			got := *p
			got.Links, got.Base, got.Encoding = nil, "", ""
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestLinks(t *testing.T) {
	doc := `<html><head>
<link rel="stylesheet" href="/css/site.css">
<link rel="canonical" href="page">
<link rel="icon" href="data:image/png;base64,AAAA">
<base href="https://cdn.example/base/dir/">
</head><body>
<A HREF=rel.html>Relative <b>bold</b>  text</A>
<a href="/abs#frag">Root-relative</a>
<a href="//other.example/x">Protocol-relative</a>
<a href="https://ext.example/y" rel="nofollow noopener">nf</a>
<a href="https://ext.example/u" rel="UGC">ugc</a>
<a href="https://ext.example/s" rel="external sponsored">sp</a>
<a href="#top">fragment only</a>
<a href="">empty</a>
<a href="mailto:a@b.example">mail</a>
<a href="javascript:void(0)">js</a>
<a href="tel:+441234">tel</a>
<a href="  
	https://ws.example/a b  ">whitespace</a>
<a href="https://bad.example/%zz">bad escape</a>
<a href="../up?q=1&amp;r=2">query &amp; entity</a>
<a href="/img-link"><img src="/logo.png" alt="Our logo"></a>
<a href="/nested">outer<a href="/inner">inner</a>
<map><area href="/area" alt="Area alt" rel=nofollow></map>
<a name="anchor-without-href">no href</a>
<script src="https://js.example/app.js"></script>
<iframe src="/frame.html"></iframe>
</body></html>`
	p := parse(t, "https://shop.example/dir/page.html", doc)
	require.Equal(t, "https://cdn.example/base/dir/", p.Base)
	require.Equal(t, "https://cdn.example/base/dir/page", p.Canonical, "base applies to links before it")

	type L struct{ URL, Text, Tag string }
	var got []L
	for _, l := range p.Links {
		got = append(got, L{l.URL, l.Text, l.Tag})
	}
	want := []L{
		{"https://cdn.example/css/site.css", "", "link"},
		{"https://cdn.example/base/dir/page", "", "link"},
		{"https://cdn.example/base/dir/rel.html", "Relative bold text", "a"},
		{"https://cdn.example/abs", "Root-relative", "a"},
		{"https://other.example/x", "Protocol-relative", "a"},
		{"https://ext.example/y", "nf", "a"},
		{"https://ext.example/u", "ugc", "a"},
		{"https://ext.example/s", "sp", "a"},
		{"https://ws.example/a%20b", "whitespace", "a"},
		{"https://cdn.example/base/up?q=1&r=2", "query & entity", "a"},
		{"https://cdn.example/img-link", "Our logo", "a"},
		{"https://cdn.example/logo.png", "", "img"},
		{"https://cdn.example/nested", "outer", "a"},
		{"https://cdn.example/inner", "inner", "a"},
		{"https://cdn.example/area", "Area alt", "area"},
		{"https://js.example/app.js", "", "script"},
		{"https://cdn.example/frame.html", "", "iframe"},
	}
	require.Equal(t, want, got)
	require.Equal(t, 1, p.InvalidLinks, "the %zz link")

	nf := map[string]bool{}
	for _, l := range p.Links {
		nf[l.URL] = l.Nofollow
	}
	assert.True(t, nf["https://ext.example/y"])
	assert.True(t, nf["https://ext.example/u"])
	assert.True(t, nf["https://ext.example/s"])
	assert.True(t, nf["https://cdn.example/area"])
	assert.False(t, nf["https://other.example/x"])

	require.Equal(t, "nofollow noopener", p.Links[5].Rel)
	require.Equal(t, "rel.html", p.Links[2].Raw)
	require.Equal(t, "stylesheet", p.Links[0].Rel)
}

func TestBaseEdgeCases(t *testing.T) {
	// Only the first <base> counts; a relative base resolves against the page.
	p := parse(t, "http://site.example/a/b", `<base href="../c/"><base href="https://x.example/"><a href="d">d</a>`)
	require.Equal(t, []string{"http://site.example/c/d"}, urls(p))

	// A javascript: base is ignored.
	p = parse(t, "http://site.example/a/b", `<base href="javascript:alert(1)"><a href="d">d</a>`)
	require.Equal(t, []string{"http://site.example/a/d"}, urls(p))

	// Without a page URL only absolute links survive; relative ones count as invalid.
	p2, err := Parse(strings.NewReader(`<a href="/rel">r</a><a href="https://abs.example/">a</a>`), nil)
	require.NoError(t, err)
	require.Equal(t, []string{"https://abs.example/"}, urls(p2))
	require.Equal(t, 1, p2.InvalidLinks)
}

func TestMetaRefresh(t *testing.T) {
	p := parse(t, "https://site.example/old/", `<meta http-equiv="Refresh" content="0; URL='/new/page#x'">`)
	require.Equal(t, "https://site.example/new/page", p.Refresh)
	require.Len(t, p.Links, 1)
	require.Equal(t, Link{URL: "https://site.example/new/page", Raw: "/new/page#x", Rel: "refresh", Tag: "meta"}, p.Links[0])

	p = parse(t, "https://site.example/", `<meta http-equiv="refresh" content="30">`)
	require.Empty(t, p.Refresh)
	require.Empty(t, p.Links)
}

func TestTextHashIgnoresMarkupAndSpacing(t *testing.T) {
	a := parse(t, "https://s.example/", "<p>Hello   <b>world</b></p>\n\n<p>Again</p><script>x=1</script>")
	b := parse(t, "https://s.example/", "<div>Hello world</div><div>\tAgain  </div><style>.y{}</style>")
	c := parse(t, "https://s.example/", "<div>Hello world</div><div>Again!</div>")
	require.Equal(t, a.TextHash, b.TextHash)
	require.Equal(t, sum("Hello world Again"), a.TextHash)
	require.NotEqual(t, a.TextHash, c.TextHash)
	require.Equal(t, 3, a.WordCount)
}

func TestSizeCap(t *testing.T) {
	doc := "<title>T</title><p>" + strings.Repeat("word ", 1000) + "</p><a href=/late>late</a>"
	p, err := Options{MaxBytes: 1000}.Parse(strings.NewReader(doc), mustURL(t, "https://s.example/"))
	require.NoError(t, err)
	require.True(t, p.Truncated)
	require.Equal(t, "T", p.Title)
	require.Less(t, p.WordCount, 200)
	require.Empty(t, p.Links)

	p, err = Options{MaxBytes: int64(len(doc))}.Parse(strings.NewReader(doc), mustURL(t, "https://s.example/"))
	require.NoError(t, err)
	require.False(t, p.Truncated, "exactly at the cap is not truncated")
	require.Len(t, p.Links, 1)
}

func TestFieldAndLinkCaps(t *testing.T) {
	long := strings.Repeat("é", 3000) // 6000 bytes
	doc := "<title>" + long + "</title><h1>" + long + "</h1><a href=/x>" + long + "</a>" +
		strings.Repeat(`<a href="/p">p</a>`, 30) + `<link rel=canonical href=/canon>`
	p, err := Options{MaxTextBytes: 101, MaxLinks: 10}.Parse(strings.NewReader(doc), mustURL(t, "https://s.example/"))
	require.NoError(t, err)
	require.Equal(t, strings.Repeat("é", 50), p.Title, "cut on a rune boundary")
	require.Equal(t, strings.Repeat("é", 50), p.H1[0])
	require.Equal(t, strings.Repeat("é", 50), p.Links[0].Text)
	require.Len(t, p.Links, 10)
	require.Equal(t, 22, p.LinksDropped)
	require.Equal(t, "https://s.example/canon", p.Canonical, "canonical is kept past the link cap")
}

func TestCharset(t *testing.T) {
	// "Café" in windows-1252, declared in a meta tag and in the Content-Type.
	doc := "<meta charset=windows-1252><title>Caf\xe9</title>"
	p, err := Parse(strings.NewReader(doc), nil)
	require.NoError(t, err)
	require.Equal(t, "Café", p.Title)

	// An ASCII-only head with no declaration: UTF-8, not charset's windows-1252 fallback.
	p, err = Parse(strings.NewReader("<title>Plain</title>"+strings.Repeat(" ", 2000)+"<h1>Café ☕</h1>"), nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Café ☕"}, p.H1)

	p, err = Options{ContentType: "text/html; charset=ISO-8859-1"}.Parse(strings.NewReader("<title>Caf\xe9</title>"), nil)
	require.NoError(t, err)
	require.Equal(t, "Café", p.Title)
}

func TestReadErrorReturnsPartialPage(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("<title>Partial</title><a href=/a>a</a>"), iotest.ErrReader(boom))
	p, err := Parse(r, mustURL(t, "https://s.example/x"))
	require.ErrorIs(t, err, boom)
	require.Contains(t, err.Error(), "https://s.example/x")
	require.NotNil(t, p)
	require.Equal(t, "Partial", p.Title)
	require.Equal(t, []string{"https://s.example/a"}, urls(p))
}

func TestOneByteReader(t *testing.T) {
	doc := `<title>Slow &amp; steady</title><a href="/a" rel=nofollow>A</a><p>two words</p>`
	a := parse(t, "https://s.example/", doc)
	b, err := Parse(iotest.OneByteReader(strings.NewReader(doc)), mustURL(t, "https://s.example/"))
	require.NoError(t, err)
	require.Equal(t, a, b)
}

func TestNoscriptLinksButNoText(t *testing.T) {
	doc := `<h1>Head<noscript><h1>x</h1><title>NS</title><img src="/wp-content/uploads/px.gif"></noscript>line</h1>
<p>Visible <a href="/outer">outer <noscript><a href="/ns" rel=nofollow>NS <b>link</b></a><p>hidden words</p></noscript></a></p>
<noscript><noscript><a href="/deep">deep</a></noscript></noscript>`
	p := parse(t, "https://s.example/", doc)
	require.Equal(t, []string{"Headline"}, p.H1)
	require.Equal(t, 0, p.TitleCount)
	require.Empty(t, p.Title)
	require.Equal(t, sum("Headline Visible outer"), p.TextHash)
	require.Equal(t, 3, p.WordCount)
	require.True(t, p.WordPress, "noscript assets count for WordPress detection")

	type L struct{ URL, Text string }
	var got []L
	for _, l := range p.Links {
		got = append(got, L{l.URL, l.Text})
	}
	require.Equal(t, []L{
		{"https://s.example/wp-content/uploads/px.gif", ""},
		{"https://s.example/outer", "outer"},
		{"https://s.example/ns", "NS link"},
	}, got)
	require.True(t, p.Links[2].Nofollow)
}
