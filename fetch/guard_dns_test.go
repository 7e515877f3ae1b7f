package fetch_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/dns/dnsmessage"

	"github.com/politecrawl/polite/fetch"
)

// dnsServer is a loopback DNS server answering every A query with addr
// (and AAAA queries with no record), counting queries: a name server
// that rebinds a public-looking name to an internal address.
func dnsServer(t *testing.T, addr netip.Addr) (*net.Resolver, *atomic.Int64) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = pc.Close() })
	var queries atomic.Int64
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			queries.Add(1)
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
			b.EnableCompression()
			_ = b.StartQuestions()
			_ = b.Question(q)
			_ = b.StartAnswers()
			rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0}
			if q.Type == dnsmessage.TypeA && addr.Is4() {
				_ = b.AResource(rh, dnsmessage.AResource{A: addr.As4()})
			}
			if q.Type == dnsmessage.TypeAAAA && addr.Is6() {
				_ = b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: addr.As16()})
			}
			msg, err := b.Finish()
			if err == nil {
				_, _ = pc.WriteTo(msg, from)
			}
		}
	}()
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
	return r, &queries
}

// TestGuardDNSResolvesToLoopback: a name that DNS resolves to loopback
// passes the name check (nothing about it is internal) and is refused by
// the dialer on the address DNS gave, before connect.
func TestGuardDNSResolvesToLoopback(t *testing.T) {
	srv, hits, conns := countingServerConns(t)
	port := serverPort(t, srv)
	resolver, queries := dnsServer(t, netip.MustParseAddr("127.0.0.1"))

	g := &fetch.Guard{Resolver: resolver}
	raw := "http://rebind.example:" + port + "/secret"
	require.NoError(t, g.CheckURL(raw), "the name alone is not internal")
	c := &fetch.Client{Guard: g}
	_, err := c.Get(context.Background(), raw)
	ae := requireRefused(t, err, raw)
	assert.Equal(t, netip.MustParseAddr("127.0.0.1"), ae.Addr)
	assert.NotZero(t, queries.Load(), "the name was not resolved through the test's DNS server")
	assert.Zero(t, hits.Load())
	assert.Zero(t, conns.Load(), "the refused address saw a connection")

	// With that address allowed, the same fetch goes through: the test can fail.
	g2 := &fetch.Guard{Resolver: resolver, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	_, err = (&fetch.Client{Guard: g2}).Get(context.Background(), raw)
	require.NoError(t, err)
	assert.NotZero(t, hits.Load())
}

// TestGuardCheckURLResolved: a name that DNS resolves to an internal
// address passes CheckURL (nothing in the name is internal) and is refused
// by CheckURLResolved, naming the URL, the name and the address, without
// a connection; a name resolving to a public address passes, and so does
// one that does not resolve (the fetch reports that).
func TestGuardCheckURLResolved(t *testing.T) {
	resolver, queries := dnsServer(t, netip.MustParseAddr("10.0.0.1"))
	g := &fetch.Guard{Resolver: resolver}
	raw := "http://intranet.example/admin"
	require.NoError(t, g.CheckURL(raw))
	err := g.CheckURLResolved(context.Background(), raw)
	ae := requireRefused(t, err, raw)
	assert.Equal(t, "intranet.example", ae.Host)
	assert.Equal(t, netip.MustParseAddr("10.0.0.1"), ae.Addr)
	assert.NotZero(t, queries.Load())

	// Refused by name or literal before any lookup, as CheckURL does.
	before := queries.Load()
	requireRefused(t, g.CheckURLResolved(context.Background(), "http://127.1/"), "http://127.1/")
	requireRefused(t, g.CheckURLResolved(context.Background(), "http://localhost./"), "http://localhost./")
	assert.Equal(t, before, queries.Load(), "no DNS for what the name alone decides")

	public, _ := dnsServer(t, netip.MustParseAddr("93.184.216.34"))
	assert.NoError(t, (&fetch.Guard{Resolver: public}).CheckURLResolved(context.Background(), raw))
	none := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.DNSError{Err: "no DNS here", IsNotFound: true}
	}}
	assert.NoError(t, (&fetch.Guard{Resolver: none}).CheckURLResolved(context.Background(), raw))
	var nilGuard *fetch.Guard
	assert.NoError(t, nilGuard.CheckURLResolved(context.Background(), "http://127.0.0.1/"))
}

// TestGuardAlsoControl: AlsoControl sees every address the guard lets
// through and may refuse it too; an address the guard refuses never
// reaches it.
func TestGuardAlsoControl(t *testing.T) {
	srv, hits, conns := countingServerConns(t)
	port := serverPort(t, srv)
	var seen []string
	refuse := false
	g := &fetch.Guard{
		AllowAddrPorts: []netip.AddrPort{netip.MustParseAddrPort(srv.Listener.Addr().String())},
		Resolve:        fetch.Resolve{"ok.example": "127.0.0.1", "meta.example": "169.254.169.254"},
		AlsoControl: func(_, address string, _ syscall.RawConn) error {
			seen = append(seen, address)
			if refuse {
				return errors.New("test: refused by AlsoControl")
			}
			return nil
		},
	}
	hc := &http.Client{Transport: g.NewTransport()}
	resp, err := hc.Get("http://ok.example:" + port + "/")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, []string{srv.Listener.Addr().String()}, seen)
	assert.Equal(t, int64(1), hits.Load())

	_, err = hc.Get("http://meta.example/latest/meta-data/")
	requireRefused(t, err, "")
	assert.Len(t, seen, 1, "a refused address reached AlsoControl")

	refuse = true
	hc.CloseIdleConnections()
	_, err = hc.Get("http://ok.example:" + port + "/")
	require.ErrorContains(t, err, "refused by AlsoControl")
	assert.Equal(t, int64(1), hits.Load())
	assert.Equal(t, int64(1), conns.Load(), "AlsoControl refused before connect")
}
