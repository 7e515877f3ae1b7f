package fetch

import (
	"errors"
	"net/url"
	"testing"
)

// FuzzLocation: whatever a server puts in Location, resolving it never
// panics and yields either ErrBadRedirect or an http(s) URL with a host and
// no fragment, whose chain key is stable.
func FuzzLocation(f *testing.F) {
	for _, s := range []string{"", "/a", "../b?x=1", "//other.test/p", "http://[::1", "ftp://x/", "mailto:a@b",
		"javascript:alert(1)", "http:///p", "HTTP://A.test:80/x#frag", "https://h:443", "%zz", " http://x/", "\x00", "?q", "#f"} {
		f.Add("http://a.test/dir/page?q=1", s)
	}
	f.Fuzz(func(t *testing.T, base, loc string) {
		b, err := parseTarget(base)
		if err != nil {
			return
		}
		next, err := resolveLocation(b, 302, loc)
		if err != nil {
			if !errors.Is(err, ErrBadRedirect) {
				t.Fatalf("error %v is not ErrBadRedirect", err)
			}
			return
		}
		if (next.Scheme != "http" && next.Scheme != "https") || next.Host == "" || next.Fragment != "" {
			t.Fatalf("resolved %q against %q to bad URL %q", loc, base, next)
		}
		k := chainKey(next)
		u2, err := url.Parse(k)
		if err != nil {
			return // String() of some odd hosts does not parse back; the key is still a key
		}
		if chainKey(u2) != k {
			t.Fatalf("chain key not stable: %q -> %q", k, chainKey(u2))
		}
	})
}

// FuzzParseResolve: never panics; accepted entries give dial addresses
// mapAddr can use.
func FuzzParseResolve(f *testing.F) {
	for _, s := range []string{"example.com:443:127.0.0.1", "v6.test:80:[::1]", "x:443:127.0.0.1:8443", "h:80", "::::", "h:0:1.2.3.4", "h:80:a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		m, err := ParseResolve(entry)
		if err != nil {
			return
		}
		for k := range m {
			_ = mapAddr(m, k)
		}
	})
}
