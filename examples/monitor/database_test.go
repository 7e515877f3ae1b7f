package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/monitor/internal/store"
)

// rawDB opens the database file with plain SQL, for tests that write rows
// by hand or read columns the store does not expose.
func rawDB(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(tb, err)
	tb.Cleanup(func() { db.Close() })
	return db
}

func openTestStore(t *testing.T, path string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), path, store.CreateIfMissing)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

func TestPermissionDeniedNamesThePath(t *testing.T) {
	// A directory nobody may create files in, root included: sysfs refuses
	// new files with EACCES.
	if _, err := os.Stat("/sys/kernel"); err == nil {
		code, _, errOut := cli(t, env{}, "track", "-db", "/sys/monitor-test.db", "https://example.com/")
		assert.Equal(t, exitFailure, code)
		assert.Contains(t, errOut, "database /sys/monitor-test.db: permission denied (cannot create monitor-test.db in /sys)")
		assert.NotContains(t, errOut, "(14)")
	}
	if os.Geteuid() == 0 {
		return // root reads and writes any file whatever its mode
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ro.db")
	st := openTestStore(t, path)
	require.NoError(t, st.Close())
	require.NoError(t, os.Chmod(path, 0o400))
	code, _, errOut := cli(t, env{}, "status", "-db", path)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "database "+path+": permission denied")
}

func appID(t *testing.T, path string) int64 {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var id int64
	require.NoError(t, db.QueryRow(`PRAGMA application_id`).Scan(&id))
	return id
}

func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// TestOtherProgramsDatabasesAreRefusedUntouched: the audit's database, one
// of an unknown program and an unmarked one with other tables are refused
// by every command before anything is written.
func TestOtherProgramsDatabasesAreRefusedUntouched(t *testing.T) {
	for _, tc := range []struct{ name, setup, want string }{
		{"audit", fmt.Sprintf(`PRAGMA application_id = %d; CREATE TABLE crawls(id INTEGER PRIMARY KEY); INSERT INTO crawls VALUES(1)`, 0x43436F76), "is a Crawl Cove (audit) database"},
		{"unknown program", `PRAGMA application_id = 305419896; CREATE TABLE things(x)`, "belongs to another program (application_id 0x12345678)"},
		{"unmarked, other tables", `CREATE TABLE pages(url TEXT); CREATE TABLE crawls(id INTEGER)`, "is not a monitor database"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "other.db")
			db, err := sql.Open("sqlite", path)
			require.NoError(t, err)
			_, err = db.Exec(tc.setup)
			require.NoError(t, err)
			require.NoError(t, db.Close())
			orig := fileBytes(t, path)
			for _, args := range [][]string{
				{"status", "-db", path}, {"report", "-db", path}, {"track", "-db", path, "https://example.com/"},
				{"untrack", "-db", path, "https://example.com/"}, {"run", "-db", path},
			} {
				code, _, errOut := cli(t, env{}, args...)
				assert.Equal(t, exitFailure, code, "%v", args)
				assert.Contains(t, errOut, "database "+path+" ", "%v", args)
				assert.Contains(t, errOut, tc.want, "%v", args)
			}
			assert.Equal(t, orig, fileBytes(t, path), "not a byte changed")
			_, err = os.Stat(path + "-wal")
			assert.True(t, os.IsNotExist(err), "no WAL was started")
		})
	}
}

// TestMonitorDatabasesAreMarked: a new database carries the monitor's
// application_id ("2UAc"); an old unmarked monitor database opens, and is
// marked by a command that writes, never by a read-only one.
func TestMonitorDatabasesAreMarked(t *testing.T) {
	path := tempDB(t)
	code, _, errOut := cli(t, env{}, "track", "-db", path, "https://example.com/")
	require.Equal(t, exitOK, code, errOut)
	assert.EqualValues(t, 0x32554163, appID(t, path))

	// The same file as an earlier version left it: no mark.
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(`PRAGMA application_id = 0`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	code, out, errOut := cli(t, env{}, "status", "-db", path)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "https://example.com/")
	assert.EqualValues(t, 0, appID(t, path), "status is read-only: it does not mark")
	code, _, errOut = cli(t, env{}, "track", "-db", path, "https://example.org/")
	require.Equal(t, exitOK, code, errOut)
	assert.EqualValues(t, 0x32554163, appID(t, path))
}
