package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func fuzzSeeds() []string {
	return []string{
		urlset("https://example.com/a", "https://example.com/b?x=1&amp;y=2", "/rel", "<![CDATA[https://example.com/c]]>"),
		`<?xml version="1.0" encoding="ISO-8859-1"?><urlset><url><loc>https://example.com/caf` + "\xe9" + `</loc><lastmod>2005-07-16T19:20:30.45+01:00</lastmod><priority>0.5</priority><changefreq>daily</changefreq></url></urlset>`,
		`<sitemapindex><sitemap><loc>https://example.com/s.xml</loc></sitemap></sitemapindex>`,
		`<rss version="2.0"><channel><item><link>https://example.com/1</link><pubDate>Tue, 10 Jun 2003 04:00:00 GMT</pubDate></item></channel></rss>`,
		`<feed xmlns="http://www.w3.org/2005/Atom"><entry><link rel="alternate" href="https://example.com/1"/><updated>2003-12-13T18:30:02Z</updated></entry></feed>`,
		"https://example.com/a\r\n# c\r\nhttps://example.com/b",
		`<!DOCTYPE x [<!ENTITY a "&b;&b;">]><urlset xmlns:xhtml="http://www.w3.org/1999/xhtml"><url><loc>https://example.com/&a;</loc><xhtml:link rel="alternate" hreflang="de" href="https://example.de/"/></url></urlset>`,
		"<html><body>not a sitemap</body></html>",
		"\xef\xbb\xbf<urlset><url><loc>https://example.com/a</loc></url>",
		"<urlset><!-- c --><?pi?><url><loc>https://example.com/a</loc></url></urlset>",
		"Not Found\n",
		"# comment\n/relative\nhttps://other.example/x\n",
		"<urlset></urlset>",
	}
}

// FuzzReader checks that any input ends in io.EOF or an *Error, never
// panics, stays within the limits, and returns only valid URLs.
func FuzzReader(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add([]byte(s))
	}
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	_, _ = io.WriteString(w, urlset("https://example.com/gz"))
	_ = w.Close()
	f.Add(z.Bytes())
	f.Fuzz(func(t *testing.T, doc []byte) {
		const maxBytes, maxEntries = 1 << 20, 1000
		r := NewReader(bytes.NewReader(doc), "https://example.com/sitemap.xml")
		r.MaxBytes, r.MaxEntries = maxBytes, maxEntries
		n := 0
		var err error
		for {
			var e Entry
			e, err = r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				var se *Error
				if !errors.As(err, &se) {
					t.Fatalf("error %T is not *Error: %v", err, err)
				}
				break
			}
			n++
			if n > maxEntries {
				t.Fatalf("more than %d entries", maxEntries)
			}
			if utf8.RuneCountInString(e.URL) >= MaxURLLength {
				t.Fatalf("URL too long: %d", len(e.URL))
			}
			u, perr := url.Parse(e.URL)
			if perr != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
				t.Fatalf("invalid URL returned: %q (%v)", e.URL, perr)
			}
			if !strings.EqualFold(u.Hostname(), "example.com") {
				t.Fatalf("out-of-scope URL returned: %q", e.URL)
			}
			if len(e.Alternates) > MaxAlternates {
				t.Fatalf("%d alternates", len(e.Alternates))
			}
		}
		if err == io.EOF && r.Kind() == KindText && n == 0 && r.Skipped().OutOfScope == 0 {
			t.Fatalf("a non-XML document without any http(s) URL read as an empty text sitemap (skips %v)", r.Skipped())
		}
		if r.BytesRead() > maxBytes {
			t.Fatalf("read %d bytes, limit %d", r.BytesRead(), maxBytes)
		}
		if cap(r.txt) > 2*maxText+bufSize || cap(r.stack) > 2*maxDepth {
			t.Fatalf("buffers grew: txt %d, stack %d", cap(r.txt), cap(r.stack))
		}
	})
}

// FuzzSplitSimple checks that the allocation-free fast path never accepts a
// URL that url.Parse rejects, and agrees with it on the parts used for scope.
func FuzzSplitSimple(f *testing.F) {
	for _, s := range []string{"https://example.com/a?b#c", "http://EXAMPLE.com:8080", "https://a.b/%41%zz", "http://x/ä", "https://h:/p", "http://[::1]/", "https://u@h/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		scheme, host, port, path, ok := splitSimple([]byte(s))
		if !ok {
			return
		}
		u, err := url.Parse(s)
		if err != nil {
			t.Fatalf("fast path accepted %q, url.Parse: %v", s, err)
		}
		if !strings.EqualFold(u.Scheme, string(scheme)) || u.Hostname() != string(host) || u.Port() != string(port) || u.Opaque != "" {
			t.Fatalf("%q: fast %q %q %q, url.Parse %q %q %q", s, scheme, host, port, u.Scheme, u.Hostname(), u.Port())
		}
		if ep := u.EscapedPath(); ep != string(path) {
			t.Fatalf("%q: fast path %q, EscapedPath %q", s, path, ep)
		}
	})
}

// FuzzParseW3C checks that every RFC 3339 time Go accepts is read the same.
func FuzzParseW3C(f *testing.F) {
	for _, s := range []string{"2005-07-16T19:20:30.45+01:00", "2005", "2005-07", "2024-02-29T00:00Z", "1999-12-31T23:59:59-23:59", "0000-10-01T0:00:00+00:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseW3C([]byte(s))
		want, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return
		}
		// Go also accepts what W3C Datetime does not (a one-digit hour, a
		// zone minute of 60): where both accept they must agree, and the
		// canonical form must always be accepted.
		if !ok && want.Format(time.RFC3339Nano) != s {
			return
		}
		if !ok || !got.Equal(want) {
			t.Fatalf("%q: got %v %v, want %v", s, got, ok, want)
		}
	})
}
