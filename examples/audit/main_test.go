package main

import (
	"os"
	"testing"
)

// runAsProgramEnv makes the test binary run the audit program itself (main, os.Args after the first
// "--"), so that tests can start it as a subprocess and kill it like a real one.
const runAsProgramEnv = "AUDIT_TEST_RUN_PROGRAM"

func TestMain(m *testing.M) {
	if os.Getenv(runAsProgramEnv) == "1" {
		for i, a := range os.Args {
			if a == "--" {
				os.Args = append([]string{"audit"}, os.Args[i+1:]...)
				break
			}
		}
		main()
		return
	}
	code := m.Run()
	if benchCrawls.dir != "" {
		os.RemoveAll(benchCrawls.dir)
	}
	os.Exit(code)
}
