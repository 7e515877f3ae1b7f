package main

// Black-box tests of the built binary: `go build` into a temporary
// directory, run as a subprocess with the real environment and no test
// hook (no injected resolver, transport, clock or guard). They cover the
// safety defaults a user gets without asking: the SSRF guard is on.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// monitorBinary builds the monitor once per test process and returns the
// path of the binary (removed when the tests end, by TestMain).
func monitorBinary(t *testing.T) string {
	t.Helper()
	return monitorBinaryB(t)
}

// monitorBinaryB is monitorBinary for tests and benchmarks alike.
func monitorBinaryB(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("MONITOR_BIN"); p != "" {
		return p // inside the network namespace: built by the outer test
	}
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "monitor-bin-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "monitor")
		out, err := exec.Command("go", "build", "-o", built.path, ".").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, built.err)
	return built.path
}

func removeBuiltBinary() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}

// runBinary runs the built monitor with args and returns its exit status,
// stdout and stderr.
func runBinary(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, monitorBinary(t), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errOut.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errOut.String()
	}
	t.Fatalf("monitor %v: %v", args, err)
	return -1, "", ""
}

// tripwire is a server that must never be reached: it counts every
// request (and answers with a secret, as an internal service would).
type tripwire struct {
	srv  *httptest.Server
	hits atomic.Int64
}

func newTripwire(t *testing.T, network, addr string) *tripwire {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("cannot listen on %s %s: %v", network, addr, err)
	}
	tw := &tripwire{}
	tw.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw.hits.Add(1)
		fmt.Fprint(w, "<title>internal secret</title>internal secret")
	}))
	tw.srv.Listener.Close()
	tw.srv.Listener = ln
	tw.srv.Start()
	t.Cleanup(tw.srv.Close)
	return tw
}

func (tw *tripwire) port() string {
	_, p, _ := net.SplitHostPort(tw.srv.Listener.Addr().String())
	return p
}

// internalSpellings are loopback URLs on port in every spelling the issue
// lists; each must be refused before connect.
func internalSpellings(port string) []string {
	var out []string
	for _, host := range []string{
		"127.0.0.1", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "0.0.0.0",
		"localhost", "LOCALHOST", "localhost.",
		"①②⑦.⓪.⓪.①", "ⅼocalhost", "127。0。0。1", "１２７.0.0.1",
	} {
		out = append(out, "http://"+host+":"+port+"/secret")
	}
	return out
}

func TestBinaryRefusesLoopbackTargets(t *testing.T) {
	tw := newTripwire(t, "tcp4", "127.0.0.1:0")
	urls := internalSpellings(tw.port())
	var tw6 *tripwire
	if ln, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		ln.Close()
		tw6 = newTripwire(t, "tcp6", "[::1]:0")
		urls = append(urls, "http://[::1]:"+tw6.port()+"/secret")
	}
	db := filepath.Join(t.TempDir(), "mon.db")
	for _, u := range urls {
		code, out, errOut := runBinary(t, "check", u)
		assert.Equal(t, exitUsage, code, "check %s\nstdout: %s\nstderr: %s", u, out, errOut)
		assert.Contains(t, out, "refused: ", "the card explains it: %s", u)
		assert.NotContains(t, out, "internal secret", u)

		code, out, errOut = runBinary(t, "track", "-db", db, u)
		assert.Equal(t, exitUsage, code, "track %s\nstdout: %s\nstderr: %s", u, out, errOut)
		assert.Contains(t, errOut, "refused: ", u)
	}

	// A public-looking name that -resolve maps to loopback.
	code, out, _ := runBinary(t, "check", "-resolve", "public.example:"+tw.port()+":127.0.0.1", "http://public.example:"+tw.port()+"/secret")
	assert.Equal(t, exitUsage, code, out)
	assert.Contains(t, out, "refused: public.example resolves to 127.0.0.1, a loopback address")
	code, _, errOut := runBinary(t, "track", "-db", db, "-resolve", "public.example:"+tw.port()+":127.0.0.1", "http://public.example:"+tw.port()+"/secret")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "refused: public.example resolves to 127.0.0.1")

	assert.Zero(t, tw.hits.Load(), "the loopback server saw no request")
	if tw6 != nil {
		assert.Zero(t, tw6.hits.Load(), "the [::1] server saw no request")
	}
}

// TestBinaryRunStoresNothingInternal: pages tracked with -allow-private are
// refused by a later run without it, and no snapshot holds their content.
func TestBinaryRunStoresNothingInternal(t *testing.T) {
	tw := newTripwire(t, "tcp4", "127.0.0.1:0")
	db := filepath.Join(t.TempDir(), "mon.db")
	pages := []string{"http://127.0.0.1:" + tw.port() + "/secret", "http://localhost:" + tw.port() + "/admin"}
	code, _, errOut := runBinary(t, append([]string{"track", "-db", db, "-allow-private"}, pages...)...)
	require.Equal(t, exitOK, code, errOut)

	code, out, errOut := runBinary(t, "run", "-db", db)
	require.Equal(t, exitOK, code, errOut)
	for _, p := range pages {
		assert.Contains(t, out, "error   "+p+": ", out)
	}
	assert.Equal(t, 2, strings.Count(out, "refused: "), out)
	assert.Contains(t, out, "run: 2 due, 2 snapshots (2 with errors)")
	assert.NotContains(t, out, "internal secret")

	code, out, errOut = runBinary(t, "status", "-db", db)
	require.Equal(t, exitOK, code, errOut)
	assert.NotContains(t, out, "internal secret")
	assert.Zero(t, tw.hits.Load(), "the loopback server saw no request")
}

// startBinaryServe runs `monitor serve` as a process and returns its base
// URL; the process is interrupted when the test ends.
func startBinaryServe(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(monitorBinary(t), append([]string{"serve", "-addr", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errOut lockedBuffer
	cmd.Stderr = &errOut
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "serve printed nothing; stderr: %s", errOut.String())
	go io.Copy(io.Discard, stdout)
	var addr string
	_, err = fmt.Sscanf(line, "serving http://%s", &addr)
	require.NoError(t, err, line)
	return "http://" + strings.TrimSuffix(addr, "/")
}

func TestBinaryServeRefusesLoopbackChecks(t *testing.T) {
	tw := newTripwire(t, "tcp4", "127.0.0.1:0")
	base := startBinaryServe(t, "-db", filepath.Join(t.TempDir(), "mon.db"), "-check-rate", "600", "-check-burst", "100")
	for _, u := range internalSpellings(tw.port()) {
		resp, err := http.PostForm(base+"/api/check", url.Values{"url": {u}})
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Contains(t, string(body), `"error": "refused: `, u)
		assert.NotContains(t, string(body), "internal secret", u)

		resp, err = http.PostForm(base+"/check", url.Values{"url": {u}})
		require.NoError(t, err)
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Contains(t, string(body), "refused: ", "the card says why: %s", u)
		assert.NotContains(t, string(body), "internal secret", u)

		resp, err = http.PostForm(base+"/track", url.Values{"url": {u}})
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "track form: %s", u)
	}
	assert.Zero(t, tw.hits.Load(), "the loopback server saw no request")
}

// inEmptyNetns runs the calling test again inside a network namespace that
// has only lo (unshare -rn), where not even a broken guard can send a packet
// off the machine; it returns true inside the namespace, where the test
// goes on. Outside it returns false once the inner run is over (its failure
// is this test's). Without namespaces the test is skipped, or fails under CI.
func inEmptyNetns(t *testing.T) bool {
	t.Helper()
	if !inNamespace(t, "-rn") {
		return false
	}
	out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput()
	require.NoError(t, err, "ip link set lo up: %s", out)
	return true
}

// inNamespace is inEmptyNetns for any unshare flags (-rm: a mount namespace
// of its own, where the test may mount file systems that vanish with it).
func inNamespace(t *testing.T, flags string) bool {
	t.Helper()
	if os.Getenv("MONITOR_NS") == flags {
		return true
	}
	if out, err := exec.Command("unshare", flags, "true").CombinedOutput(); err != nil {
		msg := fmt.Sprintf("namespaces are unavailable (unshare %s: %v %s); this test needs them (root, or unprivileged user namespaces)", flags, err, out)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	bin := monitorBinary(t)
	cmd := exec.Command("unshare", flags, os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "MONITOR_NS="+flags, "MONITOR_BIN="+bin)
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: "+t.Name())) {
		t.Fatalf("inside the namespace (unshare %s): %v\n%s", flags, err, out)
	}
	return false
}

// addLoopbackAddr puts addr on lo inside the namespace, so a server can
// stand in for an internal service (or a public site) there.
func addLoopbackAddr(t *testing.T, addr string) {
	t.Helper()
	out, err := exec.Command("ip", "addr", "add", addr+"/32", "dev", "lo").CombinedOutput()
	require.NoError(t, err, "ip addr add %s: %s", addr, out)
}

func TestBinaryRefusesPrivateAndLinkLocalInEmptyNetns(t *testing.T) {
	if !inEmptyNetns(t) {
		return
	}
	// Inside: 10.0.0.1 and 169.254.169.254 are servers on lo that must see
	// no request; 203.0.113.7 (a documentation address the guard treats as
	// public) is a site that redirects into them and to 127.0.0.1.
	for _, a := range []string{"10.0.0.1", "169.254.169.254", "203.0.113.7"} {
		addLoopbackAddr(t, a)
	}
	lan := newTripwire(t, "tcp4", "10.0.0.1:80")
	meta := newTripwire(t, "tcp4", "169.254.169.254:80")
	lo := newTripwire(t, "tcp4", "127.0.0.1:0")
	var publicPaths []string
	var mu sync.Mutex
	public := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		publicPaths = append(publicPaths, r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case "/to-loopback":
			http.Redirect(w, r, "http://127.0.0.1:"+lo.port()+"/secret", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	ln, err := net.Listen("tcp4", "203.0.113.7:0")
	require.NoError(t, err)
	public.Listener.Close()
	public.Listener = ln
	public.Start()
	defer public.Close()
	_, pport, _ := net.SplitHostPort(ln.Addr().String())

	db := filepath.Join(t.TempDir(), "mon.db")
	for _, u := range []string{"http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/", "http://[::ffff:a9fe:a9fe]/latest/meta-data/"} {
		code, out, errOut := runBinary(t, "track", "-db", db, u)
		assert.Equal(t, exitUsage, code, "track %s: %s%s", u, out, errOut)
		assert.Contains(t, errOut, "refused: ", u)
		code, out, errOut = runBinary(t, "check", u)
		assert.Equal(t, exitUsage, code, "check %s: %s%s", u, out, errOut)
		assert.Contains(t, out, "refused: ", u)
	}
	code, out, _ := runBinary(t, "check", "-resolve", "meta.example:80:169.254.169.254", "http://meta.example/latest/meta-data/")
	assert.Equal(t, exitUsage, code, out)
	assert.Contains(t, out, "refused: meta.example resolves to 169.254.169.254, a link-local address")

	// A public-looking site that redirects inward: the redirect is refused.
	for _, u := range []string{
		"http://203.0.113.7:" + pport + "/to-loopback",
		"http://203.0.113.7:" + pport + "/to-metadata",
	} {
		code, out, errOut := runBinary(t, "check", u)
		assert.Equal(t, exitUsage, code, "check %s: %s%s", u, out, errOut)
		assert.Contains(t, out, "refused: ", u)
		assert.NotContains(t, out, "internal secret", u)
	}
	code, out, errOut := runBinary(t, "check", "-resolve", "www.example.com:"+pport+":203.0.113.7", "http://www.example.com:"+pport+"/to-loopback")
	assert.Equal(t, exitUsage, code, out+errOut)
	assert.Contains(t, out, "refused: 127.0.0.1 is a loopback address")

	// track + run: nothing internal ends up in a snapshot.
	code, _, errOut = runBinary(t, "track", "-db", db, "-allow-private", "http://10.0.0.1/secret", "http://169.254.169.254/latest/meta-data/")
	require.Equal(t, exitOK, code, errOut)
	code, _, errOut = runBinary(t, "track", "-db", db, "http://203.0.113.7:"+pport+"/to-metadata")
	require.Equal(t, exitOK, code, errOut)
	code, out, errOut = runBinary(t, "run", "-db", db)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, 3, strings.Count(out, "refused: "), out)
	assert.Contains(t, out, "run: 3 due, 3 snapshots (3 with errors)")
	code, out, _ = runBinary(t, "report", "-db", db)
	assert.Equal(t, exitOK, code)
	assert.NotContains(t, out, "internal secret")

	assert.Zero(t, lan.hits.Load(), "10.0.0.1 saw no request")
	assert.Zero(t, meta.hits.Load(), "169.254.169.254 saw no request")
	assert.Zero(t, lo.hits.Load(), "127.0.0.1 saw no request")
	mu.Lock()
	defer mu.Unlock()
	for _, p := range publicPaths {
		assert.Contains(t, []string{"/robots.txt", "/to-loopback", "/to-metadata"}, p)
	}
}
