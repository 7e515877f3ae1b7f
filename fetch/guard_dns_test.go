package fetch_test

import (
	"context"
	"net"
	"net/netip"
	"sync/atomic"
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
