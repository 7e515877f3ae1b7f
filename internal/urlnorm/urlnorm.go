// Package urlnorm normalizes absolute http and https URLs so that URLs a
// server treats as the same resource compare equal as strings, which is what
// the frontier's duplicate detection needs.
//
// The rules, applied in this order (RFC 3986 §6.2.2 plus a few WHATWG habits):
//
//  1. Leading and trailing ASCII control characters and spaces are trimmed.
//  2. The scheme is lower-cased; only http and https are accepted, and the
//     URL must have an authority ("//host").
//  3. The fragment is dropped: it is never sent to a server.
//  4. The host is percent-decoded, converted to ASCII with IDNA (UTS #46,
//     non-transitional, lookup mapping) when it is not ASCII, and
//     lower-cased; it may then only hold letters, digits, '-', '.' and '_'.
//     IPv6 literals are rewritten in their canonical RFC 5952 form.
//  5. The port is dropped when it is the scheme's default (80, 443) or
//     empty; leading zeros are removed; ports over 65535 are rejected.
//  6. In the user info, path and query, percent-encoding is normalized to
//     one spelling per octet: hex digits are upper-cased, escapes of
//     unreserved characters (A-Z a-z 0-9 - . _ ~) are decoded, and so are, in
//     the path and query, those of the reserved characters that delimit
//     nothing there (! $ ' ( ) * , : @ [ ]: "%28" becomes '(', undoing
//     net/url's re-encoding of a URL it had to escape, and matching what a
//     browser requests); a '%' that does not start a valid escape becomes
//     "%25", and bytes that may not appear literally (controls, space, '"',
//     '<', '>', '`', '{', '}', DEL, non-ASCII; in the path and user info
//     also '\', '^', '|') are escaped. The escapes of the delimiters / ? # %
//     & = + ; are kept, since they name something else: "%2F" stays "%2F",
//     '+' stays '+'. The result is what net/url sends unchanged (its
//     EscapedPath is the path as written), and the spelling the robots
//     package compares rules in.
//  7. Dot segments ("." and "..") are removed from the path (RFC 3986 §5.2.4),
//     after rule 6 so that "%2E%2E" counts as "..". Empty segments are
//     kept: "/a/..//b" is "//b", as RFC 3986 and browsers have it (net/url's
//     ResolveReference makes it "/b", golang/go#80282), and "//b" is what a
//     browser requests, a different resource from "/b" on many servers.
//  8. An empty path becomes "/".
//  9. The query is otherwise kept as it is: parameter order matters to
//     servers, and an empty query ("?") is kept.
//
// Normalize is idempotent: Normalize(Normalize(u)) == Normalize(u). A URL
// that is already normalized is returned without allocating. It fails with
// an *Error wrapping ErrNotAbsolute (no scheme, or no "//authority"),
// ErrScheme (not http or https), ErrHost (empty or invalid host) or ErrPort.
//
// HostPort applies rules 4 and 5 to an authority, which is how the frontier
// keys per-host politeness; Host returns the host[:port] of a normalized URL
// without allocating.
//
// # Start URLs
//
// StartURL checks what a person typed as the URL to start from (the audit's
// argument, the monitor's track command) and returns it normalized. The
// same input gets the same answer in every program:
//
//   - An absolute http or https URL is accepted, whatever its host
//     ("http://localhost:8080/", "https://intranet/").
//   - A bare host name containing a dot, optionally with a port, path and
//     query, is accepted as https: "example.com" and "example.com/shop"
//     become "https://example.com/" and "https://example.com/shop". Write
//     the scheme for plain http or for a name without a dot.
//   - Anything else is an *Error: ErrEmpty (nothing but spaces), ErrNoScheme
//     ("notaurl", "localhost:8080": no scheme and no dot), ErrScheme
//     ("ftp://...", "mailto:..."), ErrNotAbsolute ("http:example.com"),
//     ErrHost, ErrPort, ErrUserinfo (a user name or password, which would
//     end up in logs and databases) or ErrTooLong (over 8 KiB before or
//     after normalization, the frontier's limit).
package urlnorm

import (
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// Errors wrapped by *Error, for errors.Is.
var (
	// ErrNotAbsolute: the URL has no scheme or no "//authority".
	ErrNotAbsolute = errors.New("not an absolute URL")
	// ErrScheme: the scheme is neither http nor https.
	ErrScheme = errors.New("scheme is not http or https")
	// ErrHost: the host is empty or not a valid host name or IP literal.
	ErrHost = errors.New("invalid host")
	// ErrPort: the port is not a number from 0 to 65535.
	ErrPort = errors.New("invalid port")
)

// Errors of StartURL, besides those of Normalize.
var (
	// ErrEmpty: the input is empty or only white space.
	ErrEmpty = errors.New("empty URL")
	// ErrNoScheme: the input has no scheme and is not a host name with a dot.
	ErrNoScheme = errors.New("no http:// or https://, and not a host name with a dot (write the scheme for a host without one)")
	// ErrUserinfo: the URL holds a user name or password.
	ErrUserinfo = errors.New("user name or password in the URL")
	// ErrTooLong: the input, or its normalized form, is longer than
	// MaxStartURL bytes.
	ErrTooLong = errors.New("URL too long")
)

// MaxStartURL is the longest input StartURL accepts, the frontier's limit
// for any URL.
const MaxStartURL = 8 << 10

// StartURL checks input as the URL to start a crawl or a check from and
// returns it normalized (see the package doc, "Start URLs"): an absolute
// http(s) URL, or a bare host name with a dot, read as https. The error is
// an *Error naming the input.
func StartURL(input string) (string, error) {
	s := strings.TrimSpace(input)
	switch {
	case s == "":
		return "", &Error{URL: input, Err: ErrEmpty}
	case len(s) > MaxStartURL:
		return "", &Error{URL: input[:64] + "...", Err: ErrTooLong}
	}
	if scheme, rest, ok := strings.Cut(s, ":"); ok && validScheme(scheme) && !startsWithDigit(rest) {
		// A scheme (not a host followed by a port).
		if !strings.HasPrefix(rest, "//") {
			if strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https") {
				return "", &Error{URL: input, Err: ErrNotAbsolute}
			}
			return "", &Error{URL: input, Err: ErrScheme}
		}
	} else {
		host := s
		if i := strings.IndexAny(host, "/?#"); i >= 0 {
			host = host[:i]
		}
		if i := strings.LastIndexByte(host, ':'); i >= 0 {
			host = host[:i]
		}
		if !strings.Contains(host, ".") {
			return "", &Error{URL: input, Err: ErrNoScheme}
		}
		s = "https://" + s
	}
	n, err := Normalize(s)
	if err != nil {
		return "", &Error{URL: input, Err: errors.Unwrap(err)}
	}
	if len(n) > MaxStartURL { // percent-encoding can triple a length
		return "", &Error{URL: input[:64] + "...", Err: ErrTooLong}
	}
	u, err := url.Parse(n)
	if err != nil {
		return "", &Error{URL: input, Err: ErrHost}
	}
	if u.User != nil {
		return "", &Error{URL: input, Err: ErrUserinfo}
	}
	if h := u.Hostname(); !strings.Contains(h, ":") && !validLabels(h) { // ".com", "a..b"; IPv6 aside
		return "", &Error{URL: input, Err: ErrHost}
	}
	return n, nil
}

func startsWithDigit(s string) bool { return s != "" && '0' <= s[0] && s[0] <= '9' }

// validLabels reports a dotted host name whose labels are not empty (a
// trailing dot, the root, is allowed).
func validLabels(h string) bool {
	h = strings.TrimSuffix(h, ".")
	for l := range strings.SplitSeq(h, ".") {
		if l == "" {
			return false
		}
	}
	return true
}

// Error reports a URL that cannot be normalized. It names the URL and wraps
// one of ErrNotAbsolute, ErrScheme, ErrHost or ErrPort.
type Error struct {
	URL string
	Err error
}

// Error gives the reason and the URL it concerns.
func (e *Error) Error() string { return "urlnorm: " + e.Err.Error() + ": " + strconv.Quote(e.URL) }

// Unwrap returns the reason.
func (e *Error) Unwrap() error { return e.Err }

// idnaProfile maps like a browser resolving a name, but allows '_' (seen in
// real host names) by not enforcing STD3 rules.
var idnaProfile = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.StrictDomainName(false))

// Normalize returns the normalized form of the absolute http(s) URL rawURL,
// following the package rules. The error is an *Error.
func Normalize(rawURL string) (string, error) {
	s := trimControls(rawURL)
	changed := len(s) != len(rawURL)

	// Scheme.
	colon := strings.IndexByte(s, ':')
	if colon <= 0 {
		return "", &Error{URL: rawURL, Err: ErrNotAbsolute}
	}
	scheme := s[:colon]
	var defPort string
	switch {
	case scheme == "http":
		defPort = "80"
	case scheme == "https":
		defPort = "443"
	case strings.EqualFold(scheme, "http"):
		scheme, defPort, changed = "http", "80", true
	case strings.EqualFold(scheme, "https"):
		scheme, defPort, changed = "https", "443", true
	default:
		if !validScheme(scheme) {
			return "", &Error{URL: rawURL, Err: ErrNotAbsolute}
		}
		return "", &Error{URL: rawURL, Err: ErrScheme}
	}
	rest := s[colon+1:]
	if !strings.HasPrefix(rest, "//") {
		return "", &Error{URL: rawURL, Err: ErrNotAbsolute}
	}
	rest = rest[2:]

	// Split authority / path / query / fragment.
	end := 0
	for end < len(rest) && rest[end] != '/' && rest[end] != '?' && rest[end] != '#' {
		end++
	}
	authority, rest := rest[:end], rest[end:]
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest, changed = rest[:i], true
	}
	path, query, hasQuery := strings.Cut(rest, "?")

	// Authority.
	userinfo, hostport, hasUser := "", authority, false
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		userinfo, hostport, hasUser = authority[:i], authority[i+1:], true
	}
	host, port, err := splitHostPort(hostport)
	if err != nil {
		return "", &Error{URL: rawURL, Err: err}
	}
	nhost, err := normHost(host)
	if err != nil {
		return "", &Error{URL: rawURL, Err: err}
	}
	nport, err := normPort(port, defPort)
	if err != nil {
		return "", &Error{URL: rawURL, Err: err}
	}
	if nhost != host || nport != port || (nport == "" && strings.HasSuffix(hostport, ":")) {
		changed = true
	}
	nuser := userinfo
	if hasUser {
		nuser = normPercent(userinfo, userEncode)
		changed = changed || nuser != userinfo
	}

	// Path and query.
	npath := normPercent(path, pathEncode)
	npath = removeDotSegments(npath)
	if npath == "" {
		npath = "/"
	}
	nquery := normPercent(query, queryEncode)
	if npath != path || nquery != query {
		changed = true
	}
	if !changed {
		return s, nil
	}

	var b strings.Builder
	b.Grow(len(scheme) + 3 + len(nuser) + 1 + len(nhost) + 1 + len(nport) + len(npath) + 1 + len(nquery))
	b.WriteString(scheme)
	b.WriteString("://")
	if hasUser {
		b.WriteString(nuser)
		b.WriteByte('@')
	}
	b.WriteString(nhost)
	if nport != "" {
		b.WriteByte(':')
		b.WriteString(nport)
	}
	b.WriteString(npath)
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(nquery)
	}
	return b.String(), nil
}

// NormalizeURL returns a normalized copy of u, parsed from Normalize(u.String()).
// When u cannot be normalized (not http(s), bad host) it returns a copy with
// only the scheme and host lower-cased and the fragment dropped. It returns
// nil for nil.
func NormalizeURL(u *url.URL) *url.URL {
	if u == nil {
		return nil
	}
	if n, err := Normalize(u.String()); err == nil {
		if v, err := url.Parse(n); err == nil {
			return v
		}
	}
	c := *u
	if c.User != nil {
		user := *c.User
		c.User = &user
	}
	c.Scheme = strings.ToLower(c.Scheme)
	c.Host = strings.ToLower(c.Host)
	c.Fragment, c.RawFragment = "", ""
	return &c
}

// HostPort returns the normalized host[:port] (rules 4 and 5) of the
// authority hostport under scheme, e.g. ("https", "Example.COM:443") ->
// "example.com". Userinfo, if present, is ignored. It is how the frontier
// keys per-host politeness for any URL, normalized or not.
func HostPort(scheme, hostport string) (string, error) {
	if i := strings.LastIndexByte(hostport, '@'); i >= 0 {
		hostport = hostport[i+1:]
	}
	defPort := ""
	switch strings.ToLower(scheme) {
	case "http":
		defPort = "80"
	case "https":
		defPort = "443"
	}
	host, port, err := splitHostPort(hostport)
	if err != nil {
		return "", err
	}
	nhost, err := normHost(host)
	if err != nil {
		return "", err
	}
	nport, err := normPort(port, defPort)
	if err != nil {
		return "", err
	}
	if nhost == host && nport == port && !strings.HasSuffix(hostport, ":") {
		return hostport, nil
	}
	if nport == "" {
		return nhost, nil
	}
	return nhost + ":" + nport, nil
}

// Host returns the host[:port] of a URL that Normalize returned, as a
// substring of it (no allocation). For any other input the result is
// unspecified.
func Host(normalized string) string {
	var a string
	switch {
	case strings.HasPrefix(normalized, "https://"):
		a = normalized[8:]
	case strings.HasPrefix(normalized, "http://"):
		a = normalized[7:]
	default:
		i := strings.Index(normalized, "://")
		if i < 0 {
			return ""
		}
		a = normalized[i+3:]
	}
	for j := 0; j < len(a); j++ {
		if a[j] == '/' || a[j] == '?' {
			a = a[:j]
			break
		}
	}
	if j := strings.LastIndexByte(a, '@'); j >= 0 {
		a = a[j+1:]
	}
	return a
}

// trimControls trims leading and trailing C0 controls and spaces, as
// browsers do with href values.
func trimControls(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// splitHostPort splits an authority without userinfo into host and port
// (without the colon). An IPv6 literal keeps its brackets.
func splitHostPort(hp string) (host, port string, err error) {
	if strings.HasPrefix(hp, "[") {
		i := strings.IndexByte(hp, ']')
		if i < 0 {
			return "", "", ErrHost
		}
		host, rest := hp[:i+1], hp[i+1:]
		if rest == "" {
			return host, "", nil
		}
		if rest[0] != ':' {
			return "", "", ErrHost
		}
		return host, rest[1:], nil
	}
	if i := strings.LastIndexByte(hp, ':'); i >= 0 {
		return hp[:i], hp[i+1:], nil
	}
	return hp, "", nil
}

func normPort(port, defPort string) (string, error) {
	if port == "" {
		return "", nil
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return "", ErrPort
		}
	}
	p := strings.TrimLeft(port, "0")
	if p == "" {
		p = "0"
	}
	if len(p) > 5 {
		return "", ErrPort
	}
	if n, _ := strconv.Atoi(p); n > 65535 {
		return "", ErrPort
	}
	if p == defPort {
		return "", nil
	}
	return p, nil
}

func normHost(host string) (string, error) {
	if host == "" {
		return "", ErrHost
	}
	if host[0] == '[' {
		inner := host[1 : len(host)-1]
		a, err := netip.ParseAddr(inner)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", ErrHost
		}
		if n := a.String(); n != inner {
			return "[" + n + "]", nil
		}
		return host, nil
	}
	if hostOK(host) {
		return host, nil // fast path: already lower-case ASCII
	}
	h := host
	if strings.IndexByte(h, '%') >= 0 {
		d, err := url.PathUnescape(h)
		if err != nil {
			return "", ErrHost
		}
		h = d
	}
	ascii := true
	for i := 0; i < len(h); i++ {
		if h[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		h = strings.ToLower(h)
	} else {
		a, err := idnaProfile.ToASCII(h)
		if err != nil {
			return "", ErrHost
		}
		h = a
	}
	if !hostOK(h) {
		return "", ErrHost
	}
	return h, nil
}

// hostOK reports whether h is a non-empty host of lower-case letters,
// digits, '-', '.' and '_'.
func hostOK(h string) bool {
	if h == "" {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// Byte classes for normPercent: which bytes must be percent-encoded.
const (
	pathEncode = 1 << iota
	queryEncode
	userEncode
)

var encodeTable = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		if c <= ' ' || c >= 0x7f {
			t[c] = pathEncode | queryEncode | userEncode
		}
	}
	for _, c := range `"<>` + "`{}" {
		t[c] = pathEncode | queryEncode | userEncode
	}
	// In user info, the delimiters of the authority must stay escaped.
	for _, c := range "/?#@[]" {
		t[c] |= userEncode
	}
	// In the path, also the bytes RFC 3986 does not allow there ('[' and
	// ']' excepted, as net/url does), so net/url prints it back unchanged.
	for _, c := range `\^|` {
		t[c] |= pathEncode | userEncode
	}
	// '?' and '#' cannot occur in a split path or query; nothing to add.
	return t
}()

// decodeTable marks, per byte class, the octets whose escape is decoded:
// the unreserved characters everywhere, and in the path and query also the
// reserved ones that delimit nothing there (! $ ' ( ) * , : @ [ ]), which
// net/url escapes when it re-encodes a URL (%21 %27 %28 %29 %2A %5B %5D)
// and browsers leave as written. The escapes of / ? # % & = + ; stay: they
// name something else than the delimiter.
var decodeTable = func() (t [256]uint8) {
	for c := range 256 {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			t[c] = pathEncode | queryEncode | userEncode
		}
	}
	for _, c := range "-._~" {
		t[c] = pathEncode | queryEncode | userEncode
	}
	for _, c := range "!$'()*,:@[]" {
		t[c] = pathEncode | queryEncode
	}
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}

const upperHex = "0123456789ABCDEF"

// normPercent applies rule 6 to s for the byte class class. It returns s
// itself when nothing changes.
func normPercent(s string, class uint8) string {
	// Find the first byte that needs a change.
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if encodeTable[c]&class != 0 {
			break
		}
		if c == '%' {
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				break
			}
			b := unhex(s[i+1])<<4 | unhex(s[i+2])
			if decodeTable[b]&class != 0 || s[i+1] >= 'a' || s[i+2] >= 'a' {
				break
			}
			i += 2
		}
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				d := unhex(s[i+1])<<4 | unhex(s[i+2])
				if decodeTable[d]&class != 0 {
					b.WriteByte(d)
				} else {
					b.WriteByte('%')
					b.WriteByte(upperHex[d>>4])
					b.WriteByte(upperHex[d&15])
				}
				i += 2
			} else {
				b.WriteString("%25")
			}
		case encodeTable[c]&class != 0:
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// removeDotSegments implements RFC 3986 §5.2.4 for a path that is empty or
// starts with '/'. It returns p itself when p has no dot segments.
func removeDotSegments(p string) string {
	if !hasDotSegment(p) {
		return p
	}
	segs := strings.Split(p[1:], "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, s)
			continue
		}
		if last {
			out = append(out, "")
		}
	}
	return "/" + strings.Join(out, "/")
}

func hasDotSegment(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] != '.' || (i > 0 && p[i-1] != '/') {
			continue
		}
		j := i + 1
		if j < len(p) && p[j] == '.' {
			j++
		}
		if j == len(p) || p[j] == '/' {
			return true
		}
	}
	return false
}
