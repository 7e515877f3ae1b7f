package htmlx

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func FuzzParse(f *testing.F) {
	seeds := []string{
		``,
		`<title>t</title><meta name=description content=d><link rel=canonical href=/c><h1>h</h1><a href=/a rel=nofollow>a</a>`,
		`<base href="//x.example/b/"><a href="../c?d#e">x</a><area href=javascript:0><img src=data:,x>`,
		`<svg><title>s</title><a href=/svg>x</a></svg><template><p>t</p></template><noscript><a href=/n>n</a></noscript>`,
		`<script/>x</script><title/>y</title><plaintext><a href=/p>`,
		`<meta http-equiv=refresh content="0;url='/r'"><meta name=generator content="WordPress 6">`,
		"<a href=\"\x00\t\n/\x7f%zz%\">\xff\xfe</a><h1><h1>x</h1>",
		`<meta charset="shift_jis"><title>` + "\x82\xa0" + `</title>`,
		`<link rel="alternate" hreflang="en" href="http://[::1]:80/">` + strings.Repeat("<div>", 200),
	}
	for _, s := range seeds {
		f.Add(s)
	}
	base, _ := url.Parse("https://fuzz.example/dir/page?q=1")
	opts := Options{MaxBytes: 1 << 16, MaxLinks: 50, MaxTextBytes: 64}
	f.Fuzz(func(t *testing.T, doc string) {
		p, err := opts.Parse(strings.NewReader(doc), base)
		require.NoError(t, err)
		require.LessOrEqual(t, len(p.Links), opts.MaxLinks)
		require.LessOrEqual(t, len(p.Title), opts.MaxTextBytes)
		require.LessOrEqual(t, len(p.MetaDescription), opts.MaxTextBytes)
		require.LessOrEqual(t, p.TitleCount, len(doc))
		require.Len(t, p.TextHash, 64)
		for _, l := range p.Links {
			require.LessOrEqual(t, len(l.Text), opts.MaxTextBytes)
			u, err := url.Parse(l.URL)
			require.NoError(t, err, l.URL)
			require.Contains(t, []string{"http", "https"}, u.Scheme, l.URL)
			require.NotEmpty(t, u.Host, l.URL)
			require.Empty(t, u.Fragment, l.URL)
			require.False(t, strings.Contains(l.URL, "#"), l.URL)
		}
		for _, h := range p.H1 {
			require.LessOrEqual(t, len(h), opts.MaxTextBytes)
			if utf8.ValidString(doc) {
				require.True(t, utf8.ValidString(h))
			}
		}
		if p.Canonical != "" {
			u, err := url.Parse(p.Canonical)
			require.NoError(t, err)
			require.True(t, u.IsAbs())
		}
		// Streaming must not depend on how the input is chunked.
		q, err := opts.Parse(iotest.OneByteReader(strings.NewReader(doc)), base)
		require.NoError(t, err)
		require.Equal(t, p, q)
	})
}

// FuzzResolveFastPath checks the resolver's short cut against the full route.
func FuzzResolveFastPath(f *testing.F) {
	for _, s := range [][2]string{
		{"https://a.example/x/y?z", "/p/q/"},
		{"http://u:p@A.Example:8080/", "/a//b/../c?x=1&y=%zz#f"},
		{"https://a.example/", "/.hidden/x"},
		{"https://a.example/", "/a./b?q= x"},
		{"https://a.example/%41/", "/~user/a-b_c.d?é"},
		{"https://a.example/d/page.html", "..//a"},
		{"https://a.example/", "https://reviews.example/w1?x=1#f"},
		{"https://a.example/", "https://h.org/a/..//b"},
		{"https://a.example/", "http://0x7f.1/x"},
		{"https://a.example/", "https://a-.b-c.example//x/y.z?q='"},
		{"https://a.example/", "https://xn--bcher-kva.example/x"},
		{"https://a.example/", "https://1.2.3.4/x"},
		{"https://a.example/", "http://a..b/"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, base, raw string) {
		b, err := url.Parse(base)
		if err != nil || (b.Scheme != "http" && b.Scheme != "https") || b.Host == "" || b.Opaque != "" {
			return
		}
		wb := baseURL(b, "")
		if wb == nil {
			return
		}
		got, ok := newResolver(wb).fast(raw)
		if !ok {
			return
		}
		want, r := resolve(wb, raw)
		require.Equal(t, kept, r, "fast path took %q", raw)
		require.Equal(t, want, got, "base %q raw %q", base, raw)
	})
}

// FuzzFacts: the facts of any input are gathered without a panic, within their caps, and asking for
// them changes nothing else Parse returns.
func FuzzFacts(f *testing.F) {
	for _, s := range []string{
		``,
		`<head><meta charset=utf-8><meta name=viewport content=w><meta property=og:title content=t><link rel=canonical href=/c></head><body><link rel=canonical href=/b><meta name=robots content=noindex>`,
		`<h1>a</h1><h6>b</h6><img src=/i alt><img width=1 height=2><form action=http://x/></form><p>LoReM IpSuM</p>`,
		`<script type="application/ld+json">{"@type":"Product"}</script><script type=application/ld+json>`,
		`<template><h2>x</h2><img src=/t></template><svg><h1>y</h1></svg><noscript><img src=/n></noscript>`,
		`<lorem>lor<b>em</b> ips` + strings.Repeat("<h2>", 50),
	} {
		f.Add(s)
	}
	f.Add(`<p>Lorem</p><p>ipsum</p> lorem<i>ip</i>sum LLorem IPSUM`)
	f.Add(`<p>lo</p>rem ipsu<b>m</b>`)
	base, _ := url.Parse("https://fuzz.example/dir/page")
	opts := Options{MaxBytes: 1 << 16, MaxLinks: 50, MaxTextBytes: 64, keepText: true}
	f.Fuzz(func(t *testing.T, doc string) {
		plain, err := opts.Parse(strings.NewReader(doc), base)
		require.NoError(t, err)
		fo := opts
		fo.Facts = true
		p, err := fo.Parse(strings.NewReader(doc), base)
		require.NoError(t, err)
		fs := p.facts
		require.NotNil(t, fs)
		p.facts = nil
		require.Equal(t, plain, p, "facts change nothing else")
		require.LessOrEqual(t, len(fs.Headings), MaxFactItems)
		require.LessOrEqual(t, len(fs.Images), MaxFactItems)
		require.LessOrEqual(t, len(fs.Images), fs.ImagesN)
		require.LessOrEqual(t, len(fs.Forms), MaxFactItems)
		require.LessOrEqual(t, len(fs.JSONLD), maxJSONLD)
		require.LessOrEqual(t, fs.Elements, len(doc))
		require.LessOrEqual(t, fs.TextBytes, len(doc)*3)
		// The facts of the visible text against a plain reading of it whole: its size, its words, and
		// lorem ipsum in any case of ASCII letters, however the pieces it arrived in were cut.
		require.Equal(t, len(p.text), fs.TextBytes)
		require.Equal(t, len(bytes.Fields(p.text)), p.WordCount)
		lower := bytes.Map(func(r rune) rune {
			if 'A' <= r && r <= 'Z' {
				return r + 'a' - 'A'
			}
			return r
		}, p.text)
		require.Equal(t, bytes.Contains(lower, []byte(lorem)), fs.Lorem, "lorem ipsum in %q", p.text)
		for _, h := range fs.Headings {
			require.True(t, h >= 1 && h <= 6)
		}
		for _, j := range fs.JSONLD {
			require.LessOrEqual(t, len(j.Body), len(doc))
		}
		for _, im := range fs.Images {
			require.LessOrEqual(t, len(im.Alt), opts.MaxTextBytes)
			require.True(t, utf8.ValidString(im.Alt) || !utf8.ValidString(doc))
		}
		for _, a := range fs.Forms {
			if a != "" {
				_, err := url.Parse(a)
				require.NoError(t, err)
			}
		}
	})
}
