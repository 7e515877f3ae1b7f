package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/idna"
)

// ErrForbiddenAddress is the cause of every refusal by a [Guard]: the URL's
// host is, resolves to, or connected to an internal address.
var ErrForbiddenAddress = errors.New("refused: internal address")

// AddressError is a refusal by a [Guard]: which URL (when known), the host
// as written, the internal address it is, resolved or was mapped to, and
// which range that address is in. It matches ErrForbiddenAddress.
type AddressError struct {
	URL    string     // the URL refused; "" at dial time (the *Error around it names it)
	Host   string     // the host as the URL or the dial named it
	Addr   netip.Addr // the address refused; invalid for a name refused as such (localhost)
	Reason string     // e.g. "a loopback address (127.0.0.0/8, ::1)"
}

// Error names the URL (or host), the address and the reason.
func (e *AddressError) Error() string {
	var b strings.Builder
	b.WriteString("refused: ")
	if e.URL != "" {
		b.WriteString(e.URL)
		b.WriteString(": ")
	}
	switch {
	case !e.Addr.IsValid():
		fmt.Fprintf(&b, "host %q is %s", e.Host, e.Reason)
	case e.Host != "" && e.Host != e.Addr.String():
		fmt.Fprintf(&b, "%s is %s, %s", e.Host, e.Addr, e.Reason)
	default:
		fmt.Fprintf(&b, "%s is %s", e.Addr, e.Reason)
	}
	b.WriteString(" (internal addresses are not fetched)")
	return b.String()
}

// Unwrap returns ErrForbiddenAddress.
func (e *AddressError) Unwrap() error { return ErrForbiddenAddress }

// Guard refuses connections to internal addresses, for crawlers that fetch
// URLs typed by strangers (a free checking tool, a webhook target): it is
// the defence against server-side request forgery. The zero value refuses
// every range of [InternalReason] and allows nothing else; set it as
// Client.Guard.
//
// The enforcement is at dial time, on the address actually connected:
// [Guard.NewTransport]'s dialer checks every address in net.Dialer.Control,
// after DNS resolution and before connect(2), so a name resolving to
// 10.0.0.1, a DNS answer that changes between a check and the connect
// (rebinding), a -resolve mapping and every redirect hop are all caught,
// and a refused address never sees a packet. Before that, [Guard.CheckURL]
// refuses without DNS the host spellings that are internal whatever DNS
// says: localhost and *.localhost in any case or with a trailing dot, IP
// literals in any form a browser reads (127.1, 0x7f000001, 2130706433,
// [::ffff:7f00:1]) and their Unicode disguises (ⅼocalhost, full-width or
// circled digits, the ideographic full stop), mapped as a browser maps
// them (UTS #46).
//
// Proxies: the dialer of NewTransport connects directly and ignores
// HTTP_PROXY/HTTPS_PROXY, because a proxy resolves and connects to the
// target itself, where no dial-time check of ours can see. Set Proxy to
// use one anyway: the check then applies to the proxy's address (allow it
// explicitly if it is internal) and only CheckURL to the target's name;
// the proxy must refuse internal targets itself.
type Guard struct {
	// Allow lists address ranges let through anyway: for tests against
	// loopback servers (netip.MustParsePrefix("127.0.0.1/32")), or an
	// internal service the crawler is meant to reach. An IPv4-mapped
	// address is matched as the IPv4 address it carries.
	Allow []netip.Prefix
	// AllowAddrPorts lists exact addresses with ports let through anyway:
	// one test server, not every service on loopback.
	AllowAddrPorts []netip.AddrPort
	// Resolve is the -resolve mapping NewTransport dials with; CheckURL
	// judges a mapped host by the address it is mapped to.
	Resolve Resolve
	// Proxy, when set, is the proxy of NewTransport's transport (see the
	// type's doc); nil means no proxy, whatever the environment says.
	Proxy func(*http.Request) (*url.URL, error)
	// Resolver is the DNS resolver of NewTransport's dialer (a resolver
	// of the program's choice); nil means net.DefaultResolver. Whatever it
	// answers, the address connected is what Control checks.
	Resolver *net.Resolver
	// AlsoControl, when set, runs in the dialer's Control after the
	// guard's own check has passed, on the address about to be connected:
	// a program's extra rule (only port 443, say) or a test's recorder of
	// every connection attempt. It can refuse more, never less: addresses
	// the guard refuses never reach it.
	AlsoControl func(network, address string, c syscall.RawConn) error
}

// allowed reports whether ap is on the allow-lists.
func (g *Guard) allowed(ap netip.AddrPort) bool {
	a := ap.Addr().Unmap().WithZone("")
	for _, p := range g.Allow {
		if p.Contains(a) {
			return true
		}
	}
	for _, x := range g.AllowAddrPorts {
		if x.Port() == ap.Port() && x.Addr().Unmap() == a {
			return true
		}
	}
	return false
}

// CheckAddr refuses ap, an address about to be connected, when it is
// internal and not allowed; host (may be "") names it in the error. A nil
// Guard refuses nothing, as a nil Client.Guard does.
func (g *Guard) CheckAddr(host string, ap netip.AddrPort) error {
	if g == nil {
		return nil
	}
	if r := InternalReason(ap.Addr()); r != "" && !g.allowed(ap) {
		return &AddressError{Host: host, Addr: ap.Addr().Unmap().WithZone(""), Reason: r}
	}
	return nil
}

// Control is a net.Dialer Control function: it checks the address being
// connected, after resolution and before connect(2).
// AlsoControl, when set, runs after the guard's check passes.
func (g *Guard) Control(network, address string, c syscall.RawConn) error {
	return g.control("", network, address, c)
}

func (g *Guard) control(host, network, address string, c syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &AddressError{Host: host, Reason: fmt.Sprintf("not a dialable address (%q)", address)}
	}
	if err := g.CheckAddr(host, ap); err != nil {
		return err
	}
	if g.AlsoControl != nil {
		return g.AlsoControl(network, address, c)
	}
	return nil
}

// CheckURL refuses, before any DNS lookup or connection, a URL whose host
// is internal whatever DNS says (see the type's doc), or is mapped by
// Resolve to an internal address. A name that needs DNS passes here: the
// dial-time check decides. The error is an *AddressError naming rawURL.
// A nil Guard refuses nothing.
func (g *Guard) CheckURL(rawURL string) error {
	if g == nil {
		return nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil // not a URL: the fetch reports it (ErrBadURL)
	}
	if e := g.checkURL(u, rawURL); e != nil {
		return e
	}
	return nil
}

// CheckURLResolved is CheckURL followed, for a host that needs DNS, by a
// lookup with Resolver: a URL whose name resolves to an internal address
// is refused now, with an *AddressError naming the URL, the name and the
// address. It is for refusing early and clearly (a form that takes a URL
// to track, a card that says why); the dial-time check still decides
// every connection, since DNS may answer differently then. A lookup that
// fails refuses nothing: the fetch reports it. A nil Guard refuses
// nothing.
func (g *Guard) CheckURLResolved(ctx context.Context, rawURL string) error {
	if g == nil {
		return nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil // not a URL: the fetch reports it (ErrBadURL)
	}
	if e := g.checkURL(u, rawURL); e != nil {
		return e
	}
	host, port := canonicalHost(u.Hostname()), u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	if _, ok := parseHostIP(host); ok || host == "" {
		return nil // an address: CheckURL judged it
	}
	if len(g.Resolve) > 0 && g.Resolve.Addr(net.JoinHostPort(host, port)) != net.JoinHostPort(host, port) {
		return nil // mapped: CheckURL judged the address it is mapped to
	}
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := r.LookupNetIP(lctx, "ip", host)
	if err != nil {
		return nil
	}
	pn, _ := strconv.ParseUint(port, 10, 16)
	for _, a := range addrs {
		if err := g.CheckAddr(u.Hostname(), netip.AddrPortFrom(a, uint16(pn))); err != nil {
			e := err.(*AddressError)
			e.URL = rawURL
			return e
		}
	}
	return nil
}

func (g *Guard) checkURL(u *url.URL, rawURL string) *AddressError {
	e := g.checkHostPort(u.Scheme, u.Host)
	if e != nil {
		e.URL = rawURL
	}
	return e
}

// hostIDNA maps a host as a browser does before resolving it.
var hostIDNA = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.StrictDomainName(false))

// checkHostPort is CheckURL for the host[:port] of a URL with scheme.
func (g *Guard) checkHostPort(scheme, hostport string) *AddressError {
	rawHost, port := hostport, ""
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		rawHost, port = h, p
	}
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	pn, _ := strconv.ParseUint(port, 10, 16)
	host := canonicalHost(rawHost)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		if g.allowed(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(pn))) {
			return nil
		}
		return &AddressError{Host: rawHost, Reason: "a localhost name (always loopback, RFC 6761)"}
	}
	if a, ok := parseHostIP(host); ok {
		if err := g.CheckAddr(rawHost, netip.AddrPortFrom(a, uint16(pn))); err != nil {
			return err.(*AddressError)
		}
	}
	if len(g.Resolve) > 0 {
		to := g.Resolve.Addr(net.JoinHostPort(host, port))
		if to != net.JoinHostPort(host, port) {
			if ap, err := netip.ParseAddrPort(to); err == nil {
				if err := g.CheckAddr(rawHost, ap); err != nil {
					e := err.(*AddressError)
					e.Reason += ", by the resolve mapping"
					return e
				}
			}
		}
	}
	return nil
}

// canonicalHost is the host a browser would look up: percent-decoded,
// UTS #46-mapped (full-width and circled digits, ⅼ, 。), lower case, with
// no trailing dots or brackets.
func canonicalHost(h string) string {
	if u, err := url.PathUnescape(h); err == nil {
		h = u
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if m, err := hostIDNA.ToASCII(h); err == nil || m != "" {
		h = m
	}
	h = strings.ToLower(h)
	for strings.HasSuffix(h, ".") && len(h) > 1 {
		h = strings.TrimSuffix(h, ".")
	}
	return h
}

// parseHostIP reads host as an IP address the way a browser (the WHATWG
// URL host parser) and inet_aton do: an IPv6 literal, or an IPv4 address
// of one to four parts, each decimal, octal (leading 0) or hex (0x), the
// last filling the remaining bytes (127.1, 0x7f000001, 2130706433).
func parseHostIP(host string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a, true
	}
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := ipv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// ipv4Number parses one part of an IPv4 host as WHATWG does.
func ipv4Number(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		p, base = p[2:], 16
		if p == "" {
			return 0, true
		}
	case len(p) >= 2 && p[0] == '0':
		p, base = p[1:], 8
	}
	n, err := strconv.ParseUint(p, base, 64)
	if err != nil || n > 1<<32-1 {
		return 0, false
	}
	return n, true
}

// internalRange is one range of addresses a Guard refuses.
type internalRange struct {
	p      netip.Prefix
	reason string
	embed  int // >= 0: judge the IPv4 address at this byte offset instead
}

var internalRanges = func() []internalRange {
	r := func(p, reason string, embed int) internalRange {
		return internalRange{netip.MustParsePrefix(p), reason, embed}
	}
	return []internalRange{
		r("255.255.255.255/32", "the broadcast address", -1),
		r("0.0.0.0/8", "an unspecified address (0.0.0.0/8: this host)", -1),
		r("10.0.0.0/8", "a private address (10.0.0.0/8)", -1),
		r("100.64.0.0/10", "a carrier-grade NAT address (100.64.0.0/10)", -1),
		r("127.0.0.0/8", "a loopback address (127.0.0.0/8)", -1),
		r("169.254.0.0/16", "a link-local address (169.254.0.0/16: cloud metadata lives here)", -1),
		r("172.16.0.0/12", "a private address (172.16.0.0/12)", -1),
		r("192.0.0.0/24", "an IETF protocol address (192.0.0.0/24)", -1),
		r("192.168.0.0/16", "a private address (192.168.0.0/16)", -1),
		r("198.18.0.0/15", "a benchmarking address (198.18.0.0/15)", -1),
		r("224.0.0.0/4", "a multicast address (224.0.0.0/4)", -1),
		r("240.0.0.0/4", "a reserved address (240.0.0.0/4)", -1),
		r("::/128", "an unspecified address (::)", -1),
		r("::1/128", "a loopback address (::1)", -1),
		r("::ffff:0:0/96", "", 12), // IPv4-mapped: judged by the IPv4 address
		r("::/96", "an IPv4-compatible address (::/96, deprecated)", -1),
		r("64:ff9b::/96", "", 12), // NAT64 (RFC 6052): the IPv4 address behind it
		r("64:ff9b:1::/48", "a local-use NAT64 address (64:ff9b:1::/48)", -1),
		r("100::/64", "a discard-only address (100::/64)", -1),
		r("2002::/16", "", 2), // 6to4: the IPv4 address of the relay's target
		r("fc00::/7", "a unique local address (fc00::/7)", -1),
		r("fe80::/10", "a link-local address (fe80::/10)", -1),
		r("fec0::/10", "a site-local address (fec0::/10, deprecated)", -1),
		r("ff00::/8", "a multicast address (ff00::/8)", -1),
	}
}()

// InternalReason says why a is an address a crawler fetching strangers'
// URLs must not connect to — loopback, private, link-local, CGNAT,
// multicast, unspecified, broadcast or reserved, IPv6 unique-local and
// link-local, and the IPv4-mapped, NAT64 and 6to4 forms of each — or
// returns "" for a public address. An invalid address is internal.
func InternalReason(a netip.Addr) string {
	if !a.IsValid() {
		return "not an IP address"
	}
	a = a.WithZone("")
	for _, r := range internalRanges {
		if !r.p.Contains(a) {
			continue
		}
		if r.embed < 0 {
			return r.reason
		}
		b := a.As16()
		v4 := netip.AddrFrom4([4]byte(b[r.embed : r.embed+4]))
		if reason := InternalReason(v4); reason != "" {
			return reason + ", as " + a.String()
		}
		return ""
	}
	return ""
}

// NewTransport returns the base transport with the guard in its dialer:
// NewBaseTransport's settings, Resolve applied, every address connected
// checked in Control (see the type's doc), and Proxy, not the
// environment, as its proxy.
func (g *Guard) NewTransport() *http.Transport {
	m := NewBaseTransport(nil) // for the settings; its proxy and dialer are replaced
	resolve := g.Resolve
	m.Proxy = g.Proxy
	m.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, _ := net.SplitHostPort(addr)
		d := &net.Dialer{
			Timeout:   30 * time.Second,
			KeepAlive: 30 * time.Second,
			Resolver:  g.Resolver,
			Control: func(network, address string, c syscall.RawConn) error {
				return g.control(host, network, address, c)
			},
		}
		return d.DialContext(ctx, network, mapAddr(resolve, addr))
	}
	return m
}

// guardedTransport is the base of a Client with a Guard: every connection
// a request gets is checked once more, on its remote address, before the
// request is written. It is what keeps the guard on when Client.Transport
// was not built by Guard.NewTransport (then a refused address has seen a
// TCP handshake, never a request).
type guardedTransport struct {
	base  http.RoundTripper
	guard *Guard
}

func (t *guardedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var mu sync.Mutex
	var refused error
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		ap, err := netip.ParseAddrPort(info.Conn.RemoteAddr().String())
		if err != nil {
			return // not an IP connection (a unix socket in a test): nothing to judge
		}
		if err := t.guard.CheckAddr(req.URL.Hostname(), ap); err != nil {
			mu.Lock()
			refused = err
			mu.Unlock()
			_ = info.Conn.Close() // before a byte of the request is written
		}
	}}
	resp, err := t.base.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	mu.Lock()
	defer mu.Unlock()
	if refused != nil {
		if resp != nil {
			_ = resp.Body.Close()
		}
		return nil, refused
	}
	return resp, err
}

func (t *guardedTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// guardBase returns the base transport of a client with guard g: base
// (nil: a new g.NewTransport()) with every connection checked again.
func guardBase(g *Guard, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = g.NewTransport()
	}
	return &guardedTransport{base: base, guard: g}
}
