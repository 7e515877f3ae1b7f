// Package guard is the monitor's SSRF guard: it refuses to connect to
// loopback, private, link-local and other internal addresses, checked at
// dial time on the address actually being connected, and explains refusals
// before a fetch so the CLI and the free tool's card can say why.
//
// The guard is on unless New is told allowPrivate (the -allow-private flag):
// that is the one switch, set in one place. Test hooks (TestHooks) can
// replace the resolver, add a dial check and let exact loopback addresses of
// a test's own servers through; none of them can turn the guard off. The
// package never fetches, stores or prints anything; it will give way to the
// library's guard in fetch once that exists.
package guard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/http/httpproxy"

	"github.com/politecrawl/polite/fetch"
)

// How it works. Every connection the base transport opens is checked at
// dial time, in the net.Dialer's Control hook, on the address actually
// being connected: after DNS resolution (so a name that resolves to
// 10.0.0.1, or re-resolves to it between a check and the connect, "DNS
// rebinding", is caught) and for every redirect hop (each hop dials anew).
// Control runs after the socket is created and before connect(2): a refused
// address never sees a packet.
//
// Name checks before the fetch (CheckHost, CheckURL) only make the refusal
// clearer and earlier (track refuses at once, the free tool's card says
// why); the dial hook is what enforces it.
//
// With an HTTP proxy (HTTP_PROXY/HTTPS_PROXY) the connection goes to the
// proxy, which resolves the target: the dial hook then checks the proxy's
// address (a proxy on loopback needs -allow-private) and only CheckHost sees
// the target's name.

// ErrForbidden is the cause of every refusal, for errors.Is.
var ErrForbidden = errors.New("refused: internal address")

// ForbiddenError is a refused target: the host, the address it resolved to
// and which range that address is in.
type ForbiddenError struct {
	Host   string
	Addr   netip.Addr
	Reason string
}

// Error says which host, which address and which range.
func (e *ForbiddenError) Error() string {
	if e.Host != "" && e.Host != e.Addr.String() {
		return fmt.Sprintf("refused: %s resolves to %s, %s (the monitor does not fetch internal addresses; -allow-private turns this off)", e.Host, e.Addr, e.Reason)
	}
	return fmt.Sprintf("refused: %s is %s (the monitor does not fetch internal addresses; -allow-private turns this off)", e.Addr, e.Reason)
}

// Unwrap makes every ForbiddenError an ErrForbidden.
func (e *ForbiddenError) Unwrap() error { return ErrForbidden }

// Cause digs the guard's refusal out of a wrapped error chain, for a
// message that starts with it; other errors come back as they are.
func Cause(err error) error {
	var fe *ForbiddenError
	if errors.As(err, &fe) {
		return fe
	}
	return err
}

var (
	cgnat     = netip.MustParsePrefix("100.64.0.0/10")
	ipv4Bcast = netip.MustParseAddr("255.255.255.255")
	thisNet   = netip.MustParsePrefix("0.0.0.0/8")
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	loopback4 = netip.MustParseAddr("127.0.0.1")
)

// Reason says why a is not a public address the monitor may connect to, or
// "" when it is. IPv4-mapped and NAT64 IPv6 forms are judged by the IPv4
// address they carry.
func Reason(a netip.Addr) string {
	a = a.Unmap()
	if nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	switch {
	case !a.IsValid():
		return "not an IP address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsUnspecified() || (a.Is4() && thisNet.Contains(a)):
		return "an unspecified address"
	case a.IsPrivate():
		return "a private address (RFC 1918 / fc00::/7)"
	case a.IsLinkLocalUnicast():
		return "a link-local address (169.254.0.0/16, fe80::/10: cloud metadata lives here)"
	case a.Is4() && cgnat.Contains(a):
		return "a carrier-grade NAT address (100.64.0.0/10)"
	case a.IsMulticast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast():
		return "a multicast address"
	case a == ipv4Bcast:
		return "the broadcast address"
	}
	return ""
}

// TestHooks are what a test may add to a guard. None of them can turn it
// off: Lookup changes where a name points (every answer is still checked),
// Control adds a check after the guard's, and Exempt lets through only the
// exact loopback address:port pairs listed (a test's own servers).
type TestHooks struct {
	// Lookup resolves a host name instead of the system resolver.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// Control runs in the dialer's Control hook after the guard, on the
	// address about to be connected.
	Control func(network, address string, c syscall.RawConn) error
	// Exempt lists exact loopback addresses the guard passes; anything
	// else in it is ignored.
	Exempt []netip.AddrPort
}

// Guard is the SSRF policy of one monitor process.
type Guard struct {
	allowPrivate bool
	mapped       fetch.Resolve
	hooks        TestHooks
}

// New returns the guard of one process. It refuses internal addresses
// unless allowPrivate, which only the -allow-private flag sets. resolve is
// the -resolve mapping (HOST:PORT to ADDR): the guard checks the address a
// name is mapped to, as the dialer connects to it.
func New(allowPrivate bool, resolve map[string]string) *Guard {
	m := fetch.Resolve{}
	for k, v := range resolve {
		m[strings.ToLower(k)] = v
	}
	return &Guard{allowPrivate: allowPrivate, mapped: m}
}

// WithTestHooks returns a copy of g with h added; see TestHooks.
func (g *Guard) WithTestHooks(h TestHooks) *Guard {
	c := *g
	c.hooks = h
	return &c
}

// AllowsPrivate reports whether -allow-private turned the guard off.
func (g *Guard) AllowsPrivate() bool { return g.allowPrivate }

func (g *Guard) exempt(ap netip.AddrPort) bool {
	for _, e := range g.hooks.Exempt {
		if e.Addr().Unmap().IsLoopback() && e.Addr().Unmap() == ap.Addr().Unmap() && e.Port() == ap.Port() {
			return true
		}
	}
	return false
}

// isLocalhostName reports whether host is a name that means this machine
// whatever DNS says (RFC 6761: localhost and every name under .localhost).
func isLocalhostName(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

func (g *Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{a}, nil
	}
	if isLocalhostName(host) {
		// Never asked of a resolver that might say otherwise.
		return []netip.Addr{loopback4, netip.IPv6Loopback()}, nil
	}
	if g.hooks.Lookup != nil {
		return g.hooks.Lookup(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// checkAddr is the dial-time check of one address.
func (g *Guard) checkAddr(host string, ap netip.AddrPort) error {
	if g.allowPrivate || g.exempt(ap) {
		return nil
	}
	if r := Reason(ap.Addr()); r != "" {
		return &ForbiddenError{Host: host, Addr: ap.Addr().Unmap(), Reason: r}
	}
	return nil
}

// CheckHost refuses a host:port that resolves to an internal address. A
// host that does not resolve is not refused here (the fetch fails on its
// own, and the dial hook still checks whatever it connects to).
func (g *Guard) CheckHost(ctx context.Context, hostport string) error {
	if g.allowPrivate {
		return nil
	}
	name := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		name = h
	}
	hostport = g.mapped.Addr(hostport)
	host, port := hostport, "0"
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		host, port = h, p
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return nil
	}
	pn, _ := strconv.ParseUint(port, 10, 16)
	for _, a := range addrs {
		if err := g.checkAddr(name, netip.AddrPortFrom(a, uint16(pn))); err != nil {
			return err
		}
	}
	return nil
}

// CheckURL is CheckHost for the host of an absolute URL.
func (g *Guard) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return nil // the fetch reports bad URLs
	}
	hp := u.Host
	if u.Port() == "" {
		if u.Scheme == "https" {
			hp = net.JoinHostPort(u.Hostname(), "443")
		} else {
			hp = net.JoinHostPort(u.Hostname(), "80")
		}
	}
	return g.CheckHost(ctx, hp)
}

// Transport is fetch.NewBaseTransport with the guard in the dialer:
// proxies from the environment, -resolve, and every connection checked on
// the address it connects to.
func (g *Guard) Transport() *http.Transport {
	proxy := httpproxy.FromEnvironment().ProxyFunc()
	return &http.Transport{
		Proxy: func(req *http.Request) (*url.URL, error) { return proxy(req.URL) },
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return g.Dial(ctx, network, g.mapped.Addr(addr))
		},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// Dial resolves addr's host itself (with the guard's resolver) and connects
// to each address in turn, every one checked in Control just before connect.
func (g *Guard) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	d := &net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
		Control: func(network, address string, c syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("refused: cannot parse dial address %q", address)
			}
			if err := g.checkAddr(host, ap); err != nil {
				return err
			}
			if g.hooks.Control != nil {
				return g.hooks.Control(network, address, c)
			}
			return nil
		},
	}
	var first error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return c, nil
		}
		if first == nil || errors.Is(err, ErrForbidden) {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}
