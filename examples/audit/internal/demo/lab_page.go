package demo

import (
	"fmt"
	"hash/fnv"
	"html"
	"net/http"
	"strings"
	"time"
)

// The check pages of one page's own response (package pagecheck): each is the lab's clean page with one
// edit that produces one kind, at /lab/<kind> (the URL kinds at a URL of that shape). /lab/clean is the
// clean page itself, which produces none of them.
//
// The demo shop is served over http, so the five kinds that only an https page can have
// (http_link_on_https, hsts_missing, mixed_content_active, mixed_content_passive, form_insecure) are
// clean here; served over TLS (a test does, with the same handler) their pages produce them.
type labCheck struct {
	path, kind string
	edits      [][2]string       // old, new: applied to the clean page in order
	header     func(http.Header) // applied to the clean headers
	plain      bool              // never gzip-encoded
	wait       time.Duration     // before the headers: a slow server
	rawPath    string            // the URL the index must link to, when it is not path (a query)
}

// LabCleanPath is the lab's clean page: no finding of a page's own response.
const LabCleanPath = "/lab/clean"

// LabPageKinds maps each check page of pagecheck's kinds to the kind it produces (the https-only
// kinds among them only when the page is served over https), for the tests that crawl the demo.
func LabPageKinds() map[string]string {
	m := map[string]string{}
	for _, c := range labChecks {
		u := c.rawPath
		if u == "" {
			u = c.path
		}
		m[u] = c.kind
	}
	return m
}

// HTTPSOnlyKinds are the kinds a page has only when served over https.
var HTTPSOnlyKinds = []string{"http_link_on_https", "hsts_missing", "mixed_content_active", "mixed_content_passive", "form_insecure"}

const (
	canonicalTag = `<link rel="canonical" href="{{self}}">`
	imgTag       = `<img src="/assets/lab.jpg" alt="A tent on the dunes at dusk" width="800" height="600">`
)

var labChecks = []labCheck{
	{path: "/lab/URL-Uppercase", kind: "url_uppercase"},
	{path: "/lab/url_underscore", kind: "url_underscore"},
	{path: "/lab/url space", kind: "url_space"},
	{path: "/lab/repeated//slash", kind: "url_repeated_slash"},
	{path: "/lab/café", kind: "url_non_ascii"},
	{path: "/lab/a-url-that-goes-on-and-on-through-every-category-and-filter-the-shop-could-ever-have-imagined", kind: "url_too_long"},
	{path: "/lab/many-params", rawPath: "/lab/many-params?colour=red&size=2&sort=price&page=1", kind: "url_many_params"},
	{path: "/lab/http-link-on-https", kind: "http_link_on_https", edits: [][2]string{{`<a href="/lab/">`, `<a href="http://{{host}}/lab/">`}}},
	{path: "/lab/too-many-links", kind: "too_many_links", edits: [][2]string{{`<main>`, `<main>` + strings.Repeat(`<a href="/lab/">Back to the check pages</a> `, 101)}}},
	{path: "/lab/link-no-anchor-text", kind: "link_no_anchor_text", edits: [][2]string{{`</main>`, `<a href="/lab/"></a></main>`}}},
	{path: "/lab/internal-nofollow", kind: "internal_nofollow", edits: [][2]string{{`<a href="/">`, `<a href="/" rel="nofollow">`}}},
	{path: "/lab/dead-end", kind: "dead_end", edits: [][2]string{{`<nav><a href="/">Home</a> <a href="/lab/">Check pages</a></nav>`, `<nav><a href="https://www.example.org/partners/cove">Our partner</a></nav>`}}},
	{path: "/lab/soft-404", kind: "soft_404_text", edits: [][2]string{{`<h1>`, `<h1>Page not found: `}}},
	{path: "/lab/title-too-short", kind: "title_too_short", edits: [][2]string{{`<title>{{title}}</title>`, `<title>Lab: short title</title>`}}},
	{path: "/lab/title-same-as-h1", kind: "title_same_as_h1", edits: [][2]string{{`<h1>{{h1}}</h1>`, `<h1>{{title}}</h1>`}}},
	{path: "/lab/description-too-short", kind: "description_too_short", edits: [][2]string{{`content="{{description}}"`, `content="A short description."`}}},
	{path: "/lab/description-too-long", kind: "description_too_long", edits: [][2]string{{`content="{{description}}"`, `content="{{description}} It goes on to say much more than a search result will ever show, repeating itself, adding detail, and adding more."`}}},
	{path: "/lab/h1-too-long", kind: "h1_too_long", edits: [][2]string{{`<h1>{{h1}}</h1>`, `<h1>{{h1}}, a main heading that keeps going long after it made its point</h1>`}}},
	{path: "/lab/h2-missing", kind: "h2_missing", edits: [][2]string{{`<h2>What this page shows</h2>`, `<p><strong>What this page shows</strong></p>`}}},
	{path: "/lab/heading-skipped", kind: "heading_level_skipped", edits: [][2]string{{`<h2>What this page shows</h2>`, `<h2>What this page shows</h2><h4>A detail</h4>`}}},
	{path: "/lab/thin-content", kind: "thin_content", edits: [][2]string{{`<p>{{text}}</p>`, `<p>Only a few words here.</p>`}}},
	{path: "/lab/lorem-ipsum", kind: "lorem_ipsum", edits: [][2]string{{`</main>`, `<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p></main>`}}},
	{path: "/lab/html-too-large", kind: "html_too_large", edits: [][2]string{{`</main>`, `<p>` + strings.Repeat("Every word of this long page is here to make it large. ", 20_000) + `</p></main>`}}},
	{path: "/lab/dom-too-large", kind: "dom_too_large", edits: [][2]string{{`</main>`, strings.Repeat(`<span></span>`, 1500) + `</main>`}}},
	{path: "/lab/low-text-ratio", kind: "low_text_ratio", edits: [][2]string{{`</body>`, `<script>var inventory = [` + strings.Repeat(`{"sku": 1, "stock": 0},`, 1500) + `];</script></body>`}}},
	{path: "/lab/image-alt-missing", kind: "image_alt_missing", edits: [][2]string{{` alt="A tent on the dunes at dusk"`, ``}}},
	{path: "/lab/image-alt-too-long", kind: "image_alt_too_long", edits: [][2]string{{`alt="A tent on the dunes at dusk"`, `alt="A tent on the dunes at dusk, with the sea behind it, the last light on the water, two kayaks on the sand and a lantern"`}}},
	{path: "/lab/image-no-size", kind: "image_no_size", edits: [][2]string{{` width="800" height="600"`, ``}}},
	{path: "/lab/canonical-missing", kind: "canonical_missing", edits: [][2]string{{canonicalTag, ``}}},
	{path: "/lab/canonical-multiple", kind: "canonical_multiple", edits: [][2]string{{canonicalTag, canonicalTag + canonicalTag}}},
	{path: "/lab/canonical-relative", kind: "canonical_relative", edits: [][2]string{{canonicalTag, `<link rel="canonical" href="{{path}}">`}}},
	{path: "/lab/canonical-outside-head", kind: "canonical_outside_head", edits: [][2]string{{canonicalTag, ``}, {`</main>`, canonicalTag + `</main>`}}},
	{path: "/lab/canonical-header-mismatch", kind: "canonical_header_mismatch",
		header: func(h http.Header) { h.Set("Link", `</lab/clean>; rel="canonical"`) }},
	{path: "/lab/robots-nofollow", kind: "robots_nofollow", edits: [][2]string{{`<title>`, `<meta name="robots" content="nofollow"><title>`}}},
	{path: "/lab/robots-other", kind: "robots_other_directive", edits: [][2]string{{`<title>`, `<meta name="robots" content="noarchive, max-snippet:50"><title>`}}},
	{path: "/lab/x-robots-tag", kind: "x_robots_tag", header: func(h http.Header) { h.Set("X-Robots-Tag", "all") }},
	{path: "/lab/robots-outside-head", kind: "robots_meta_outside_head", edits: [][2]string{{`</main>`, `<meta name="robots" content="index, follow"></main>`}}},
	{path: "/lab/noindex-canonical", kind: "noindex_with_canonical", edits: [][2]string{{`<title>`, `<meta name="robots" content="noindex"><title>`}, {canonicalTag, `<link rel="canonical" href="{{origin}}/lab/clean">`}}},
	{path: "/lab/hreflang-invalid", kind: "hreflang_invalid", edits: [][2]string{{canonicalTag, canonicalTag + hreflangTags + `<link rel="alternate" hreflang="en_UK" href="/lab/clean">`}}},
	{path: "/lab/hreflang-no-self", kind: "hreflang_no_self", edits: [][2]string{{canonicalTag, canonicalTag + `<link rel="alternate" hreflang="de" href="/lab/clean"><link rel="alternate" hreflang="x-default" href="/lab/clean">`}}},
	{path: "/lab/hreflang-no-x-default", kind: "hreflang_no_x_default", edits: [][2]string{{canonicalTag, canonicalTag + `<link rel="alternate" hreflang="en" href="{{self}}">`}}},
	{path: "/lab/hreflang-lang", kind: "hreflang_html_lang_differs", edits: [][2]string{{canonicalTag, canonicalTag + hreflangTags}, {`<html lang="en">`, `<html lang="de">`}}},
	{path: "/lab/hsts-missing", kind: "hsts_missing", header: func(h http.Header) { h.Del("Strict-Transport-Security") }},
	{path: "/lab/mixed-content-active", kind: "mixed_content_active", edits: [][2]string{{`</head>`, `<script src="http://{{host}}/assets/lab.js"></script></head>`}}},
	{path: "/lab/mixed-content-passive", kind: "mixed_content_passive", edits: [][2]string{{`src="/assets/lab.jpg"`, `src="http://{{host}}/assets/lab.jpg"`}}},
	{path: "/lab/form-insecure", kind: "form_insecure", edits: [][2]string{{`</main>`, `<form action="http://{{host}}/lab/clean" method="post"><button>Send</button></form></main>`}}},
	{path: "/lab/content-type-options", kind: "content_type_options_missing", header: func(h http.Header) { h.Del("X-Content-Type-Options") }},
	{path: "/lab/jsonld-invalid", kind: "jsonld_invalid", edits: [][2]string{{`</head>`, `<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Organization",}</script></head>`}}},
	{path: "/lab/jsonld-no-context", kind: "jsonld_no_context", edits: [][2]string{{`</head>`, `<script type="application/ld+json">{"@type": "Organization", "name": "Cove Outfitters"}</script></head>`}}},
	{path: "/lab/jsonld-no-type", kind: "jsonld_no_type", edits: [][2]string{{`</head>`, `<script type="application/ld+json">{"@context": "https://schema.org", "name": "Cove Outfitters"}</script></head>`}}},
	{path: "/lab/jsonld-missing-required", kind: "jsonld_missing_required", edits: [][2]string{{`</head>`, `<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Product", "name": "Storm lantern"}</script></head>`}}},
	{path: "/lab/viewport-missing", kind: "viewport_missing", edits: [][2]string{{`<meta name="viewport" content="width=device-width, initial-scale=1">`, ``}}},
	{path: "/lab/html-lang-missing", kind: "html_lang_missing", edits: [][2]string{{`<html lang="en">`, `<html>`}}},
	{path: "/lab/html-lang-invalid", kind: "html_lang_invalid", edits: [][2]string{{`<html lang="en">`, `<html lang="en_GB">`}}},
	{path: "/lab/charset-missing", kind: "charset_missing", edits: [][2]string{{`<meta charset="utf-8">`, ``}},
		header: func(h http.Header) { h.Set("Content-Type", "text/html") }},
	{path: "/lab/slow-ttfb", kind: "slow_ttfb", wait: 700 * time.Millisecond},
	{path: "/lab/not-compressed", kind: "html_not_compressed", plain: true},
	{path: "/lab/no-cache-headers", kind: "no_cache_headers", header: func(h http.Header) { h.Del("Cache-Control") }},
	{path: "/lab/og-title-missing", kind: "og_title_missing", edits: [][2]string{{`<meta property="og:title" content="{{title}}">`, ``}}},
	{path: "/lab/og-description-missing", kind: "og_description_missing", edits: [][2]string{{`<meta property="og:description" content="{{description}}">`, ``}}},
	{path: "/lab/og-image-missing", kind: "og_image_missing", edits: [][2]string{{`<meta property="og:image" content="{{origin}}/assets/lab.jpg">`, ``}}},
}

const hreflangTags = `<link rel="alternate" hreflang="en" href="{{self}}"><link rel="alternate" hreflang="x-default" href="{{self}}">`

// labCleanDoc is the clean check page, with {{...}} placeholders filled per page.
const labCleanDoc = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{title}}</title>
<meta name="description" content="{{description}}">
` + canonicalTag + `
<meta property="og:title" content="{{title}}"><meta property="og:description" content="{{description}}">
<meta property="og:image" content="{{origin}}/assets/lab.jpg">
</head><body><nav><a href="/">Home</a> <a href="/lab/">Check pages</a></nav>
<main><h1>{{h1}}</h1>
` + imgTag + `
<h2>What this page shows</h2>
<p>{{text}}</p>
</main></body></html>
`

func init() {
	for _, c := range labChecks {
		c := c
		labPage(c.path, c.kind, c.rawPath == "", func(w http.ResponseWriter, r *http.Request) { serveLabCheck(w, r, c) })
	}
	labPage(LabCleanPath, "A clean page (no finding of its own)", true, func(w http.ResponseWriter, r *http.Request) {
		serveLabCheck(w, r, labCheck{path: LabCleanPath, kind: "clean", edits: [][2]string{{`</main>`, labQueryLinks() + `</main>`}}})
	})
}

// labQueryLinks links the check pages whose URL has a query, which the index (paths only) cannot.
func labQueryLinks() string {
	var b strings.Builder
	for _, c := range labChecks {
		if c.rawPath != "" {
			fmt.Fprintf(&b, `<p><a href="%s">%s</a></p>`, html.EscapeString(c.rawPath), html.EscapeString(c.kind))
		}
	}
	return b.String()
}

// serveLabCheck answers one check page: the clean page, edited, with the clean headers, edited.
func serveLabCheck(w http.ResponseWriter, r *http.Request, c labCheck) {
	if c.wait > 0 {
		t := time.NewTimer(c.wait)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	origin := scheme + "://" + r.Host
	doc := labCleanDoc
	for _, e := range c.edits {
		doc = strings.Replace(doc, e[0], e[1], 1)
	}
	title, description := "Crawl Cove check page: "+c.kind, "This page of the demo shop's lab shows one finding, "+c.kind+", and nothing else of its own."
	if c.path == LabCleanPath {
		title, description = "Crawl Cove check page: a clean page", "This page of the demo shop's lab is clean: no finding of its own, the baseline of the other check pages."
	}
	self := origin + r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		self += "?" + r.URL.RawQuery
	}
	doc = strings.NewReplacer(
		"{{title}}", html.EscapeString(title),
		"{{h1}}", html.EscapeString("Check: "+c.kind),
		"{{description}}", html.EscapeString(description),
		"{{self}}", html.EscapeString(self),
		"{{path}}", html.EscapeString(r.URL.EscapedPath()),
		"{{origin}}", html.EscapeString(origin),
		"{{host}}", html.EscapeString(r.Host),
		"{{text}}", labText(c.path, 230),
	).Replace(doc)

	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "max-age=300")
	if r.TLS != nil {
		h.Set("Strict-Transport-Security", "max-age=31536000")
	}
	if c.header != nil {
		c.header(h)
	}
	if c.plain {
		_, _ = w.Write([]byte(doc))
		return
	}
	writeMaybeGzip(w, r, doc)
}

// labWords are the words of the check pages' text.
var labWords = strings.Fields(`tide harbour dune gull kelp shingle breakwater lighthouse ferry jetty mooring anchor buoy rope
sail mast hull keel rudder paddle kayak canoe tent pole peg guy fly porch lantern wick charge battery spray salt sand
wind gust gale squall drizzle fog mist dusk dawn noon evening morning night stars moon current swell wave surf reef
rock cliff cove bay headland inlet estuary marsh pebble driftwood shell crab mussel oyster heron tern cormorant seal
otter dolphin pier slipway boathouse net loft market bench kettle map compass chart flare whistle knife stove pot mug
blanket jacket boots gloves hat scarf rucksack strap buckle zip seam patch thread needle tape knot cleat winch oar
bailer pump hatch deck cabin bunk galley log journal pencil camera binoculars torch radio forecast barometer tidal
northerly southerly westerly easterly calm choppy rough steady bright grey blue green silver amber warm cold wet dry
quiet busy early late long short narrow wide high low deep shallow old new small large`)

// labText is n words of text of its own for the check page at path, so no two pages are duplicates
// or near-duplicates of each other (the checks that compare pages).
func labText(path string, n int) string {
	h := fnv.New64a()
	h.Write([]byte(path))
	x := h.Sum64() | 1
	var b strings.Builder
	for i := range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		w := labWords[x%uint64(len(labWords))]
		switch {
		case i%11 == 0:
			if i > 0 {
				b.WriteString(". ")
			}
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		default:
			b.WriteString(" " + w)
		}
	}
	b.WriteString(".")
	return b.String()
}
