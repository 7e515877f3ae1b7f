package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const src = "https://example.com/sitemap.xml"

// readAll reads every entry of doc and returns them with the final error
// (nil at a clean io.EOF).
func readAll(t testing.TB, doc []byte, source string, set func(*Reader)) ([]Entry, *Reader, error) {
	t.Helper()
	r := NewReader(bytes.NewReader(doc), source)
	if set != nil {
		set(r)
	}
	var out []Entry
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out, r, nil
		}
		if err != nil {
			// The error is sticky.
			_, again := r.Next()
			require.Equal(t, err, again)
			return out, r, err
		}
		out = append(out, e)
	}
}

func urls(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.URL
	}
	return out
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, err := w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func urlset(locs ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, l := range locs {
		b.WriteString("<url><loc>" + l + "</loc></url>\n")
	}
	b.WriteString("</urlset>\n")
	return b.String()
}

func TestKindsAndDetection(t *testing.T) {
	plain := urlset("https://example.com/a", "https://example.com/b")
	tests := []struct {
		name   string
		doc    []byte
		source string
		kind   Kind
		gzip   bool
		want   []string
	}{
		{"urlset", []byte(plain), src, KindURLSet, false, []string{"https://example.com/a", "https://example.com/b"}},
		{"gzip urlset named .xml", gz(t, []byte(plain)), src, KindURLSet, true, []string{"https://example.com/a", "https://example.com/b"}},
		{"plain bytes named .gz", []byte(plain), "https://example.com/sitemap.xml.gz", KindURLSet, false, []string{"https://example.com/a", "https://example.com/b"}},
		{"double gzip", gz(t, gz(t, []byte(plain))), src, KindURLSet, true, []string{"https://example.com/a", "https://example.com/b"}},
		{"BOM and blank lines before XML", []byte("\xef\xbb\xbf\r\n\n  " + plain), src, KindURLSet, false, []string{"https://example.com/a", "https://example.com/b"}},
		{"text with CRLF, comments and blanks", []byte("\xef\xbb\xbf# generated\r\nhttps://example.com/a\r\n\r\n   https://example.com/b  \r\n# end\r\nhttps://example.com/c"), "https://example.com/sitemap.txt", KindText, false,
			[]string{"https://example.com/a", "https://example.com/b", "https://example.com/c"}},
		{"gzip text", gz(t, []byte("https://example.com/a\nhttps://example.com/b\n")), "https://example.com/sitemap.txt.gz", KindText, true, []string{"https://example.com/a", "https://example.com/b"}},
		{"sitemapindex", []byte(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://example.com/s1.xml</loc><lastmod>2024-05-01</lastmod></sitemap><sitemap><loc>https://example.com/deep/s2.xml.gz</loc></sitemap></sitemapindex>`),
			src, KindIndex, false, []string{"https://example.com/s1.xml", "https://example.com/deep/s2.xml.gz"}},
		{"RSS 2.0", []byte(`<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>https://example.com/</link>
			<item><title>one</title><link>https://example.com/p/1</link><pubDate>Tue, 10 Jun 2003 04:00:00 GMT</pubDate></item>
			<item><link> https://example.com/p/2 </link></item></channel></rss>`), "https://example.com/feed.xml", KindRSS, false,
			[]string{"https://example.com/p/1", "https://example.com/p/2"}},
		{"Atom 1.0", []byte(`<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><link href="https://example.com/"/>
			<entry><title>a</title><link rel="edit" href="https://example.com/edit/1"/><link rel="alternate" type="text/html" href="https://example.com/posts/1"/><updated>2003-12-13T18:30:02Z</updated></entry>
			<entry><link href="https://example.com/posts/2"/></entry></feed>`), "https://example.com/atom.xml", KindAtom, false,
			[]string{"https://example.com/posts/1", "https://example.com/posts/2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			es, r, err := readAll(t, tc.doc, tc.source, nil)
			require.NoError(t, err)
			assert.Equal(t, tc.want, urls(es))
			assert.Equal(t, tc.kind, r.Kind())
			assert.Equal(t, tc.gzip, r.Gzip())
			for _, e := range es {
				assert.Equal(t, tc.kind == KindIndex, e.IsSitemap)
			}
		})
	}
}

func TestFeedDates(t *testing.T) {
	rss := `<rss version="2.0"><channel><item><link>https://example.com/1</link><pubDate>Tue, 10 Jun 2003 04:00:00 GMT</pubDate></item>
		<item><link>https://example.com/2</link><pubDate>Wed, 2 Oct 2002 13:00:00 +0200</pubDate></item>
		<item><link>https://example.com/3</link><pubDate>yesterday</pubDate></item></channel></rss>`
	es, _, err := readAll(t, []byte(rss), "https://example.com/rss", nil)
	require.NoError(t, err)
	require.Len(t, es, 3)
	assert.Equal(t, time.Date(2003, 6, 10, 4, 0, 0, 0, time.UTC), es[0].LastMod)
	assert.Equal(t, time.Date(2002, 10, 2, 11, 0, 0, 0, time.UTC), es[1].LastMod)
	assert.True(t, es[2].LastMod.IsZero())

	atom := `<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="https://example.com/1"/><published>2001-01-01T00:00:00Z</published><updated>2003-12-13T18:30:02+01:00</updated></entry>
		<entry><link href="https://example.com/2"/><published>2001-01-01T00:00:00Z</published></entry>
		<entry><link href="https://example.com/3"/><updated>2004-01-01T00:00:00Z</updated><published>2001-01-01T00:00:00Z</published></entry>
		<entry><link href="https://example.com/4"/><published>2001-01-01T00:00:00Z</published><updated>junk</updated></entry></feed>`
	es, _, err = readAll(t, []byte(atom), "https://example.com/atom", nil)
	require.NoError(t, err)
	require.Len(t, es, 4)
	assert.Equal(t, time.Date(2003, 12, 13, 17, 30, 2, 0, time.UTC), es[0].LastMod)
	assert.Equal(t, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), es[1].LastMod)
	assert.Equal(t, time.Date(2004, 1, 1, 0, 0, 0, 0, time.UTC), es[2].LastMod)
	assert.Equal(t, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), es[3].LastMod)
}

func TestUnusableDocuments(t *testing.T) {
	tests := []struct {
		name   string
		doc    []byte
		reason error
		detail string
	}{
		{"empty body", nil, ErrEmpty, ""},
		{"whitespace only", []byte(" \r\n\t "), ErrEmpty, ""},
		{"BOM only", []byte("\xef\xbb\xbf"), ErrEmpty, ""},
		{"declaration only", []byte(`<?xml version="1.0"?>` + "\n<!-- nothing -->\n"), ErrEmpty, "no root element"},
		{"empty gzip", gz(t, nil), ErrEmpty, ""},
		{"HTML page", []byte("<!DOCTYPE html>\n<html lang=en><head><title>Not found</title></head><body><a href=\"https://example.com/a\">a</a></body></html>"), ErrNotSitemap, "root element <html>"},
		{"other root", []byte(`<?xml version="1.0"?><rdf:RDF><item><link>https://example.com/a</link></item></rdf:RDF>`), ErrNotSitemap, "<rdf:RDF>"},
		{"unparsable markup", []byte("<<<>>>"), ErrMalformed, ""},
		{"unclosed tag", []byte("<urlset <url>"), ErrMalformed, "unclosed tag"},
		{"corrupt gzip", append([]byte{0x1f, 0x8b}, "garbage garbage garbage"...), ErrCompression, ""},
		{"truncated gzip", gz(t, []byte(urlset("https://example.com/a")))[:20], ErrCompression, ""},
		{"UTF-16", []byte("\xff\xfe<\x00u\x00"), ErrEncoding, "UTF-16"},
		{"unsupported encoding", []byte(`<?xml version="1.0" encoding="Shift_JIS"?><urlset/>`), ErrEncoding, "Shift_JIS"},
		// A non-XML document is a text sitemap only if some line is an http(s) URL.
		{"plain-text notice", []byte("Not Found\r\nThe requested URL was not found on this server.\n"), ErrNotSitemap, `first line "Not Found"`},
		{"comments only", []byte("# sitemap coming soon\n# stay tuned\n"), ErrNotSitemap, `first line "# sitemap coming soon"`},
		{"relative paths only", []byte("/a\npage.html\n//example.com/b\n"), ErrNotSitemap, "no http(s) URL"},
		{"other schemes only", []byte("ftp://example.com/a\nmailto:a@example.com\n"), ErrNotSitemap, "no http(s) URL"},
		{"JSON", []byte(`{"urls": ["/a", "/b"]}`), ErrNotSitemap, `first line "{\"urls\": [\"/a\", \"/b\"]}"`},
		{"gzip notice", gz(t, []byte("Service temporarily unavailable")), ErrNotSitemap, "Service temporarily"},
		{"long first line cut", []byte(strings.Repeat("é", 40) + "\n"), ErrNotSitemap, `"` + strings.Repeat("é", 30) + `..."`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			es, _, err := readAll(t, tc.doc, src, nil)
			assert.Empty(t, es)
			require.ErrorIs(t, err, tc.reason)
			var se *Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, src, se.URL)
			assert.Contains(t, err.Error(), src)
			assert.Contains(t, err.Error(), tc.detail)
		})
	}
}

// A sitemap with no entries is still a sitemap when it says so: an XML
// urlset, index or feed without entries, or a text sitemap whose URLs were
// all skipped for scope. Only a non-XML document without a single http(s)
// URL is not one (TestUnusableDocuments).
func TestEmptySitemapsStayValid(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		kind Kind
	}{
		{"empty urlset", `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"></urlset>`, KindURLSet},
		{"self-closed urlset", `<urlset/>`, KindURLSet},
		{"urlset of entries without loc", `<urlset><url><lastmod>2024</lastmod></url></urlset>`, KindURLSet},
		{"empty index", `<sitemapindex></sitemapindex>`, KindIndex},
		{"feed without items", `<rss version="2.0"><channel><title>t</title></channel></rss>`, KindRSS},
		{"text, every URL out of scope", "https://other.example/a\nhttps://other.example/b\n", KindText},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es, r, err := readAll(t, []byte(tc.doc), src, nil)
			require.NoError(t, err)
			assert.Empty(t, es)
			assert.Equal(t, tc.kind, r.Kind())
		})
	}
	es, r, err := readAll(t, []byte("Sitemap\n/relative\nhttps://example.com/a\n"), src, nil)
	require.NoError(t, err, "one URL is enough")
	assert.Equal(t, []string{"https://example.com/a"}, urls(es))
	assert.Equal(t, KindText, r.Kind())
	assert.Equal(t, Skips{Relative: 2}, r.Skipped())

	_, r, err = readAll(t, []byte("Not Found\n"), src, nil)
	require.ErrorIs(t, err, ErrNotSitemap)
	assert.Equal(t, KindUnknown, r.Kind(), "not a sitemap, so not a text sitemap")
}

func TestNamespacesAndCase(t *testing.T) {
	body := "<url><loc>https://example.com/a</loc></url><url><loc>https://example.com/b</loc></url>"
	tests := []struct{ name, doc string }{
		{"0.9", `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + body + `</urlset>`},
		{"0.84", `<urlset xmlns="http://www.google.com/schemas/sitemap/0.84">` + body + `</urlset>`},
		{"wrong", `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/9.9">` + body + `</urlset>`},
		{"none", `<urlset>` + body + `</urlset>`},
		{"prefixed", `<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:url><sm:loc>https://example.com/a</sm:loc></sm:url><sm:url><sm:loc>https://example.com/b</sm:loc></sm:url></sm:urlset>`},
		{"upper case", `<URLSET><URL><LOC>https://example.com/a</LOC></URL><Url><Loc>https://example.com/b</Loc></Url></URLSET>`},
		{"attributes with > and quotes", `<urlset a='x>y' b="it's"><url id="1"><loc note=">">https://example.com/a</loc></url><url><loc>https://example.com/b</loc></url></urlset>`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			es, r, err := readAll(t, []byte(tc.doc), src, nil)
			require.NoError(t, err)
			assert.Equal(t, KindURLSet, r.Kind())
			assert.Equal(t, []string{"https://example.com/a", "https://example.com/b"}, urls(es))
		})
	}
}

func TestExtensionsAndAlternates(t *testing.T) {
	doc := `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
        xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"
        xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"
        xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <url>
    <loc>https://example.com/en/page</loc>
    <xhtml:link rel="alternate" hreflang="de" href="https://example.de/de/page"/>
    <xhtml:link rel="alternate" hreflang="fr" href="https://example.com/fr/page?a=1&amp;b=2"/>
    <xhtml:link rel="alternate" hreflang="x-default" href="/relative"/>
    <xhtml:link rel="stylesheet" href="https://example.com/s.css"/>
    <image:image><image:loc>https://cdn.example.com/img.jpg</image:loc></image:image>
    <video:video><video:content_loc>https://example.com/v.mp4</video:content_loc><video:player_loc>https://example.com/player</video:player_loc></video:video>
    <news:news><news:publication><news:name>N</news:name></news:publication><news:title>T</news:title></news:news>
  </url>
  <url>
    <image:loc>https://example.com/image-loc-directly-in-url.jpg</image:loc>
    <loc>https://example.com/second</loc>
  </url>
  <url><image:image><image:loc>https://example.com/only-an-image.jpg</image:loc></image:image></url>
</urlset>`
	es, r, err := readAll(t, []byte(doc), src, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"https://example.com/en/page", "https://example.com/second"}, urls(es))
	assert.Equal(t, []Alternate{
		{Hreflang: "de", URL: "https://example.de/de/page"},
		{Hreflang: "fr", URL: "https://example.com/fr/page?a=1&b=2"},
	}, es[0].Alternates)
	assert.Nil(t, es[1].Alternates)
	assert.Equal(t, Skips{NoURL: 1}, r.Skipped())
}

func TestLocDecoding(t *testing.T) {
	tests := []struct{ name, loc, want string }{
		{"plain", "https://example.com/a", "https://example.com/a"},
		{"trimmed", "\n\t  https://example.com/a \r\n", "https://example.com/a"},
		{"entities", "https://example.com/a?x=1&amp;y=&lt;2&gt;&quot;&apos;", `https://example.com/a?x=1&y=<2>"'`},
		{"character references", "https://example.com/caf&#233;/&#x26;/&#X41;", "https://example.com/café/&/A"},
		{"bare ampersand", "https://example.com/a?x=1&y=2&", "https://example.com/a?x=1&y=2&"},
		{"unknown entity kept literally", "https://example.com/&nbsp;x", "https://example.com/&nbsp;x"},
		{"CDATA", "<![CDATA[https://example.com/a?x=1&amp;y=2]]>", "https://example.com/a?x=1&amp;y=2"},
		{"CDATA and text", " <![CDATA[https://example.com/]]>b&amp;c ", "https://example.com/b&c"},
		{"comment inside", "https://example.com/<!-- hi -->a", "https://example.com/a"},
		{"PI inside", "https://example.com/<?pi x?>a", "https://example.com/a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			es, _, err := readAll(t, []byte(urlset(tc.loc)), src, nil)
			require.NoError(t, err)
			require.Len(t, es, 1)
			assert.Equal(t, tc.want, es[0].URL)
		})
	}
}

func TestEncodings(t *testing.T) {
	tests := []struct {
		name, decl string
		loc        []byte
		want       string
	}{
		{"utf-8", "UTF-8", []byte("https://example.com/caf\xc3\xa9"), "https://example.com/café"},
		{"utf8 spelling", "utf8", []byte("https://example.com/caf\xc3\xa9"), "https://example.com/café"},
		{"US-ASCII", "US-ASCII", []byte("https://example.com/a"), "https://example.com/a"},
		{"ISO-8859-1", "ISO-8859-1", []byte("https://example.com/caf\xe9"), "https://example.com/café"},
		{"latin1", "latin1", []byte("https://example.com/caf\xe9"), "https://example.com/café"},
		{"windows-1252", "windows-1252", []byte("https://example.com/\x80"), "https://example.com/€"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := append([]byte(`<?xml version="1.0" encoding="`+tc.decl+`"?><urlset><url><loc>`), tc.loc...)
			doc = append(doc, "</loc></url></urlset>"...)
			es, _, err := readAll(t, doc, src, nil)
			require.NoError(t, err)
			require.Len(t, es, 1)
			assert.Equal(t, tc.want, es[0].URL)
		})
	}
}

func TestLastModForms(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2005", time.Date(2005, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"2005-07", time.Date(2005, 7, 1, 0, 0, 0, 0, time.UTC)},
		{"2005-07-16", time.Date(2005, 7, 16, 0, 0, 0, 0, time.UTC)},
		{"2005-07-16T19:20+01:00", time.Date(2005, 7, 16, 18, 20, 0, 0, time.UTC)},
		{"2005-07-16T19:20:30+01:00", time.Date(2005, 7, 16, 18, 20, 30, 0, time.UTC)},
		{"2005-07-16T19:20:30.45+01:00", time.Date(2005, 7, 16, 18, 20, 30, 450000000, time.UTC)},
		{"2005-07-16T19:20:30.45Z", time.Date(2005, 7, 16, 19, 20, 30, 450000000, time.UTC)},
		{"2005-07-16T19:20:30-05:30", time.Date(2005, 7, 17, 0, 50, 30, 0, time.UTC)},
		{"2005-07-16T19:20:30", time.Date(2005, 7, 16, 19, 20, 30, 0, time.UTC)},
		{"2005-07-16 19:20:30+0100", time.Date(2005, 7, 16, 18, 20, 30, 0, time.UTC)},
		{" 2024-02-29 ", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
		{"2023-02-29", time.Time{}},
		{"2005-13-01", time.Time{}},
		{"2005-07-16T25:00Z", time.Time{}},
		{"2005-07-16T19:20:30+01", time.Date(2005, 7, 16, 18, 20, 30, 0, time.UTC)},
		{"16/07/2005", time.Time{}},
		{"yesterday", time.Time{}},
		{"2005-7-16", time.Time{}},
		{"", time.Time{}},
		{"2005-07-16T19:20:30+01:00junk", time.Time{}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			doc := `<urlset><url><loc>https://example.com/a</loc><lastmod>` + tc.in + `</lastmod><changefreq>sometimes</changefreq><priority>high</priority></url></urlset>`
			es, _, err := readAll(t, []byte(doc), src, nil)
			require.NoError(t, err)
			require.Len(t, es, 1, "a bad date never drops the entry")
			assert.True(t, tc.want.Equal(es[0].LastMod), "got %v", es[0].LastMod)
			assert.Equal(t, "", es[0].ChangeFreq)
			assert.Equal(t, 0.0, es[0].Priority)
		})
	}
}

func TestChangeFreqPriority(t *testing.T) {
	doc := `<urlset><url><loc>https://example.com/a</loc><changefreq> Daily </changefreq><priority>0.8</priority></url>
		<url><loc>https://example.com/b</loc><changefreq>never</changefreq><priority>1.0</priority></url>
		<url><loc>https://example.com/c</loc><priority>0.25</priority></url>
		<url><loc>https://example.com/d</loc><priority>1.5</priority></url>
		<url><loc>https://example.com/e</loc><priority>-0.1</priority></url>
		<url><loc>https://example.com/f</loc><priority>.5</priority></url></urlset>`
	es, _, err := readAll(t, []byte(doc), src, nil)
	require.NoError(t, err)
	require.Len(t, es, 6)
	assert.Equal(t, []string{"daily", "never", "", "", "", ""}, []string{es[0].ChangeFreq, es[1].ChangeFreq, es[2].ChangeFreq, es[3].ChangeFreq, es[4].ChangeFreq, es[5].ChangeFreq})
	assert.Equal(t, []float64{0.8, 1, 0.25, 0, 0, 0.5}, []float64{es[0].Priority, es[1].Priority, es[2].Priority, es[3].Priority, es[4].Priority, es[5].Priority})
}

func TestSkippedEntries(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", 2048-20)
	justUnder := "https://example.com/" + strings.Repeat("a", 2047-20)
	doc := urlset(
		"https://example.com/ok",
		"/relative/path",
		"page.html",
		"//example.com/scheme-relative",
		"ftp://example.com/file",
		"mailto:someone@example.com",
		"https:///no-host",
		"http://exa mple.com/bad host",
		"https://example.com/%zz",
		long,
		justUnder,
		"https://other.example.com/foreign",
		"http://example.com/other-scheme",
		"https://example.com:8443/other-port",
		"https://example.com/ok",
		"HTTPS://EXAMPLE.COM/upper",
		"https://example.com:443/default-port",
		"",
	) + "" // plus an entry with no <loc>
	doc = strings.Replace(doc, "</urlset>", "<url><lastmod>2020</lastmod></url></urlset>", 1)
	var skipped []string
	es, r, err := readAll(t, []byte(doc), src, func(r *Reader) {
		r.OnSkip = func(raw string, reason SkipReason) { skipped = append(skipped, reason.String()+" "+raw) }
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"https://example.com/ok", justUnder, "HTTPS://EXAMPLE.COM/upper", "https://example.com:443/default-port"}, urls(es))
	assert.Equal(t, Skips{NoURL: 2, Relative: 3, Invalid: 5, TooLong: 1, OutOfScope: 3, Duplicate: 1}, r.Skipped(), "%q", skipped)
	assert.Equal(t, 15, r.Skipped().Total())
	assert.Equal(t, 4, r.Count())
	assert.Contains(t, skipped, "duplicate https://example.com/ok")
	assert.Contains(t, skipped, "out-of-scope https://other.example.com/foreign")
}

func TestScope(t *testing.T) {
	locs := []string{
		"https://example.com/catalog/a",
		"https://example.com/catalog/sub/b",
		"https://example.com/other/c",
		"https://EXAMPLE.com/catalog/d",
		"http://example.com/catalog/e",
		"https://example.com:8443/catalog/f",
		"https://www.example.com/catalog/g",
	}
	tests := []struct {
		name   string
		source string
		scope  Scope
		want   string
	}{
		{"strict under directory", "https://example.com/catalog/sitemap.xml", ScopeStrict, "abd"},
		{"strict at root", "https://example.com/sitemap.xml", ScopeStrict, "abcd"},
		{"host", "https://example.com/catalog/sitemap.xml", ScopeHost, "abcde"},
		{"any", "https://example.com/catalog/sitemap.xml", ScopeAny, "abcdefg"},
		{"no source URL", "", ScopeStrict, "abcdefg"},
		{"port in source", "https://example.com:8443/catalog/sitemap.xml", ScopeStrict, "f"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			es, r, err := readAll(t, []byte(urlset(locs...)), tc.source, func(r *Reader) { r.Scope = tc.scope })
			require.NoError(t, err)
			got := ""
			for _, e := range es {
				got += e.URL[len(e.URL)-1:]
			}
			assert.Equal(t, tc.want, got)
			assert.Equal(t, len(locs)-len(tc.want), r.Skipped().OutOfScope)
		})
	}

	// URLs that the allocation-free path leaves to url.Parse (non-ASCII,
	// userinfo, IPv6, odd ports) are held to the same scope.
	slow := []string{
		"https://example.com/catalog/caf\u00e9",           // a: non-ASCII path, in scope
		"https://user:pw@example.com/catalog/b",           // b: userinfo, same host
		"https://example.com@other.example/catalog/c",     // c: userinfo that names our host
		"https://other.example/catalog/caf\u00e9",         // d: non-ASCII path, other host
		"https://b\u00fccher.example/catalog/e",           // e: IDN host
		"https://[::1]/catalog/f",                         // f: IPv6 literal
		"https://EXAMPLE.com:443/catalog/%zz/g",           // g: bad escape: invalid, not scope
		"https://example.com:8443/catalog/\u00e9/h",       // h: other port
		"http://example.com/catalog/\u00e9/i",             // i: other scheme
		"https://user@other.example:443/catalog/\u00e9/j", // j: userinfo, other host
	}
	for _, tc := range []struct {
		scope Scope
		want  []string
	}{
		{ScopeStrict, []string{slow[0], slow[1]}},
		{ScopeHost, []string{slow[0], slow[1], slow[8]}},
		{ScopeAny, []string{slow[0], slow[1], slow[2], slow[3], slow[4], slow[5], slow[7], slow[8], slow[9]}},
	} {
		es, r, err := readAll(t, []byte(urlset(slow...)), "https://example.com/catalog/sitemap.xml", func(r *Reader) { r.Scope = tc.scope })
		require.NoError(t, err)
		assert.Equal(t, tc.want, urls(es), "scope %d", tc.scope)
		assert.Equal(t, 1, r.Skipped().Invalid)
		for _, u := range slow {
			_, _, _, _, simple := splitSimple([]byte(u))
			require.False(t, simple, "%s must take the slow path", u)
		}
	}

	// An index's children must share host and port only.
	idx := `<sitemapindex><sitemap><loc>https://example.com/a.xml</loc></sitemap><sitemap><loc>http://example.com/other/b.xml</loc></sitemap>
		<sitemap><loc>https://cdn.example.com/c.xml</loc></sitemap><sitemap><loc>https://example.com:81/d.xml</loc></sitemap></sitemapindex>`
	es, r, err := readAll(t, []byte(idx), "https://example.com/sitemaps/index.xml", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"https://example.com/a.xml", "http://example.com/other/b.xml"}, urls(es))
	assert.Equal(t, 2, r.Skipped().OutOfScope)
}

func TestTruncatedAndMalformed(t *testing.T) {
	full := urlset("https://example.com/a", "https://example.com/b", "https://example.com/c")
	cut := strings.Index(full, "https://example.com/c") + 5
	tests := []struct {
		name   string
		doc    string
		want   []string
		reason error
		detail string
	}{
		{"cut inside third loc", full[:cut], []string{"https://example.com/a", "https://example.com/b"}, ErrMalformed, "document ends inside"},
		{"cut inside a tag", full[:strings.Index(full, "<url><loc>https://example.com/c")+3], []string{"https://example.com/a", "https://example.com/b"}, ErrMalformed, "a tag"},
		{"cut before </urlset>", strings.TrimSuffix(full, "</urlset>\n"), []string{"https://example.com/a", "https://example.com/b", "https://example.com/c"}, ErrMalformed, ""},
		{"mismatched end tag", "<urlset><url><loc>https://example.com/a</loc></url><url><loc>https://example.com/b</url></urlset>", []string{"https://example.com/a"}, ErrMalformed, "unexpected end tag </url>"},
		{"stray end tag", "<urlset><url><loc>https://example.com/a</loc></url></loc></urlset>", []string{"https://example.com/a"}, ErrMalformed, "</loc>"},
		{"unclosed comment", "<urlset><url><loc>https://example.com/a</loc></url><!-- never closed <url><loc>https://example.com/b</loc></url></urlset>", []string{"https://example.com/a"}, ErrMalformed, "comment"},
		{"unclosed CDATA", "<urlset><url><loc>https://example.com/a</loc></url><url><loc><![CDATA[https://example.com/b", []string{"https://example.com/a"}, ErrMalformed, "CDATA"},
		{"lone <", "<urlset><url><loc>https://example.com/a</loc></url><url><loc>a < b</loc></url></urlset>", []string{"https://example.com/a"}, ErrMalformed, "'<'"},
		{"gzip cut", "", nil, ErrCompression, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := []byte(tc.doc)
			if tc.name == "gzip cut" {
				z := gz(t, []byte(full))
				doc = z[:len(z)/2]
			}
			es, _, err := readAll(t, doc, src, nil)
			if tc.name != "gzip cut" {
				assert.Equal(t, tc.want, urls(es))
			}
			require.ErrorIs(t, err, tc.reason)
			assert.Contains(t, err.Error(), tc.detail)
		})
	}
	// Trailing content after the root element is not read.
	es, _, err := readAll(t, []byte(full+"<garbage><<<"), src, nil)
	require.NoError(t, err)
	assert.Len(t, es, 3)
}

func TestEntryLimit(t *testing.T) {
	t.Run("50,001 entries", func(t *testing.T) {
		es, r, err := readAll(t, genURLSet(50001), "https://www.example.com/sitemap.xml", nil)
		require.ErrorIs(t, err, ErrTooManyEntries)
		assert.Len(t, es, 50000)
		assert.Equal(t, 50000, r.Count())
		assert.Contains(t, err.Error(), "more than 50000 entries")
	})
	t.Run("exactly 50,000", func(t *testing.T) {
		es, _, err := readAll(t, genURLSet(50000), "https://www.example.com/sitemap.xml", nil)
		require.NoError(t, err)
		assert.Len(t, es, 50000)
	})
	t.Run("configured", func(t *testing.T) {
		es, _, err := readAll(t, genURLSet(11), "https://www.example.com/sitemap.xml", func(r *Reader) { r.MaxEntries = 10 })
		require.ErrorIs(t, err, ErrTooManyEntries)
		assert.Len(t, es, 10)
	})
	t.Run("text", func(t *testing.T) {
		var b strings.Builder
		for i := range 4 {
			fmt.Fprintf(&b, "https://example.com/%d\n", i)
		}
		es, _, err := readAll(t, []byte(b.String()), src, func(r *Reader) { r.MaxEntries = 3 })
		require.ErrorIs(t, err, ErrTooManyEntries)
		assert.Len(t, es, 3)
	})
}

// bomb returns a gzip document whose urlset holds a few entries and then
// `pad` bytes of white space, compressed to a few kilobytes per megabyte.
func bomb(t testing.TB, pad int64) []byte {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	require.NoError(t, err)
	_, err = io.WriteString(w, urlset("https://example.com/a", "https://example.com/b")[:len(urlset("https://example.com/a", "https://example.com/b"))-len("</urlset>\n")])
	require.NoError(t, err)
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	for left := pad; left > 0; left -= int64(len(chunk)) {
		_, err = w.Write(chunk[:min(int64(len(chunk)), left)])
		require.NoError(t, err)
	}
	_, err = io.WriteString(w, "<url><loc>https://example.com/after-the-bomb</loc></url></urlset>")
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func TestSizeLimit(t *testing.T) {
	t.Run("gzip bomb, default limit", func(t *testing.T) {
		doc := bomb(t, 60<<20)
		require.Less(t, len(doc), 1<<20) // a real bomb: small on the wire
		es, r, err := readAll(t, doc, src, nil)
		require.ErrorIs(t, err, ErrTooLarge)
		assert.Equal(t, []string{"https://example.com/a", "https://example.com/b"}, urls(es))
		assert.LessOrEqual(t, r.BytesRead(), int64(DefaultMaxBytes))
	})
	t.Run("configured limit, plain", func(t *testing.T) {
		doc := genURLSet(1000)
		es, r, err := readAll(t, doc, "https://www.example.com/sitemap.xml", func(r *Reader) { r.MaxBytes = 10000 })
		require.ErrorIs(t, err, ErrTooLarge)
		assert.NotEmpty(t, es)
		assert.Less(t, len(es), 1000)
		assert.LessOrEqual(t, r.BytesRead(), int64(10000))
		// Every returned entry is whole.
		for _, e := range es {
			assert.Contains(t, e.URL, "-with-a-longer-slug.html")
		}
	})
	t.Run("text cut by the limit does not return a partial line", func(t *testing.T) {
		doc := []byte("https://example.com/aaaa\nhttps://example.com/bbbbbbbbbbbbbbbbbbbbb\n")
		es, _, err := readAll(t, doc, src, func(r *Reader) { r.MaxBytes = 40 })
		require.ErrorIs(t, err, ErrTooLarge)
		assert.Equal(t, []string{"https://example.com/aaaa"}, urls(es))
	})
	t.Run("exactly at the limit", func(t *testing.T) {
		doc := []byte(urlset("https://example.com/a"))
		es, _, err := readAll(t, doc, src, func(r *Reader) { r.MaxBytes = int64(len(doc)) })
		require.NoError(t, err)
		assert.Len(t, es, 1)
	})
}

func TestBillionLaughs(t *testing.T) {
	doc := `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ELEMENT lolz (#PCDATA)>
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
 <!ENTITY xxe SYSTEM "file:///etc/passwd">
 <!-- a ] and a > in a comment -->
]>
<urlset><url><loc>https://example.com/&lol9;</loc></url><url><loc>https://example.com/&xxe;</loc></url><url><loc>https://example.com/ok</loc></url></urlset>`
	var allocs float64
	var es []Entry
	allocs = testing.AllocsPerRun(1, func() {
		var err error
		es, _, err = readAll(t, []byte(doc), src, nil)
		require.NoError(t, err)
	})
	assert.Equal(t, []string{"https://example.com/&lol9;", "https://example.com/&xxe;", "https://example.com/ok"}, urls(es))
	assert.Less(t, allocs, 100.0, "entities are never expanded")
}

func TestAllIterator(t *testing.T) {
	r := NewReader(strings.NewReader(urlset("https://example.com/a", "/rel", "https://example.com/b")), src)
	var got []string
	for e, err := range r.All() {
		require.NoError(t, err)
		got = append(got, e.URL)
	}
	assert.Equal(t, []string{"https://example.com/a", "https://example.com/b"}, got)

	r = NewReader(strings.NewReader("<html></html>"), src)
	n := 0
	for _, err := range r.All() {
		n++
		require.ErrorIs(t, err, ErrNotSitemap)
	}
	assert.Equal(t, 1, n)
}

// errReader returns its data and then a network-like error.
type errReader struct {
	data []byte
	err  error
}

func (e *errReader) Read(p []byte) (int, error) {
	if len(e.data) == 0 {
		return 0, e.err
	}
	n := copy(p, e.data)
	e.data = e.data[n:]
	return n, nil
}

func TestReadErrorKeepsEntries(t *testing.T) {
	boom := errors.New("connection reset")
	full := urlset("https://example.com/a", "https://example.com/b")
	r := NewReader(&errReader{data: []byte(full[:len(full)-30]), err: boom}, src)
	var got []string
	var err error
	for {
		var e Entry
		e, err = r.Next()
		if err != nil {
			break
		}
		got = append(got, e.URL)
	}
	assert.Equal(t, []string{"https://example.com/a"}, got)
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), src)
}

func TestLongMarkup(t *testing.T) {
	// Text, comments and CDATA longer than the window stream through it.
	long := strings.Repeat("x", 3*bufSize)
	doc := "<urlset><!--" + long + "--><url><loc>https://example.com/a</loc><ignored>" + long + "</ignored></url>" +
		"<url><loc><![CDATA[https://example.com/" + long + "]]></loc></url>" +
		"<url><loc>https://example.com/" + long + "</loc></url></urlset>"
	es, r, err := readAll(t, []byte(doc), src, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"https://example.com/a"}, urls(es))
	assert.Equal(t, 2, r.Skipped().TooLong)

	// A tag that does not fit in the window is malformed.
	doc = `<urlset><url a="` + long + `"><loc>https://example.com/a</loc></url></urlset>`
	_, _, err = readAll(t, []byte(doc), src, nil)
	require.ErrorIs(t, err, ErrMalformed)

	// Deep nesting is bounded.
	doc = "<urlset>" + strings.Repeat("<a>", 1000)
	_, _, err = readAll(t, []byte(doc), src, nil)
	require.ErrorIs(t, err, ErrMalformed)
	assert.Contains(t, err.Error(), "nested deeper")
}
