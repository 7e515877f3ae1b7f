package htmlx

import (
	"bytes"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFacts(t *testing.T) {
	doc := `<!doctype html><html lang=en><head><meta charset=utf-8><title>T</title>
<meta name="viewport" content=" width=device-width ">
<meta property="og:title" content="OG T"><meta property=og:description content="OG D"><meta property="og:image" content="/i.png">
<link rel=canonical href="/c"><meta name=robots content=noarchive>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Thing"}</script>
<script>var notjsonld = 1;</script>
</head><body><h1>One</h1><h3>Three</h3><h2>Two</h2>
<img src=/a.png alt="A"><img src="/b.png" alt="" width=1 height=2><img src=/c.png>
<template><h4>inert</h4><img src=/t.png></template>
<p>Lorem  <b>Ipsum</b> dolor</p>
<form action="http://x.example/post"><input></form><form></form>
<link rel=canonical href="/body-canonical"><meta name=robots content=noindex>
<script type="application/ld+json; charset=utf-8">{"@type":</script>
</body></html>`
	u, _ := url.Parse("https://x.example/dir/page")
	p, err := Options{Facts: true}.Parse(strings.NewReader(doc), u)
	require.NoError(t, err)
	f := p.Facts()
	require.NotNil(t, f)
	assert.Equal(t, []uint8{1, 3, 2}, f.Headings)
	assert.Equal(t, []Image{{Src: "/a.png", Alt: "A", HasAlt: true}, {Src: "/b.png", HasAlt: true, HasWidth: true, HasHeight: true}, {Src: "/c.png"}}, f.Images)
	assert.Equal(t, 3, f.ImagesN)
	assert.Equal(t, "/c", f.CanonicalRaw)
	assert.Equal(t, 1, f.CanonicalsInBody)
	assert.Equal(t, 1, f.MetaRobotsInBody)
	assert.Equal(t, "width=device-width", f.Viewport)
	assert.Equal(t, 1, f.ViewportCount)
	assert.True(t, f.CharsetMeta)
	assert.Equal(t, "OG T", f.OGTitle)
	assert.Equal(t, "OG D", f.OGDescription)
	assert.Equal(t, "/i.png", f.OGImage)
	require.Len(t, f.JSONLD, 2)
	assert.JSONEq(t, `{"@context":"https://schema.org","@type":"Thing"}`, string(f.JSONLD[0].Body))
	assert.Equal(t, `{"@type":`, string(f.JSONLD[1].Body))
	assert.Equal(t, []string{"http://x.example/post", ""}, f.Forms)
	assert.True(t, f.Lorem, "lorem ipsum across elements and case")
	assert.Equal(t, len("One Three Two Lorem Ipsum dolor"), f.TextBytes)
	assert.Greater(t, f.Elements, 20)
	assert.Equal(t, 2, p.CanonicalCount)

	p, err = Parse(strings.NewReader(doc), u)
	require.NoError(t, err)
	assert.Nil(t, p.Facts(), "facts only when asked")
}

func TestFactsCharsetHTTPEquivAndNone(t *testing.T) {
	p, err := Options{Facts: true}.Parse(strings.NewReader(`<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"><p>x`), nil)
	require.NoError(t, err)
	assert.True(t, p.Facts().CharsetMeta)
	p, err = Options{Facts: true}.Parse(strings.NewReader(`<title>x</title><p>lorem, ipsum</p>`), nil)
	require.NoError(t, err)
	assert.False(t, p.Facts().CharsetMeta)
	assert.False(t, p.Facts().Lorem, "a comma between the words is not the placeholder")
	assert.Empty(t, p.Facts().Headings)
}

// The lists are capped whatever the page.
func TestFactsBounded(t *testing.T) {
	var b bytes.Buffer
	for range MaxFactItems + 10 {
		b.WriteString(`<h2>x</h2><img src=/i><form action=/f></form><script type=application/ld+json>{}</script>`)
	}
	b.WriteString(`<script type=application/ld+json>` + strings.Repeat("x", MaxJSONLDBytes+5) + `</script>`)
	p, err := Options{Facts: true}.Parse(&b, nil)
	require.NoError(t, err)
	f := p.Facts()
	assert.Len(t, f.Headings, MaxFactItems)
	assert.Len(t, f.Images, MaxFactItems)
	assert.Equal(t, MaxFactItems+10, f.ImagesN)
	assert.Len(t, f.Forms, MaxFactItems)
	assert.Len(t, f.JSONLD, maxJSONLD)

	p, err = Options{Facts: true}.Parse(strings.NewReader(`<script type=application/ld+json>`+strings.Repeat("x", MaxJSONLDBytes+5)+`</script>`), nil)
	require.NoError(t, err)
	require.Len(t, p.Facts().JSONLD, 1)
	assert.Len(t, p.Facts().JSONLD[0].Body, MaxJSONLDBytes)
	assert.True(t, p.Facts().JSONLD[0].Truncated)
}
