package pagecheck

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/internal/htmlx"
)

const pageURL = "https://shop.example/tents/alpine-2"

// cleanDoc is a page none of the checks finds anything on.
var cleanDoc = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Alpine 2 tent: light, storm-proof, two people</title>
<meta name="description" content="The Alpine 2 sleeps two, weighs 1.9 kg and stood through a night of 80 km/h gusts on our test weekend.">
<link rel="canonical" href="https://shop.example/tents/alpine-2">
<link rel="alternate" hreflang="en" href="https://shop.example/tents/alpine-2"><link rel="alternate" hreflang="x-default" href="https://shop.example/tents/alpine-2">
<meta property="og:title" content="Alpine 2 tent"><meta property="og:description" content="Light and storm-proof."><meta property="og:image" content="https://shop.example/i/alpine-2.jpg">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Alpine 2","offers":{"@type":"Offer","price":"249","priceCurrency":"EUR"}}</script>
</head><body><header><a href="/">Home</a> <a href="/tents/">Tents</a></header><main>
<h1>Alpine 2</h1><img src="/i/alpine-2.jpg" alt="The Alpine 2 pitched on a ridge" width="800" height="600">
<h2>Why it stands</h2><p>` + strings.Repeat("Two crossing poles and twelve pegs hold the tent flat to the ground in wind. ", 12) + `</p>
<h3>Pitching</h3><p>` + strings.Repeat("The inner hangs from the fly so both go up together in rain. ", 10) + `</p>
<h2>Sizes</h2><p>` + strings.Repeat("Two people fit with their packs in the porch. ", 6) + `</p>
<form action="/basket/add" method="post"><button>Add to basket</button></form>
</main></body></html>`

func cleanHeader() http.Header {
	return http.Header{
		"Content-Type":              {"text/html; charset=utf-8"},
		"Content-Encoding":          {"gzip"},
		"Cache-Control":             {"max-age=300"},
		"Strict-Transport-Security": {"max-age=31536000"},
		"X-Content-Type-Options":    {"nosniff"},
	}
}

func check(t *testing.T, rawURL, doc string, h http.Header, ttfb time.Duration) []string {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	pg, err := htmlx.Options{Facts: true}.Parse(strings.NewReader(doc), u)
	require.NoError(t, err)
	fs := Check(Input{URL: rawURL, Status: http.StatusOK, Header: h, TTFB: ttfb, Bytes: len(doc), Page: pg,
		XRobotsTag: strings.Join(h.Values("X-Robots-Tag"), ", ")})
	var kinds []string
	for _, f := range fs {
		assert.Equal(t, rawURL, f.URL, "named by the document's URL")
		assert.NotEmpty(t, f.Detail, f.Kind)
		kinds = append(kinds, f.Kind)
	}
	return kinds
}

func TestCleanPageHasNoFindings(t *testing.T) {
	assert.Empty(t, check(t, pageURL, cleanDoc, cleanHeader(), 100*time.Millisecond))
}

func TestEachKind(t *testing.T) {
	type edit struct{ old, new string }
	cases := []struct {
		kind   string
		url    string            // "" = pageURL
		edits  []edit            // applied to cleanDoc
		header func(http.Header) // applied to cleanHeader
		ttfb   time.Duration
	}{
		{kind: findings.KindURLUppercase, url: "https://shop.example/Tents/alpine-2"},
		{kind: findings.KindURLUnderscore, url: "https://shop.example/tents/alpine_2"},
		{kind: findings.KindURLSpace, url: "https://shop.example/tents/alpine%202"},
		{kind: findings.KindURLRepeatedSlash, url: "https://shop.example/tents//alpine-2"},
		{kind: findings.KindURLNonASCII, url: "https://shop.example/tents/z%C3%A9lt"},
		{kind: findings.KindURLTooLong, url: "https://shop.example/tents/" + strings.Repeat("alpine-", 15)},
		{kind: findings.KindURLManyParams, url: "https://shop.example/tents/?a=1&b=2&c=3&d=4"},
		{kind: findings.KindHTTPLinkOnHTTPS, edits: []edit{{`<a href="/tents/">`, `<a href="http://shop.example/tents/">`}}},
		{kind: findings.KindTooManyLinks, edits: []edit{{`<main>`, `<main>` + strings.Repeat(`<a href="/tents/">Tents</a> `, 100)}}},
		{kind: findings.KindLinkNoAnchorText, edits: []edit{{`<a href="/tents/">Tents</a>`, `<a href="/tents/"></a>`}}},
		{kind: findings.KindInternalNofollow, edits: []edit{{`<a href="/tents/">`, `<a href="/tents/" rel="nofollow">`}}},
		{kind: findings.KindDeadEnd, edits: []edit{{`<a href="/">Home</a> <a href="/tents/">Tents</a>`, `<a href="https://other.example/">Elsewhere</a> <a href="/tents/alpine-2">This page</a>`}}},
		{kind: findings.KindSoft404Text, edits: []edit{{`<h1>Alpine 2</h1>`, `<h1>Sorry, page not found</h1>`}}},
		{kind: findings.KindTitleTooShort, edits: []edit{{`<title>Alpine 2 tent: light, storm-proof, two people</title>`, `<title>Alpine 2 tent</title>`}}},
		{kind: findings.KindTitleSameAsH1, edits: []edit{{`<h1>Alpine 2</h1>`, `<h1>Alpine 2 tent: light, storm-proof, two people</h1>`}}},
		{kind: findings.KindDescTooShort, edits: []edit{{`content="The Alpine 2 sleeps two,`, `content="Short.">` + `<meta name=x content="`}}},
		{kind: findings.KindDescTooLong, edits: []edit{{`content="The Alpine 2 sleeps two,`, `content="` + strings.Repeat("Long text. ", 15)}}},
		{kind: findings.KindH1TooLong, edits: []edit{{`<h1>Alpine 2</h1>`, `<h1>` + strings.Repeat("Alpine 2 ", 9) + `</h1>`}}},
		{kind: findings.KindH2Missing, edits: []edit{{`<h2>Why it stands</h2>`, `<h3>Why it stands</h3>`}, {`<h2>Sizes</h2>`, `<h3>Sizes</h3>`}}},
		{kind: findings.KindHeadingSkipped, edits: []edit{{`<h2>Why it stands</h2>`, `<h4>Why it stands</h4>`}}},
		{kind: findings.KindThinContent, edits: []edit{{strings.Repeat("Two crossing poles and twelve pegs hold the tent flat to the ground in wind. ", 12), "Short."}}},
		{kind: findings.KindLoremIpsum, edits: []edit{{`<h2>Sizes</h2>`, `<h2>Sizes</h2><p>Lorem ipsum dolor sit amet.</p>`}}},
		{kind: findings.KindHTMLTooLarge, edits: []edit{{`</body>`, `<!--` + strings.Repeat("x", MaxHTMLBytes) + `--><p>` + strings.Repeat("word ", MaxHTMLBytes/40) + `</p></body>`}}},
		{kind: findings.KindDOMTooLarge, edits: []edit{{`</main>`, strings.Repeat("<span>a</span>", MaxDOMNodes) + `</main>`}}},
		{kind: findings.KindLowTextRatio, edits: []edit{{`</body>`, `<script>` + strings.Repeat("var x = 1;", 2000) + `</script></body>`}}},
		{kind: findings.KindImageAltMissing, edits: []edit{{` alt="The Alpine 2 pitched on a ridge"`, ``}}},
		{kind: findings.KindImageAltTooLong, edits: []edit{{`alt="The Alpine 2 pitched on a ridge"`, `alt="` + strings.Repeat("The Alpine 2 ", 9) + `"`}}},
		{kind: findings.KindImageNoSize, edits: []edit{{` width="800" height="600"`, ``}}},
		{kind: findings.KindCanonicalMissing, edits: []edit{{`<link rel="canonical" href="https://shop.example/tents/alpine-2">`, ``}}},
		{kind: findings.KindCanonicalMultiple, edits: []edit{{`<link rel="canonical" href="https://shop.example/tents/alpine-2">`, `<link rel="canonical" href="https://shop.example/tents/alpine-2"><link rel="canonical" href="https://shop.example/tents/alpine-2">`}}},
		{kind: findings.KindCanonicalRelative, edits: []edit{{`<link rel="canonical" href="https://shop.example/tents/alpine-2">`, `<link rel="canonical" href="/tents/alpine-2">`}}},
		{kind: findings.KindCanonicalOutside, edits: []edit{{`<link rel="canonical" href="https://shop.example/tents/alpine-2">`, ``}, {`</main>`, `<link rel="canonical" href="https://shop.example/tents/alpine-2"></main>`}}},
		{kind: findings.KindCanonicalHeaderDiff, header: func(h http.Header) { h.Set("Link", `<https://shop.example/tents/alpine>; rel="canonical"`) }},
		{kind: findings.KindRobotsNofollow, edits: []edit{{`<title>`, `<meta name="robots" content="nofollow"><title>`}}},
		{kind: findings.KindRobotsOther, edits: []edit{{`<title>`, `<meta name="robots" content="noarchive, max-snippet:50"><title>`}}},
		{kind: findings.KindXRobotsTag, header: func(h http.Header) { h.Set("X-Robots-Tag", "noimageindex") }},
		{kind: findings.KindRobotsOutside, edits: []edit{{`</main>`, `<meta name="robots" content="index"></main>`}}},
		{kind: findings.KindNoindexCanonical, edits: []edit{{`<title>`, `<meta name="robots" content="noindex"><title>`}, {`<link rel="canonical" href="https://shop.example/tents/alpine-2">`, `<link rel="canonical" href="https://shop.example/tents/alpine">`}}},
		{kind: findings.KindHreflangInvalid, edits: []edit{{`hreflang="x-default"`, `hreflang="x-default"><link rel="alternate" hreflang="en_GB" href="/uk/"`}}},
		{kind: findings.KindHreflangNoSelf, edits: []edit{{`hreflang="en" href="https://shop.example/tents/alpine-2"`, `hreflang="en" href="https://shop.example/en/tents/alpine-2"`}}},
		{kind: findings.KindHreflangNoXDefault, edits: []edit{{`<link rel="alternate" hreflang="x-default" href="https://shop.example/tents/alpine-2">`, ``}}},
		{kind: findings.KindHreflangLang, edits: []edit{{`<html lang="en">`, `<html lang="de">`}}},
		{kind: findings.KindNoHSTS, header: func(h http.Header) { h.Del("Strict-Transport-Security") }},
		{kind: findings.KindMixedActive, edits: []edit{{`</head>`, `<script src="http://cdn.example/app.js"></script></head>`}}},
		{kind: findings.KindMixedActive, edits: []edit{{`</head>`, `<link rel="stylesheet" href="http://cdn.example/s.css"></head>`}}},
		{kind: findings.KindMixedActive, edits: []edit{{`</main>`, `<iframe src="http://video.example/v"></iframe></main>`}}},
		{kind: findings.KindMixedPassive, edits: []edit{{`src="/i/alpine-2.jpg"`, `src="http://shop.example/i/alpine-2.jpg"`}}},
		{kind: findings.KindFormInsecure, edits: []edit{{`action="/basket/add"`, `action="http://shop.example/basket/add"`}}},
		{kind: findings.KindNoContentOptions, header: func(h http.Header) { h.Del("X-Content-Type-Options") }},
		{kind: findings.KindJSONLDInvalid, edits: []edit{{`"EUR"}}`, `"EUR"}`}}},
		{kind: findings.KindJSONLDNoCtx, edits: []edit{{`"@context":"https://schema.org",`, ``}}},
		{kind: findings.KindJSONLDNoType, edits: []edit{{`"@type":"Product",`, ``}}},
		{kind: findings.KindJSONLDRequired, edits: []edit{{`"name":"Alpine 2",`, ``}}},
		{kind: findings.KindViewportMissing, edits: []edit{{`<meta name="viewport" content="width=device-width, initial-scale=1">`, ``}}},
		{kind: findings.KindLangMissing, edits: []edit{{`<html lang="en">`, `<html>`}}},
		{kind: findings.KindLangInvalid, edits: []edit{{`<html lang="en">`, `<html lang="en_GB">`}}},
		{kind: findings.KindCharsetMissing, edits: []edit{{`<meta charset="utf-8">`, ``}}, header: func(h http.Header) { h.Set("Content-Type", "text/html") }},
		{kind: findings.KindSlowTTFB, ttfb: 900 * time.Millisecond},
		{kind: findings.KindNotCompressed, header: func(h http.Header) { h.Del("Content-Encoding") }},
		{kind: findings.KindNoCacheHeaders, header: func(h http.Header) { h.Del("Cache-Control") }},
		{kind: findings.KindOGTitleMissing, edits: []edit{{`<meta property="og:title" content="Alpine 2 tent">`, ``}}},
		{kind: findings.KindOGDescMissing, edits: []edit{{`<meta property="og:description" content="Light and storm-proof.">`, ``}}},
		{kind: findings.KindOGImageMissing, edits: []edit{{`<meta property="og:image" content="https://shop.example/i/alpine-2.jpg">`, ``}}},
	}
	covered := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			doc := cleanDoc
			for _, e := range tc.edits {
				require.Contains(t, doc, e.old)
				doc = strings.Replace(doc, e.old, e.new, 1)
			}
			h := cleanHeader()
			if tc.header != nil {
				tc.header(h)
			}
			u := pageURL
			if tc.url != "" {
				u = tc.url
			}
			ttfb := tc.ttfb
			if ttfb == 0 {
				ttfb = 100 * time.Millisecond
			}
			got := check(t, u, doc, h, ttfb)
			assert.Contains(t, got, tc.kind)
			covered[tc.kind] = true
		})
	}
	for _, k := range pageKindNames() {
		assert.True(t, covered[k], "no case produces %s", k)
	}
}

// pageKindNames are the kinds Check may return: those of the findings table's page part.
func pageKindNames() []string {
	var ks []string
	for _, c := range findings.Categories {
		for _, k := range findings.KindsOf(c) {
			if findings.IsPageKind(k) {
				ks = append(ks, k)
			}
		}
	}
	slices.Sort(ks)
	return ks
}

// On an http page the https-only checks stay silent.
func TestHTTPPageHasNoHTTPSFindings(t *testing.T) {
	doc := strings.Replace(cleanDoc, `<script type`, `<script src="http://cdn.example/a.js"></script><script type`, 1)
	doc = strings.Replace(doc, `action="/basket/add"`, `action="http://shop.example/basket/add"`, 1)
	h := cleanHeader()
	h.Del("Strict-Transport-Security")
	got := check(t, "http://shop.example/tents/alpine-2", strings.ReplaceAll(doc, "https://shop.example", "http://shop.example"), h, time.Millisecond)
	assert.Empty(t, got)
}

func TestHeaderCanonical(t *testing.T) {
	base, _ := url.Parse("https://x.example/a/b")
	for _, tc := range []struct{ link, want string }{
		{`<https://x.example/c>; rel="canonical"`, "https://x.example/c"},
		{`</p.css>; rel=preload; as=style, <../c>; rel=canonical`, "https://x.example/c"},
		{`<https://x.example/c>; rel="alternate"`, ""},
		{`garbage`, ""},
	} {
		assert.Equal(t, tc.want, headerCanonical(http.Header{"Link": {tc.link}}, base), tc.link)
	}
}

func TestDirectives(t *testing.T) {
	assert.Equal(t, []string{"noindex", "max-snippet", "nofollow"}, directives("NoIndex, max-snippet:20; googlebot: nofollow"))
	assert.Equal(t, []string{"unavailable_after", "25", "jun", "2010"}, directives("unavailable_after: 25 Jun 2010"))
}

// BenchmarkCheck is the cost of the checks on one parsed page (the clean page, which has no finding:
// what most pages of a good site cost).
func BenchmarkCheck(b *testing.B) {
	u, _ := url.Parse(pageURL)
	pg, err := htmlx.Options{Facts: true}.Parse(strings.NewReader(cleanDoc), u)
	require.NoError(b, err)
	in := Input{URL: pageURL, Status: http.StatusOK, Header: cleanHeader(), TTFB: time.Millisecond, Bytes: len(cleanDoc), Page: pg}
	b.ReportAllocs()
	for b.Loop() {
		if fs := Check(in); len(fs) != 0 {
			b.Fatal(fs)
		}
	}
}

// Input.LinkURLs, the links parsed by the caller, changes no finding: the link checks read the same
// URLs as when Check parses them, a link whose URL does not parse included.
func TestLinkURLsChangeNothing(t *testing.T) {
	doc := strings.Replace(cleanDoc, `<a href="/tents/">Tents</a>`, `<a href="http://shop.example/tents/">Tents</a> `+
		`<a href="/tents/" rel="nofollow"></a> <a href="https://other.example/"></a> <img src="http://shop.example/i.jpg">`, 1)
	u, err := url.Parse(pageURL)
	require.NoError(t, err)
	pg, err := htmlx.Options{Facts: true}.Parse(strings.NewReader(doc), u)
	require.NoError(t, err)
	// htmlx leaves out what net/url cannot parse; a caller's links might not.
	pg.Links = append(pg.Links, htmlx.Link{URL: "https://shop.example/x/%zz", Tag: "a"})
	in := Input{URL: pageURL, Status: http.StatusOK, Header: cleanHeader(), Bytes: len(doc), Page: pg}
	want := Check(in)
	in.LinkURLs = make([]*url.URL, len(pg.Links))
	unparsed := 0
	for i, l := range pg.Links {
		if lu, err := url.Parse(l.URL); err == nil {
			in.LinkURLs[i] = lu
		} else {
			unparsed++
		}
	}
	require.Equal(t, 1, unparsed, "the page has a link whose URL net/url does not parse")
	assert.Equal(t, want, Check(in))
	var kinds []string
	for _, f := range want {
		kinds = append(kinds, f.Kind)
	}
	assert.Subset(t, kinds, []string{findings.KindHTTPLinkOnHTTPS, findings.KindLinkNoAnchorText, findings.KindInternalNofollow})
}
