package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/internal/testsite"
)

// result is one in-process run of the program.
type result struct {
	code           int
	stdout, stderr string
	db             *sql.DB
	dbPath         string
}

// audit runs the program in-process with e (its Transport reaching the test sites) and opens the
// database it wrote. -quiet is not passed: progress is drawn only when env.Terminal says so.
func audit(t *testing.T, e crawl.Env, args ...string) *result {
	t.Helper()
	return auditDB(t, filepath.Join(t.TempDir(), "audit.db"), e, args...)
}

func auditDB(t *testing.T, dbPath string, e crawl.Env, args ...string) *result {
	t.Helper()
	return auditCtx(t, t.Context(), dbPath, e, args...)
}

func auditCtx(t *testing.T, ctx context.Context, dbPath string, e crawl.Env, args ...string) *result {
	t.Helper()
	if e.Terminal == nil {
		e.Terminal = func(io.Writer) bool { return false }
	}
	var out, errb bytes.Buffer
	code := runEnv(ctx, append([]string{"-db", dbPath}, args...), &out, &errb, e)
	r := &result{code: code, stdout: out.String(), stderr: errb.String(), dbPath: dbPath}
	db, err := sql.Open("sqlite", dbPath)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	r.db = db
	return r
}

// ints runs a query returning one integer.
func (r *result) int(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, r.db.QueryRow(q, args...).Scan(&n), q)
	return n
}

// strs runs a query returning one string column.
func (r *result) strs(t *testing.T, q string, args ...any) []string {
	t.Helper()
	rows, err := r.db.Query(q, args...)
	require.NoError(t, err, q)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s sql.NullString
		require.NoError(t, rows.Scan(&s))
		out = append(out, s.String)
	}
	require.NoError(t, rows.Err())
	return out
}

func (r *result) kinds(t *testing.T) map[string]int {
	t.Helper()
	m := map[string]int{}
	for _, k := range r.strs(t, `SELECT kind FROM findings WHERE crawl_id = (SELECT MAX(id) FROM crawls)`) {
		m[k]++
	}
	return m
}

func (r *result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// page renders a small HTML page with a title, description, h1 and links.
func page(title string, links ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><html><head><title>%s</title><meta name=description content=\"About %s\"></head><body><h1>%s</h1>", title, title, title)
	for _, l := range links {
		fmt.Fprintf(&b, `<a href="%s">%s</a> `, l, l)
	}
	b.WriteString("</body></html>")
	return b.String()
}

// memNet makes an in-memory network (inside a synctest bubble) and the env reaching it.
func memNet(t *testing.T) (*testsite.Network, crawl.Env) {
	n := testsite.NewNetwork(t, testsite.InMemory)
	return n, crawl.Env{Transport: n.Transport()}
}

// loopNet makes a real loopback network and the env reaching it.
func loopNet(t *testing.T) (*testsite.Network, crawl.Env) {
	n := testsite.NewNetwork(t, testsite.Loopback)
	return n, crawl.Env{Transport: n.Transport()}
}
