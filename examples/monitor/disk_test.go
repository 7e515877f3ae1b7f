package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mountTmpfs mounts a tmpfs of size bytes on a new directory (inside the
// test's own mount namespace, see inNamespace).
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	require.NoError(t, os.Mkdir(dir, 0o755))
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	require.NoError(t, err, "mount tmpfs: %s", out)
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fillDisk writes a file in dir until the file system is full, then frees
// keep bytes of it.
func fillDisk(t *testing.T, dir string, keep int64) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	require.NoError(t, err)
	buf := make([]byte, 4096)
	var n int64
	for {
		k, err := f.Write(buf)
		n += int64(k)
		if err != nil {
			require.True(t, errors.Is(err, syscall.ENOSPC), "filling the disk: %v", err)
			break
		}
	}
	require.NoError(t, f.Truncate(max(n-keep, 0)))
	require.NoError(t, f.Close())
	return path
}

// randomWords is text that does not compress: a page whose snapshot needs
// more room than the full disk has.
func randomWords(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for range n {
		fmt.Fprintf(&b, "%x ", r.Uint64())
	}
	return b.String()
}

// TestBinaryFullDiskPrintsOnlyWhatWasSaved: on a full disk `run` prints no
// "ok" for a snapshot it could not commit, names the database file, exits 1,
// and leaves the page due (not claimed for the 15-minute lease).
func TestBinaryFullDiskPrintsOnlyWhatWasSaved(t *testing.T) {
	if !inNamespace(t, "-rm") {
		return
	}
	big := "<!doctype html><title>Big</title><p>" + randomWords(6000) + "</p>"
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, big)
	}))
	defer site.Close()

	dir := mountTmpfs(t, 1<<20)
	db := filepath.Join(dir, "mon.db")
	code, _, errOut := runBinary(t, "track", "-db", db, "-allow-private", site.URL+"/big")
	require.Equal(t, exitOK, code, errOut)
	filler := fillDisk(t, dir, 48<<10)

	code, out, errOut := runBinary(t, "run", "-db", db, "-allow-private")
	assert.Equal(t, exitFailure, code, "stdout: %s\nstderr: %s", out, errOut)
	assert.NotContains(t, out, "ok      ", "nothing was saved, so nothing is ok")
	assert.Contains(t, errOut, "database "+db+": ", "the error names the file")
	assert.Contains(t, errOut, "not saved")

	// Room again: the page is due at once, not held for the lease.
	require.NoError(t, os.Remove(filler))
	code, out, errOut = runBinary(t, "run", "-db", db, "-allow-private")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "ok      "+site.URL+"/big: HTTP 200")
	assert.Contains(t, out, "run: 1 due, 1 snapshots")
}

// TestBinaryReadOnlyCommandsWorkOnAReadOnlyMount: status and report open the
// database read-only; commands that write say which file they cannot write.
func TestBinaryReadOnlyCommandsWorkOnAReadOnlyMount(t *testing.T) {
	if !inNamespace(t, "-rm") {
		return
	}
	dir := mountTmpfs(t, 4<<20)
	db := filepath.Join(dir, "mon.db")
	code, _, errOut := runBinary(t, "track", "-db", db, "https://example.com/", "https://example.org/a")
	require.Equal(t, exitOK, code, errOut)
	before, err := os.ReadDir(dir)
	require.NoError(t, err)
	out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput()
	require.NoError(t, err, "remount ro: %s", out)

	code, stdout, errOut := runBinary(t, "status", "-db", db)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, stdout, "https://example.com/  last check: never")
	assert.Contains(t, stdout, "2 pages tracked")
	code, stdout, errOut = runBinary(t, "report", "-db", db)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, stdout, "no changes")

	code, _, errOut = runBinary(t, "track", "-db", db, "https://example.net/")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, db, "the error names the file")
	after, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Equal(t, len(before), len(after))
}
