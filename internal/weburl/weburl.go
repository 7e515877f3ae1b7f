// Package weburl resolves URLs by the WHATWG URL standard, as a browser
// does, so that the URL a crawler requests for a link or a redirect is the
// one a browser would request. net/url's ResolveReference differs in the
// details: "..//a" loses its empty segment (golang/go#80282), '\' is not
// '/', "https:/path" and "https:path" are not relative, and re-encoding a
// URL it had to escape turns '(' into "%28" and "%2F" into '/'.
//
// It parses and resolves only; it does not normalize for comparison (that
// is internal/urlnorm) and it never requests anything.
package weburl

import (
	"strings"

	whatwg "github.com/nlnwa/whatwg-url/url"
)

var parser = whatwg.NewParser()

// Parse parses s as a browser does, against base when base is not nil.
func Parse(s string, base *whatwg.Url) (*whatwg.Url, error) {
	if base == nil {
		return parser.Parse(s)
	}
	return parser.BasicParser(s, base, nil, whatwg.NoState)
}

// HTTP reports an http(s) URL whose host is a DNS name or an IP address.
// (The WHATWG parser allows more in a host, '!' or '{' say, which no DNS
// name holds and which net/url and the frontier refuse.)
func HTTP(u *whatwg.Url) bool {
	if s := u.Scheme(); s != "http" && s != "https" {
		return false
	}
	h := u.Hostname()
	if h == "" || h[0] == '[' {
		return h != ""
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// Resolution says what Resolve made of a reference.
type Resolution int

const (
	Kept    Resolution = iota // an http(s) URL a Go client can send
	Skipped                   // a scheme other than http(s)
	Invalid                   // unparsable, relative with no base, or not sendable by a Go client
)

// Resolve makes raw absolute against base (which may be nil) as a browser
// does, and drops the fragment; raw is cleaned first (see Clean). An empty
// or fragment-only raw resolves to base itself. Where Chromium departs from
// the standard ('^' and '|' in a path), the result is Chromium's, the
// browser the tests check against.
func Resolve(base *whatwg.Url, raw string) (string, Resolution) {
	// The fragment is dropped anyway; cutting it first saves encoding it,
	// unless that would leave a control or space at the end, which the
	// parser strips there but escapes inside ("/a #f" is "/a%20").
	s := Clean(raw)
	if i := strings.IndexByte(s, '#'); i >= 0 && (i == 0 || s[i-1] > ' ') {
		s = s[:i]
	}
	u, err := Parse(s, base)
	if err != nil {
		return "", Invalid
	}
	if sc := u.Scheme(); sc != "http" && sc != "https" {
		return "", Skipped
	}
	if !HTTP(u) {
		return "", Invalid
	}
	href := u.Href(true)
	before, after, q := strings.Cut(href, "?")
	if BadEscape(before) {
		return "", Invalid
	}
	if strings.ContainsAny(before, "^|") {
		// Chromium escapes these in a path too, where the standard keeps
		// them (in a query both keep them).
		before = strings.NewReplacer("^", "%5E", "|", "%7C").Replace(before)
		if href = before; q {
			href += "?" + after
		}
	}
	return href, Kept
}

// BadEscape reports a '%' that does not start an escape. A browser sends
// it as written ("/100%", "/%zz"), but net/url, and so any Go client,
// refuses such a URL (in the path; a query it takes as it is).
func BadEscape(s string) bool {
	for i := strings.IndexByte(s, '%'); i >= 0; i = strings.IndexByte(s, '%') {
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return true
		}
		s = s[i+3:]
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// Clean strips what a browser's URL parser strips: leading and trailing
// C0 controls and spaces, and tabs and newlines anywhere.
func Clean(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	}
	return s
}
