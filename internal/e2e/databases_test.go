package e2e

import (
	"database/sql"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/testsite"
)

// schema lists the tables, columns and indexes of a SQLite file.
func schema(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query(`SELECT type || ' ' || name || ' ' || COALESCE(sql, '') FROM sqlite_master ORDER BY 1`)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

// TestProgramsRefuseEachOthersDatabase: the audit given the monitor's
// database, and the monitor's read-only status given the audit's, refuse
// it before writing anything. Expected to fail until the audit and monitor
// branches merge (issue 18: each program altered the other's file).
func TestProgramsRefuseEachOthersDatabase(t *testing.T) {
	t.Parallel()
	s := testsite.New(t)
	s.Robots("User-agent: *\nDisallow:\n")
	s.HTML("/", page("Home"))
	dir := t.TempDir()
	r := run(t, "monitor", opts{dir: dir}, "track", "-db", "mon.db", "https://example.com/")
	require.Equal(t, 0, r.code, r)
	r = run(t, "audit", opts{dir: dir}, "-gap", "0", "-db", "audit.db", "-no-report", s.URL()+"/")
	require.Equal(t, 0, r.code, r)
	monBefore, auditBefore := schema(t, filepath.Join(dir, "mon.db")), schema(t, filepath.Join(dir, "audit.db"))
	requestsBefore := s.Total()

	t.Run("audit -db mon.db", func(t *testing.T) {
		r := run(t, "audit", opts{dir: dir}, "-gap", "0", "-db", "mon.db", "-no-report", s.URL()+"/")
		assert.NotEqual(t, 0, r.code, r)
		assert.Equal(t, monBefore, schema(t, filepath.Join(dir, "mon.db")), "the monitor's database is unchanged")
		assert.Equal(t, requestsBefore, s.Total(), "refused before crawling")
	})
	t.Run("monitor status -db audit.db", func(t *testing.T) {
		r := run(t, "monitor", opts{dir: dir}, "status", "-db", "audit.db")
		assert.NotEqual(t, 0, r.code, r)
		assert.Equal(t, auditBefore, schema(t, filepath.Join(dir, "audit.db")), "the audit's database is unchanged")
	})
}

// TestAuditReportsOfTwoDatabasesInOneFolder: two databases in one folder
// get two reports, not one overwriting the other. Expected to fail until
// the audit branch merges (on main both are audit-report-1.html).
func TestAuditReportsOfTwoDatabasesInOneFolder(t *testing.T) {
	t.Parallel()
	s := testsite.New(t)
	s.Robots("User-agent: *\nDisallow:\n")
	s.HTML("/", page("Home"))
	dir := t.TempDir()
	report := regexp.MustCompile(`(?m)^Report: (.+\.html)$`)
	var paths []string
	for _, db := range []string{"one.db", "two.db"} {
		r := run(t, "audit", opts{dir: dir}, "-gap", "0", "-db", db, s.URL()+"/")
		require.Equal(t, 0, r.code, r)
		m := report.FindStringSubmatch(r.stdout)
		require.NotNil(t, m, r.stdout)
		assert.FileExists(t, filepath.Join(dir, m[1]))
		paths = append(paths, m[1])
	}
	assert.Len(t, slices.Compact(slices.Clone(paths)), 2, "two reports: %v", paths)
}
