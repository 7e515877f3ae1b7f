package weburl

import "strings"

// Fast resolves, without the parser, the two most common kinds of
// reference where the parser returns them as written (less the fragment):
// a root-relative "/path?query#frag", which becomes prefix + "/path?query",
// and an absolute "http(s)://host/path?query#frag" whose host is plain (see
// plainHost) and has no port. In both, the path has only unreserved
// characters and no dot segments, and the query only printable ASCII a
// browser sends as written. prefix is the base's "scheme://authority" as
// the parser spells it (see Prefix), or "" when unknown. It reports false
// for anything else, which takes the full route (Resolve).
func Fast(prefix, raw string) (string, bool) {
	switch {
	case len(raw) > 0 && raw[0] == '/':
		if prefix == "" || len(raw) > 1 && raw[1] == '/' {
			return "", false
		}
		end, ok := plainPathQuery(raw)
		if !ok {
			return "", false
		}
		return prefix + raw[:end], true
	case strings.HasPrefix(raw, "https://"), strings.HasPrefix(raw, "http://"):
		i := strings.Index(raw, "://") + 3
		j := i
		for j < len(raw) && raw[j] != '/' {
			j++
		}
		if j == len(raw) || !plainHost(raw[i:j]) {
			return "", false // a port, userinfo, upper case, a query right after the host...
		}
		end, ok := plainPathQuery(raw[j:])
		if !ok {
			return "", false
		}
		return raw[:j+end], true
	}
	return "", false
}

// Prefix is "scheme://host" of an http(s) URL with that scheme and host
// (as net/url holds them: "name" or "name:port") when the parser spells
// them as written: a plain host (see plainHost) and no port or a
// non-default one without leading zeros; "" otherwise.
func Prefix(scheme, host string) string {
	if scheme != "http" && scheme != "https" {
		return ""
	}
	name, port, hasPort := strings.Cut(host, ":")
	if !plainHost(name) {
		return ""
	}
	if hasPort {
		if port == "" || len(port) > 5 || port[0] == '0' || port == "80" && scheme == "http" || port == "443" && scheme == "https" {
			return ""
		}
		n := 0
		for i := 0; i < len(port); i++ {
			if port[i] < '0' || port[i] > '9' {
				return ""
			}
			n = n*10 + int(port[i]-'0')
		}
		if n > 65535 {
			return ""
		}
	}
	return scheme + "://" + host
}

// plainHost reports a host name the parser keeps as written: lower-case
// ASCII letters, digits, '-' and '.', no empty label, ending in a label
// that starts with a letter (never an IPv4 number) and holding no punycode.
func plainHost(h string) bool {
	label := 0 // start of the last label
	for j := 0; j < len(h); j++ {
		c := h[j]
		switch {
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-':
		case c == '.' && j > 0 && h[j-1] != '.':
			label = j + 1
		default:
			return false
		}
	}
	return label < len(h) && 'a' <= h[label] && h[label] <= 'z' && !strings.Contains(h, "xn--")
}

// plainPathQuery reports whether p, a "/path?query#frag", is spelt as the
// parser would spell it (see Fast), and where its fragment starts.
func plainPathQuery(p string) (end int, ok bool) {
	q := -1
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '#':
			return i, true
		case c == '?' && q < 0:
			q = i
		case q >= 0:
			if c <= ' ' || c >= 0x7f || c == '"' || c == '\'' || c == '<' || c == '>' {
				return 0, false
			}
		case c == '/' || c == '-' || c == '_' || c == '~' ||
			'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9':
		case c == '.':
			if p[i-1] == '/' { // a dot segment, or a name starting with a dot: let the parser decide
				return 0, false
			}
		default:
			return 0, false
		}
	}
	return len(p), true
}
