package main

// Black-box tests of the built binary's alerts: `alert add/list/rm/test`,
// delivery by `run` and by `serve -watch` to a loopback webhook, email to a
// real mailpit, kill -9 during delivery, and the address guard on
// destinations (loopback in the host's namespace, private and link-local
// inside `unshare -rn`).

import (
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/monitor/internal/alert"
	"github.com/politecrawl/polite/examples/monitor/internal/mailpittest"
)

// changingSite is a loopback site whose pages change their title when
// changed is set.
func changingSite(t *testing.T, changed *atomic.Bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
			return
		}
		title := "Pricing"
		if changed.Load() {
			title = "Pricing 2027"
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><head><title>%s %s</title></head><body><h1>Plans</h1><p>ten euros</p></body></html>", title, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// makeDue sets every page due now, as six hours passing would: the binary
// has no injected clock.
func makeDue(t *testing.T, db string) {
	t.Helper()
	d, err := sql.Open("sqlite", db)
	require.NoError(t, err)
	defer d.Close()
	_, err = d.Exec(`UPDATE pages SET next_due = '2000-01-01T00:00:00.000000000Z'`)
	require.NoError(t, err)
}

// firstSnapshots tracks pages of site and takes their first snapshots.
func firstSnapshots(t *testing.T, db string, site *httptest.Server, paths ...string) {
	t.Helper()
	args := []string{"track", "-db", db, "-allow-private"}
	for _, p := range paths {
		args = append(args, site.URL+p)
	}
	code, _, errOut := runBinary(t, args...)
	require.Equal(t, exitOK, code, errOut)
	code, out, errOut := runBinary(t, "run", "-db", db, "-allow-private", "-gap", "1s")
	require.Equal(t, exitOK, code, out+errOut)
}

// keyCounter is a loopback webhook receiver counting idempotency keys.
type keyCounter struct {
	mu   sync.Mutex
	keys map[string]int
	hits atomic.Int64
	srv  *httptest.Server
	// hold, when set, is called before answering (to block or count).
	hold func(n int64)
}

func newKeyCounter(t *testing.T, status int) *keyCounter {
	k := &keyCounter{keys: map[string]int{}}
	k.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := k.hits.Add(1)
		k.mu.Lock()
		k.keys[r.Header.Get(alert.HeaderKey)]++
		k.mu.Unlock()
		if k.hold != nil {
			k.hold(n)
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(k.srv.Close)
	return k
}

func (k *keyCounter) counts() map[string]int {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]int{}
	for a, b := range k.keys {
		out[a] = b
	}
	return out
}

func TestBinaryAlertCommands(t *testing.T) {
	var changed atomic.Bool
	site := changingSite(t, &changed)
	rc := newKeyCounter(t, http.StatusNoContent)
	db := filepath.Join(t.TempDir(), "mon.db")
	firstSnapshots(t, db, site, "/a")

	// The guard: a loopback destination is refused, before connect.
	code, _, errOut := runBinary(t, "alert", "add", "-db", db, "-webhook", rc.srv.URL+"/hook")
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "refused: ")
	assert.Contains(t, errOut, "unless -allow-private")
	code, _, errOut = runBinary(t, "alert", "add", "-db", db, "-slack", "http://localhost:"+strings.Split(rc.srv.URL, ":")[2]+"/x")
	assert.Equal(t, exitUsage, code, errOut)
	for _, bad := range [][]string{
		{"alert", "add", "-db", db},
		{"alert", "add", "-db", db, "-webhook", "https://x.example/", "-kinds", "titel"},
		{"alert", "add", "-db", db, "-webhook", "https://x.example/", "-page", "http://a.example/", "-host", "a.example"},
		{"alert", "rm", "-db", db},
		{"alert", "frobnicate", "-db", db},
	} {
		code, _, errOut := runBinary(t, bad...)
		assert.Equal(t, exitUsage, code, "%v: %s", bad, errOut)
		assert.Contains(t, errOut, "monitor alert: ", "%v", bad)
	}

	code, out, errOut := runBinary(t, "alert", "add", "-db", db, "-allow-private", "-webhook", rc.srv.URL+"/hook",
		"-secret", "hush-hush", "-kinds", "title,noindex_added", "-min-severity", "medium", "-name", "seo-team")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "alert channel 1: webhook http://127.0.0.1:")
	code, out, errOut = runBinary(t, "alert", "list", "-db", db)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "1  seo-team  webhook http://127.0.0.1:")
	assert.Contains(t, out, "every page; title,noindex_added at least medium")
	assert.NotContains(t, out, "hush-hush", "secrets are never printed")
	assert.NotContains(t, out, "/hook", "nor a URL's path (a Slack URL's path is its secret)")

	code, out, errOut = runBinary(t, "alert", "test", "-db", db, "1")
	assert.Equal(t, exitUsage, code, "test without -allow-private: refused\n%s%s", out, errOut)
	assert.Zero(t, rc.hits.Load(), "no connection to a refused destination")
	code, out, errOut = runBinary(t, "alert", "test", "-db", db, "-allow-private", "1")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "test delivery to channel 1")
	assert.Equal(t, int64(1), rc.hits.Load())

	// The change is queued with its snapshot and delivered by run's drain.
	changed.Store(true)
	makeDue(t, db)
	code, out, errOut = runBinary(t, "run", "-db", db, "-allow-private", "-gap", "1s")
	require.Equal(t, exitOK, code, out+errOut)
	assert.Contains(t, out, "alerts: 1 delivery attempts")
	assert.Equal(t, int64(2), rc.hits.Load(), "the title change, delivered")

	code, out, _ = runBinary(t, "alert", "list", "-db", db)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "delivered  channel 1  [medium] title: "+site.URL+"/a")

	code, out, errOut = runBinary(t, "alert", "rm", "-db", db, "1")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "removed alert channel 1")
	code, _, errOut = runBinary(t, "alert", "rm", "-db", db, "1")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "no alert channel 1")
	code, out, _ = runBinary(t, "alert", "list", "-db", db)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "no alert channels")
}

func TestBinaryServeWatchDeliversToWebhook(t *testing.T) {
	var changed atomic.Bool
	site := changingSite(t, &changed)
	rc := newKeyCounter(t, http.StatusNoContent)
	db := filepath.Join(t.TempDir(), "mon.db")
	firstSnapshots(t, db, site, "/a", "/b")
	code, _, errOut := runBinary(t, "alert", "add", "-db", db, "-allow-private", "-webhook", rc.srv.URL+"/hook", "-secret", "k")
	require.Equal(t, exitOK, code, errOut)
	changed.Store(true)
	makeDue(t, db)
	startBinaryServe(t, "-db", db, "-watch", "-allow-private", "-gap", "1s", "-public-url", "http://monitor.example:8080")
	deadline := time.Now().Add(30 * time.Second)
	for rc.hits.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	counts := rc.counts()
	assert.Len(t, counts, 2, "one delivery per changed page")
	for k, n := range counts {
		assert.Equal(t, 1, n, k)
	}
}

// TestBinaryKill9DuringDeliveryLosesAndDuplicatesNothing: five changes are
// queued with their snapshots; the process is killed (SIGKILL) while the
// receiver holds the third delivery. The next run delivers the rest: every
// change arrives, each key once, except the one in flight at the kill,
// which may arrive again under the same key (at-least-once: the receiver
// drops the repeat by its key).
func TestBinaryKill9DuringDeliveryLosesAndDuplicatesNothing(t *testing.T) {
	var changed atomic.Bool
	site := changingSite(t, &changed)
	inFlight := make(chan struct{})
	release := make(chan struct{})
	rc := newKeyCounter(t, http.StatusNoContent)
	rc.hold = func(n int64) {
		if n == 3 {
			close(inFlight)
			<-release
		}
	}
	t.Cleanup(func() { close(release) })
	db := filepath.Join(t.TempDir(), "mon.db")
	paths := []string{"/1", "/2", "/3", "/4", "/5"}
	firstSnapshots(t, db, site, paths...)
	code, _, errOut := runBinary(t, "alert", "add", "-db", db, "-allow-private", "-webhook", rc.srv.URL+"/hook")
	require.Equal(t, exitOK, code, errOut)
	changed.Store(true)
	makeDue(t, db)

	cmd := exec.Command(monitorBinary(t), "run", "-db", db, "-allow-private", "-gap", "1s", "-parallel", "1")
	require.NoError(t, cmd.Start())
	select {
	case <-inFlight:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the third delivery never arrived")
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	d, err := sql.Open("sqlite", db)
	require.NoError(t, err)
	defer d.Close()
	var snaps, queued, sending int
	require.NoError(t, d.QueryRow(`SELECT count(*) FROM snapshots`).Scan(&snaps))
	require.NoError(t, d.QueryRow(`SELECT count(*) FROM alert_outbox`).Scan(&queued))
	require.NoError(t, d.QueryRow(`SELECT count(*) FROM alert_outbox WHERE state = 'sending'`).Scan(&sending))
	assert.Equal(t, 10, snaps, "every snapshot was committed before delivery started")
	assert.Equal(t, 5, queued, "each with its delivery")
	assert.Equal(t, 3, sending, "claimed in one batch: the one in flight and the two after it hold their leases")
	// The lease (5 min) ends as time passes; the binary has no clock to
	// advance, so its end is moved to the past.
	_, err = d.Exec(`UPDATE alert_outbox SET next_attempt_at = '2000-01-01T00:00:00.000000000Z' WHERE state = 'sending'`)
	require.NoError(t, err)

	code, out, errOut := runBinary(t, "run", "-db", db, "-allow-private")
	require.Equal(t, exitOK, code, out+errOut)
	counts := rc.counts()
	require.Len(t, counts, 5, "no change lost: %v", counts)
	twice := 0
	for k, n := range counts {
		require.LessOrEqual(t, n, 2, k)
		if n == 2 {
			twice++
		}
	}
	assert.LessOrEqual(t, twice, 1, "only the delivery in flight at the kill is sent again: %v", counts)
	var delivered int
	require.NoError(t, d.QueryRow(`SELECT count(*) FROM alert_outbox WHERE state = 'delivered'`).Scan(&delivered))
	assert.Equal(t, 5, delivered)

	// A third run sends nothing.
	hits := rc.hits.Load()
	code, _, _ = runBinary(t, "run", "-db", db, "-allow-private")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, hits, rc.hits.Load())
}

func TestBinaryEmailAlertThroughMailpit(t *testing.T) {
	mp := mailpittest.Start(t, "--smtp-auth-accept-any", "--smtp-auth-allow-insecure")
	var changed atomic.Bool
	site := changingSite(t, &changed)
	db := filepath.Join(t.TempDir(), "mon.db")
	firstSnapshots(t, db, site, "/a")
	cmd := exec.Command(monitorBinary(t), "alert", "add", "-db", db, "-allow-private", "-email", "seo@example.com",
		"-smtp", mp.SMTP, "-smtp-user", "monitor", "-smtp-pass-env", "MONITOR_SMTP_PASS")
	cmd.Env = append(cmd.Environ(), "MONITOR_SMTP_PASS=pw")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	code, lst, _ := runBinary(t, "alert", "list", "-db", db)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, lst, "email to seo@example.com via "+mp.SMTP)
	assert.NotContains(t, lst, "pw")

	changed.Store(true)
	makeDue(t, db)
	code, runOut, errOut := runBinary(t, "run", "-db", db, "-allow-private", "-gap", "1s", "-public-url", "http://127.0.0.1:8080")
	require.Equal(t, exitOK, code, runOut+errOut)
	msgs := mp.Messages(t)
	require.Len(t, msgs, 1)
	m := msgs[0]
	assert.Equal(t, "monitor", m.Username, "AUTH as configured")
	assert.Contains(t, m.Subject, "[medium] title")
	assert.Contains(t, m.Subject, site.URL+"/a")
	assert.Contains(t, m.Text, `"Pricing /a" -> "Pricing 2027 /a"`)
	assert.Contains(t, m.Text, "History: http://127.0.0.1:8080/page?url=")
}

// TestBinaryAlertDestinationsRefusedInEmptyNetns: inside a namespace with
// only lo, private and link-local destinations (servers on lo that must see
// nothing) are refused by alert add, before any connection.
func TestBinaryAlertDestinationsRefusedInEmptyNetns(t *testing.T) {
	if !inEmptyNetns(t) {
		return
	}
	for _, a := range []string{"10.0.0.1", "169.254.169.254"} {
		addLoopbackAddr(t, a)
	}
	lan := newTripwire(t, "tcp4", "10.0.0.1:80")
	meta := newTripwire(t, "tcp4", "169.254.169.254:80")
	smtpLn, err := net.Listen("tcp4", "10.0.0.1:2525")
	require.NoError(t, err)
	var smtpHits atomic.Int64
	go func() {
		for {
			c, err := smtpLn.Accept()
			if err != nil {
				return
			}
			smtpHits.Add(1)
			c.Close()
		}
	}()
	defer smtpLn.Close()
	db := filepath.Join(t.TempDir(), "mon.db")
	code, _, errOut := runBinary(t, "track", "-db", db, "-allow-private", "http://10.0.0.1/")
	require.Equal(t, exitOK, code, errOut)
	for _, args := range [][]string{
		{"-webhook", "http://10.0.0.1/hook"},
		{"-webhook", "http://169.254.169.254/latest/meta-data/"},
		{"-slack", "http://[::ffff:a9fe:a9fe]/services/x"},
		{"-webhook", "http://meta.example/", "-resolve", "meta.example:80:169.254.169.254"},
		{"-email", "a@example.com", "-smtp", "10.0.0.1:2525"},
	} {
		code, out, errOut := runBinary(t, append([]string{"alert", "add", "-db", db}, args...)...)
		assert.Equal(t, exitUsage, code, "%v: %s%s", args, out, errOut)
		assert.Contains(t, errOut, "refused: ", "%v", args)
	}
	assert.Zero(t, lan.hits.Load(), "10.0.0.1 saw no request")
	assert.Zero(t, meta.hits.Load(), "169.254.169.254 saw no request")
	assert.Zero(t, smtpHits.Load(), "the SMTP server saw no connection")
}
