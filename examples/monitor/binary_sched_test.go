package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryRulesAndRunNow: the built binary takes rules on track, shows
// and replaces them with `rules`, refuses a bad pattern (exit 2), takes one
// snapshot with `run -now`, refuses a second one inside six hours (exit
// 3, saying from when it is allowed), and a `run` with the page not due
// takes nothing.
func TestBinaryRulesAndRunNow(t *testing.T) {
	var visits atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
			return
		}
		n := visits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<html><body><p class="count">Visitor %d</p><article><h1>News</h1><p>Same story.</p></article></body></html>`, n)
	}))
	defer site.Close()
	db := filepath.Join(t.TempDir(), "mon.db")
	page := site.URL + "/story"

	code, _, errOut := runBinary(t, "track", "-db", db, "-allow-private", "-ignore", "(", page)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "textscope: ignore rule 1")

	code, out, errOut := runBinary(t, "track", "-db", db, "-allow-private", "-select", "article", page)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `rules of `+page+`: select "article"`)
	code, out, errOut = runBinary(t, "rules", "-db", db, "-exclude", ".count", page)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "rules of "+page+": exclude \".count\"\n", out)

	code, out, errOut = runBinary(t, "run", "-db", db, "-allow-private", "-now", page)
	require.Equal(t, exitOK, code, errOut)
	assert.True(t, strings.HasPrefix(out, "ok      "+page+": HTTP 200\nnext scheduled check of "+page+" at "), out)
	assert.Equal(t, int64(1), visits.Load())

	code, out, errOut = runBinary(t, "run", "-db", db, "-allow-private", "-now", page)
	assert.Equal(t, exitRefused, code, out)
	assert.Contains(t, errOut, "check now of "+page+" refused: its last snapshot was taken at ")
	assert.Contains(t, errOut, "; allowed from ")
	assert.Equal(t, int64(1), visits.Load(), "nothing fetched")

	code, out, errOut = runBinary(t, "run", "-db", db, "-allow-private")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "run: 0 due")

	code, _, errOut = runBinary(t, "run", "-db", db, "-catch-up", "0")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "-catch-up must be between 1 and 15360 checks a minute, got 0")
	code, _, errOut = runBinary(t, "run", "-db", db, "-catch-up", "15361")
	assert.Equal(t, exitUsage, code, "above what -parallel 256 at one request a second can start")
	assert.Contains(t, errOut, "got 15361")
}
