package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// programs are the example mains the suite builds, by name.
var programs = []string{"audit", "monitor", "fleet", "robotscheck"}

// binDir holds the programs built for this test run.
var binDir string

// helperEnv makes the test binary, started again, run one helper (see
// netns_test.go) instead of the tests.
const helperEnv = "POLITE_E2E_HELPER"

func TestMain(m *testing.M) {
	if h := os.Getenv(helperEnv); h != "" {
		os.Exit(runHelper(h))
	}
	dir, err := os.MkdirTemp("", "polite-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	if err := build(dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// build compiles every program into dir with one go build, from the
// module root that go env GOMOD names, so the suite works from any
// checkout. The binaries are what a user builds: no race detector, no
// test hooks.
func build(dir string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("the go command is needed to build the programs: %w", err)
	}
	out, err := exec.Command(goBin, "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return errors.New("go env GOMOD: not inside the module")
	}
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, p := range programs {
		args = append(args, "./examples/"+p)
	}
	cmd := exec.Command(goBin, args...)
	cmd.Dir = filepath.Dir(gomod)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// bin is the path of a built program.
func bin(name string) string { return filepath.Join(binDir, name) }

// opts change how a program is run.
type opts struct {
	dir     string        // working directory; default a new t.TempDir()
	env     []string      // added to the real environment
	wrap    []string      // a command line the program runs under (unshare -rn)
	timeout time.Duration // default 90 s: a hang fails the test, never the suite
}

// proc is one running program. Its process group is killed when the test
// ends, so nothing it started (a browser, say) outlives the test.
type proc struct {
	t      *testing.T
	name   string
	args   []string
	cmd    *exec.Cmd
	stdout syncBuffer
	stderr syncBuffer
	done   chan struct{}
	code   int
	took   time.Duration
}

// result is how a finished program ended.
type result struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("exit %d after %v\n--- stdout\n%s--- stderr\n%s", r.code, r.took.Round(time.Millisecond), r.stdout, r.stderr)
}

// out is stdout and stderr together, for loose matching.
func (r result) out() string { return r.stdout + r.stderr }

// start starts program name with args (under o.wrap).
func start(t *testing.T, name string, o opts, args ...string) *proc {
	t.Helper()
	if o.dir == "" {
		o.dir = t.TempDir()
	}
	if o.timeout == 0 {
		o.timeout = 90 * time.Second
	}
	argv := append([]string(nil), o.wrap...)
	if name != "" { // "" runs o.wrap and args alone (a helper)
		argv = append(argv, bin(name))
	}
	argv = append(argv, args...)
	p := &proc{t: t, name: name, args: args, done: make(chan struct{})}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Dir = o.dir
	p.cmd.Env = append(os.Environ(), o.env...)
	p.cmd.Stdout = &p.stdout
	p.cmd.Stderr = &p.stderr
	// Its own process group, killed as a whole; and killed by the kernel
	// should this test binary die first.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	began := time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	pgid := p.cmd.Process.Pid
	go func() {
		err := p.cmd.Wait()
		p.took = time.Since(began)
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			p.code = ee.ExitCode() // -1 when killed by a signal
		default:
			p.code = -2
		}
		close(p.done)
	}()
	timer := time.AfterFunc(o.timeout, func() {
		t.Errorf("%s %s: still running after %v: killed", name, strings.Join(args, " "), o.timeout)
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	})
	t.Cleanup(func() {
		timer.Stop()
		_ = syscall.Kill(-pgid, syscall.SIGKILL) // the group: children included
		<-p.done
	})
	return p
}

// wait waits for the program to exit.
func (p *proc) wait() result {
	<-p.done
	return result{code: p.code, stdout: p.stdout.String(), stderr: p.stderr.String(), took: p.took}
}

// signal sends sig to the program itself (not its group).
func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %s: %v", p.name, err)
	}
}

// waitFor polls cond every 10 ms until it holds, or fails the test after
// d, or when the program exits first.
func (p *proc) waitFor(d time.Duration, what string, cond func() bool) {
	p.t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		select {
		case <-p.done:
			if cond() {
				return
			}
			p.t.Fatalf("%s exited before %s:\n%s", p.name, what, p.wait())
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s: no %s within %v:\nstdout:\n%s\nstderr:\n%s", p.name, what, d, p.stdout.String(), p.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// run runs program name to its end.
func run(t *testing.T, name string, o opts, args ...string) result {
	t.Helper()
	return start(t, name, o, args...).wait()
}

// syncBuffer is a bytes.Buffer safe for a writer and readers at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// inCI reports whether the CI environment variable is set: a missing
// component (chromium, redis-server, namespaces) then fails the test
// instead of skipping it.
func inCI() bool { return os.Getenv("CI") != "" }

// need skips the test (or fails it under CI) when what is missing.
func need(t *testing.T, ok bool, what, hint string) {
	t.Helper()
	if ok {
		return
	}
	if inCI() {
		t.Fatalf("%s (CI is set, so this fails): %s", what, hint)
	}
	t.Skipf("%s: %s", what, hint)
}
