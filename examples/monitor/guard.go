package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/http/httpproxy"

	"github.com/politecrawl/polite/fetch"
)

// The SSRF guard. The monitor fetches URLs that people type (the free tool,
// track) and URLs that sites name in redirects, from a machine that may sit
// next to databases, admin panels and a cloud metadata service. Every
// connection the base transport opens is checked at dial time, in the
// net.Dialer's Control hook, on the address actually being connected: after
// DNS resolution (so a name that resolves to 10.0.0.1, or re-resolves to it
// between a check and the connect, "DNS rebinding", is caught) and for every
// redirect hop (each hop dials anew). Control runs after the socket is
// created and before connect(2): a refused address never sees a packet.
// -allow-private turns the guard off (tests against loopback sites, the
// local demo).
//
// Name checks before the fetch (checkHost) only make the refusal message
// clearer and earlier (track refuses at once, the free tool's card says why);
// the dial hook is what enforces it.
//
// With an HTTP proxy (HTTP_PROXY/HTTPS_PROXY) the connection goes to the
// proxy, which resolves the target: the dial hook then checks the proxy's
// address (a proxy on loopback needs -allow-private) and only checkHost sees
// the target's name.

// errForbiddenAddress is the cause of every refusal, for errors.Is.
var errForbiddenAddress = errors.New("refused: internal address")

// forbiddenError is a refused target: the host, the address it resolved to
// and which range that address is in.
type forbiddenError struct {
	Host   string
	Addr   netip.Addr
	Reason string
}

func (e *forbiddenError) Error() string {
	if e.Host != "" && e.Host != e.Addr.String() {
		return fmt.Sprintf("refused: %s resolves to %s, %s (the monitor does not fetch internal addresses; -allow-private turns this off)", e.Host, e.Addr, e.Reason)
	}
	return fmt.Sprintf("refused: %s is %s (the monitor does not fetch internal addresses; -allow-private turns this off)", e.Addr, e.Reason)
}

func (e *forbiddenError) Unwrap() error { return errForbiddenAddress }

var (
	cgnat     = netip.MustParsePrefix("100.64.0.0/10")
	ipv4Bcast = netip.MustParseAddr("255.255.255.255")
	thisNet   = netip.MustParsePrefix("0.0.0.0/8")
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
)

// forbiddenReason says why a is not a public address the monitor may
// connect to, or "" when it is. IPv4-mapped and NAT64 IPv6 forms are judged
// by the IPv4 address they carry.
func forbiddenReason(a netip.Addr) string {
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

// guard is the SSRF policy of one monitor process.
type guard struct {
	allowPrivate bool
	// lookup resolves a host name; nil means net.DefaultResolver.
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// exempt, for tests only, lets exact loopback test servers through.
	exempt func(netip.AddrPort) bool
	// mapped is -resolve: the name check looks at the address a name is
	// mapped to, as the dialer will.
	mapped map[string]string
}

func (g *guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{a}, nil
	}
	if g.lookup != nil {
		return g.lookup(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// checkAddr is the dial-time check of one address.
func (g *guard) checkAddr(host string, ap netip.AddrPort) error {
	if g.allowPrivate || (g.exempt != nil && g.exempt(ap)) {
		return nil
	}
	if r := forbiddenReason(ap.Addr()); r != "" {
		return &forbiddenError{Host: host, Addr: ap.Addr().Unmap(), Reason: r}
	}
	return nil
}

// checkHost refuses a URL host that resolves to an internal address. A host
// that does not resolve is not refused here (the fetch will fail on its own,
// and the dial hook still checks whatever it connects to).
func (g *guard) checkHost(ctx context.Context, hostport string) error {
	if g.allowPrivate {
		return nil
	}
	name := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		name = h
	}
	hostport = fetch.Resolve(g.mapped).Addr(hostport)
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
	var pn uint16
	fmt.Sscan(port, &pn)
	for _, a := range addrs {
		if err := g.checkAddr(name, netip.AddrPortFrom(a, pn)); err != nil {
			return err
		}
	}
	return nil
}

// checkURL is checkHost for the host of an absolute URL.
func (g *guard) checkURL(ctx context.Context, raw string) error {
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
	return g.checkHost(ctx, hp)
}

// baseTransport is fetch.NewBaseTransport with the guard in the dialer:
// proxies from the environment, -resolve, and every connection checked on
// the address it connects to. control, when set (tests), runs after the
// guard, on the same address, before connect.
func (g *guard) baseTransport(control func(network, address string, c syscall.RawConn) error) *http.Transport {
	m := g.mapped
	proxy := httpproxy.FromEnvironment().ProxyFunc()
	return &http.Transport{
		Proxy: func(req *http.Request) (*url.URL, error) { return proxy(req.URL) },
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return g.dial(ctx, network, fetch.Resolve(m).Addr(addr), control)
		},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// dial resolves addr's host itself (with the guard's resolver) and connects
// to each address in turn, every one checked in Control just before connect.
func (g *guard) dial(ctx context.Context, network, addr string, control func(network, address string, c syscall.RawConn) error) (net.Conn, error) {
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
			if control != nil {
				return control(network, address, c)
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
		if first == nil || errors.Is(err, errForbiddenAddress) {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}
