// Package pagecheck turns one fetched page's facts, its URL, response headers and timings into
// findings: the checks an SEO auditor runs on a page by itself (URL shape, titles and headings,
// content size, images, canonicals, directives, hreflang, security headers and mixed content,
// structured data, viewport and language, server time, compression and caching, Open Graph).
//
// The model: the crawl parses each page once with htmlx (Options.Facts) and calls Check with what
// it got; Check returns the page's findings, which the crawl writes with the page. pagecheck does
// no I/O and knows no other page: checks that compare pages (duplicates, inlinks, the targets of
// canonicals and hreflang) belong to the pass over the whole crawl, in package findings. Every
// threshold is a constant below that names the tool it follows.
package pagecheck

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/seocheck"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/politecrawl/polite/internal/htmlx"
	"github.com/politecrawl/polite/internal/urlnorm"
)

// The thresholds. Where tools disagree, the one followed is named.
const (
	// TitleMin: titles under 30 characters are "Below 30 Characters" in Screaming Frog.
	TitleMin = 30
	// DescriptionMin and DescriptionMax: Screaming Frog's "Below 70 Characters" and "Over 155 Characters".
	DescriptionMin, DescriptionMax = 70, 155
	// H1Max: Screaming Frog's "Over 70 Characters" for H1.
	H1Max = 70
	// ThinWords: Screaming Frog's "Low Content Pages" default, under 200 words.
	ThinWords = 200
	// MaxHTMLBytes: more than 1 MB of HTML; Screaming Frog's "Large HTML" and seonaut agree on 1 MB
	// (Google reads the first 15 MB, far above).
	MaxHTMLBytes = 1 << 20
	// MaxDOMNodes: Lighthouse's "Avoid an excessive DOM size" flagged DOMs over 1,500 elements.
	MaxDOMNodes = 1500
	// MinTextRatio: Screaming Frog's "Low text to HTML ratio" flags under 10 % visible text.
	MinTextRatio = 0.10
	// MaxAltLength: Screaming Frog's "Alt Text Over 100 Characters".
	MaxAltLength = 100
	// MaxLinks: more than 100 links on a page, the number of Google's former guideline that Screaming
	// Frog and seonaut keep as "too many links".
	MaxLinks = 100
	// SlowTTFB: web.dev's "good" time to first byte is 0.8 s at the 75th percentile of real users;
	// for the server's own time, measured from the crawler, 600 ms is Lighthouse's "Reduce initial
	// server response time" audit, which we follow.
	SlowTTFB = 600 * time.Millisecond
	// CompressMin: HTML over 1,400 bytes (one TCP packet, the size below which servers such as
	// Cloudflare and nginx's gzip_min_length advice leave responses uncompressed) should be compressed.
	CompressMin = 1400
)

// Input is what the crawl knows of one fetched HTML page.
type Input struct {
	URL        string              // the document's URL: the final URL after redirects; findings are named by it
	Status     int                 // the final response's status
	Header     http.Header         // the final response's headers, with Content-Encoding as the server sent it
	TTFB       time.Duration       // the final request's time to first byte (fetch.Result.TTFB)
	Bytes      int                 // HTML bytes, decoded
	Page       *htmlx.Page         // parsed with htmlx.Options.Facts
	XRobotsTag string              // the X-Robots-Tag values joined by ", " (Header's, read once by the crawl)
	OnSite     func(*url.URL) bool // whether a URL is on the crawled site; nil means the page's host
	// LinkURLs, if not nil, are the URLs of Page.Links already parsed by the caller (url.Parse), one
	// for each link, nil where the URL did not parse; the links to pages (a, area) must have theirs.
	// The crawl parses them anyway: this saves parsing each twice. With nil, Check parses them.
	LinkURLs []*url.URL
}

// Check returns the findings of one page, in a fixed order (the order of the kinds below). It returns
// nothing for a page without facts.
func Check(in Input) []store.FindingRecord {
	if in.Page == nil || in.Page.Facts() == nil {
		return nil
	}
	u, err := url.Parse(in.URL)
	if err != nil {
		return nil
	}
	c := &checker{in: in, pg: in.Page, f: in.Page.Facts(), u: u, https: strings.EqualFold(u.Scheme, "https")}
	if c.in.OnSite == nil {
		c.in.OnSite = func(l *url.URL) bool { return strings.EqualFold(l.Hostname(), u.Hostname()) }
	}
	c.urlShape()
	c.links()
	c.titles()
	c.headings()
	c.content()
	c.images()
	c.canonicals()
	c.directives()
	c.hreflang()
	c.security()
	c.structured()
	c.mobile()
	c.performance()
	c.social()
	return c.out
}

type checker struct {
	in    Input
	pg    *htmlx.Page
	f     *htmlx.Facts
	u     *url.URL
	https bool
	out   []store.FindingRecord
}

func (c *checker) add(kind, format string, a ...any) {
	c.out = append(c.out, store.FindingRecord{URL: c.in.URL, Kind: kind, Detail: fmt.Sprintf(format, a...)})
}

// examples lists up to three items and how many more there are.
func examples(items []string) string {
	const show = 3
	s := strings.Join(items[:min(len(items), show)], ", ")
	if len(items) > show {
		s += fmt.Sprintf(" and %d more", len(items)-show)
	}
	return s
}

func (c *checker) urlShape() {
	issues := seocheck.CheckURL(c.in.URL)
	for _, k := range []struct {
		issue  seocheck.URLIssue
		kind   string
		detail string
	}{
		{seocheck.URLUppercase, findings.KindURLUppercase, "uppercase letters in the path"},
		{seocheck.URLUnderscore, findings.KindURLUnderscore, "underscores in the path"},
		{seocheck.URLSpace, findings.KindURLSpace, "spaces (raw, %20 or +)"},
		{seocheck.URLRepeatedSlash, findings.KindURLRepeatedSlash, "// in the path"},
		{seocheck.URLNonASCII, findings.KindURLNonASCII, "characters outside ASCII"},
		{seocheck.URLTooLong, findings.KindURLTooLong, fmt.Sprintf("%d characters, over %d", len(c.in.URL), seocheck.MaxURLLength)},
		{seocheck.URLManyParams, findings.KindURLManyParams, fmt.Sprintf("%d query parameters, over %d", seocheck.QueryParams(c.u.RawQuery), seocheck.MaxQueryParams)},
	} {
		if issues.Has(k.issue) {
			c.add(k.kind, "%s", k.detail)
		}
	}
}

// pageLink reports the links that lead to pages (a, area), not assets or a refresh.
func pageLink(l htmlx.Link) bool { return l.Tag == "a" || l.Tag == "area" }

func (c *checker) links() {
	var n, internal int // page links; internal links to another page, counted to one
	var insecure, noText, nofollow []string
	self := store.NormalizeOrSelf(c.in.URL)
	for i, l := range c.pg.Links {
		if !pageLink(l) {
			continue
		}
		n++
		lu := c.linkURL(i)
		if lu == nil {
			continue
		}
		onSite := c.in.OnSite(lu)
		if l.Tag == "a" && l.Text == "" {
			noText = append(noText, l.URL)
		}
		if !onSite {
			continue
		}
		if c.https && strings.EqualFold(lu.Scheme, "http") {
			insecure = append(insecure, l.URL)
		}
		if l.Nofollow {
			nofollow = append(nofollow, l.URL)
		}
		if internal == 0 && store.NormalizeOrSelf(l.URL) != self { // one is enough: normalising is not free
			internal++
		}
	}
	if len(insecure) > 0 {
		c.add(findings.KindHTTPLinkOnHTTPS, "%d links to http:// URLs of the site: %s", len(insecure), examples(insecure))
	}
	if n > MaxLinks {
		c.add(findings.KindTooManyLinks, "%d links, over %d", n, MaxLinks)
	}
	if len(noText) > 0 {
		c.add(findings.KindLinkNoAnchorText, "%d links without text: %s", len(noText), examples(noText))
	}
	if len(nofollow) > 0 {
		c.add(findings.KindInternalNofollow, "%d internal links marked nofollow: %s", len(nofollow), examples(nofollow))
	}
	if internal == 0 && c.pg.Refresh == "" {
		c.add(findings.KindDeadEnd, "no link to another page of the site")
	}
	if c.in.Status == http.StatusOK {
		if phrase, where := c.notFound(); phrase != "" {
			c.add(findings.KindSoft404Text, "HTTP 200, but the %s says %q", where, phrase)
		}
	}
}

// linkURL is the parsed URL of link i of the page, nil when it does not parse.
func (c *checker) linkURL(i int) *url.URL {
	if c.in.LinkURLs != nil {
		return c.in.LinkURLs[i]
	}
	lu, err := url.Parse(c.pg.Links[i].URL)
	if err != nil {
		return nil
	}
	return lu
}

// notFoundPhrases are what the title or h1 of an error page says, lower case.
var notFoundPhrases = []string{"page not found", "not found", "error 404", "404 error", "page does not exist",
	"page doesn't exist", "no longer exists", "no longer available"}

// notFound returns the not-found phrase of the title or the first h1, and which it was in.
func (c *checker) notFound() (phrase, where string) {
	texts := []struct{ text, where string }{{c.pg.Title, "title"}}
	if len(c.pg.H1) > 0 {
		texts = append(texts, struct{ text, where string }{c.pg.H1[0], "h1"})
	}
	for _, t := range texts {
		low := strings.ToLower(t.text)
		if strings.TrimSpace(low) == "404" {
			return "404", t.where
		}
		for _, p := range notFoundPhrases {
			if strings.Contains(low, p) {
				return p, t.where
			}
		}
	}
	return "", ""
}

func (c *checker) titles() {
	t := strings.TrimSpace(c.pg.Title)
	if n := utf8.RuneCountInString(t); t != "" && n < TitleMin {
		c.add(findings.KindTitleTooShort, "%d characters, under %d: %q", n, TitleMin, t)
	}
	if t != "" && len(c.pg.H1) > 0 && strings.EqualFold(t, strings.TrimSpace(c.pg.H1[0])) {
		c.add(findings.KindTitleSameAsH1, "%q", t)
	}
	if d := strings.TrimSpace(c.pg.MetaDescription); d != "" {
		switch n := utf8.RuneCountInString(d); {
		case n < DescriptionMin:
			c.add(findings.KindDescTooShort, "%d characters, under %d", n, DescriptionMin)
		case n > DescriptionMax:
			c.add(findings.KindDescTooLong, "%d characters, over %d", n, DescriptionMax)
		}
	}
}

func (c *checker) headings() {
	for _, h := range c.pg.H1 {
		if n := utf8.RuneCountInString(h); n > H1Max {
			c.add(findings.KindH1TooLong, "%d characters, over %d: %q", n, H1Max, h)
			break
		}
	}
	h2 := false
	for _, lvl := range c.f.Headings {
		h2 = h2 || lvl == 2
	}
	if !h2 {
		c.add(findings.KindH2Missing, "no h2 among %d headings", len(c.f.Headings))
	}
	for i := 1; i < len(c.f.Headings); i++ {
		if prev, cur := c.f.Headings[i-1], c.f.Headings[i]; cur > prev+1 {
			c.add(findings.KindHeadingSkipped, "h%d follows h%d", cur, prev)
			break
		}
	}
}

func (c *checker) content() {
	if c.pg.WordCount < ThinWords {
		c.add(findings.KindThinContent, "%d words, under %d", c.pg.WordCount, ThinWords)
	}
	if c.f.Lorem {
		c.add(findings.KindLoremIpsum, "the visible text has \"lorem ipsum\"")
	}
	if c.in.Bytes > MaxHTMLBytes || c.pg.Truncated {
		c.add(findings.KindHTMLTooLarge, "%d bytes of HTML, over %d", c.in.Bytes, MaxHTMLBytes)
	}
	if c.f.Elements > MaxDOMNodes {
		c.add(findings.KindDOMTooLarge, "%d elements, over %d", c.f.Elements, MaxDOMNodes)
	}
	if c.in.Bytes > 0 {
		if r := float64(c.f.TextBytes) / float64(c.in.Bytes); r < MinTextRatio {
			c.add(findings.KindLowTextRatio, "%.1f %% of %d bytes is visible text, under %.0f %%", 100*r, c.in.Bytes, 100*MinTextRatio)
		}
	}
}

func (c *checker) images() {
	var noAlt, longAlt, noSize []string
	for _, im := range c.f.Images {
		src := im.Src
		if src == "" {
			src = "(no src)"
		}
		switch {
		case !im.HasAlt:
			noAlt = append(noAlt, src)
		case utf8.RuneCountInString(im.Alt) > MaxAltLength:
			longAlt = append(longAlt, src)
		}
		if !im.HasWidth || !im.HasHeight {
			noSize = append(noSize, src)
		}
	}
	if len(noAlt) > 0 {
		c.add(findings.KindImageAltMissing, "%d images without alt: %s", len(noAlt), examples(noAlt))
	}
	if len(longAlt) > 0 {
		c.add(findings.KindImageAltTooLong, "%d images with alt over %d characters: %s", len(longAlt), MaxAltLength, examples(longAlt))
	}
	if len(noSize) > 0 {
		c.add(findings.KindImageNoSize, "%d images without width and height: %s", len(noSize), examples(noSize))
	}
}

func (c *checker) canonicals() {
	header := headerCanonical(c.in.Header, c.u)
	switch {
	case c.pg.CanonicalCount == 0 && header == "":
		c.add(findings.KindCanonicalMissing, "no rel=canonical in the HTML or the Link header")
	case c.pg.CanonicalCount > 1:
		c.add(findings.KindCanonicalMultiple, "%d rel=canonical links", c.pg.CanonicalCount)
	}
	if raw := strings.TrimSpace(c.f.CanonicalRaw); raw != "" {
		if r, err := url.Parse(raw); err == nil && !r.IsAbs() {
			c.add(findings.KindCanonicalRelative, "href %q", raw)
		}
	}
	if c.f.CanonicalsInBody > 0 {
		c.add(findings.KindCanonicalOutside, "%d rel=canonical in the body", c.f.CanonicalsInBody)
	}
	if header != "" && c.pg.Canonical != "" && store.NormalizeOrSelf(header) != store.NormalizeOrSelf(c.pg.Canonical) {
		c.add(findings.KindCanonicalHeaderDiff, "HTML %s, Link header %s", c.pg.Canonical, header)
	}
}

// headerCanonical is the URL of the first rel=canonical in the response's Link headers (RFC 8288),
// resolved against the page URL.
func headerCanonical(h http.Header, base *url.URL) string {
	for _, v := range h.Values("Link") {
		for part := range strings.SplitSeq(v, ",") {
			target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
			target = strings.TrimSpace(target)
			if !ok || !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
				continue
			}
			for p := range strings.SplitSeq(params, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
				if !strings.EqualFold(strings.TrimSpace(k), "rel") {
					continue
				}
				for _, rel := range strings.Fields(strings.Trim(strings.TrimSpace(val), `"`)) {
					if strings.EqualFold(rel, "canonical") {
						if u, err := base.Parse(target[1 : len(target)-1]); err == nil {
							return u.String()
						}
					}
				}
			}
		}
	}
	return ""
}

// otherDirectives are the robots directives, besides index/noindex and follow/nofollow, that
// Google documents (https://developers.google.com/search/docs/crawling-indexing/robots-meta-tag).
var otherDirectives = map[string]bool{"noarchive": true, "nosnippet": true, "max-snippet": true, "max-image-preview": true,
	"max-video-preview": true, "notranslate": true, "noimageindex": true, "unavailable_after": true, "indexifembedded": true,
	"nocache": true, "none": true}

// directives splits robots directives ("noindex, max-snippet:20", "googlebot: nofollow") into
// their lower-case names.
func directives(v string) []string {
	var out []string
	for f := range strings.FieldsFuncSeq(strings.ToLower(v), func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		name, _, _ := strings.Cut(f, ":")
		if name != "" && !strings.HasSuffix(f, ":") || name == "unavailable_after" {
			out = append(out, name)
		}
	}
	return out
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (c *checker) directives() {
	meta, hdr := directives(c.pg.MetaRobots), directives(c.in.XRobotsTag)
	var where []string
	if has(meta, "nofollow") || has(meta, "none") {
		where = append(where, "meta robots")
	}
	if has(hdr, "nofollow") || has(hdr, "none") {
		where = append(where, "X-Robots-Tag")
	}
	if len(where) > 0 {
		c.add(findings.KindRobotsNofollow, "nofollow in %s", strings.Join(where, " and "))
	}
	var other []string
	for _, d := range append(meta, hdr...) {
		if otherDirectives[d] && !has(other, d) {
			other = append(other, d)
		}
	}
	if len(other) > 0 {
		c.add(findings.KindRobotsOther, "%s", strings.Join(other, ", "))
	}
	if strings.TrimSpace(c.in.XRobotsTag) != "" {
		c.add(findings.KindXRobotsTag, "X-Robots-Tag: %s", c.in.XRobotsTag)
	}
	if c.f.MetaRobotsInBody > 0 {
		c.add(findings.KindRobotsOutside, "%d robots meta tags in the body", c.f.MetaRobotsInBody)
	}
	noindex := has(meta, "noindex") || has(meta, "none") || has(hdr, "noindex") || has(hdr, "none")
	if noindex && c.pg.Canonical != "" && store.NormalizeOrSelf(c.pg.Canonical) != store.NormalizeOrSelf(c.in.URL) {
		c.add(findings.KindNoindexCanonical, "noindex, and the canonical is %s", c.pg.Canonical)
	}
}

func (c *checker) hreflang() {
	alts := c.pg.Hreflang
	if len(alts) == 0 {
		return
	}
	self := normalize(c.in.URL)
	var invalid []string
	selfLang, selfFound, xDefault := "", false, false
	for _, a := range alts {
		if err := seocheck.Hreflang(a.Hreflang); err != nil {
			invalid = append(invalid, err.Error())
			continue
		}
		if strings.EqualFold(a.Hreflang, seocheck.XDefault) {
			xDefault = true
			continue
		}
		if normalize(a.URL) == self && !selfFound {
			selfFound, selfLang = true, seocheck.HreflangLanguage(a.Hreflang)
		}
	}
	if len(invalid) > 0 {
		c.add(findings.KindHreflangInvalid, "%s", examples(invalid))
	}
	if !selfFound {
		c.add(findings.KindHreflangNoSelf, "%d hreflang annotations, none for %s", len(alts), c.in.URL)
	}
	if !xDefault {
		c.add(findings.KindHreflangNoXDefault, "%d hreflang annotations, no x-default", len(alts))
	}
	if selfFound && c.pg.Lang != "" && seocheck.HTMLLang(c.pg.Lang) == nil {
		if lang, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(c.pg.Lang)), "-"); lang != selfLang {
			c.add(findings.KindHreflangLang, "hreflang %q for the page itself, <html lang=%q>", selfLang, c.pg.Lang)
		}
	}
}

func normalize(s string) string {
	if n, err := urlnorm.Normalize(s); err == nil {
		return n
	}
	return s
}

func (c *checker) security() {
	if c.https {
		if c.in.Header.Get("Strict-Transport-Security") == "" {
			c.add(findings.KindNoHSTS, "no Strict-Transport-Security header")
		}
		var active, passive []string
		for _, l := range c.pg.Links {
			if !strings.HasPrefix(strings.ToLower(l.URL), "http:") {
				continue
			}
			switch {
			case l.Tag == "script" || l.Tag == "iframe" || l.Tag == "frame" || l.Tag == "link" && stylesheet(l.Rel):
				active = append(active, l.Tag+" "+l.URL)
			case l.Tag == "img":
				passive = append(passive, l.URL)
			}
		}
		if len(active) > 0 {
			c.add(findings.KindMixedActive, "%d over http: %s", len(active), examples(active))
		}
		if len(passive) > 0 {
			c.add(findings.KindMixedPassive, "%d images over http: %s", len(passive), examples(passive))
		}
		var forms []string
		for _, a := range c.f.Forms {
			if strings.HasPrefix(strings.ToLower(a), "http:") {
				forms = append(forms, a)
			}
		}
		if len(forms) > 0 {
			c.add(findings.KindFormInsecure, "%d forms post to http: %s", len(forms), examples(forms))
		}
	}
	if !strings.EqualFold(strings.TrimSpace(c.in.Header.Get("X-Content-Type-Options")), "nosniff") {
		c.add(findings.KindNoContentOptions, "no X-Content-Type-Options: nosniff")
	}
}

func stylesheet(rel string) bool {
	for _, r := range strings.Fields(rel) {
		if strings.EqualFold(r, "stylesheet") {
			return true
		}
	}
	return false
}

func (c *checker) structured() {
	for i, j := range c.f.JSONLD {
		if j.Truncated {
			c.add(findings.KindJSONLDInvalid, "script %d: over %d bytes, not checked", i+1, htmlx.MaxJSONLDBytes)
			continue
		}
		for _, p := range seocheck.CheckJSONLD(j.Body) {
			c.add(string(p.Kind), "script %d: %s", i+1, p.Detail)
		}
	}
}

func (c *checker) mobile() {
	if c.f.ViewportCount == 0 {
		c.add(findings.KindViewportMissing, "no <meta name=viewport>")
	}
	if strings.TrimSpace(c.pg.Lang) == "" {
		c.add(findings.KindLangMissing, "no <html lang>")
	} else if err := seocheck.HTMLLang(c.pg.Lang); err != nil {
		c.add(findings.KindLangInvalid, "%v", err)
	}
	_, params, _ := mime.ParseMediaType(c.in.Header.Get("Content-Type"))
	if params["charset"] == "" && !c.f.CharsetMeta {
		c.add(findings.KindCharsetMissing, "no charset in Content-Type %q nor in a <meta>", c.in.Header.Get("Content-Type"))
	}
}

func (c *checker) performance() {
	if c.in.TTFB > SlowTTFB {
		c.add(findings.KindSlowTTFB, "time to first byte %d ms, over %d ms", c.in.TTFB.Milliseconds(), SlowTTFB.Milliseconds())
	}
	if enc := strings.TrimSpace(c.in.Header.Get("Content-Encoding")); c.in.Bytes > CompressMin && (enc == "" || strings.EqualFold(enc, "identity")) {
		c.add(findings.KindNotCompressed, "%d bytes sent without Content-Encoding (the request accepted gzip)", c.in.Bytes)
	}
	h := c.in.Header
	if h.Get("Cache-Control") == "" && h.Get("Expires") == "" && h.Get("ETag") == "" && h.Get("Last-Modified") == "" {
		c.add(findings.KindNoCacheHeaders, "no Cache-Control, Expires, ETag or Last-Modified")
	}
}

func (c *checker) social() {
	if c.f.OGTitle == "" {
		c.add(findings.KindOGTitleMissing, "no og:title")
	}
	if c.f.OGDescription == "" {
		c.add(findings.KindOGDescMissing, "no og:description")
	}
	if c.f.OGImage == "" {
		c.add(findings.KindOGImageMissing, "no og:image")
	}
}
