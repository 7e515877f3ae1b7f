package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A full disk: the crawl stops at the first failed write, says so with the path and the cause, exits 1,
// keeps the crawl interrupted and resumable, and what the file holds is a prefix of the crawl (a write
// error loses a suffix, never a middle).

// bulkySite is a loopback site of n pages, each with many internal links with long anchors, so that its
// links fill a small disk quickly.
func bulkySite(t *testing.T, n int) *httptest.Server {
	anchor := strings.Repeat("a long anchor text that takes room in the links table ", 3)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
			return
		case "/llms.txt":
			http.NotFound(w, r)
			return
		}
		var i int
		if r.URL.Path != "/" {
			if _, err := fmt.Sscanf(r.URL.Path, "/p%d", &i); err != nil || i < 1 || i > n {
				http.NotFound(w, r)
				return
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "<!doctype html><title>Page %d</title><h1>Page %d</h1>", i, i)
		for j := range 40 {
			fmt.Fprintf(&b, `<a href="/p%d">%s %d</a>`, (i*40+j)%n+1, anchor, j)
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, b.String())
	}))
	t.Cleanup(srv.Close)
	return srv
}

// smallDisk mounts a tmpfs of size (e.g. "2m") and returns its path and a function that grows it. It
// skips where mounting is not allowed (not root, no CAP_SYS_ADMIN) and fails under CI.
func smallDisk(t *testing.T, size string) (dir string, grow func(size string)) {
	t.Helper()
	dir = t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		msg := fmt.Sprintf("cannot mount a %s tmpfs for the full-disk test (run as root, or in a container with CAP_SYS_ADMIN): %v %s", size, err, out)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir, func(size string) {
		out, err := exec.Command("mount", "-o", "remount,size="+size, dir).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
}

// runBinary runs the audit program (this test binary as main, with the race detector when the tests
// have it) with args and returns its exit code and output.
func runBinary(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), subprocessArgs+"="+strings.Join(args, "\x1f"), "HTTP_PROXY=", "http_proxy=")
	return runCmd(t, cmd)
}

// runBuilt runs the built program (buildAudit) with args and returns its exit code and output.
func runBuilt(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(buildAudit(t), args...)
	cmd.Env = append(os.Environ(), "HTTP_PROXY=", "http_proxy=")
	return runCmd(t, cmd)
}

func runCmd(t *testing.T, cmd *exec.Cmd) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), errb.String()
	}
	require.NoError(t, err)
	return 0, out.String(), errb.String()
}

// The failing run is the test binary's (under -race, the write error's path through the writer and the
// crawlers); the resume, most of the pages, the built program's. 2 MB hold about 75 of these pages.
func TestFullDiskStopsTheCrawlAndResumes(t *testing.T) {
	const n = 200
	srv := bulkySite(t, n)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	dir, grow := smallDisk(t, "2m")
	db := filepath.Join(dir, "shop.db")
	args := []string{"-db", db, "-gap", "0", "-concurrency", "4", "-max-pages", "1000", "-resolve", "shop.test:80:127.0.0.1:" + port, "http://shop.test/"}

	code, stdout, stderr := runBinary(t, args...)
	require.Equal(t, crawl.ExitFailure, code, "a full disk is a failure\n%s%s", stdout, stderr)
	assert.NotContains(t, stdout, "finished", "a crawl that could not write its pages is not finished")
	assert.Contains(t, stderr, "audit: writing "+db+": ", "the path")
	assert.Contains(t, stderr, "full", "the cause (SQLITE_FULL: database or disk is full)")
	assert.Contains(t, stderr, "audit -resume -db "+db+" -crawl 1", "how to go on")
	_, err := os.Stat(filepath.Join(dir, "shop-report-1.html"))
	assert.True(t, errors.Is(err, os.ErrNotExist), "no report of a crawl whose rows are missing")

	grow("64m") // room again: what is in the file must be a prefix of the crawl, and resumable
	assertIntact(t, db)
	sdb := openDB(t, db)
	var outcome string
	var pages, done, links int
	require.NoError(t, sdb.QueryRow(`SELECT outcome, (SELECT COUNT(*) FROM pages), (SELECT COUNT(*) FROM queue WHERE state = 1),
		(SELECT COUNT(*) FROM links) FROM crawls WHERE id = 1`).Scan(&outcome, &pages, &done, &links))
	assert.Contains(t, []string{"interrupted", "running"}, outcome, "never finished; running only if the full disk refused even that update")
	require.Less(t, pages, n+1, "the disk filled up before the crawl ended")
	if pages > 0 {
		assert.Equal(t, 1, countRows(t, sdb, `SELECT COUNT(*) FROM pages WHERE url = 'http://shop.test/'`), "the start page is there when any page is")
	}
	assert.Equal(t, 0, countRows(t, sdb, `SELECT COUNT(*) FROM queue q WHERE state = 1 AND NOT EXISTS (SELECT 1 FROM pages p WHERE p.url = q.url)`),
		"every page acknowledged has its row")
	assert.Equal(t, 0, countRows(t, sdb, `SELECT COUNT(*) FROM pages p WHERE links_internal > 0 AND
		links_internal + links_external != (SELECT COUNT(*) FROM links l WHERE l.from_url = p.url)`), "every page row has all its links")
	assert.Equal(t, 0, countRows(t, sdb, `SELECT COUNT(*) FROM pages p WHERE depth > 0 AND NOT EXISTS (SELECT 1 FROM pages f WHERE f.url = p.found_on)`),
		"every page's referrer is there: no hole in the middle")
	sdb.Close()

	code, stdout, stderr = runBuilt(t, "-resume", "-db", db, "-resolve", "shop.test:80:127.0.0.1:"+port)
	require.Equal(t, crawl.ExitOK, code, "%s%s", stdout, stderr)
	assert.Contains(t, stdout, "Crawl 1 of http://shop.test/ finished")
	sdb = openDB(t, db)
	assert.Equal(t, n+1, countRows(t, sdb, `SELECT COUNT(*) FROM pages`), "every page once: / and /p1../p%d", n)
	assert.Equal(t, (n+1)*40, countRows(t, sdb, `SELECT COUNT(*) FROM links`), "every link once")
}

func countRows(t *testing.T, db *sql.DB, q string) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRowContext(context.Background(), q).Scan(&n), q)
	return n
}
