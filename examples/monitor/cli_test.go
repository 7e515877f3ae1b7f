package main

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is the injected clock of the tests: time moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// cli runs the monitor in-process and returns exit status, stdout, stderr.
func cli(t *testing.T, e env, args ...string) (int, string, string) {
	t.Helper()
	return cliCtx(t, context.Background(), e, args...)
}

func cliCtx(t *testing.T, ctx context.Context, e env, args ...string) (int, string, string) {
	t.Helper()
	if e.guardHooks.Resolver == nil {
		// No test asks the system's DNS (a test network's transport
		// resolves its own names; the guard's name check finds nothing).
		e.guardHooks.Resolver = noDNS
	}
	var out, errOut bytes.Buffer
	code := runEnv(ctx, args, &out, &errOut, e)
	return code, out.String(), errOut.String()
}

// noDNS is the resolver of tests that use the real transport: it knows no
// name, so no test sends a DNS query off this machine (test sites are
// reached by -resolve or by their loopback address).
var noDNS = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
	return nil, &net.DNSError{Err: "no DNS server (tests do not use DNS)", IsNotFound: true}
}}

func tempDB(t *testing.T) string { return filepath.Join(t.TempDir(), "monitor.db") }

func TestUsageErrors(t *testing.T) {
	db := tempDB(t)
	cases := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"no command", nil, "usage:"},
		{"unknown command", []string{"crawl", "-db", db}, `unknown command "crawl"`},
		{"missing db", []string{"status"}, "-db PATH is required"},
		{"interval below minimum", []string{"track", "-db", db, "-interval", "5h59m", "https://example.com/"}, "-interval 5h59m is below the minimum of 6h"},
		{"interval zero", []string{"track", "-db", db, "-interval", "0s", "https://example.com/"}, "minimum of 6h"},
		{"no url", []string{"track", "-db", db}, "no URL given"},
		{"relative url", []string{"track", "-db", db, "/pricing"}, "bad URL"},
		{"ftp url", []string{"track", "-db", db, "ftp://example.com/x"}, "http:// or https://"},
		{"untrack no url", []string{"untrack", "-db", db}, "no URL given"},
		{"bad flag", []string{"run", "-db", db, "-bogus"}, "flag provided but not defined"},
		{"gap below minimum", []string{"run", "-db", db, "-gap", "500ms"}, "-gap 500ms is below the minimum of 1s"},
		{"extra argument", []string{"run", "-db", db, "https://example.com/"}, "unexpected argument"},
		{"negative since", []string{"report", "-db", db, "-since", "-1h"}, "-since"},
		{"bad resolve", []string{"status", "-db", db, "-resolve", "example.com:80"}, "HOST:PORT:ADDR"},
		{"bad timeout", []string{"status", "-db", db, "-timeout", "0s"}, "-timeout"},
		{"two-line user agent", []string{"status", "-db", db, "-user-agent", "a\nb"}, "-user-agent"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := cli(t, env{}, tc.args...)
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

func TestHelpExitsZero(t *testing.T) {
	code, _, stderr := cli(t, env{}, "track", "-h")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stderr, "-interval")
	code, stdout, _ := cli(t, env{}, "help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "monitor watch")
}

func TestDatabaseFailureExitsOne(t *testing.T) {
	dir := t.TempDir()
	// A directory is not a database.
	code, _, stderr := cli(t, env{}, "status", "-db", dir)
	assert.Equal(t, exitFailure, code)
	assert.NotEmpty(t, stderr)
}

func TestTrackUntrackStatus(t *testing.T) {
	clk := newFakeClock()
	e := env{now: clk.Now}
	db := tempDB(t)

	code, out, errOut := cli(t, e, "track", "-db", db, "HTTPS://Example.COM:443/a#frag", "http://example.org")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "tracking https://example.com/a every 6h")
	assert.Contains(t, out, "tracking http://example.org/ every 6h")

	code, out, _ = cli(t, e, "status", "-db", db)
	require.Equal(t, exitOK, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, "2 pages tracked, 0 snapshots; conditional GET: 0 answered 304 not modified, 0 B not downloaded again", lines[2])
	assert.Equal(t, "http://example.org/  last check: never  next due: now  not checked yet", lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "https://example.com/a  "), lines[1])

	// Tracking again changes the interval, not the identity.
	code, _, _ = cli(t, e, "track", "-db", db, "-interval", "24h", "https://example.com/a")
	require.Equal(t, exitOK, code)
	st := openTestStore(t, db)
	pages, err := st.Pages(context.Background())
	require.NoError(t, err)
	require.Len(t, pages, 2)
	assert.Equal(t, 24*time.Hour, pages[1].Interval)
	assert.Equal(t, clk.Now(), pages[1].Added)

	code, out, _ = cli(t, e, "untrack", "-db", db, "http://example.org/")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "untracked http://example.org/")

	code, _, errOut = cli(t, e, "untrack", "-db", db, "http://example.org/")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "not tracked: http://example.org/")

	pages, err = st.Pages(context.Background())
	require.NoError(t, err)
	require.Len(t, pages, 1)
	assert.Equal(t, "https://example.com/a", pages[0].URL)
}

func TestCanonicalURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://Example.com":              "http://example.com/",
		"https://example.com:443/p?q=1#x": "https://example.com/p?q=1",
		"http://example.com:8080/":        "http://example.com:8080/",
		"http://[::1]:80/x":               "http://[::1]/x",
		"  https://a.example/ ":           "https://a.example/",
		"example.com":                     "https://example.com/", // a bare host with a dot, as the audit reads it
		"Shop.Example/pricing?x=1":        "https://shop.example/pricing?x=1",
	} {
		got, err := canonicalURL(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for _, bad := range []string{"", "notaurl", "localhost", "/pricing", "mailto:a@b.c", "http://user:pw@example.com/", "http://example.com:99999/", "http:///x", strings.Repeat("a", 9000)} {
		_, err := canonicalURL(bad)
		assert.Error(t, err, bad)
	}
}

// The monitor takes the same start URLs as the audit (urlnorm.StartURL):
// "notaurl" is a usage error naming it, a bare host with a dot is https.
func TestTrackValidatesURLsLikeTheAudit(t *testing.T) {
	db := tempDB(t)
	code, _, errOut := cli(t, env{}, "track", "-db", db, "notaurl")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `bad URL "notaurl"`)
	code, out, errOut := cli(t, env{}, "track", "-db", db, "example.com")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "tracking https://example.com/ every 6h\n", out)
}

func TestResolveFlag(t *testing.T) {
	r := resolveFlag{}
	require.NoError(t, r.Set("Example.com:443:127.0.0.1"))
	require.NoError(t, r.Set("v6.example:8080:[::1]"))
	require.NoError(t, r.Set("site.test:80:127.0.0.1:8443"))
	assert.Equal(t, resolveFlag{"example.com:443": "127.0.0.1:443", "v6.example:8080": "[::1]:8080",
		"site.test:80": "127.0.0.1:8443"}, r)
	for _, bad := range []string{"example.com", "example.com:x:127.0.0.1", ":80:127.0.0.1", "a:80:", "a:80:bad/addr"} {
		assert.Error(t, r.Set(bad), bad)
	}
}

func TestFmtDuration(t *testing.T) {
	assert.Equal(t, "6h", fmtDuration(6*time.Hour))
	assert.Equal(t, "1s", fmtDuration(time.Second))
	assert.Equal(t, "1h30m", fmtDuration(90*time.Minute))
	assert.Equal(t, "1m30s", fmtDuration(90*time.Second))
}

// TestNumericFlagsRefuseNaNInfAndOutOfRange: NaN compares false with every
// bound, so "-check-rate NaN" used to pass "rate <= 0" and turn the free
// tool's rate limit off; every numeric flag is range-checked.
func TestNumericFlagsRefuseNaNInfAndOutOfRange(t *testing.T) {
	db := tempDB(t)
	serve := []string{"serve", "-db", db, "-addr", "127.0.0.1:0"}
	cases := [][]string{
		append(serve, "-check-rate", "NaN"),
		append(serve, "-check-rate", "nan"),
		append(serve, "-check-rate", "+Inf"),
		append(serve, "-check-rate", "Inf"),
		append(serve, "-check-rate", "-Inf"),
		append(serve, "-check-rate", "0"),
		append(serve, "-check-rate", "-5"),
		append(serve, "-check-rate", "1e300"),
		append(serve, "-check-burst", "0"),
		append(serve, "-check-burst", "1000000000"),
		append(serve, "-parallel", "257"),
		append(serve, "-gap", "1000h"),
		append(serve, "-timeout", "-1s"),
		append(serve, "-timeout", "1000h"),
		{"track", "-db", db, "-interval", "100000h", "https://example.com/"},
		{"run", "-db", db, "-parallel", "0"},
	}
	for _, args := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		code, _, stderr := cliCtx(t, ctx, env{}, args...)
		cancel()
		assert.Equal(t, exitUsage, code, "%v: %s", args, stderr)
		flagName := ""
		for _, a := range args {
			if strings.HasPrefix(a, "-") && a != "-db" && a != "-addr" && !strings.HasPrefix(a, "-I") && !strings.HasPrefix(a, "-5") && !strings.HasPrefix(a, "-1") {
				flagName = a
			}
		}
		assert.Contains(t, stderr, flagName, "the error names the flag: %v", args)
	}
}
