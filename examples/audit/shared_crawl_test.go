package main

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
)

// sharedCrawls are whole runs of the program that several tests only read: each runs once per test
// binary, in its own directory (removed by TestMain), and every test gets its own copy of what it wrote
// (the database, the report) from sharedCrawl, never the shared files themselves.
var sharedCrawls struct {
	sync.Mutex
	dir  string
	runs map[string]*sharedRun
}

// sharedRun is one run of the program, done at most once.
type sharedRun struct {
	once   sync.Once
	dir    string // where it wrote its database and report
	code   int
	stdout string
	stderr string
	err    error
}

// demoProxyEnv is the environment of the shared demo crawl: a proxy that refuses every connection, so
// that each test of the demo also shows that the README's first command never asks a proxy (see
// TestDemoIgnoresProxyEnvironment).
var demoProxyEnv = map[string]string{"HTTP_PROXY": "http://127.0.0.1:1", "http_proxy": "http://127.0.0.1:1", "NO_PROXY": "", "no_proxy": ""}

// demoCrawl is `audit -demo -gap 0` (the README's first command without its politeness gap), run once
// with demoProxyEnv set; the result is the test's own copy.
func demoCrawl(t *testing.T) *result {
	t.Helper()
	return sharedCrawl(t, demoProxyEnv, "-demo", "-gap", "0")
}

// demoRenderCrawl is `audit -demo -gap 0 -render 5`, run once; the result is the test's own copy.
func demoRenderCrawl(t *testing.T) *result {
	t.Helper()
	requireBrowser(t)
	return sharedCrawl(t, nil, "-demo", "-gap", "0", "-render", "5")
}

// sharedCrawl runs the program in-process with args (and env set for the run's duration) the first time
// it is asked for them, and gives the test a copy of the run's directory: its database, open, and its
// output with the shared directory's path replaced by the copy's. Tests that use it must not call
// t.Parallel: env is the process's.
func sharedCrawl(t *testing.T, env map[string]string, args ...string) *result {
	t.Helper()
	key := strings.Join(args, "\x1f")
	sharedCrawls.Lock()
	if sharedCrawls.runs == nil {
		sharedCrawls.runs = map[string]*sharedRun{}
	}
	run, ok := sharedCrawls.runs[key]
	if !ok {
		run = &sharedRun{}
		sharedCrawls.runs[key] = run
	}
	sharedCrawls.Unlock()
	base := sharedDir(t)

	run.once.Do(func() {
		run.dir, run.err = os.MkdirTemp(base, "run-")
		if run.err != nil {
			return
		}
		for k, v := range env {
			old, had := os.LookupEnv(k)
			os.Setenv(k, v)
			defer func() {
				if had {
					os.Setenv(k, old)
				} else {
					os.Unsetenv(k)
				}
			}()
		}
		var out, errb bytes.Buffer
		e := crawl.Env{Terminal: func(io.Writer) bool { return false }}
		run.code = runEnv(t.Context(), append([]string{"-db", filepath.Join(run.dir, "audit.db")}, args...), &out, &errb, e)
		run.stdout, run.stderr = out.String(), errb.String()
	})
	require.NoError(t, run.err)

	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(run.dir)))
	r := &result{code: run.code, dbPath: filepath.Join(dir, "audit.db"),
		stdout: strings.ReplaceAll(run.stdout, run.dir, dir), stderr: strings.ReplaceAll(run.stderr, run.dir, dir)}
	db, err := sql.Open("sqlite", r.dbPath)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	r.db = db
	return r
}

// sharedDir is the directory of what runs once per test binary, made the first time.
func sharedDir(t *testing.T) string {
	t.Helper()
	sharedCrawls.Lock()
	defer sharedCrawls.Unlock()
	if sharedCrawls.dir == "" {
		dir, err := os.MkdirTemp("", "audit-shared-")
		require.NoError(t, err)
		sharedCrawls.dir = dir
	}
	return sharedCrawls.dir
}

// removeSharedCrawls removes what the shared runs wrote (TestMain, after the tests).
func removeSharedCrawls() {
	if sharedCrawls.dir != "" {
		os.RemoveAll(sharedCrawls.dir)
	}
}

// generatedCrawls are the generated crawls of generatedCrawl by size, each written once per test binary.
var generatedCrawls struct {
	sync.Mutex
	runs map[int]*sharedRun
}

// generatedCrawlCopy writes to path a copy of generatedCrawl's n-page crawl, generating it the first time,
// for tests that read it (a report of it, say) and may change their own copy.
func generatedCrawlCopy(t *testing.T, path string, n int) {
	t.Helper()
	generatedCrawls.Lock()
	if generatedCrawls.runs == nil {
		generatedCrawls.runs = map[int]*sharedRun{}
	}
	run, ok := generatedCrawls.runs[n]
	if !ok {
		run = &sharedRun{}
		generatedCrawls.runs[n] = run
	}
	generatedCrawls.Unlock()
	base := sharedDir(t)
	run.once.Do(func() {
		if run.dir, run.err = os.MkdirTemp(base, "generated-"); run.err != nil {
			return
		}
		run.err = fmt.Errorf("generating the %d-page crawl failed (see the first test that asked for it)", n)
		generatedCrawl(t, filepath.Join(run.dir, "crawl.db"), n) // on failure it ends the test, err stays set
		run.err = nil
	})
	require.NoError(t, run.err)
	for _, suffix := range []string{"", "-wal"} {
		src, err := os.ReadFile(filepath.Join(run.dir, "crawl.db"+suffix))
		if suffix != "" && errors.Is(err, os.ErrNotExist) {
			continue
		}
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path+suffix, src, 0o644))
	}
}
