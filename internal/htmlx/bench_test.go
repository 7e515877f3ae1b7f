package htmlx

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// benchPage builds a ~100 KiB page shaped like a shop category page:
// a head with metas and assets, a 120-link menu, 200 product cards with
// text and links, inline scripts and a footer.
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

func BenchmarkParse(b *testing.B) {
	doc := benchPage()
	u, _ := url.Parse("https://shop.example/widgets/?page=2")
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	var links int
	cpu0 := cpuTime()
	for b.Loop() {
		p, err := Parse(bytes.NewReader(doc), u)
		if err != nil {
			b.Fatal(err)
		}
		links = len(p.Links)
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(links), "links/page")
}

// BenchmarkDOMParse is the reference point: building the full DOM of the
// same page with html.Parse, without extracting anything.
func BenchmarkDOMParse(b *testing.B) {
	doc := benchPage()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := html.Parse(bytes.NewReader(doc)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

func TestBenchPageIsSane(t *testing.T) {
	doc := benchPage()
	if n := len(doc); n < 95*1024 || n > 110*1024 {
		t.Fatalf("bench page is %d bytes, want ~100 KiB", n)
	}
	u, _ := url.Parse("https://shop.example/widgets/")
	p, err := Parse(bytes.NewReader(doc), u)
	if err != nil {
		t.Fatal(err)
	}
	if p.Title != "Widgets & Gadgets | Example Shop" || !p.WordPress || len(p.Hreflang) != 2 || len(p.Links) < 500 || p.WordCount < 5000 {
		t.Fatalf("unexpected page: title %q wp %v hreflang %d links %d words %d", p.Title, p.WordPress, len(p.Hreflang), len(p.Links), p.WordCount)
	}
	t.Logf("bench page: %d bytes, %d links, %d words", len(doc), len(p.Links), p.WordCount)
}

// BenchmarkParseText is BenchmarkParse with Options.Text set: the cost of
// streaming the visible words to a writer (one that only counts them, so
// the figure is the streaming's own) in the same pass.
func BenchmarkParseText(b *testing.B) {
	doc := benchPage()
	u, _ := url.Parse("https://shop.example/widgets/?page=2")
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	var w countWriter
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := (Options{Text: &w}).Parse(bytes.NewReader(doc), u); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(w)/float64(b.N), "text-bytes/page")
}

type countWriter int

func (w *countWriter) Write(p []byte) (int, error) { *w += countWriter(len(p)); return len(p), nil }

// BenchmarkParseFacts is BenchmarkParse with Options.Facts and Options.Text on, as the audit's
// crawl parses every page.
func BenchmarkParseFacts(b *testing.B) {
	doc := benchPage()
	u, _ := url.Parse("https://shop.example/widgets/?page=2")
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	var w countWriter
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := (Options{Text: &w, Facts: true}).Parse(bytes.NewReader(doc), u); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}
