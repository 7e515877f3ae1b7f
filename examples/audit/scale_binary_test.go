package main

import (
	"database/sql"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
)

// The built program's -timings prints the phases bench/scale.sh reads, in order: the crawl, the build of
// the links' index by target that the crawl left out (link_rows_to), the findings passes and the report;
// and the file it leaves has that index.
func TestBuiltBinaryTimings(t *testing.T) {
	n, _ := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	flatSite(s, 12, 0)
	db := filepath.Join(t.TempDir(), "shop.db")
	args := append([]string{"-db", db, "-gap", "0", "-quiet", "-timings"}, resolveArgs(n)...)
	code, stdout, stderr := runBuilt(t, append(args, "http://shop.test/")...)
	require.Equal(t, crawl.ExitOK, code, "%s%s", stdout, stderr)

	var phases []string
	for _, m := range regexp.MustCompile(`(?m)^timing ([a-z]+) [0-9]+\.[0-9]{3}s$`).FindAllStringSubmatch(stderr, -1) {
		phases = append(phases, m[1])
	}
	assert.Equal(t, []string{"crawl", "index", "render", "findings", "report"}, phases, stderr)
	// And what the memory was before and after the passes, the process's as well as the Go heap's, and
	// each pass's time in the order they ran.
	assert.Regexp(t, `(?m)^memory before the passes: live heap [0-9.]+ MB .*; process RSS [0-9.]+ MB, peak [0-9.]+ MB \(RSS [0-9.]+ MB, peak [0-9.]+ MB\)$`, stderr)
	assert.Regexp(t, `(?m)^passes: prepare [0-9.]+s, pages [0-9.]+s, documents .*, link score: load\+rank [0-9.]+s, link score [0-9.]+s; process RSS [0-9.]+ MB, peak [0-9.]+ MB$`, stderr)
	assert.Regexp(t, `(?m)^memory before the report: process RSS [0-9.]+ MB, peak [0-9.]+ MB$`, stderr)

	f, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	require.NoError(t, err)
	defer f.Close()
	var indexes int
	require.NoError(t, f.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'link_rows_to'`).Scan(&indexes))
	assert.Equal(t, 1, indexes, "the crawl's end built link_rows_to")
}

// A crawl written by a version of the audit with other near-duplicate fingerprints (version 1 recorded
// none in its settings) is refused by the built program's -resume, with the reason and what to do.
func TestBuiltBinaryRefusesResumeOfOtherFingerprints(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	flatSite(s, 8, 0)
	db := filepath.Join(t.TempDir(), "shop.db")
	ie, ctx := interruptAfter(e, "/p3")
	r := auditCtx(t, ctx, db, ie, "-gap", "0", "-concurrency", "1", "http://shop.test/")
	require.Equal(t, crawl.ExitFailure, r.code, r)
	_, err := r.db.Exec(`UPDATE crawls SET settings = json_remove(settings, '$.fingerprint')`)
	require.NoError(t, err)

	code, stdout, stderr := runBuilt(t, append([]string{"-resume", "-db", db, "-crawl", "1"}, resolveArgs(n)...)...)
	assert.Equal(t, crawl.ExitUsage, code, "%s%s", stdout, stderr)
	assert.Contains(t, stderr, "written by another version of the audit")
	assert.Contains(t, stderr, "start a new crawl")
	var pages int
	require.NoError(t, r.db.QueryRow(`SELECT count(*) FROM pages`).Scan(&pages))
	assert.Less(t, pages, 9, "nothing more was crawled")
}
