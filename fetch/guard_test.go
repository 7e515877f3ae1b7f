package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
)

// countingServer is a loopback server that counts every request it gets.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	srv, n, _ := countingServerConns(t)
	return srv, n
}

// countingServerConns is countingServer that also counts connections
// accepted: a refused address must see no TCP connection at all.
func countingServerConns(t *testing.T) (*httptest.Server, *atomic.Int64, *atomic.Int64) {
	t.Helper()
	var n, conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.URL.Path == "/robots.txt" {
			_, _ = w.Write([]byte("User-agent: *\nAllow: /\n"))
			return
		}
		_, _ = w.Write([]byte("<html><body>secret</body></html>"))
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &n, &conns
}

func serverPort(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	return port
}

func requireRefused(t *testing.T, err error, wantURL string) *fetch.AddressError {
	t.Helper()
	require.Error(t, err, wantURL)
	require.ErrorIs(t, err, fetch.ErrForbiddenAddress, wantURL)
	var ae *fetch.AddressError
	require.ErrorAs(t, err, &ae)
	if wantURL != "" {
		assert.Contains(t, err.Error(), wantURL)
	}
	return ae
}

// TestGuardRefusesLoopbackSpellings: every spelling of loopback (and of
// "this host") is refused by name before DNS or connect, and the loopback
// server behind them sees no request at all, robots.txt included.
func TestGuardRefusesLoopbackSpellings(t *testing.T) {
	srv, hits := countingServer(t)
	port := serverPort(t, srv)
	hosts := []string{
		"127.0.0.1", "127.0.0.2", "[::1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "0.0.0.0", "[::]",
		"localhost", "LOCALHOST", "localhost.", "LocalHost..", "app.localhost",
		"\u217Cocalhost",           // ⅼocalhost, small roman numeral fifty
		"①②⑦.⓪.⓪.①",                // circled digits
		"１２７.０.０.１",                // full-width digits
		"127\u30020\u30020\u30021", // ideographic full stop
		"127.1", "2130706433", "0x7f.1", "0177.0.0.1", "0x7f000001",
		"[64:ff9b::7f00:1]", "[2002:7f00:1::]",
	}
	c := &fetch.Client{Gate: fetch.NoLimits{}, Guard: &fetch.Guard{}}
	for _, h := range hosts {
		raw := "http://" + h + ":" + port + "/secret"
		res, err := c.Get(context.Background(), raw)
		requireRefused(t, err, raw)
		assert.Nil(t, res.Body, raw)
		assert.Zero(t, res.Status, raw)
	}
	assert.Zero(t, hits.Load(), "the loopback server saw a request")
}

// TestGuardAllowList: the allow-list lets exactly what it names through.
func TestGuardAllowList(t *testing.T) {
	srv, hits := countingServer(t)
	other, otherHits := countingServer(t)
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	c := &fetch.Client{Gate: fetch.NoLimits{}, Guard: &fetch.Guard{AllowAddrPorts: []netip.AddrPort{ap}}}
	res, err := c.Get(context.Background(), srv.URL+"/page")
	require.NoError(t, err)
	assert.Equal(t, 200, res.Status)
	assert.Equal(t, int64(2), hits.Load()) // robots.txt and the page

	_, err = c.Get(context.Background(), other.URL+"/page")
	requireRefused(t, err, other.URL+"/page")
	assert.Zero(t, otherHits.Load())

	c2 := &fetch.Client{Gate: fetch.NoLimits{}, Guard: &fetch.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}
	_, err = c2.Get(context.Background(), other.URL+"/page")
	require.NoError(t, err)
}

// TestGuardRedirectHop: an allowed server redirecting to an internal one
// (another loopback port, localhost) is refused at the hop, before the
// target's robots.txt or page is requested.
func TestGuardRedirectHop(t *testing.T) {
	target, targetHits := countingServer(t)
	var redirectTo string
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = w.Write([]byte("User-agent: *\nAllow: /\n"))
			return
		}
		http.Redirect(w, r, redirectTo, http.StatusFound)
	}))
	defer front.Close()
	ap := netip.MustParseAddrPort(front.Listener.Addr().String())
	c := &fetch.Client{Gate: fetch.NoLimits{}, Guard: &fetch.Guard{AllowAddrPorts: []netip.AddrPort{ap}}}
	for _, to := range []string{target.URL + "/secret", "http://localhost:" + serverPort(t, target) + "/secret"} {
		redirectTo = to
		res, err := c.Get(context.Background(), front.URL+"/go")
		requireRefused(t, err, to)
		require.Len(t, res.Redirects, 1)
	}
	assert.Zero(t, targetHits.Load())
}

// TestGuardDialTime: the dialer of Guard.NewTransport refuses on the
// address actually connected, after the name was resolved (here by the
// resolve mapping, as DNS would), before connect: the server never sees a
// connection. CheckURL cannot know where public.example goes; the dialer
// does.
func TestGuardDialTime(t *testing.T) {
	srv, hits, conns := countingServerConns(t)
	port := serverPort(t, srv)
	g := &fetch.Guard{Resolve: fetch.Resolve{"public.example": "127.0.0.1"}}
	hc := &http.Client{Transport: g.NewTransport()}
	_, err := hc.Get("http://public.example:" + port + "/secret")
	ae := requireRefused(t, err, "")
	assert.Equal(t, "public.example", ae.Host)
	assert.Equal(t, netip.MustParseAddr("127.0.0.1"), ae.Addr)
	assert.Contains(t, err.Error(), "public.example is 127.0.0.1, a loopback address")
	assert.Zero(t, hits.Load())
	assert.Zero(t, conns.Load(), "the refused address saw a connection")

	// The same mapping on a Client with that guard is refused by name.
	c := &fetch.Client{Gate: fetch.NoLimits{}, Guard: g}
	_, err = c.Get(context.Background(), "http://public.example:"+port+"/secret")
	requireRefused(t, err, "http://public.example:"+port+"/secret")
	assert.Contains(t, err.Error(), "by the resolve mapping")
	assert.Zero(t, conns.Load())
}

// TestGuardOwnTransportStillGuarded: a Client with a Guard and a Transport
// of its own (a -resolve mapping the guard does not know) still never
// lets a request reach an internal address: the connection's remote
// address is checked before the request is written.
func TestGuardOwnTransportStillGuarded(t *testing.T) {
	srv, hits := countingServer(t)
	port := serverPort(t, srv)
	c := &fetch.Client{
		Guard:     &fetch.Guard{},
		Transport: fetch.NewBaseTransport(map[string]string{"public.example": "127.0.0.1"}),
	}
	_, err := c.Get(context.Background(), "http://public.example:"+port+"/secret")
	requireRefused(t, err, "public.example")
	assert.Zero(t, hits.Load(), "a request reached the loopback server")

	// Without the guard the same client reaches it: the test can fail.
	c2 := &fetch.Client{Gate: fetch.NoLimits{}, Transport: fetch.NewBaseTransport(map[string]string{"public.example": "127.0.0.1"})}
	_, err = c2.Get(context.Background(), "http://public.example:"+port+"/secret")
	require.NoError(t, err)
	assert.NotZero(t, hits.Load())
}

// TestGuardHTTPClientAndRoundTripper: the net/http faces refuse too.
func TestGuardHTTPClientAndRoundTripper(t *testing.T) {
	srv, hits := countingServer(t)
	c := &fetch.Client{Gate: fetch.NoLimits{}, Guard: &fetch.Guard{}}
	_, err := c.HTTPClient().Get(srv.URL + "/x")
	requireRefused(t, err, srv.URL+"/x")
	_, err = c.PoliteTransport().RoundTrip(httptest.NewRequest("GET", srv.URL+"/robots.txt", nil))
	requireRefused(t, err, srv.URL+"/robots.txt")
	assert.Zero(t, hits.Load())
}

// TestGuardIgnoresProxyEnvironment: the guarded transport connects
// directly, so HTTP_PROXY cannot turn the dial-time check into a check of
// the proxy's address; the proxy sees nothing.
func TestGuardIgnoresProxyEnvironment(t *testing.T) {
	target, targetHits := countingServer(t)
	proxy, proxyHits := countingServer(t)
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	ap := netip.MustParseAddrPort(target.Listener.Addr().String())
	g := &fetch.Guard{AllowAddrPorts: []netip.AddrPort{ap}, Resolve: fetch.Resolve{"public.example": ap.String()}}
	hc := &http.Client{Transport: g.NewTransport()}
	resp, err := hc.Get("http://public.example/page")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, int64(1), targetHits.Load())
	assert.Zero(t, proxyHits.Load(), "the guarded transport used HTTP_PROXY")

	// The unguarded base transport does use it: the test can fail.
	hc2 := &http.Client{Transport: fetch.NewBaseTransport(map[string]string{"public.example": ap.String()})}
	resp, err = hc2.Get("http://public.example/page")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, int64(1), proxyHits.Load())
}

func TestInternalReason(t *testing.T) {
	internal := []string{
		"127.0.0.1", "127.255.255.254", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1",
		"169.254.169.254", "100.64.0.1", "100.127.255.255", "0.0.0.0", "0.1.2.3", "255.255.255.255",
		"224.0.0.1", "239.255.255.250", "240.0.0.1", "198.18.0.1", "192.0.0.8",
		"::", "::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::7f00:1",
		"64:ff9b::a00:1", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::8.8.8.8",
		"2002:a00:1::1", "fc00::1", "fd12:3456::1", "fe80::1", "fe80::1%eth0", "fec0::1", "ff02::1", "100::1",
	}
	public := []string{
		"8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0",
		"192.167.255.255", "169.253.0.1", "93.184.215.14", "223.255.255.255",
		"2001:4860:4860::8888", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1",
	}
	for _, s := range internal {
		assert.NotEmpty(t, fetch.InternalReason(netip.MustParseAddr(s)), s)
	}
	for _, s := range public {
		assert.Empty(t, fetch.InternalReason(netip.MustParseAddr(s)), s)
	}
	assert.NotEmpty(t, fetch.InternalReason(netip.Addr{}))
}

// FuzzInternalReason: the IPv4-mapped, NAT64 and 6to4 forms of an IPv4
// address are judged as that address, and whatever the standard library
// calls loopback, private, link-local, multicast or unspecified is
// internal.
func FuzzInternalReason(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "10.1.2.3", "8.8.8.8", "100.64.0.1", "169.254.169.254", "255.255.255.255", "0.0.0.0"} {
		f.Add(netip.MustParseAddr(s).AsSlice(), []byte(nil))
	}
	f.Add([]byte{4}, netip.MustParseAddr("fd00::1").AsSlice())
	f.Fuzz(func(t *testing.T, v4 []byte, v6 []byte) {
		if len(v4) == 4 {
			a := netip.AddrFrom4([4]byte(v4))
			in := fetch.InternalReason(a) != ""
			b := a.As16()
			mapped := netip.AddrFrom16(b)
			var n [16]byte
			copy(n[:], netip.MustParseAddr("64:ff9b::").AsSlice())
			copy(n[12:], v4)
			var s [16]byte
			s[0], s[1] = 0x20, 0x02
			copy(s[2:], v4)
			for _, form := range []netip.Addr{mapped, netip.AddrFrom16(n), netip.AddrFrom16(s)} {
				assert.Equal(t, in, fetch.InternalReason(form) != "", "%s vs %s", a, form)
			}
			checkStd(t, a)
		}
		if len(v6) == 16 {
			checkStd(t, netip.AddrFrom16([16]byte(v6)))
		}
	})
}

func checkStd(t *testing.T, a netip.Addr) {
	u := a.Unmap()
	if u.IsLoopback() || u.IsPrivate() || u.IsLinkLocalUnicast() || u.IsMulticast() || u.IsUnspecified() || u.IsInterfaceLocalMulticast() || u.IsLinkLocalMulticast() {
		assert.NotEmpty(t, fetch.InternalReason(a), a.String())
	}
}

// TestGuardCheckURL: the name check alone, table-driven.
func TestGuardCheckURL(t *testing.T) {
	g := &fetch.Guard{}
	for _, raw := range []string{"http://localhost/", "https://[::ffff:7f00:1]/", "http://0.0.0.0:8080/", "http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/", "http://①②⑦.⓪.⓪.①/"} {
		err := g.CheckURL(raw)
		requireRefused(t, err, raw)
	}
	var off *fetch.Guard
	assert.NoError(t, off.CheckURL("http://localhost/"), "a nil Guard is off")
	for _, raw := range []string{"https://example.com/", "http://8.8.8.8/", "http://localhost.example.com/", "http://127.0.0.1.nip.io.example/", "not a url %zz"} {
		assert.NoError(t, g.CheckURL(raw), raw)
	}
}

// TestGuardInNetNamespace checks private, link-local, CGNAT, NAT64 and
// IPv4-mapped targets inside a network namespace with only lo, so that not
// even a broken guard can send a packet off the machine. The test binary
// runs itself again under `unshare -rn`. Each refusal must be the guard's
// (before connect): in this namespace a connect to 10.0.0.1 would fail
// with "network is unreachable", which the test tells apart.
func TestGuardInNetNamespace(t *testing.T) {
	if os.Getenv("POLITE_GUARD_NETNS") == "1" {
		guardInNamespace(t)
		return
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command("unshare", "-rn", "sh", "-c", `ip link set lo up && exec "$0" "$@"`, exe,
		"-test.run=^TestGuardInNetNamespace$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "POLITE_GUARD_NETNS=1")
	if err := exec.Command("unshare", "-rn", "true").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("unshare -rn is unavailable under CI: %v", err)
		}
		t.Skipf("unshare -rn unavailable (%v): install util-linux and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1)", err)
	}
	out, err := cmd.CombinedOutput()
	t.Logf("in the namespace:\n%s", out)
	require.NoError(t, err)
	require.Contains(t, string(out), "--- PASS: TestGuardInNetNamespace")
}

func guardInNamespace(t *testing.T) {
	ifs, err := net.Interfaces()
	require.NoError(t, err)
	for _, i := range ifs {
		require.Equal(t, "lo", i.Name, "not in a namespace with only lo")
	}
	targets := []string{
		"http://10.0.0.1/", "http://172.16.0.1/", "http://192.168.1.1/", "http://169.254.169.254/latest/meta-data/",
		"http://100.64.0.1/", "http://[fd00::1]/", "http://[fe80::1]/", "http://[64:ff9b::a00:1]/",
		"http://[::ffff:10.0.0.1]/", "http://[::ffff:a9fe:a9fe]/", "http://224.0.0.1/", "http://255.255.255.255/",
	}
	// The contrast: without the guard the namespace itself refuses, with a
	// different error. (Dialing here sends nothing: there is no route.)
	_, err = (&http.Client{Transport: fetch.NewBaseTransport(nil)}).Get("http://10.0.0.1/")
	require.Error(t, err)
	require.NotErrorIs(t, err, fetch.ErrForbiddenAddress)
	require.True(t, errors.Is(err, syscall.ENETUNREACH), "unguarded dial: %v", err)

	g := &fetch.Guard{}
	hc := &http.Client{Transport: g.NewTransport()}
	c := &fetch.Client{Gate: fetch.NoLimits{}, Guard: g}
	for _, raw := range targets {
		_, err := hc.Get(raw) // no name check on this path: the dialer decides
		requireRefused(t, err, "")
		require.False(t, errors.Is(err, syscall.ENETUNREACH), raw)
		_, err = c.Get(context.Background(), raw)
		requireRefused(t, err, raw)
	}
	// A name the dialer resolves (here by mapping) to a private address.
	for name, addr := range map[string]string{"metadata.example": "169.254.169.254", "intranet.example": "10.1.2.3", "nat64.example": "64:ff9b::a00:1"} {
		g := &fetch.Guard{Resolve: fetch.Resolve{name: addr}}
		_, err := (&http.Client{Transport: g.NewTransport()}).Get("http://" + name + "/")
		ae := requireRefused(t, err, "")
		assert.Equal(t, name, ae.Host)
	}
	// A name a DNS server resolves to a private address: the dialer's own
	// lookup, checked on the address it would connect.
	resolver, queries := dnsServer(t, netip.MustParseAddr("10.9.8.7"))
	_, err = (&fetch.Client{Gate: fetch.NoLimits{}, Guard: &fetch.Guard{Resolver: resolver}}).Get(context.Background(), "http://intranet.example/")
	ae := requireRefused(t, err, "http://intranet.example/")
	assert.Equal(t, netip.MustParseAddr("10.9.8.7"), ae.Addr)
	assert.NotZero(t, queries.Load())
	require.False(t, errors.Is(err, syscall.ENETUNREACH))
	// A loopback site (allowed) that redirects to a private address.
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		http.Redirect(w, r, "http://10.0.0.1/admin", http.StatusFound)
	}))
	defer front.Close()
	ap := netip.MustParseAddrPort(front.Listener.Addr().String())
	c = &fetch.Client{Gate: fetch.NoLimits{}, Guard: &fetch.Guard{AllowAddrPorts: []netip.AddrPort{ap}}}
	_, err = c.Get(context.Background(), front.URL+"/")
	requireRefused(t, err, "http://10.0.0.1/admin")
	fmt.Println("guard: every target refused before connect")
}
