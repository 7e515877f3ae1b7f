package robots

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	whatwg "github.com/nlnwa/whatwg-url/url"
)

// reencodeCases are the spellings of issue 18: a URL with a character Go
// must escape (space, non-ASCII, '<') together with '(', ')' or "'", which
// net/url re-encodes as %28, %29, %27 while the robots.txt rule and the
// browser keep them literal (and a browser escapes "'" in a query).
var reencodeCases = []struct {
	name, robots string
	spellings    []string // all disallowed
	allowed      []string // near misses that stay allowed
}{
	{"space and parentheses", "User-agent: *\nDisallow: /my%20page%20(draft)\n",
		[]string{"/my page (draft)", "/my%20page%20(draft)", "/my%20page%20%28draft%29", "/my%20page%20%28draft%29?v=1", "https://e.com/my%20page%20%28draft%29#top", "/my%20page%20%28draft%29/"},
		[]string{"/my%20page%20draft", "/my%20page%20%28draf"}},
	{"non-ASCII and parentheses", "User-agent: *\nDisallow: /café(1)\n",
		[]string{"/café(1)", "/caf%C3%A9(1)", "/caf%c3%a9%281%29", "/caf%C3%A9%281)", "/caf%C3%A9%281%29.html"},
		[]string{"/cafe(1)", "/caf%C3%A9(2)"}},
	{"unbalanced parenthesis", "User-agent: *\nDisallow: /a(b c\n",
		[]string{"/a(b c", "/a(b%20c", "/a%28b%20c", "/a%28b%20cd"},
		[]string{"/a(bc", "/a%28b+c"}},
	{"apostrophe", "User-agent: *\nDisallow: /it's here\n",
		[]string{"/it's here", "/it's%20here", "/it%27s%20here", "/it%27s%20here?x", "/it%27s%20here/"},
		[]string{"/its%20here", "/it%60s%20here"}},
	{"wildcard then parentheses", "User-agent: *\nDisallow: /q*(x)\n",
		[]string{"/q/z(x) y", "/q/z%28x%29%20y", "/q/z%28x)", "/q?a=(x)", "/q?a=%28x%29"},
		[]string{"/q/z(y)", "/r/z(x)"}},
	{"rule written escaped", "User-agent: *\nDisallow: /it%27s\nDisallow: /%5Bx%5D\nDisallow: /%40me\n",
		[]string{"/it's here", "/it%27s", "/[x]", "/%5bx%5d", "/@me", "/%40me"},
		[]string{"/its"}},
	{"delimiters keep their meaning", "User-agent: *\nDisallow: /a%2Fb\nDisallow: /s?q=a%26b\n",
		[]string{"/a%2Fb", "/a%2fb", "/s?q=a%26b"},
		[]string{"/a/b", "/s?q=a&b"}},
}

func TestReencodedURLsMatchTheirRule(t *testing.T) {
	for _, tc := range reencodeCases {
		t.Run(tc.name, func(t *testing.T) {
			r := Parse([]byte(tc.robots))
			for _, u := range tc.spellings {
				if r.Allowed("CrawlCove", u) {
					t.Errorf("%q allowed under\n%s(normalized %q)", u, tc.robots, pathOf(u))
				}
			}
			for _, u := range tc.allowed {
				if !r.Allowed("CrawlCove", u) {
					t.Errorf("%q disallowed under\n%s(normalized %q)", u, tc.robots, pathOf(u))
				}
			}
		})
	}
}

// The spellings net/url produces for the links: the URL Go
// requests for them, e.g. after resolving the href or a Location header.
func TestReencodedByNetURL(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /my%20page%20(draft)\nDisallow: /café(1)\nDisallow: /a(b c\nDisallow: /it's here\nDisallow: /q*(x)\n"))
	base, _ := url.Parse("https://example.com/dir/page.html")
	for _, href := range []string{"/my page (draft)", "/café(1)", "/a(b c", "/it's here", "/q/z(x) y", "../my page (draft)", "/a(b c<"} {
		ref, err := url.Parse(href)
		if err != nil {
			t.Fatal(err)
		}
		u := base.ResolveReference(ref).String()
		if r.Allowed("CrawlCove", u) {
			t.Errorf("href %q: net/url requests %q, which is allowed", href, u)
		}
	}
}

// escapeAll percent-encodes every octet of s that is not a delimiter.
func escapeAll(s string, lower bool) string {
	hex := upperHex
	if lower {
		hex = "0123456789abcdef"
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if strings.IndexByte(delimiters, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// delimiters are the octets whose escape names something else; a
// re-encoding never swaps one for its escape.
const delimiters = "/?#%&=+;"

func TestEveryOctetHasOneSpelling(t *testing.T) {
	// For each octet that is not a delimiter, the literal octet and its
	// escape in either hex case normalise alike, in a URL and in a rule.
	for c := range 256 {
		if strings.IndexByte(delimiters, byte(c)) >= 0 {
			continue
		}
		lit := "/x" + string([]byte{byte(c)}) + "y"
		want := pathOf(lit)
		for _, sp := range []string{escapeAll(lit, false), escapeAll(lit, true), "/x" + escapeAll(string([]byte{byte(c)}), true) + "y"} {
			if got := pathOf(sp); got != want {
				t.Errorf("octet %#02x: URL %q normalises to %q, %q to %q", c, lit, want, sp, got)
			}
			if c == '*' || c == '$' {
				continue // a wildcard and an anchor in a rule, literal only escaped
			}
			for _, u := range []string{lit, sp} {
				r := Parse([]byte("User-agent: *\nDisallow: " + sp + "\n"))
				if c > ' ' && c != 0x7f && c != '#' && utf8.ValidString(lit) && r.Allowed("a", u) {
					t.Errorf("octet %#02x: rule %q does not match %q", c, sp, u)
				}
			}
		}
	}
}

// goSpelling is the path and query net/url requests for path P (after
// url.Parse, as for a resolved href or a Location header). ok is false
// when net/url refuses P, or when its re-encoding decodes an escaped
// delimiter (%2F, %26, %3D, %2B, %3B in a path whose escaping it rebuilds),
// which changes what the URL names rather than how it is spelt.
func goSpelling(p string) (string, bool) {
	u, err := url.Parse("http://h" + p)
	if err != nil || u.Host != "h" {
		return "", false
	}
	path, _, _ := strings.Cut(p, "?")
	for _, d := range []string{"%2F", "%26", "%3D", "%2B", "%3B"} {
		if strings.Contains(strings.ToUpper(path), d) {
			return "", false
		}
	}
	s := u.EscapedPath()
	if u.ForceQuery || u.RawQuery != "" {
		s += "?" + u.RawQuery
	}
	return s, true
}

// browserSpelling is the path and query a browser requests for P, by the
// WHATWG URL standard (github.com/nlnwa/whatwg-url). ok is false where the
// browser does more than re-encode: it resolves dot segments, reads '\' as
// '/', drops tabs and newlines and trailing spaces, and replaces invalid
// UTF-8.
func browserSpelling(p string) (string, bool) {
	if !utf8.ValidString(p) || strings.ContainsAny(p, "\\\t\n\r") || p[len(p)-1] <= ' ' {
		return "", false
	}
	path, _, _ := strings.Cut(p, "?")
	for seg := range strings.SplitSeq(path, "/") {
		if s := strings.ReplaceAll(strings.ToLower(seg), "%2e", "."); s == "." || s == ".." {
			return "", false
		}
	}
	u, err := whatwg.Parse("http://h" + p)
	if err != nil || u.Hostname() != "h" {
		return "", false
	}
	return u.Pathname() + u.Search(), true
}

// maskSpelling re-encodes P the way any client may: each octet that is no
// delimiter, where mask says so, escaped (in lower- or upper-case hex), and
// each escape of one decoded, unless decoding would make a new escape out
// of a preceding '%'.
func maskSpelling(p string, mask uint64) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		bit := mask&(1<<(uint(i)%64)) != 0
		c := p[i]
		if c == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]) {
			v := unhex(p[i+1])<<4 | unhex(p[i+2])
			out := b.String()
			afterPercent := strings.HasSuffix(out, "%") || len(out) >= 2 && out[len(out)-2] == '%'
			if bit && strings.IndexByte(delimiters, v) < 0 && !(afterPercent && isHex(v)) {
				b.WriteByte(v)
			} else {
				b.WriteString(p[i : i+3])
			}
			i += 2
			continue
		}
		if bit && strings.IndexByte(delimiters, c) < 0 {
			hex := upperHex
			if mask&(1<<((uint(i)+32)%64)) != 0 {
				hex = "0123456789abcdef"
			}
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// FuzzReencodedAllowed: for any path P and any re-encoding P' of it that
// a browser, Go's net/url or any client escaping or unescaping octets that
// delimit nothing could produce, Allowed(P) == Allowed(P') under any
// robots.txt.
func FuzzReencodedAllowed(f *testing.F) {
	rules := "User-agent: *\nDisallow: /my%20page%20(draft)\nDisallow: /café(1)\nDisallow: /a(b c\nDisallow: /it's here\nDisallow: /q*(x)\nAllow: /q/ok(x)$\nDisallow: /%5Bx%5D\nDisallow: /*?*'\n"
	for i, p := range []string{"/my page (draft)", "/café(1)", "/a(b c", "/it's here", "/q/z(x) y", "/q/ok(x)", "/[x]", "/s?q=it's",
		"/a<(b", "/%7e~/%41", "/x?y=a%26b&c", "/a%2Fb c", "/%%32%35", "/*$", "/%E2%82%AC(x)", "/q?'(x)'", "/%zz("} {
		f.Add([]byte(rules), p, uint64(i)*0x9E3779B97F4A7C15)
	}
	f.Add([]byte("User-agent: *\nDisallow: /*%28\nAllow: /*(*)$\n"), "/a(b)", uint64(0xFFFFFFFFFFFFFFFF))
	f.Fuzz(func(t *testing.T, body []byte, p string, mask uint64) {
		if i := strings.IndexByte(p, '#'); i >= 0 {
			p = p[:i]
		}
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		r := Parse(body)
		want := r.Allowed("CrawlCove", p)
		check := func(how, q string) {
			if got := r.Allowed("CrawlCove", q); got != want {
				t.Fatalf("Allowed(%q) = %v but its %s spelling Allowed(%q) = %v (normalized %q, %q)", p, want, how, q, got, pathOf(p), pathOf(q))
			}
		}
		check("re-encoded", maskSpelling(p, mask))
		if q, ok := goSpelling(p); ok {
			check("net/url", q)
		}
		if q, ok := browserSpelling(p); ok {
			check("browser", q)
		}
	})
}
