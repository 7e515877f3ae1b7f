package robots

import "strings"

// compilePattern normalises a rule's path pattern for matching.
func compilePattern(v string, allow bool) pattern {
	anchored := strings.HasSuffix(v, "$")
	if anchored {
		v = v[:len(v)-1]
	}
	s := normalize(v, true)
	p := pattern{s: s, octets: int32(len(s)), star: int32(strings.IndexByte(s, '*')), anchored: anchored, allow: allow}
	if anchored {
		p.octets++
	}
	p.need = byteSet(s) &^ byteSet("*")
	return p
}

// byteSet returns a 64-bit set of the octets in s (folded modulo 64). A
// pattern can only match a path whose set contains the pattern's set, which
// rejects most wildcard rules without scanning the path once per rule.
func byteSet(s string) uint64 {
	var m uint64
	for i := 0; i < len(s); i++ {
		m |= 1 << (s[i] & 63)
	}
	return m
}

// match reports whether the pattern matches the normalised path (and
// query). Patterns are anchored at the start; `*` matches any sequence.
// Matching segment by segment at the leftmost occurrence is exact for
// patterns whose only wildcard is `*`, and never backtracks.
func (p *pattern) match(path string) bool {
	pat := p.s
	k := int(p.star)
	if k < 0 {
		if p.anchored {
			return path == pat
		}
		return strings.HasPrefix(path, pat)
	}
	if !strings.HasPrefix(path, pat[:k]) {
		return false
	}
	path, pat = path[k:], pat[k+1:]
	for {
		k = strings.IndexByte(pat, '*')
		if k < 0 {
			if p.anchored {
				return len(path) >= len(pat) && path[len(path)-len(pat):] == pat
			}
			return strings.Contains(path, pat)
		}
		if k > 0 {
			i := strings.Index(path, pat[:k])
			if i < 0 {
				return false
			}
			path = path[i+k:]
		}
		pat = pat[k+1:]
	}
}

// pathOf extracts the path and query of rawURL (absolute, or a path with
// optional query), drops the fragment, and normalises percent-encoding.
// An empty path is "/". It allocates only when something must change.
func pathOf(rawURL string) string {
	s := rawURL
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	if n := schemeLen(s); n > 0 {
		s = s[n+1:]
		if strings.HasPrefix(s, "//") {
			s = s[2:]
			end := len(s)
			for i := 0; i < len(s); i++ {
				if s[i] == '/' || s[i] == '?' {
					end = i
					break
				}
			}
			s = s[end:]
		}
	}
	if s == "" || s[0] != '/' {
		s = "/" + s
	}
	return normalize(s, false)
}

// schemeLen returns the length of a leading URL scheme (before ':'), or 0.
func schemeLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.':
			if i == 0 {
				return 0
			}
		case c == ':':
			return i
		default:
			return 0
		}
	}
	return 0
}

// needsEscape reports bytes that are percent-encoded before comparison:
// controls, space, non-ASCII and characters that are never literal in a URL.
var needsEscape = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c <= 0x20 || c >= 0x7F
	}
	for _, c := range "\"<>\\^`{|}" {
		t[c] = true
	}
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// literal marks the octets whose canonical form is the octet itself, so
// that an escape of one ("%7E", "%28") is decoded before comparison: the
// unreserved characters (RFC 3986 §2.3), and the reserved ones that delimit
// nothing in a path or query, which Go's net/url escapes when it re-encodes
// a URL (%21 %27 %28 %29 %5B %5D) and browsers leave as written (or, for
// "'" in a query, escape): ! ' ( ) , : @ [ ]. Every other octet has one
// canonical form too: the escape, for the octets needsEscape marks and for
// '*' and '$' in a URL; itself or its escape as written, never one for the
// other, for the delimiters / ? # % & = + ; whose escape means something
// else ("%2F" is not a path separator, "%26" not a parameter separator).
var literal = func() (t [256]bool) {
	for c := range 256 {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	for _, c := range "-._~!'(),:@[]" {
		t[c] = true
	}
	return t
}()

const upperHex = "0123456789ABCDEF"

// stopPath and stopPattern mark the octets normalize must look at: '%',
// '$', those that need escaping, and in a URL '*'.
var stopPath, stopPattern = func() (path, pat [256]bool) {
	for c := range 256 {
		pat[c] = needsEscape[c] || c == '%' || c == '$'
		path[c] = pat[c] || c == '*'
	}
	return path, pat
}()

// normalize brings a path or pattern to the form both are compared in
// (RFC 9309 §2.2.2, RFC 3986 §6.2.2): one spelling per octet, whether it
// was written literally or escaped, in any hex case (see literal):
// non-ASCII and unsafe octets percent-encoded, escapes of unreserved and
// non-delimiting reserved characters decoded, other escapes in upper-case
// hex. In a
// URL, `*` and `$` are encoded so that a pattern's `%2A` and `%24` match
// them literally; in a pattern they stay, as the wildcard and (already
// split off) end anchor, except a `$` that is not at the end.
func normalize(s string, isPattern bool) string {
	stop := &stopPath
	if isPattern {
		stop = &stopPattern
	}
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if !stop[c] {
			continue
		}
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) &&
			!literal[unhex(s[i+1])<<4|unhex(s[i+2])] &&
			!('a' <= s[i+1] && s[i+1] <= 'f') && !('a' <= s[i+2] && s[i+2] <= 'f') {
			i += 2 // already canonical
			continue
		}
		break
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if literal[v] {
				b.WriteByte(v)
			} else {
				b.WriteByte('%')
				b.WriteByte(upperHex[v>>4])
				b.WriteByte(upperHex[v&15])
			}
			i += 2
		case needsEscape[c] || c == '%' || c == '$' || (c == '*' && !isPattern):
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
