package seocheck

import (
	"net/url"
	"strings"
)

const (
	// MaxURLLength is the length in bytes above which a URL is too long: Screaming Frog's "Over 115
	// Characters" filter. (seonaut also flags long URLs; we follow Screaming Frog's number.)
	MaxURLLength = 115

	// MaxQueryParams is the number of query parameters above which a URL has many: more than three
	// is the faceted-navigation pattern that multiplies crawlable URLs. Screaming Frog flags any
	// parameter ("Parameters"); that is HasQuery.
	MaxQueryParams = 3
)

// URLIssue is a set of things wrong with the shape of a URL, as bits.
type URLIssue uint16

// The URL issues, one bit each; each is defined on the path (and the query where it says so), never
// the scheme or host, whose case and characters a browser normalises anyway.
const (
	URLUppercase     URLIssue = 1 << iota // a capital letter in the path (not in a %XX escape)
	URLUnderscore                         // an underscore in the path
	URLSpace                              // a space in the path or query, raw, as %20, or as + in the query
	URLRepeatedSlash                      // "//" in the path
	URLNonASCII                           // a byte outside ASCII in the path or query, raw or %-escaped (%C3%A9)
	URLTooLong                            // more than MaxURLLength bytes
	URLHasQuery                           // a query string
	URLManyParams                         // more than MaxQueryParams query parameters
	URLUnparsable                         // not a URL url.Parse accepts; no other bit is set
)

var urlIssueNames = []string{
	"uppercase", "underscore", "space", "repeated_slash", "non_ascii", "too_long", "has_query", "many_params", "unparsable",
}

// Names lists the issues set, by name ("uppercase", "underscore", …), in the order of the bits.
func (s URLIssue) Names() []string {
	var out []string
	for i, n := range urlIssueNames {
		if s&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// Has reports whether every issue of t is set in s.
func (s URLIssue) Has(t URLIssue) bool { return s&t == t }

// CheckURL returns the issues of the shape of raw, a URL as the crawl recorded it (absolute, or a
// path).
func CheckURL(raw string) URLIssue {
	u, err := url.Parse(raw)
	if err != nil {
		return URLUnparsable
	}
	var s URLIssue
	if len(raw) > MaxURLLength {
		s |= URLTooLong
	}
	path := u.EscapedPath()
	if hasUpper(path) {
		s |= URLUppercase
	}
	if strings.Contains(path, "_") {
		s |= URLUnderscore
	}
	if strings.Contains(path, " ") || strings.Contains(path, "%20") ||
		strings.Contains(u.RawQuery, " ") || strings.Contains(u.RawQuery, "%20") || strings.Contains(u.RawQuery, "+") {
		s |= URLSpace
	}
	if strings.Contains(path, "//") {
		s |= URLRepeatedSlash
	}
	if nonASCII(path) || nonASCII(u.RawQuery) {
		s |= URLNonASCII
	}
	if u.RawQuery != "" || u.ForceQuery {
		s |= URLHasQuery
	}
	if QueryParams(u.RawQuery) > MaxQueryParams {
		s |= URLManyParams
	}
	return s
}

// QueryParams counts the parameters of a raw query: its non-empty &- or ;-separated parts.
func QueryParams(rawQuery string) int {
	n := 0
	for part := range strings.FieldsFuncSeq(rawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
		if part != "" {
			n++
		}
	}
	return n
}

// InsecureOnSecureSite reports whether link is an http:// URL of the site whose start URL is
// https:// (same host, or the www/apex twin): a link that downgrades the connection.
func InsecureOnSecureSite(link, site string) bool {
	l, err1 := url.Parse(link)
	s, err2 := url.Parse(site)
	if err1 != nil || err2 != nil || !strings.EqualFold(l.Scheme, "http") || !strings.EqualFold(s.Scheme, "https") {
		return false
	}
	lh, sh := strings.ToLower(l.Hostname()), strings.ToLower(s.Hostname())
	return lh == sh || strings.TrimPrefix(lh, "www.") == strings.TrimPrefix(sh, "www.")
}

// hasUpper reports a capital ASCII letter outside %XX escapes (whose hex digits may be either
// case).
func hasUpper(p string) bool {
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '%' && i+2 < len(p):
			i += 2
		case 'A' <= c && c <= 'Z':
			return true
		}
	}
	return false
}

// nonASCII reports a byte of 0x80 or more, raw or as a %XX escape.
func nonASCII(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c >= 0x80 {
			return true
		}
		if c == '%' && i+2 < len(p) && strings.IndexByte("89abcdefABCDEF", p[i+1]) >= 0 && isHex(p[i+2]) {
			return true
		}
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
