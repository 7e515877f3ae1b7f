// Package mailpittest starts a real SMTP server for tests: mailpit on
// free loopback ports, with its HTTP API to read what it received. It is
// for tests only (it takes a *testing.T) and never mocks SMTP.
package mailpittest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Version is the SMTP test server the tests start; .ci/run installs
// it with `go install github.com/axllent/mailpit@` + this version.
const Version = "v1.33.1"

// Binary finds mailpit: $MAILPIT, then PATH, then $GOBIN and
// $GOPATH/bin (where go install puts it). Under CI a missing mailpit fails
// the test; elsewhere the test is skipped with the install command.
func Binary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("MAILPIT"); p != "" {
		return p
	}
	if p, err := exec.LookPath("mailpit"); err == nil {
		return p
	}
	var dirs []string
	if d := os.Getenv("GOBIN"); d != "" {
		dirs = append(dirs, d)
	}
	if d := os.Getenv("GOPATH"); d != "" {
		dirs = append(dirs, filepath.Join(d, "bin"))
	}
	if h, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(h, "go", "bin"))
	}
	for _, d := range dirs {
		if p := filepath.Join(d, "mailpit"); fileExists(p) {
			return p
		}
	}
	msg := "mailpit not found (install it: go install github.com/axllent/mailpit@" + Version + ", or set MAILPIT)"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Server is one running mailpit on loopback.
type Server struct {
	SMTP string // host:port
	API  string // http://host:port
}

// Start runs mailpit on two free loopback ports with extra flags
// and stops it when the test ends.
func Start(t *testing.T, flags ...string) *Server {
	t.Helper()
	bin := Binary(t)
	m := &Server{SMTP: fmt.Sprintf("127.0.0.1:%d", freePort(t)), API: fmt.Sprintf("http://127.0.0.1:%d", freePort(t))}
	args := append([]string{"--smtp", m.SMTP, "--listen", strings.TrimPrefix(m.API, "http://"),
		"--database", filepath.Join(t.TempDir(), "mailpit.db"), "--disable-version-check", "--smtp-disable-rdns", "--quiet"}, flags...)
	cmd := exec.Command(bin, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(m.API + "/api/v1/info")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return m
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("mailpit exited: %v\n%s", err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailpit did not answer on %s: %v\n%s", m.API, err, out.String())
		}
	}
}

// Message is what mailpit's API says of one received message.
type Message struct {
	ID, MessageID, Subject, Text, Username string
	From                                   struct{ Address string }
	To, Bcc                                []struct{ Address string }
}

func (m *Server) get(t *testing.T, path string, v any) {
	t.Helper()
	resp, err := http.Get(m.API + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// Messages returns every message mailpit received, oldest last.
func (m *Server) Messages(t *testing.T) []Message {
	t.Helper()
	var list struct{ Messages []struct{ ID string } }
	m.get(t, "/api/v1/messages", &list)
	var out []Message
	for _, s := range list.Messages {
		var msg Message
		m.get(t, "/api/v1/message/"+s.ID, &msg)
		out = append(out, msg)
	}
	return out
}
