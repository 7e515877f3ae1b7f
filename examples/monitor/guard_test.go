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

	"github.com/politecrawl/polite/examples/monitor/internal/guard"
	"github.com/politecrawl/polite/internal/testsite"
)

// ssrfWorld is a resolver and a dial hook for the guard's tests. Names map
// to addresses without DNS; the hook runs after the guard, records every
// address a connection was about to be made to, and itself refuses anything
// but loopback, so even a broken guard sends nothing past this machine.
type ssrfWorld struct {
	mu       sync.Mutex
	names    map[string][]string // host -> successive answers (the last repeats)
	lookups  map[string]int
	attempts []string
}

func newSSRFWorld() *ssrfWorld {
	return &ssrfWorld{names: map[string][]string{}, lookups: map[string]int{}}
}

func (w *ssrfWorld) lookup(_ context.Context, host string) ([]netip.Addr, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	answers, ok := w.names[strings.ToLower(host)]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(w.lookups[host], len(answers)-1)
	w.lookups[host]++
	return []netip.Addr{netip.MustParseAddr(answers[i])}, nil
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
	h := guard.TestHooks{Lookup: w.lookup, Control: w.control}
	for _, e := range exempt {
		h.Exempt = append(h.Exempt, netip.MustParseAddrPort(e))
	}
	return env{anyGap: true, guardHooks: h}
}

func TestFreeToolRefusesNameResolvingToPrivateAddressBeforeConnect(t *testing.T) {
	w := newSSRFWorld()
	w.names["internal.test"] = []string{"10.0.0.1"}
	code, out, errOut := cli(t, w.env(), "check", "http://internal.test/admin")
	assert.Equal(t, exitUsage, code, "an internal address is refused input")
	assert.Contains(t, out, "refused: internal.test resolves to 10.0.0.1, a private address")
	assert.Contains(t, errOut, "refused")
	assert.Empty(t, w.Attempts(), "no connection was even attempted")
}

func TestGuardCatchesDNSRebindingAtDialTime(t *testing.T) {
	w := newSSRFWorld()
	// The first answer (the name check) is public; every later one, the
	// one the dialer gets, is the metadata service.
	w.names["rebind.test"] = []string{"93.184.216.34", "169.254.169.254"}
	code, out, _ := cli(t, w.env(), "check", "http://rebind.test/")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, out, "refused: rebind.test resolves to 169.254.169.254, a link-local address")
	assert.Empty(t, w.Attempts(), "refused in Control, before the test hook and before connect")
	assert.GreaterOrEqual(t, w.lookups["rebind.test"], 2, "the dialer resolved the name itself")
}

func TestGuardRefusesRedirectToInternalAddress(t *testing.T) {
	w := newSSRFWorld()
	w.names["internal.test"] = []string{"10.0.0.1"}
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
	w := newSSRFWorld()
	w.names["intranet.test"] = []string{"172.20.0.5"}
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
	w := newSSRFWorld()
	w.names["moved.test"] = []string{"93.184.216.34", "10.9.9.9"}
	db := tempDB(t)
	e := w.env()
	code, _, errOut := cli(t, e, "track", "-db", db, "http://moved.test/")
	require.Equal(t, exitOK, code, errOut)
	code, out, errOut := cli(t, e, "run", "-db", db, "-gap", "0s")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "error   http://moved.test/: refused: moved.test resolves to 10.9.9.9")
	assert.Empty(t, w.Attempts())
}
