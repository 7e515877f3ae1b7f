package main

import (
	"os"
	"strings"
	"testing"
)

// subprocessArgs is the environment variable that makes the test binary run the audit program itself,
// main() and all, with these arguments (separated by \x1f): tests that send it a signal run it so.
const subprocessArgs = "AUDIT_SUBPROCESS_ARGS"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(subprocessArgs); ok {
		os.Args = append([]string{"audit"}, strings.Split(args, "\x1f")...)
		main() // exits
	}
	code := m.Run()
	removeSharedCrawls()
	if benchCrawls.dir != "" {
		os.RemoveAll(benchCrawls.dir) // the crawls the report benchmarks cached
	}
	os.Exit(code)
}
