package crawl

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/benchshop"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
)

// handlerTransport answers every request from an http.Handler in memory: the benchmark's crawler asks
// its robots.txt from it and never opens a socket.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// benchSite is the site the parse benchmark's crawler belongs to: the generated shop, and the lab page
// at /lab.
const benchSite = "http://shop.bench.test"

// labPageDoc is a page with every fact the page checks read: hreflang with x-default, JSON-LD (one
// valid, one with a problem), Open Graph, a viewport, images with and without alt and size, a form, a
// relative canonical and one in the body, robots metas in and after the head, a noscript link, SVG and a
// template, headings that skip a level, an iframe, an area, nofollow links and lorem ipsum.
var labPageDoc = func() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en-GB"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Lanterns with a glass chimney | Crawl Cove lab</title>
<meta name="description" content="Storm lanterns, hurricane lamps and candle lanterns for the harbour, the tent and the long evenings by the sea.">
<meta name="robots" content="index, follow, max-snippet:50"><meta name="generator" content="Handwritten 1.0">
<link rel="canonical" href="/lab"><link rel="stylesheet" href="/assets/site.css">
<link rel="alternate" hreflang="en-GB" href="/lab"><link rel="alternate" hreflang="de" href="/de/lab">
<link rel="alternate" hreflang="x-default" href="/lab">
<meta property="og:title" content="Lanterns"><meta property="og:description" content="Storm lanterns for the harbour.">
<meta property="og:image" content="/assets/lantern.jpg">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Storm lantern",
"offers":{"@type":"Offer","price":"24.00","priceCurrency":"GBP","availability":"https://schema.org/InStock"}}</script>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"BreadcrumbList"}</script>
<script src="/assets/site.js"></script><style>main{max-width:60em}</style>
</head><body><nav><a href="/">Home</a> <a href="/lanterns/">Lanterns</a> <a href="/stoves/">Stoves</a></nav>
<meta name="robots" content="noarchive"><link rel="canonical" href="/lab-in-body">
<main><h1>Lanterns with a glass chimney</h1>
<img src="/assets/lantern.jpg" alt="A storm lantern on a jetty at dusk" width="800" height="600">
<img src="/assets/wick.jpg"><h2>What to look for</h2><h4>Brass or steel</h4>
<svg viewBox="0 0 10 10"><title>icon</title><a href="/svg-link">svg</a><text>lit</text></svg>
<template><p>not shown</p><a href="/template-link">t</a></template>
<noscript><a href="/noscript-link">all lanterns</a><img src="/assets/pixel.gif"></noscript>
<iframe src="/assets/map.html"></iframe><map name="m"><area href="/area-link" alt="the harbour"></map>
<form action="/basket/add" method="post"><input name="qty"><button>Add to basket</button></form>
`)
	for i := range 40 {
		b.WriteString(`<p>Lorem ipsum: a storm lantern burns paraffin through a flat wick under a glass chimney, `)
		b.WriteString(`and the <b>guard</b> keeps the glass from knocks. Trim the wick, fill to the shoulder and `)
		b.WriteString(`<a href="/lanterns/` + string(rune('a'+i%26)) + `">read the guide</a>; see the `)
		b.WriteString(`<a href="https://reviews.example/lantern" rel="nofollow ugc">reviews</a>.</p>` + "\n")
	}
	b.WriteString(`</main><footer><p>&copy; Crawl Cove &mdash; <a href="mailto:shop@cove.test">mail</a></p></footer></body></html>`)
	return b.String()
}()

// benchPages are the two pages BenchmarkParseShopPage parses: a page of the generated shop as
// bench/scale.sh serves it (22.7 KB, 60 links), and the lab page with every fact.
func benchPages(tb testing.TB) map[string]*fetch.Result {
	shop := httptest.NewRecorder()
	benchshop.Handler(100_000).ServeHTTP(shop, httptest.NewRequest(http.MethodGet, benchSite+"/p/1234", nil))
	require.Equal(tb, http.StatusOK, shop.Code)
	hdr := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	return map[string]*fetch.Result{
		"shop": {URL: benchSite + "/p/1234", FinalURL: benchSite + "/p/1234", Status: 200, Header: shop.Header(),
			ContentType: shop.Header().Get("Content-Type"), Body: shop.Body.Bytes(), TTFB: time.Millisecond},
		"lab": {URL: benchSite + "/lab", FinalURL: benchSite + "/lab", Status: 200, Header: hdr,
			ContentType: hdr.Get("Content-Type"), Body: []byte(labPageDoc), TTFB: time.Millisecond},
	}
}

// benchCrawler is a crawler of benchSite, as NewCrawler wires it, whose requests (robots.txt, when the
// frontier is offered a link) are answered in memory by the shop's handler.
func benchCrawler(tb testing.TB) *Crawler {
	st, err := store.OpenStore(context.Background(), filepath.Join(tb.TempDir(), "bench.db"))
	require.NoError(tb, err)
	tb.Cleanup(func() { st.Close() })
	cfg := &Config{DB: "bench.db", URL: benchSite + "/", UserAgent: DefaultUserAgent, MaxPages: 1_000_000, MaxDepth: 100,
		Concurrency: 16, Gap: 0, Timeout: 30 * time.Second, Quiet: true, NoReport: true}
	c, err := NewCrawler(cfg, Env{Now: time.Now, Terminal: func(io.Writer) bool { return false },
		Transport: handlerTransport{benchshop.Handler(100_000)}, MemoryQueue: true}, st, io.Discard)
	require.NoError(tb, err)
	return c
}

// cpuTime is the CPU time the process has used, user and system: on the shared machine a benchmark's
// wall time includes waiting for a core, its CPU time does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkParseShopPage is the CPU the crawl spends on one fetched page between the fetch and the
// store: Crawler.parse (the one-pass parse with the facts, the near-duplicate fingerprint, the page
// checks, the links resolved, normalised and offered to the frontier), on a page of bench/scale.sh's
// shop and on the lab page with every fact.
//
//	go test -run '^$' -bench ParseShopPage -benchmem -count 6 ./examples/audit/internal/crawl/
func BenchmarkParseShopPage(b *testing.B) {
	pages := benchPages(b)
	for _, name := range []string{"shop", "lab"} {
		b.Run(name, func(b *testing.B) {
			c := benchCrawler(b)
			res := pages[name]
			ctx := context.Background()
			b.SetBytes(int64(len(res.Body)))
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				p := &store.PageRecord{URL: res.URL, FinalURL: res.FinalURL, Status: res.Status, Depth: 1}
				c.parse(ctx, p, res)
				// Each page is a new document to the crawl, as in a crawl: its links and checks are kept.
				c.mu.Lock()
				c.linksOf = newURLSet()
				c.mu.Unlock()
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestParseBenchPages checks that the benchmark's pages are what it says: the shop page is the shop's
// 22.7 KB page with its 60 links, and the lab page has every fact and gives the checks work.
func TestParseBenchPages(t *testing.T) {
	pages := benchPages(t)
	c := benchCrawler(t)
	shop := &store.PageRecord{URL: pages["shop"].URL, FinalURL: pages["shop"].FinalURL, Status: 200, Depth: 1}
	c.parse(t.Context(), shop, pages["shop"])
	assert.InDelta(t, benchshop.PageBytes, len(pages["shop"].Body), 200)
	assert.Equal(t, benchshop.LinksPerPage, len(shop.Links))
	assert.Greater(t, shop.WordCount, 2000)
	assert.Len(t, shop.Fingerprint, 128)

	lab := &store.PageRecord{URL: pages["lab"].URL, FinalURL: pages["lab"].FinalURL, Status: 200, Depth: 1}
	c.parse(t.Context(), lab, pages["lab"])
	pg, _, err := readPage(pages["lab"])
	require.NoError(t, err)
	f := pg.Facts()
	assert.Len(t, pg.Hreflang, 3)
	assert.Len(t, f.JSONLD, 2)
	assert.NotEmpty(t, f.OGTitle)
	assert.NotEmpty(t, f.OGDescription)
	assert.NotEmpty(t, f.OGImage)
	assert.Equal(t, 1, f.ViewportCount)
	assert.True(t, f.CharsetMeta)
	assert.Equal(t, 2, f.ImagesN)
	assert.Len(t, f.Forms, 1)
	assert.Equal(t, 1, f.CanonicalsInBody)
	assert.Equal(t, 1, f.MetaRobotsInBody)
	assert.True(t, f.Lorem)
	assert.Equal(t, []uint8{1, 2, 4}, f.Headings)
	kinds := map[string]bool{}
	for _, fr := range lab.Findings {
		kinds[fr.Kind] = true
	}
	for _, k := range []string{"heading_level_skipped", "image_alt_missing", "image_no_size", "canonical_multiple",
		"canonical_relative", "canonical_outside_head", "robots_meta_outside_head", "robots_other_directive",
		"lorem_ipsum", "jsonld_missing_required"} {
		assert.True(t, kinds[k], "the lab page has %s", k)
	}
	t.Logf("lab page findings: %v", kinds)
}

// siteMemo answers as the crawl's scope does, for every scheme and host, remembered or not (more hosts
// than it remembers included), asked in any order.
func TestSiteMemoAgreesWithScope(t *testing.T) {
	scope, err := frontier.SameSite("http://shop.test/")
	require.NoError(t, err)
	var raws []string
	for _, host := range []string{"shop.test", "SHOP.test", "www.shop.test", "shop.test:80", "shop.test:8080", "other.test",
		"user@shop.test", "shop.test.", "xn--bcher-kva.test", "127.0.0.1", "[::1]", "www.other.test"} {
		raws = append(raws, "http://"+host+"/a", "https://"+host+"/b?c")
	}
	m := &siteMemo{inScope: func(u *url.URL) bool { return scope(u) }}
	for round := range 3 {
		for i := range raws {
			raw := raws[(i*7+round)%len(raws)]
			u, err := url.Parse(raw)
			require.NoError(t, err)
			assert.Equal(t, scope(u), m.onSite(u), "%s (round %d)", raw, round)
		}
	}
	assert.False(t, m.onSite(nil))
}
