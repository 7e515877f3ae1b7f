package guard

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestForbiddenAddresses(t *testing.T) {
	for _, a := range []string{
		"127.0.0.1", "127.8.9.10", "::1", "10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.1.1", "fc00::1", "fd12:3456::1",
		"169.254.169.254", "fe80::1", "100.64.0.1", "100.127.255.254", "0.0.0.0", "::", "0.1.2.3", "224.0.0.1", "ff02::1",
		"255.255.255.255", "::ffff:10.0.0.1", "::ffff:127.0.0.1", "64:ff9b::a9fe:a9fe",
	} {
		assert.NotEmpty(t, Reason(netip.MustParseAddr(a)), a)
	}
	for _, a := range []string{"93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"} {
		assert.Empty(t, Reason(netip.MustParseAddr(a)), a)
	}
}

// world maps names to addresses without DNS and records, in a dial hook
// that runs after the guard, every address a connection was about to be
// made to; the hook itself refuses anything but loopback.
type world struct {
	mu       sync.Mutex
	names    map[string]string
	attempts []string
}

func (w *world) lookup(_ context.Context, host string) ([]netip.Addr, error) {
	if a, ok := w.names[strings.ToLower(host)]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (w *world) control(_, address string, _ syscall.RawConn) error {
	w.mu.Lock()
	w.attempts = append(w.attempts, address)
	w.mu.Unlock()
	if ap, err := netip.ParseAddrPort(address); err != nil || !ap.Addr().IsLoopback() {
		return fmt.Errorf("test dial hook: refusing to connect to %s", address)
	}
	return nil
}

func TestGuardedDialerRefusesInControlHook(t *testing.T) {
	// The dial itself, without the name check in front: every forbidden
	// address is refused in Control, which runs before connect(2).
	w := &world{names: map[string]string{"meta.test": "169.254.169.254", "lan.test": "192.168.1.20"}}
	g := New(false, nil).WithTestHooks(TestHooks{Lookup: w.lookup, Control: w.control})
	for _, addr := range []string{"meta.test:80", "lan.test:443", "10.1.2.3:80", "[fd00::1]:80", "[::ffff:127.0.0.1]:8080", "localhost:80", "LOCALHOST.:80", "a.localhost:80"} {
		_, err := g.Dial(context.Background(), "tcp", addr)
		assert.ErrorIs(t, err, ErrForbidden, addr)
	}
	assert.Empty(t, w.attempts)
}

// TestTheGuardIsOnByDefault: the zero configuration refuses, and no test
// hook can turn it off: a resolver that knows nothing, a permissive dial
// hook and an exempt list of non-loopback addresses all leave it on.
func TestTheGuardIsOnByDefault(t *testing.T) {
	ctx := context.Background()
	for _, g := range []*Guard{
		New(false, nil),
		New(false, nil).WithTestHooks(TestHooks{}),
		New(false, nil).WithTestHooks(TestHooks{
			Lookup:  func(context.Context, string) ([]netip.Addr, error) { return nil, nil },
			Control: func(string, string, syscall.RawConn) error { return nil },
			Exempt:  []netip.AddrPort{netip.MustParseAddrPort("10.0.0.1:80"), netip.MustParseAddrPort("169.254.169.254:80")},
		}),
	} {
		assert.False(t, g.AllowsPrivate())
		for _, u := range []string{"http://127.0.0.1/", "http://[::1]/", "http://[::ffff:127.0.0.1]/", "http://0.0.0.0/",
			"http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/", "http://localhost/", "http://localhost./"} {
			err := g.CheckURL(ctx, u)
			require.ErrorIs(t, err, ErrForbidden, u)
		}
		_, err := g.Dial(ctx, "tcp", "10.0.0.1:80")
		assert.ErrorIs(t, err, ErrForbidden)
	}
	assert.NoError(t, New(true, nil).CheckURL(ctx, "http://127.0.0.1/"), "only allowPrivate turns it off")
}

func TestResolveMappingIsChecked(t *testing.T) {
	g := New(false, map[string]string{"Public.Example:80": "127.0.0.1"})
	err := g.CheckURL(context.Background(), "http://public.example/")
	require.ErrorIs(t, err, ErrForbidden)
	assert.Contains(t, err.Error(), "public.example resolves to 127.0.0.1, a loopback address")
}

func TestExemptIsExactLoopbackOnly(t *testing.T) {
	g := New(false, nil).WithTestHooks(TestHooks{Exempt: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:8080")}})
	ctx := context.Background()
	assert.NoError(t, g.CheckURL(ctx, "http://127.0.0.1:8080/"))
	assert.ErrorIs(t, g.CheckURL(ctx, "http://127.0.0.1:8081/"), ErrForbidden, "another port")
	assert.ErrorIs(t, g.CheckURL(ctx, "http://127.0.0.2:8080/"), ErrForbidden, "another address")
}
