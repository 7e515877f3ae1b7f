package testsite

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"testing"
)

// clientEnv makes the test binary, started again, a plain HTTP client.
const clientEnv = "TESTSITE_CLIENT_GET"

func TestMain(m *testing.M) {
	if u := os.Getenv(clientEnv); u != "" {
		resp, err := http.Get(u)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestLoopbackServesAnotherProcess: a site is fully set up before its
// server starts, so a request from another process — which gives the race
// detector no happens-before edge to the test's goroutine — reads no field
// being written (run with -race).
func TestLoopbackServesAnotherProcess(t *testing.T) {
	s := New(t)
	s.HTML("/", "hello")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), clientEnv+"="+s.URL()+"/")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("client: %v\n%s", err, out)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Site != s.Host() {
		t.Fatalf("requests = %+v, want one to %s", reqs, s.Host())
	}
}
