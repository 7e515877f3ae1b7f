package urlnorm

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNormalizeRules(t *testing.T) {
	tests := []struct {
		rule, in, want string
	}{
		{"already normalized", "http://example.com/a/b?x=1", "http://example.com/a/b?x=1"},
		{"trim controls and spaces", " \t\nhttp://example.com/\r\n ", "http://example.com/"},
		{"scheme lower-cased", "HTTPS://example.com/", "https://example.com/"},
		{"host lower-cased", "http://ExAmPle.COM/Path", "http://example.com/Path"},
		{"IDNA to ASCII", "http://bücher.example/", "http://xn--bcher-kva.example/"},
		{"IDNA upper-case", "http://BÜCHER.example/", "http://xn--bcher-kva.example/"},
		{"IDNA percent-encoded host", "http://b%C3%BCcher.example/", "http://xn--bcher-kva.example/"},
		{"punycode kept", "http://xn--bcher-kva.example/", "http://xn--bcher-kva.example/"},
		{"underscore host", "http://my_host.example/", "http://my_host.example/"},
		{"default http port dropped", "http://example.com:80/", "http://example.com/"},
		{"default https port dropped", "https://example.com:443/", "https://example.com/"},
		{"other port kept", "http://example.com:8080/", "http://example.com:8080/"},
		{"https on 80 kept", "https://example.com:80/", "https://example.com:80/"},
		{"empty port dropped", "http://example.com:/", "http://example.com/"},
		{"port leading zeros", "http://example.com:0080/", "http://example.com/"},
		{"port leading zeros kept value", "http://example.com:08080/", "http://example.com:8080/"},
		{"IPv4 kept", "http://127.0.0.1:8080/x", "http://127.0.0.1:8080/x"},
		{"IPv6 canonical", "http://[0:0:0:0:0:0:0:1]:80/", "http://[::1]/"},
		{"IPv6 lower-case", "http://[2001:DB8::1]/", "http://[2001:db8::1]/"},
		{"fragment dropped", "http://example.com/a#frag", "http://example.com/a"},
		{"fragment after query dropped", "http://example.com/a?b=1#frag", "http://example.com/a?b=1"},
		{"empty path is /", "http://example.com", "http://example.com/"},
		{"empty path with query", "http://example.com?a=1", "http://example.com/?a=1"},
		{"dot segment", "http://example.com/a/./b", "http://example.com/a/b"},
		{"dot-dot segment", "http://example.com/a/b/../c", "http://example.com/a/c"},
		{"dot-dot at end", "http://example.com/a/b/..", "http://example.com/a/"},
		{"dot at end", "http://example.com/a/.", "http://example.com/a/"},
		{"dot-dot above root", "http://example.com/../../a", "http://example.com/a"},
		{"encoded dot-dot", "http://example.com/a/%2E%2E/b", "http://example.com/b"},
		{"dots inside names kept", "http://example.com/a..b/.c/", "http://example.com/a..b/.c/"},
		{"hex upper-cased", "http://example.com/a%2fb", "http://example.com/a%2Fb"},
		{"unreserved decoded", "http://example.com/%7Euser/%41%62%2D", "http://example.com/~user/Ab-"},
		{"reserved kept encoded", "http://example.com/a%2Fb%3F", "http://example.com/a%2Fb%3F"},
		{"bad escape", "http://example.com/100%/%zz", "http://example.com/100%25/%25zz"},
		{"space encoded", "http://example.com/a b", "http://example.com/a%20b"},
		{"path caret, pipe, backslash encoded", `http://example.com/a^b|c\d`, "http://example.com/a%5Eb%7Cc%5Cd"},
		{"path brackets and sub-delims kept", "http://example.com/a[1]!$&'()*+,;=:@", "http://example.com/a[1]!$&'()*+,;=:@"},
		{"non-ASCII path encoded", "http://example.com/café", "http://example.com/caf%C3%A9"},
		{"query order kept", "http://example.com/?b=2&a=1", "http://example.com/?b=2&a=1"},
		{"query plus kept", "http://example.com/?q=a+b", "http://example.com/?q=a+b"},
		{"query hex upper-cased", "http://example.com/?q=%c3%a9", "http://example.com/?q=%C3%A9"},
		{"query unreserved decoded", "http://example.com/?q=%41", "http://example.com/?q=A"},
		{"query space encoded", "http://example.com/?q=a b", "http://example.com/?q=a%20b"},
		{"query brackets kept", "http://example.com/?a[]=1", "http://example.com/?a[]=1"},
		{"query dots kept", "http://example.com/?p=../x", "http://example.com/?p=../x"},
		{"empty query kept", "http://example.com/?", "http://example.com/?"},
		{"userinfo kept", "http://user:pa%3ass@Example.com/", "http://user:pa%3Ass@example.com/"},
		{"sub-delim escapes decoded (issue 18)", "http://example.com/my%20page%20%28draft%29", "http://example.com/my%20page%20(draft)"},
		{"apostrophe escape decoded", "http://example.com/it%27s%20here?q=it%27s", "http://example.com/it's%20here?q=it's"},
		{"net/url re-encoding undone", "http://example.com/caf%C3%A9%281%29/a%28b%20c/q/z%28x%29%20y", "http://example.com/caf%C3%A9(1)/a(b%20c/q/z(x)%20y"},
		{"non-delimiting reserved decoded", "http://example.com/%21%24%27%28%29%2a%2C%3A%40%5B%5D?%21%24%27%28%29%2A%2c%3a%40%5b%5d", "http://example.com/!$'()*,:@[]?!$'()*,:@[]"},
		{"delimiter escapes kept", "http://example.com/%2F%3F%23%25%26%3D%2B%3B?%2F%3F%23%25%26%3D%2B%3B", "http://example.com/%2F%3F%23%25%26%3D%2B%3B?%2F%3F%23%25%26%3D%2B%3B"},
		{"empty segment after dot-dot kept", "https://example.com/d/..//a", "https://example.com//a"},
		{"empty segment after root dot-dot kept", "https://example.com/p/..//q", "https://example.com//q"},
		{"double slash kept", "https://h.org//b//c", "https://h.org//b//c"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			got, err := Normalize(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			again, err := Normalize(got)
			require.NoError(t, err)
			assert.Equal(t, got, again, "not idempotent")
		})
	}
}

func TestNormalizeErrors(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{"", ErrNotAbsolute},
		{"/relative/path", ErrNotAbsolute},
		{"example.com/a", ErrNotAbsolute},
		{"http:/example.com/", ErrNotAbsolute},
		{"http:example.com", ErrNotAbsolute},
		{"mailto:a@example.com", ErrScheme},
		{"javascript:alert(1)", ErrScheme},
		{"ftp://example.com/", ErrScheme},
		{"http:///path", ErrHost},
		{"http://exa mple.com/", ErrHost},
		{"http://exa<mple.com/", ErrHost},
		{"http://[::1/", ErrHost},
		{"http://[fe80::1%25eth0]/", ErrHost},
		{"http://[1.2.3.4]/", ErrHost},
		{"http://[::1]x/", ErrHost},
		{"http://a%zz.com/", ErrHost},
		{"http://example.com:99999/", ErrPort},
		{"http://example.com:8o/", ErrPort},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := Normalize(tt.in)
			require.ErrorIs(t, err, tt.want)
			var e *Error
			require.True(t, errors.As(err, &e))
			assert.Equal(t, tt.in, e.URL)
			assert.Contains(t, err.Error(), tt.in)
		})
	}
}

func TestNormalizeNoAllocWhenNormalized(t *testing.T) {
	u := "https://www.example.com/shop/items/12345?color=red&size=m"
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := Normalize(u); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}

func TestNormalizeURL(t *testing.T) {
	u, err := url.Parse("HTTP://Example.COM:80/a/../b%2f?q=%7e#x")
	require.NoError(t, err)
	got := NormalizeURL(u)
	assert.Equal(t, "http://example.com/b%2F?q=~", got.String())
	assert.Equal(t, "http://Example.COM:80/a/../b%2f?q=%7e#x", u.String(), "input modified")

	odd := &url.URL{Scheme: "FTP", Host: "Example.com", Path: "/x", Fragment: "f"}
	assert.Equal(t, "ftp://example.com/x", NormalizeURL(odd).String())
	assert.Nil(t, NormalizeURL(nil))
}

func TestHostPort(t *testing.T) {
	tests := []struct{ scheme, in, want string }{
		{"http", "example.com", "example.com"},
		{"https", "Example.COM:443", "example.com"},
		{"http", "example.com:443", "example.com:443"},
		{"HTTP", "user@Example.com:80", "example.com"},
		{"http", "127.0.0.1:8080", "127.0.0.1:8080"},
		{"http", "[::1]:8080", "[::1]:8080"},
		{"http", "bücher.example", "xn--bcher-kva.example"},
	}
	for _, tt := range tests {
		got, err := HostPort(tt.scheme, tt.in)
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
	_, err := HostPort("http", "")
	assert.ErrorIs(t, err, ErrHost)
	_, err = HostPort("http", "a.com:x")
	assert.ErrorIs(t, err, ErrPort)
}

func TestHost(t *testing.T) {
	for in, want := range map[string]string{
		"http://example.com/":                "example.com",
		"http://example.com:8080/a?b":        "example.com:8080",
		"https://u:p@example.com/":           "example.com",
		"http://[::1]:81/":                   "[::1]:81",
		"https://example.com/?next=http://x": "example.com",
	} {
		assert.Equal(t, want, Host(in), in)
	}
}

// FuzzNormalize checks that Normalize never panics, is idempotent, keeps
// the fast path (no change) consistent, and that its output parses with
// net/url to the same host and round-trips through NormalizeURL.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"http://example.com/", "HTTP://Ex.COM:80/a/./b/../c?x=%7e#f", "https://bücher.example/caf%c3%a9",
		"http://[::FFFF:1.2.3.4]:0443/%2e%2E/", "http://a/%", "http://a/..%2F..", "http://u@h:/?#",
		"http://a/b c?d e", " https://x.y/\t", "http://a/%%41", "http://%41.com/", "http://a/../..//./x/..",
		"http://a/my page (draft)", "http://a/café(1)?q=it's", "http://a/it%27s here", "https://example.com/d/..//a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Normalize(s)
		if err != nil {
			return
		}
		n2, err := Normalize(n)
		if err != nil {
			t.Fatalf("Normalize(%q) = %q, which fails: %v", s, n, err)
		}
		if n2 != n {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, n, n2)
		}
		u, err := url.Parse(n)
		if err != nil {
			t.Fatalf("output %q does not parse: %v", n, err)
		}
		if h := Host(n); !strings.EqualFold(h, u.Host) {
			t.Fatalf("Host(%q) = %q, net/url says %q", n, h, u.Host)
		}
		if hp, err := HostPort(u.Scheme, u.Host); err != nil || hp != Host(n) {
			t.Fatalf("HostPort(%q) = %q, %v; want %q", u.Host, hp, err, Host(n))
		}
		// net/url re-escapes sub-delims in user info ('!' -> "%21"), so the
		// round trip is only exact without one.
		if got := NormalizeURL(u).String(); u.User == nil && got != n {
			t.Fatalf("NormalizeURL(parse(%q)) = %q", n, got)
		}
		// What net/url sends for the normalized URL is the URL itself, so
		// robots.txt is checked against the request line.
		if u.User == nil && u.String() != n {
			t.Fatalf("net/url prints %q as %q", n, u.String())
		}
		// net/url's re-encoding of the input (%28 for '(' in a URL it had to
		// escape) normalizes to the same URL, unless it decoded an escaped
		// delimiter, which names another resource.
		if g, err := url.Parse(trimControls(s)); err == nil && g.User == nil && g.Opaque == "" {
			p := strings.ToUpper(g.RawPath)
			if !strings.Contains(p, "%2F") && !strings.Contains(p, "%26") && !strings.Contains(p, "%3D") && !strings.Contains(p, "%2B") && !strings.Contains(p, "%3B") {
				if m, err := Normalize(g.String()); err == nil && m != n {
					t.Fatalf("Normalize(%q) = %q, but of its net/url spelling %q = %q", s, n, g.String(), m)
				}
			}
		}
	})
}
