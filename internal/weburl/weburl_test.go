package weburl

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolve(t *testing.T) {
	base, err := Parse("https://example.com/d/page.html?x#f", nil)
	require.NoError(t, err)
	for _, tc := range []struct {
		raw, want string
		r         Resolution
	}{
		{"..//a", "https://example.com//a", Kept},
		{"/p/..//q", "https://example.com//q", Kept},
		{"/a b%2Fc", "https://example.com/a%20b%2Fc", Kept},
		{`\x\y`, "https://example.com/x/y", Kept},
		{"https:/path", "https://example.com/path", Kept},
		{"/a|b^c?|^", "https://example.com/a%7Cb%5Ec?|^", Kept},
		{" \t/a\nb#frag ", "https://example.com/ab", Kept},
		{"/a #f", "https://example.com/a%20", Kept},
		{"/0\x01#f", "https://example.com/0%01", Kept},
		{"", "https://example.com/d/page.html?x", Kept},
		{"#top", "https://example.com/d/page.html?x", Kept},
		{"ftp://example.com/", "", Skipped},
		{"javascript:0", "", Skipped},
		{"http://", "", Invalid},
		{"http://[::1", "", Invalid},
		{"/100%", "", Invalid},
		{"http://a!b.example/", "", Invalid},
	} {
		got, r := Resolve(base, tc.raw)
		assert.Equal(t, tc.r, r, "%q", tc.raw)
		assert.Equal(t, tc.want, got, "%q", tc.raw)
	}
	_, r := Resolve(nil, "/relative")
	assert.Equal(t, Invalid, r, "relative without a base")
}

// FuzzResolve checks what fetch relies on: a kept URL is one net/url
// parses and spells back unchanged (so it is sent as written), resolving
// it again gives it back, and the short cut (Prefix of the base as net/url
// holds it, then Fast) agrees with the parser.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"..//a", "/a b%2F%26%3D%2B%3B", `\\h.example\x`, "https:/p", "/a|b^?|^", "//[::1]:80/x", "http://u:p@h.example/%zz", "/é?é#é"} {
		f.Add("https://example.com/d/page.html", s)
	}
	for _, b := range []string{"http://h.example:8080/a", "http://h.example:80/a", "https://H.example/", "http://1.2.3.4/", "http://h.example:0080/", "http://xn--bcher-kva.example/"} {
		f.Add(b, "/x?y#z")
	}
	f.Fuzz(func(t *testing.T, b, raw string) {
		base, err := Parse(b, nil)
		if err != nil {
			return
		}
		href, r := Resolve(base, raw)
		if nb, err := url.Parse(b); err == nil && nb.User == nil && nb.Opaque == "" {
			if fast, ok := Fast(Prefix(nb.Scheme, nb.Host), raw); ok {
				require.Equal(t, Kept, r, "short cut took %q", raw)
				require.Equal(t, href, fast, "short cut of %q", raw)
			}
		}
		if r != Kept {
			return
		}
		u, err := url.Parse(href)
		require.NoError(t, err, href)
		if u.User == nil { // net/url escapes userinfo its own way ('!' as %21)
			require.Equal(t, href, u.String())
		}
		again, r := Resolve(nil, href)
		require.Equal(t, Kept, r, href)
		require.Equal(t, href, again)
	})
}

func TestPrefix(t *testing.T) {
	for host, want := range map[string]string{
		"h.example":       "http://h.example",
		"h.example:8080":  "http://h.example:8080",
		"h.example:80":    "", // the parser drops a default port
		"h.example:080":   "",
		"h.example:99999": "",
		"H.example":       "",
		"1.2.3.4":         "", // IPv4 numbers are canonicalised
		"xn--bcher-kva.x": "",
		"[::1]:8080":      "",
		"a..b":            "",
	} {
		assert.Equal(t, want, Prefix("http", host), host)
	}
	assert.Equal(t, "", Prefix("ftp", "h.example"))
}
