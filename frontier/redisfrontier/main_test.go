package redisfrontier_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/frontier/redisfrontier"
)

// workerEnv carries a workerSpec (JSON) to a worker subprocess: the test
// binary started again, running workerMain instead of the tests.
const workerEnv = "REDISFRONTIER_TEST_WORKER"

// workerSpec configures one worker process.
type workerSpec struct {
	Redis       string
	Crawl       string
	Starts      []string
	Goroutines  int
	Lease       time.Duration
	Outage      time.Duration
	Limits      redisfrontier.Limits
	StartWindow time.Duration
	SlowdownGap time.Duration
	Header      map[string]string // extra request headers, e.g. X-Worker
	Out         string            // JSON lines: one fetched per page
	Admits      string            // JSON lines: the gate's admissions (Redis time)
}

func TestMain(m *testing.M) {
	if spec := os.Getenv(workerEnv); spec != "" {
		os.Exit(workerMain(spec))
	}
	// The slowest tests here wait on Redis (a cluster's failover, a lease's
	// expiry, a restart) rather than use the CPU, and run in parallel
	// (t.Parallel, at most GOMAXPROCS at once); each starts its own servers
	// on free ports.
	redis.SetLogger(quietLogger{})
	os.Exit(m.Run())
}

func workerMain(specJSON string) int {
	var spec workerSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "worker: bad spec:", err)
		return 2
	}
	opt, err := redis.ParseURL(spec.Redis)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	out, err := os.Create(spec.Out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	defer out.Close()
	var logger *slog.Logger
	if spec.Admits != "" {
		af, err := os.Create(spec.Admits)
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			return 2
		}
		defer af.Close()
		logger = slog.New(admitHandler{slog.NewJSONHandler(af, &slog.HandlerOptions{Level: slog.LevelDebug})})
	}
	cfg := redisfrontier.DefaultConfig(spec.Crawl)
	cfg.Site = spec.Limits
	cfg.Lease, cfg.Outage, cfg.StartWindow = spec.Lease, spec.Outage, spec.StartWindow
	cfg.Slowdown = &backoff.Slowdown{Gap: spec.SlowdownGap}
	cfg.Logger = logger
	ctx := context.Background()
	var header http.Header
	if len(spec.Header) > 0 {
		header = http.Header{}
		for k, v := range spec.Header {
			header[k] = []string{v}
		}
	}
	w, err := startWorker(ctx, rdb, cfg, header)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 3
	}
	defer w.f.Close()
	for _, s := range spec.Starts {
		if r := w.f.Add(ctx, s, 0, ""); r.Err != nil {
			fmt.Fprintln(os.Stderr, "worker: start", s, r.Outcome, r.Err)
		}
	}
	var mu sync.Mutex
	enc := json.NewEncoder(out)
	err = w.crawl(ctx, spec.Goroutines, func(p fetched) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(p)
		_ = out.Sync()
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker error:", err)
		return 3
	}
	return 0
}

// admitHandler keeps only the gate's admission events and the reports
// of requests that started late.
type admitHandler struct{ slog.Handler }

func (h admitHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message != "redisfrontier.admit" && r.Message != "redisfrontier.late_start" {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

// proc is a running worker process.
type proc struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	done   chan error
}

func startProc(t *testing.T, spec workerSpec) *proc {
	t.Helper()
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnv+"="+string(b))
	p := &proc{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		p.done <- nil
	})
	return p
}

// wait waits for the process to exit, at most d.
func (p *proc) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(d):
		t.Fatalf("worker did not finish in %v; stderr:\n%s", d, p.stderr)
		return nil
	}
}

// readJSONLines reads a file of JSON lines into values of T.
func readJSONLines[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			continue // a line cut by kill -9
		}
		out = append(out, v)
	}
	return out
}

// admit is one admission event: an Acquire's, or (Again) a request's that
// missed its start window and was admitted again; or (Msg
// "redisfrontier.late_start") a start recorded late.
type admit struct {
	Msg   string `json:"msg"`
	URL   string `json:"url"`
	Site  string `json:"site"`
	AtUS  int64  `json:"at_us"`
	Again bool   `json:"again"`
}
