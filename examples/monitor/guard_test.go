package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/dns/dnsmessage"

	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/testsite"
)

// ssrfWorld is a name server and a dial hook for the guard's tests. Names
// map to addresses on a loopback DNS server of the test's own (the guard's
// Resolver, for its name check and its dialer alike); the hook runs after
// the guard, records every address a connection was about to be made to,
// and itself refuses anything but loopback, so even a broken guard sends
// nothing past this machine.
type ssrfWorld struct {
	mu       sync.Mutex
	names    map[string][]string // host -> successive answers (the last repeats)
	lookups  map[string]int      // A queries answered per host
	attempts []string
	resolver *net.Resolver
}

func newSSRFWorld(t *testing.T) *ssrfWorld {
	w := &ssrfWorld{names: map[string][]string{}, lookups: map[string]int{}}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if msg := w.answer(buf[:n]); msg != nil {
				_, _ = pc.WriteTo(msg, from)
			}
		}
	}()
	w.resolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
	return w
}

// answer is the name server's reply to one query: the host's next answer
// to an A query, nothing to AAAA, NXDOMAIN for a name it does not know.
func (w *ssrfWorld) answer(query []byte) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil
	}
	q, err := p.Question()
	if err != nil {
		return nil
	}
	host := strings.TrimSuffix(strings.ToLower(q.Name.String()), ".")
	w.mu.Lock()
	answers, known := w.names[host]
	var a netip.Addr
	if known && q.Type == dnsmessage.TypeA {
		a = netip.MustParseAddr(answers[min(w.lookups[host], len(answers)-1)])
		w.lookups[host]++
	}
	w.mu.Unlock()
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true}
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	_ = b.StartQuestions()
	_ = b.Question(q)
	_ = b.StartAnswers()
	if a.Is4() {
		_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET}, dnsmessage.AResource{A: a.As4()})
	}
	msg, _ := b.Finish()
	return msg
}

// set makes host answer addrs, one per A query (the last repeats).
func (w *ssrfWorld) set(host string, addrs ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.names[host] = addrs
}

func (w *ssrfWorld) lookupsOf(host string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lookups[host]
}

func (w *ssrfWorld) control(network, address string, _ syscall.RawConn) error {
	w.mu.Lock()
	w.attempts = append(w.attempts, address)
	w.mu.Unlock()
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !ap.Addr().IsLoopback() {
		return fmt.Errorf("test dial hook: refusing to connect to %s", address)
	}
	return nil
}

func (w *ssrfWorld) Attempts() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.attempts...)
}

// env returns a monitor environment with the real guarded transport, this
// world's names and hook, and exempt (the test's own loopback servers)
// allowed through the guard.
func (w *ssrfWorld) env(exempt ...string) env {
	h := guardHooks{Resolver: w.resolver, AlsoControl: w.control}
	for _, e := range exempt {
		h.Exempt = append(h.Exempt, netip.MustParseAddrPort(e))
	}
	return env{anyGap: true, guardHooks: h}
}

// TestTheGuardIsOnByDefault: the zero options refuse, and no test hook can
// turn the guard off: a resolver that knows nothing, a permissive dial hook
// and an exempt list of non-loopback addresses all leave it on. Only
// -allow-private does.
func TestTheGuardIsOnByDefault(t *testing.T) {
	ctx := context.Background()
	permissive := guardHooks{
		Resolver:    noDNS,
		AlsoControl: func(string, string, syscall.RawConn) error { return nil },
		Exempt:      []netip.AddrPort{netip.MustParseAddrPort("10.0.0.1:80"), netip.MustParseAddrPort("169.254.169.254:80")},
	}
	for _, h := range []guardHooks{{}, permissive} {
		g := newGuard(options{}, h)
		require.NotNil(t, g)
		tk := snapshot.Taker{Guard: g}
		for _, u := range []string{"http://127.0.0.1/", "http://[::1]/", "http://[::ffff:127.0.0.1]/", "http://0.0.0.0/",
			"http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/", "http://localhost/", "http://localhost./"} {
			require.ErrorIs(t, tk.CheckURL(ctx, u), fetch.ErrForbiddenAddress, u)
		}
		_, err := g.NewTransport().DialContext(ctx, "tcp", "10.0.0.1:80")
		assert.ErrorIs(t, err, fetch.ErrForbiddenAddress)
	}
	assert.Nil(t, newGuard(options{allowPrivate: true}, permissive), "only -allow-private turns it off")
}

func TestExemptIsExactLoopbackOnly(t *testing.T) {
	tk := snapshot.Taker{Guard: newGuard(options{}, guardHooks{Resolver: noDNS, Exempt: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:8080")}})}
	ctx := context.Background()
	assert.NoError(t, tk.CheckURL(ctx, "http://127.0.0.1:8080/"))
	assert.ErrorIs(t, tk.CheckURL(ctx, "http://127.0.0.1:8081/"), fetch.ErrForbiddenAddress, "another port")
	assert.ErrorIs(t, tk.CheckURL(ctx, "http://127.0.0.2:8080/"), fetch.ErrForbiddenAddress, "another address")
}

func TestResolveMappingIsChecked(t *testing.T) {
	tk := snapshot.Taker{Guard: newGuard(options{resolve: resolveFlag{"Public.Example:80": "127.0.0.1"}}, guardHooks{Resolver: noDNS})}
	err := tk.CheckURL(context.Background(), "http://public.example/")
	require.ErrorIs(t, err, fetch.ErrForbiddenAddress)
	assert.Contains(t, err.Error(), "public.example resolves to 127.0.0.1, a loopback address")
}

func TestFreeToolRefusesNameResolvingToPrivateAddressBeforeConnect(t *testing.T) {
	w := newSSRFWorld(t)
	w.set("internal.test", "10.0.0.1")
	code, out, errOut := cli(t, w.env(), "check", "http://internal.test/admin")
	assert.Equal(t, exitUsage, code, "an internal address is refused input")
	assert.Contains(t, out, "refused: internal.test resolves to 10.0.0.1, a private address")
	assert.Contains(t, errOut, "refused")
	assert.Empty(t, w.Attempts(), "no connection was even attempted")
}

func TestGuardCatchesDNSRebindingAtDialTime(t *testing.T) {
	w := newSSRFWorld(t)
	// The first answer (the name check) is public; every later one, the
	// one the dialer gets, is the metadata service.
	w.set("rebind.test", "93.184.216.34", "169.254.169.254")
	code, out, _ := cli(t, w.env(), "check", "http://rebind.test/")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, out, "refused: rebind.test resolves to 169.254.169.254, a link-local address")
	assert.Empty(t, w.Attempts(), "refused in Control, before the test hook and before connect")
	assert.GreaterOrEqual(t, w.lookupsOf("rebind.test"), 2, "the dialer resolved the name itself")
}

func TestGuardRefusesRedirectToInternalAddress(t *testing.T) {
	w := newSSRFWorld(t)
	w.set("internal.test", "10.0.0.1")
	site := testsite.New(t)
	site.Robots("User-agent: *\nAllow: /\n")
	site.Redirect("/go", "http://internal.test/secret", http.StatusFound)
	e := w.env(site.Addr())
	code, out, _ := cli(t, e, "check", site.URL()+"/go")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, out, "refused: internal.test resolves to 10.0.0.1")
	assert.Equal(t, []string{"/robots.txt", "/go"}, site.Paths())
	for _, a := range w.Attempts() {
		assert.Equal(t, site.Addr(), a, "only the test site was connected to")
	}

	// The dial hook alone refuses too (no redirect check in front of it):
	// a scheduled snapshot of a page that redirects into the network.
	db := tempDB(t)
	code, _, errOut := cli(t, e, "track", "-db", db, site.URL()+"/go")
	require.Equal(t, exitOK, code, errOut)
	code, out, errOut = cli(t, e, "run", "-db", db, "-gap", "0s")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "error   "+site.URL()+"/go: ")
	assert.Contains(t, out, "refused: internal.test resolves to 10.0.0.1")
	assert.Contains(t, out, "run: 1 due, 1 snapshots (1 with errors)")
	for _, a := range w.Attempts() {
		assert.Equal(t, site.Addr(), a)
	}
}

func TestTrackRefusesInternalTargets(t *testing.T) {
	w := newSSRFWorld(t)
	w.set("intranet.test", "172.20.0.5")
	db := tempDB(t)
	for _, u := range []string{"http://intranet.test/", "http://127.0.0.1:8080/", "http://[::1]/", "http://169.254.169.254/latest/meta-data/"} {
		code, _, errOut := cli(t, w.env(), "track", "-db", db, u)
		assert.Equal(t, exitUsage, code, u)
		assert.Contains(t, errOut, "refused", u)
	}
	code, _, errOut := cli(t, w.env(), "track", "-db", db, "-allow-private", "http://intranet.test/")
	assert.Equal(t, exitOK, code, errOut)
	assert.Empty(t, w.Attempts())
}

func TestSnapshotOfPageNowResolvingInternallyIsRefused(t *testing.T) {
	w := newSSRFWorld(t)
	w.set("moved.test", "93.184.216.34", "10.9.9.9")
	db := tempDB(t)
	e := w.env()
	code, _, errOut := cli(t, e, "track", "-db", db, "http://moved.test/")
	require.Equal(t, exitOK, code, errOut)
	code, out, errOut := cli(t, e, "run", "-db", db, "-gap", "0s")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "error   http://moved.test/: refused: moved.test resolves to 10.9.9.9")
	assert.Empty(t, w.Attempts())
}
