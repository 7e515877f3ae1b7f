package main

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestMain lets the test binary stand in for the monitor binary: with
// MONITOR_CHILD=1 it runs the monitor with the arguments in
// MONITOR_CHILD_ARGS (separated by \x1f) and exits, so a benchmark can measure
// one `run` as a process of its own (time and peak RSS) without the
// one-second gap floor of the real command line.
func TestMain(m *testing.M) {
	if os.Getenv("MONITOR_CHILD") == "1" {
		args := strings.Split(os.Getenv("MONITOR_CHILD_ARGS"), "\x1f")
		os.Exit(runEnv(context.Background(), args, os.Stdout, os.Stderr, env{anyGap: true, anyCatchUp: true, guardHooks: guardHooks{Resolver: noDNS}}))
	}
	code := m.Run()
	removeBuiltBinary()
	os.Exit(code)
}
