package main

import (
	"bytes"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The built binary with a database of the layout before interned URLs: report refuses it with exit 2 and
// the command that converts it, `audit migrate` converts it (exit 0, again a no-op), and the report reads
// it then. migrate of a file that does not exist creates none.
func TestMigrateCommandBinary(t *testing.T) {
	dir := t.TempDir()
	bin := buildAudit(t)
	old := filepath.Join(dir, "old.db")
	schema, err := os.ReadFile("internal/store/testdata/layout1.sql")
	require.NoError(t, err)
	db, err := sql.Open("sqlite", old)
	require.NoError(t, err)
	_, err = db.Exec(string(schema) + `INSERT INTO crawls (id, start_url, user_agent, robots_token, started_at, finished_at, settings, outcome, pages, requests)
		VALUES (1, 'http://shop.test/', 'x', 'x', '2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z', '{}', 'finished', 2, 3);
		INSERT INTO pages (crawl_id, url, status, depth, source, title) VALUES (1, 'http://shop.test/', 200, 0, 'start', 'Home'), (1, 'http://shop.test/a', 404, 1, 'link', NULL);
		INSERT INTO links (crawl_id, from_url, to_url, external, nofollow, anchor, tag) VALUES (1, 'http://shop.test/', 'http://shop.test/a', 0, 0, 'A', 'a');`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		cmd := exec.CommandContext(t.Context(), bin, args...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), out.String(), errb.String()
		}
		require.NoError(t, err)
		return 0, out.String(), errb.String()
	}
	code, _, stderr := run("report", "-db", old, "-o", "-")
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, old+": written by an earlier version of the audit (layout 1")
	assert.Contains(t, stderr, "audit migrate -db "+old)

	for range 2 {
		code, stdout, stderr := run("migrate", "-db", old)
		assert.Equal(t, 0, code, stderr)
		assert.Equal(t, old+": in this version's layout\n", stdout)
	}
	code, stdout, stderr := run("report", "-db", old, "-format", "json", "-o", "-")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `"to_url":"http://shop.test/a"`)

	missing := filepath.Join(dir, "missing.db")
	code, _, stderr = run("migrate", "-db", missing)
	assert.Equal(t, 2, code, stderr)
	assert.NoFileExists(t, missing)
	code, _, stderr = run("migrate", "-db", old, "extra")
	assert.Equal(t, 2, code, stderr)
}
