package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"-concurrency", "0", "http://shop.test/"}, "-concurrency 0: must be from 1 to 16"},
		{[]string{"-concurrency", "17", "http://shop.test/"}, "-concurrency 17: must be from 1 to 16"},
		{[]string{"-gap", "-1ms", "http://shop.test/"}, "-gap -1ms: must be from 0s to 1m0s"},
		{[]string{"-gap", "61s", "http://shop.test/"}, "-gap 1m1s: must be from 0s to 1m0s"},
		{[]string{"-gap", "soon", "http://shop.test/"}, "invalid value"},
		{[]string{"-gap", "5", "http://shop.test/"}, `invalid value "5" for flag -gap: parse error (a duration needs a unit: 300ms, 2s, 1m)`},
		{[]string{"-max-pages", "0", "http://shop.test/"}, "-max-pages 0: must be from 1 to 1000000"},
		{[]string{"-max-depth", "-1", "http://shop.test/"}, "-max-depth -1: must be from 0 to 1000"},
		{[]string{"-timeout", "0s", "http://shop.test/"}, "-timeout 0s: must be from 1ms to 10m0s"},
		// Every numeric flag has an upper bound too (issue 18: a flag must never turn a limit off).
		{[]string{"-max-pages", "1000001", "http://shop.test/"}, "-max-pages 1000001: must be from 1 to 1000000"},
		{[]string{"-max-depth", "1001", "http://shop.test/"}, "-max-depth 1001: must be from 0 to 1000"},
		{[]string{"-timeout", "11m", "http://shop.test/"}, "-timeout 11m0s: must be from 1ms to 10m0s"},
		{[]string{"-timeout", "1ns", "http://shop.test/"}, "-timeout 1ns: must be from 1ms to 10m0s"},
		{[]string{"-render", "-1", "http://shop.test/"}, "-render -1: must be from 0 to 500"},
		{[]string{"-max-pages", "NaN", "http://shop.test/"}, `invalid value "NaN" for flag -max-pages`},
		{[]string{"-gap", "Inf", "http://shop.test/"}, `invalid value "Inf" for flag -gap`},
		{[]string{"-resume", "-crawl", "-1"}, "-crawl -1: crawl ids start at 1"},
		{[]string{"-user-agent", "", "http://shop.test/"}, "-user-agent must not be empty"},
		{[]string{"-user-agent", "Bot\x00", "http://shop.test/"}, `-user-agent "Bot\x00" contains control characters`},
		{[]string{"-resolve", "shop.test:80", "http://shop.test/"}, "bad resolve entry"},
		{[]string{"-no-such-flag", "http://shop.test/"}, "flag provided but not defined"},
		{[]string{}, "missing URL"},
		{[]string{"http://a.test/", "http://b.test/"}, "one URL only"},
		{[]string{"-demo", "http://a.test/"}, "-demo crawls the built-in demo site: give no URL"},
		{[]string{"ftp://shop.test/"}, `bad URL "ftp://shop.test/": scheme is not http or https`},
		{[]string{"http:///nohost"}, `bad URL "http:///nohost": invalid host`},
		{[]string{"notaurl"}, `bad URL "notaurl": no http:// or https://, and not a host name with a dot`},
		{[]string{"localhost:8080"}, `bad URL "localhost:8080": no http:// or https://`},
		{[]string{"http:shop.test"}, `bad URL "http:shop.test"`},
		{[]string{"http://user:pw@shop.test/"}, `bad URL "http://user:pw@shop.test/": user name or password in the URL`},
		{[]string{"  "}, `bad URL "  ": empty URL`},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "a.db")
			var out, errb bytes.Buffer
			code := run(t.Context(), append([]string{"-db", db}, tc.args...), &out, &errb)
			assert.Equal(t, crawl.ExitUsage, code)
			assert.Contains(t, errb.String(), tc.want)
			assert.Equal(t, 1, strings.Count(errb.String(), "audit: "), "the error is said once: %s", errb.String())
			assert.NotContains(t, errb.String(), "Flags:", "no usage dump on a mistake, just a pointer to -h")
			assert.Empty(t, out.String())
			assert.NoFileExists(t, db, "a usage error touches nothing")
		})
	}
}

func TestHelp(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(t.Context(), []string{"-h"}, &out, &errb)
	assert.Equal(t, crawl.ExitOK, code)
	for _, f := range []string{"-db", "-max-pages", "-max-depth", "-concurrency", "-gap", "-user-agent", "-timeout", "-resolve", "-demo", "-quiet", "-no-report", "Exit status"} {
		assert.Contains(t, errb.String(), f)
	}
	assert.Equal(t, 1, strings.Count(errb.String(), "HOST:PORT:ADDR"), "the placeholder is said once:\n%s", errb.String())
	assert.Contains(t, errb.String(), "  -resolve HOST:PORT:ADDR\n    \tconnect to ADDR for HOST:PORT, like curl (repeatable)\n")
}

func TestDefaults(t *testing.T) {
	c, err := parseArgs([]string{"shop.test"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, &crawl.Config{DB: "audit.db", MaxPages: 500, MaxDepth: 5, Concurrency: 4, Gap: 300 * time.Millisecond,
		UserAgent: "CrawlCove-Crawler", Timeout: 15 * time.Second, Resolve: map[string]string{}, URL: "https://shop.test/"}, c)

	c, err = parseArgs([]string{"-concurrency", "16", "-gap", "0", "-resolve", "shop.test:443:127.0.0.1", "-resolve", "www.shop.test:443:[::1]", "https://shop.test/x#frag"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, 16, c.Concurrency)
	assert.Equal(t, time.Duration(0), c.Gap)
	assert.Equal(t, map[string]string{"shop.test:443": "127.0.0.1:443", "www.shop.test:443": "[::1]:443"}, c.Resolve)
	assert.Equal(t, "https://shop.test/x", c.URL)
}

// A -db the program cannot open says why in the system's words, and the path: not SQLite's "unable to
// open database file (14)".
func TestDatabaseOpenErrorSaysWhy(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	cases := map[string]string{
		filepath.Join(file, "audit.db"): "not a directory",
		dir:                             "is a directory",
	}
	if os.Geteuid() != 0 { // root opens anything: permission denied can only be shown to other users
		ro := filepath.Join(dir, "ro")
		require.NoError(t, os.Mkdir(ro, 0o555))
		cases[filepath.Join(ro, "audit.db")] = "permission denied"
	}
	for path, want := range cases {
		var out, errb bytes.Buffer
		code := run(t.Context(), []string{"-db", path, "http://shop.test/"}, &out, &errb)
		assert.Equal(t, crawl.ExitFailure, code)
		assert.Equal(t, "audit: database "+path+": "+want+"\n", errb.String())
		assert.NotContains(t, errb.String(), "(14)")
	}
}
