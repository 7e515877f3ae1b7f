package htmlx

import (
	"html"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// resolveCases are links and the URL a browser requests for each (checked
// against Chromium by TestResolveAgreesWithChromium).
var resolveCases = []struct {
	name, page, href, want string
}{
	{"https:/path against an https page", "https://s.example/dir/page", "https:/path", "https://s.example/path"},
	{"https:path against an https page", "https://s.example/dir/page", "https:path", "https://s.example/dir/path"},
	{"HTTPS:/path, any case", "https://s.example/dir/page", "HTTPS:/path?q", "https://s.example/path?q"},
	{"https: alone is the page", "https://s.example/dir/page?x=1", "https:", "https://s.example/dir/page?x=1"},
	{"https:/host against an http page", "http://s.example/", "https:/other.example/x", "https://other.example/x"},
	{"extra slashes before the host", "https://s.example/", "https:///other.example/x", "https://other.example/x"},
	{"relative ///host", "https://s.example/", "///other.example/x", "https://other.example/x"},
	{"backslash in a path", "https://s.example/dir/page", `\other\x`, "https://s.example/other/x"},
	{"backslash in a relative path", "https://s.example/dir/page", `a\b`, "https://s.example/dir/a/b"},
	{"backslashes as //", "https://s.example/", `\\cdn.example\img.png`, "https://cdn.example/img.png"},
	{"/\\ is scheme-relative", "https://s.example/", `/\cdn.example/x`, "https://cdn.example/x"},
	{"backslash after the scheme", "https://s.example/", `http:\\cdn.example\a`, "http://cdn.example/a"},
	{"backslash kept in the query", "https://s.example/d/p", `a\b?q=\c`, `https://s.example/d/a/b?q=\c`},
	// golang/go#80282: net/url's ResolveReference drops the empty
	// segment that follows a "..".
	{"..//a keeps its empty segment", "https://example.com/d/page.html", "..//a", "https://example.com//a"},
	{"/p/..//q keeps its empty segment", "https://example.com/d/page.html", "/p/..//q", "https://example.com//q"},
	{"absolute a/..//b keeps its empty segment", "https://s.example/", "https://h.org/a/..//b", "https://h.org//b"},
	// The Locations of fetch's TestRedirectRequestsWhatABrowserWould.
	{"space with escaped delimiters", "https://example.com/d/page.html", "/a b%2Fc%26d%3De%2Bf%3Bg", "https://example.com/a%20b%2Fc%26d%3De%2Bf%3Bg"},
	{"pipe and caret escaped in a path, not in a query", "https://example.com/d/page.html", "/a|b^c%2Fd?|^", "https://example.com/a%7Cb%5Ec%2Fd?|^"},
	{"space in a query", "https://example.com/d/page.html", "?q=a b", "https://example.com/d/page.html?q=a%20b"},
	{"./..//x above the root", "https://s.example/a/b", "./..//x", "https://s.example//x"},
	{"encoded dot-dot then //", "https://s.example/a/b/c", "%2e%2E//x", "https://s.example/a//x"},
	// Issue 18: the spelling a browser requests, not net/url's
	// re-encoding of it (%28 %29 %27).
	{"space and parentheses", "https://s.example/", "/my page (draft)", "https://s.example/my%20page%20(draft)"},
	{"non-ASCII and parentheses", "https://s.example/", "/café(1)", "https://s.example/caf%C3%A9(1)"},
	{"unbalanced parenthesis", "https://s.example/", "/a(b c", "https://s.example/a(b%20c"},
	{"apostrophe in a path", "https://s.example/", "/it's here", "https://s.example/it's%20here"},
	{"apostrophe in a query", "https://s.example/", "/s?q=it's here", "https://s.example/s?q=it%27s%20here"},
	{"parentheses after a wildcard-like path", "https://s.example/", "/q/z(x) y", "https://s.example/q/z(x)%20y"},
	{"less-than", "https://s.example/", "/a<(b", "https://s.example/a%3C(b"},
	{"host lower-cased, IDNA", "https://s.example/", "https://BÜCHER.example/x", "https://xn--bcher-kva.example/x"},
	{"IPv4 in hex", "https://s.example/", "http://0x7f.1/", "http://127.0.0.1/"},
	{"default port dropped", "https://s.example/", "https://h.example:443/x", "https://h.example/x"},
}

// Links are resolved as a browser's URL parser resolves them (WHATWG URL,
// for http and https).
func TestLinksResolveLikeABrowser(t *testing.T) {
	for _, tc := range resolveCases {
		t.Run(tc.name, func(t *testing.T) {
			p := parse(t, tc.page, `<a href="`+html.EscapeString(tc.href)+`">x</a>`)
			require.Equal(t, []string{tc.want}, urls(p))
			assert.Equal(t, 0, p.InvalidLinks)
		})
	}
}

func TestBaseResolvesLikeABrowser(t *testing.T) {
	p := parse(t, "https://s.example/a/b", `<base href="https:/other/"><a href="x">x</a>`)
	assert.Equal(t, "https://s.example/other/", p.Base)
	assert.Equal(t, []string{"https://s.example/other/x"}, urls(p))

	p = parse(t, "https://s.example/a/b", `<base href="\\cdn.example\dir\"><a href="x">x</a>`)
	assert.Equal(t, "https://cdn.example/dir/", p.Base)
}

// A canonical or alternate written "#" names the page itself, as link.href
// does in a browser; fragment-only <a> links stay out of Links.
func TestFragmentOnlyCanonicalIsThePage(t *testing.T) {
	p := parse(t, "https://s.example/a?b=1#top", `<link rel=canonical href="#"><link rel=alternate hreflang=en href="#main"><a href="#x">x</a>`)
	assert.Equal(t, "https://s.example/a?b=1", p.Canonical)
	assert.Equal(t, []Alternate{{"en", "https://s.example/a?b=1"}}, p.Hreflang)
	assert.Empty(t, urls(p), "fragment-only references stay out of Links, whatever the element")

	p = parse(t, "https://s.example/a", `<base href="https://cdn.example/d/"><link rel=canonical href=" #">`)
	assert.Equal(t, "https://cdn.example/d/", p.Canonical, "against the base, like any relative URL")

	p = parse(t, "https://s.example/a", `<link rel=canonical href="">`)
	assert.Equal(t, "", p.Canonical, "an empty href is no link")
	assert.Equal(t, 1, p.CanonicalCount)
}
