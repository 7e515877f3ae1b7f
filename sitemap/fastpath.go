package sitemap

import (
	"net/url"
	"strings"
)

// urlChars marks bytes that may appear after the authority of a URL taken
// by the fast path: printable ASCII except space, `"<>\^`{|}` and brackets,
// plus any byte of a UTF-8 sequence. url.Parse accepts every such URL.
var urlChars = func() (t [256]bool) {
	for c := 0x21; c < 0x7f; c++ {
		t[c] = !strings.ContainsRune("\"<>\\^`{|}[]", rune(c))
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	return t
}()

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// splitSimple splits an http(s) URL made only of unremarkable characters
// (host of letters, digits, '.' and '-', an optional numeric port, valid
// percent escapes) without allocating. ok is false when the URL needs
// url.Parse to decide; it is never true for a URL url.Parse rejects.
func splitSimple(b []byte) (scheme, host, port, path []byte, ok bool) {
	var i int
	switch {
	case len(b) > 7 && asciiEqualFold(b[:7], "http://"):
		i = 7
	case len(b) > 8 && asciiEqualFold(b[:8], "https://"):
		i = 8
	default:
		return nil, nil, nil, nil, false
	}
	scheme = b[:i-3]
	j, colon := i, -1
	for ; j < len(b); j++ {
		c := b[j]
		if c == '/' || c == '?' || c == '#' {
			break
		}
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '-':
		case c == ':' && colon < 0:
			colon = j
		default:
			return nil, nil, nil, nil, false
		}
	}
	host = b[i:j]
	if colon >= 0 {
		host, port = b[i:colon], b[colon+1:j]
		for _, c := range port {
			if c < '0' || c > '9' {
				return nil, nil, nil, nil, false
			}
		}
	}
	if len(host) == 0 {
		return nil, nil, nil, nil, false
	}
	pathEnd := -1
	for k := j; k < len(b); k++ {
		c := b[k]
		if !urlChars[c] {
			return nil, nil, nil, nil, false
		}
		if c == '%' && (k+2 >= len(b) || !isHex(b[k+1]) || !isHex(b[k+2])) {
			return nil, nil, nil, nil, false
		}
		if pathEnd < 0 {
			switch {
			case c == '?' || c == '#':
				pathEnd = k
			case c >= 0x80:
				// EscapedPath would differ from the bytes: let url.Parse decide.
				return nil, nil, nil, nil, false
			}
		}
	}
	if pathEnd < 0 {
		pathEnd = len(b)
	}
	return scheme, host, port, b[j:pathEnd], true
}

// inScopeSimple is base.inScope for the parts of a URL split by splitSimple.
func (b *base) inScopeSimple(scheme, host, port, path []byte, index bool, scope Scope) bool {
	if !b.ok || scope == ScopeAny {
		return true
	}
	if !asciiEqualFold(host, b.host) {
		return false
	}
	lower := "https"
	if len(scheme) == 4 {
		lower = "http"
	}
	if normPort(lower, string(port)) != b.port {
		return false
	}
	if index || scope == ScopeHost {
		return true
	}
	if lower != b.scheme {
		return false
	}
	if len(path) == 0 {
		return b.dir == "/"
	}
	return len(path) >= len(b.dir) && string(path[:len(b.dir)]) == b.dir
}

// parseURL is the slow path: url.Parse decides.
func parseURL(s string) (*url.URL, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || u.Hostname() == "" {
		return nil, false
	}
	return u, true
}

// hashSet is a set of 64-bit hashes with open addressing: one probe
// sequence answers "seen before?" and records the hash. 0 marks a free slot.
type hashSet struct {
	slots []uint64
	n     int
}

// add inserts h and reports whether it was absent.
func (s *hashSet) add(h uint64) bool {
	if h == 0 {
		h = 1
	}
	if s.n >= len(s.slots)/4*3 {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case 0:
			s.slots[i] = h
			s.n++
			return true
		case h:
			return false
		}
	}
}

func (s *hashSet) has(h uint64) bool {
	if h == 0 {
		h = 1
	}
	if len(s.slots) == 0 {
		return false
	}
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case 0:
			return false
		case h:
			return true
		}
	}
}

func (s *hashSet) grow() {
	old := s.slots
	size := 1024
	if len(old) > 0 {
		size = 2 * len(old)
	}
	s.slots, s.n = make([]uint64, size), 0
	for _, h := range old {
		if h != 0 {
			s.add(h)
		}
	}
}
