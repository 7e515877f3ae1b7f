package frontier

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/politecrawl/polite/internal/urlnorm"
)

// Scope reports whether u (normalized) belongs to the crawl. Out-of-scope
// URLs are reported by Add as OutOfScope and never queued.
type Scope func(u *url.URL) bool

// SameSite returns the Scope of startURL's host and its www/apex twin
// (shop.example <-> www.shop.example, same port). There is no twin for IP
// addresses, for hosts that are themselves public suffixes, or for other
// subdomains (blog.shop.example has none).
func SameSite(startURL string) (Scope, error) {
	host, err := startHost(startURL)
	if err != nil {
		return nil, err
	}
	twin := Twin(host)
	return func(u *url.URL) bool {
		h, err := urlnorm.HostPort(u.Scheme, u.Host)
		return err == nil && (h == host || (twin != "" && h == twin))
	}, nil
}

// SameDomain returns the Scope of startURL's registrable domain (eTLD+1 by
// the public suffix list), any subdomain and port: shop.example covers
// blog.shop.example. For an IP address or a host that is a public suffix it
// is that host only.
func SameDomain(startURL string) (Scope, error) {
	host, err := startHost(startURL)
	if err != nil {
		return nil, err
	}
	domain := registrable(stripPort(host))
	return func(u *url.URL) bool {
		h, err := urlnorm.HostPort(u.Scheme, u.Host)
		if err != nil {
			return false
		}
		h = stripPort(h)
		if domain == "" {
			return h == stripPort(host)
		}
		return h == domain || strings.HasSuffix(h, "."+domain)
	}, nil
}

func startHost(startURL string) (string, error) {
	n, err := urlnorm.Normalize(startURL)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidURL, err)
	}
	return urlnorm.Host(n), nil
}

// Twin returns the www/apex twin of a normalized host[:port]: "www." added
// to a registrable domain, or removed when what remains is one. It returns
// "" for IP addresses, public suffixes and other subdomains.
func Twin(hostport string) string {
	host, port := hostport, ""
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.HasSuffix(hostport, "]") {
		host, port = hostport[:i], hostport[i:]
	}
	if strings.HasPrefix(host, "[") {
		return ""
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return ""
	}
	if apex, ok := strings.CutPrefix(host, "www."); ok {
		if registrable(apex) == apex {
			return apex + port
		}
		return ""
	}
	if registrable(host) == host {
		return "www." + host + port
	}
	return ""
}

// registrable returns host's eTLD+1, or "" for IPs and public suffixes.
func registrable(host string) string {
	if strings.HasPrefix(host, "[") {
		return ""
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return ""
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(strings.TrimSuffix(host, "."))
	if err != nil {
		return ""
	}
	return d
}

func stripPort(hostport string) string {
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.HasSuffix(hostport, "]") {
		return hostport[:i]
	}
	return hostport
}
