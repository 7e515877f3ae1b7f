package main

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/internal/testsite"
)

// The browser's life: started only by -render, always shut down, nothing of it left behind.

// processesMentioning lists the processes whose command line contains s (the browser and every child
// of it carries --user-data-dir=<profile under $TMPDIR>).
func processesMentioning(t *testing.T, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmd, []byte(s)) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(st), ") Z ") {
			continue // a zombie has exited; it is waiting for its parent (here: init) to reap it
		}
		out = append(out, e.Name()+" "+string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
	}
	return out
}

// profiles lists the browser profile directories (chromedp's "chromedp-runner*") under dir.
func profiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "chromedp-runner*"))
	require.NoError(t, err)
	return m
}

func TestRenderInterruptedKeepsWhatWasRenderedAndLeavesNoBrowser(t *testing.T) {
	requireBrowser(t)
	n := testsite.NewNetwork(t, testsite.Loopback)
	s := n.Add("shop.test")
	s.Robots("User-agent: *\nDisallow:\n")
	s.HTML("/", jsPage("Home", "Home", `<script src="/s/quick.js"></script>`, `<a href="/a">A</a> <a href="/b">B</a>`))
	s.Route("/s/quick.js", script("window.q = 1;"))
	s.HTML("/a", jsPage("A", "A", `<script src="/s/slow.js"></script>`, ""))
	s.Route("/s/slow.js", testsite.Response{ContentType: "text/javascript", Body: "window.s = 1;", Delay: time.Minute})
	s.HTML("/b", jsPage("B", "B", "", ""))

	// The browser's profile goes here: $TMPDIR of the program. Short, because Chromium puts a Unix
	// socket there and socket paths are limited to about 100 bytes.
	tmp, err := os.MkdirTemp("", "rt")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(tmp) })
	db := filepath.Join(t.TempDir(), "audit.db")
	args := append([]string{"-db", db, "-quiet", "-gap", "0", "-concurrency", "1", "-render", "3"}, resolveArgs(n)...)
	args = append(args, "http://shop.test/")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), subprocessArgs+"="+strings.Join(args, "\x1f"), "TMPDIR="+tmp,
		"HTTP_PROXY=", "http_proxy=", "NO_PROXY=*")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		for _, p := range processesMentioning(t, tmp) {
			t.Logf("killing leftover %s", p)
			var pid int
			if _, err := fmt.Sscan(p, &pid); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})

	// Ctrl-C once the browser is stuck on the second page's slow script.
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(strings.Join(paths(s.Requests(), browserUA), " "), "/s/slow.js") {
		select {
		case err := <-exited:
			t.Fatalf("the program ended before the rendered pass reached /a: %v\n%s\n%s", err, &stdout, &stderr)
		case <-time.After(50 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "the browser never asked for /s/slow.js\n%s", &stderr)
	}
	require.NotEmpty(t, processesMentioning(t, tmp), "the browser runs with its profile under $TMPDIR")
	require.Len(t, profiles(t, tmp), 1, "one browser, one fresh profile")
	require.NoError(t, cmd.Process.Signal(os.Interrupt))

	select {
	case err = <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("the program did not end after Ctrl-C\n%s", &stderr)
	}
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "exit status: %v\n%s", err, &stderr)
	assert.Equal(t, crawl.ExitFailure, ee.ExitCode(), "an interrupted run exits 1, as today\n%s", &stderr)
	assert.Contains(t, stderr.String(), "audit: interrupted; everything crawled so far is in")

	assert.Empty(t, processesMentioning(t, tmp), "no browser process is left")
	assert.Empty(t, profiles(t, tmp), "the browser's profile directory is removed")

	d, err := sql.Open("sqlite", db)
	require.NoError(t, err)
	defer d.Close()
	var outcome, runOutcome string
	require.NoError(t, d.QueryRow(`SELECT outcome FROM crawls`).Scan(&outcome))
	require.NoError(t, d.QueryRow(`SELECT outcome FROM render_runs`).Scan(&runOutcome))
	assert.Equal(t, "interrupted", outcome)
	assert.Equal(t, "interrupted", runOutcome)
	var title string
	require.NoError(t, d.QueryRow(`SELECT title FROM render_pages WHERE url = 'http://shop.test/' AND error IS NULL`).Scan(&title),
		"the page rendered before Ctrl-C is kept")
	assert.Equal(t, "Home", title)
	var loaded int
	require.NoError(t, d.QueryRow(`SELECT COUNT(*) FROM render_requests WHERE page_url = 'http://shop.test/' AND outcome = 'loaded'`).Scan(&loaded))
	assert.Equal(t, 2, loaded, "the home page and its script")
	assert.NotContains(t, paths(s.Requests(), browserUA), "/b", "no page is started after Ctrl-C")
}

func TestRenderWithoutBrowserIsAUsageError(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no browser anywhere
	for _, args := range [][]string{
		{"-render", "5", "http://shop.test/"},
		{"-render", "5", "-demo"},
	} {
		db := filepath.Join(t.TempDir(), "a.db")
		var out, errb bytes.Buffer
		code := run(t.Context(), append([]string{"-db", db}, args...), &out, &errb)
		assert.Equal(t, crawl.ExitUsage, code)
		assert.Contains(t, errb.String(), "looked for chromium, chromium-browser, google-chrome")
		assert.Contains(t, errb.String(), "apt-get install chromium")
		assert.NoFileExists(t, db, "a usage error touches nothing")
	}

	var out, errb bytes.Buffer
	code := run(t.Context(), []string{"-render", "1", "-browser", "/no/such/chromium", "http://shop.test/"}, &out, &errb)
	assert.Equal(t, crawl.ExitUsage, code)
	assert.Contains(t, errb.String(), "-browser /no/such/chromium")
	assert.Contains(t, errb.String(), "apt-get install chromium")

	code = run(t.Context(), []string{"-render", "501", "http://shop.test/"}, &out, &errb)
	assert.Equal(t, crawl.ExitUsage, code)
	assert.Contains(t, errb.String(), "-render 501: must be from 0 to 500")
}

func TestRenderOffStartsNoBrowser(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("PATH", t.TempDir()) // no browser needed, none looked for
	n, e := loopNet(t)
	s := n.Add("shop.test")
	renderShop(s)
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Empty(t, paths(s.Requests(), browserUA), "no browser request reached the site")
	assert.Zero(t, r.int(t, `SELECT COUNT(*) FROM render_runs`))
	assert.Zero(t, r.int(t, `SELECT COUNT(*) FROM render_pages`))
	assert.NotContains(t, r.stdout, "Rendered pass")
	assert.Empty(t, profiles(t, tmp), "no browser profile was made")
	assert.Empty(t, processesMentioning(t, tmp))
}

// A browser that cannot start fails the run (exit 1) with its reason; the crawl before it is kept.
func TestRenderBrowserThatFailsToStart(t *testing.T) {
	tmp, err := os.MkdirTemp("", "rf")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)
	fake := filepath.Join(t.TempDir(), "chromium")
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho 'this browser is broken' >&2\nexit 3\n"), 0o755))
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", jsPage("Home", "Home", "", ""))
	r := audit(t, e, "-gap", "0", "-render", "5", "-browser", fake, "http://shop.test/")
	require.Equal(t, crawl.ExitFailure, r.code, r)
	assert.Contains(t, r.stderr, "rendered pass (the crawl itself finished): starting the browser "+fake)
	assert.Contains(t, r.stderr, "this browser is broken")
	assert.Equal(t, 1, r.int(t, `SELECT COUNT(*) FROM pages WHERE status = 200`), "the crawl is kept")
	assert.Equal(t, []string{"failed"}, r.strs(t, `SELECT outcome FROM crawls`))
	assert.Empty(t, profiles(t, tmp), "its profile is removed")
	assert.Empty(t, processesMentioning(t, tmp))
}

func TestHelpShowsRenderFlags(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, crawl.ExitOK, run(t.Context(), []string{"-h"}, &out, &errb))
	assert.Contains(t, errb.String(), "-render N")
	assert.Contains(t, errb.String(), "-browser path")
}
