package page

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/politecrawl/polite/internal/htmlx"
)

// benchPage builds the ~100 KiB shop category page of internal/htmlx's
// benchmark: a head with metas and assets, a 120-link menu, product cards
// with text and links, inline scripts and a footer.
func benchPage() []byte {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Widgets &amp; Gadgets | Example Shop</title>
<meta name="description" content="All our widgets and gadgets, shipped next day.">
<meta name="robots" content="index,follow"><link rel="canonical" href="https://shop.example/widgets/">
<link rel="alternate" hreflang="en" href="https://shop.example/widgets/"><link rel="alternate" hreflang="de" href="https://shop.example/de/widgets/">
<link rel="stylesheet" href="/wp-content/themes/shop/style.css?ver=6.4"><script src="/wp-includes/js/jquery.min.js"></script>
<style>body{font-family:sans-serif}.card{display:flex;margin:0 auto}</style>
<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag('js',new Date());</script>
</head><body><header><nav><ul>`)
	for i := range 120 {
		fmt.Fprintf(&b, `<li class="menu-item"><a href="/category/%d/">Category %d</a></li>`, i, i)
	}
	b.WriteString(`</ul></nav></header><main><h1>Widgets &amp; gadgets</h1>`)
	for i := 0; b.Len() < 95*1024; i++ {
		fmt.Fprintf(&b, `<div class="card" id="p%d"><a href="/product/%d/"><img src="/wp-content/uploads/p%d.jpg" alt="Widget %d"></a>
<h2><a href="/product/%d/">Widget number %d</a></h2><p>This widget is &quot;great&quot; for <b>every</b> household; it ships
in a box with   manuals.&nbsp;Read <a href="https://reviews.example/w%d" rel="nofollow ugc">reviews</a>.</p></div>
`, i, i, i, i, i, i, i)
	}
	b.WriteString(`</main><footer><p>&copy; Example Shop</p><a href="mailto:shop@example.com">mail</a></footer>
<script>(function(){var s=document.createElement('script');s.src='/x.js';document.body.appendChild(s)})();</script></body></html>`)
	return []byte(b.String())
}

const benchURL = "https://shop.example/widgets/?page=2"

// BenchmarkParse is the public API on the benchmark page.
func BenchmarkParse(b *testing.B) {
	doc := benchPage()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	var links int
	cpu0 := cpuTime()
	for b.Loop() {
		p, err := Parse(bytes.NewReader(doc), benchURL)
		if err != nil {
			b.Fatal(err)
		}
		links = len(p.Links)
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(links), "links/page")
}

// BenchmarkParseImplementation is internal/htmlx alone on the same page:
// the difference with BenchmarkParse is the public API's overhead.
func BenchmarkParseImplementation(b *testing.B) {
	doc := benchPage()
	u, _ := url.Parse(benchURL)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	var links int
	cpu0 := cpuTime()
	for b.Loop() {
		p, err := htmlx.Parse(bytes.NewReader(doc), u)
		if err != nil {
			b.Fatal(err)
		}
		links = len(p.Links)
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(links), "links/page")
}
