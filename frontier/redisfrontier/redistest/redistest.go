// Package redistest starts a throwaway redis-server for tests: on a free
// loopback port, in a temporary directory, without persistence unless asked,
// stopped by t.Cleanup; StartCluster starts a Redis Cluster of such servers,
// and StartSentinel a master with replicas watched by Redis Sentinels
// (the same binary in sentinel mode). Tests need the Debian redis-server package
// (apt-get install redis-server); without it they are skipped, except when
// the CI environment variable is set, where a missing server fails the test.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options change how the server runs.
type Options struct {
	// AppendOnly turns on the append-only file (fsync on every write), so
	// the data survives Restart.
	AppendOnly bool
	// Cluster starts the server in cluster mode as a one-node cluster that
	// owns all 16384 slots, so scripts that touch keys of two slots fail
	// with CROSSSLOT as they would on a real cluster. (StartCluster starts
	// a cluster of several nodes.)
	Cluster bool

	// node: a cluster node that StartCluster joins to others (no slots of
	// its own yet).
	node        bool
	nodeTimeout time.Duration
	// args: more command-line options (StartSentinel's master and
	// replicas).
	args []string
	// sentinel: the configuration of a Redis Sentinel (StartSentinel),
	// written to sentinel.conf on the first start; the server runs in
	// sentinel mode.
	sentinel string
}

// Server is a running redis-server.
type Server struct {
	t    testing.TB
	opts Options
	bin  string
	dir  string
	port int

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has exited
}

// Start starts a redis-server for t and stops it when t ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("redis-server not found (CI is set, so this fails): %v; .ci/run installs it with apt-get install redis-server", err)
		}
		t.Skip("redis-server not installed; install it with: apt-get install redis-server")
	}
	s := &Server{t: t, opts: opts, bin: bin, dir: t.TempDir()}
	var last error
	for range 5 { // another process may take the free port before the server binds it
		if opts.Cluster {
			s.port = freeClusterPort(t)
		} else {
			s.port = freePort(t)
		}
		if last = s.start(); last == nil {
			break
		}
	}
	if last != nil {
		t.Fatalf("redistest: starting redis-server: %v", last)
	}
	t.Cleanup(s.Stop)
	return s
}

// StartAt starts a server for t on port, one a crashed server left: the
// process that took a dead node's address, which a client still holding
// the old address (a cluster's slot map) reaches instead. It retries
// while the port lingers and stops the server when t ends.
func StartAt(t testing.TB, port int, opts Options) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	s := &Server{t: t, opts: opts, bin: bin, dir: t.TempDir(), port: port}
	for range 50 {
		if err = s.start(); err == nil {
			t.Cleanup(s.Stop)
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("redistest: starting redis-server on port %d: %v", port, err)
	return nil
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("redistest: no free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// freeClusterPort returns a free loopback port p below 55535 whose
// cluster bus port, p+10000, is free too.
func freeClusterPort(t testing.TB) int {
	for range 200 {
		p := freePort(t)
		if p >= 55535 {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		if err != nil {
			continue
		}
		l.Close()
		return p
	}
	t.Fatalf("redistest: no free port below 55535 with a free bus port")
	return 0
}

// Addr is host:port of the server.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// URL is the redis:// URL of database 0.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// Client returns a new client of the server (a cluster client in cluster
// mode), closed when the test ends.
func (s *Server) Client() redis.UniversalClient {
	var c redis.UniversalClient
	if s.opts.Cluster {
		c = redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{s.Addr()}})
	} else {
		c = redis.NewClient(&redis.Options{Addr: s.Addr()})
	}
	s.t.Cleanup(func() { _ = c.Close() })
	return c
}

func (s *Server) start() error {
	args := []string{
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--daemonize", "no", "--loglevel", "warning",
		"--logfile", filepath.Join(s.dir, "redis.log"),
	}
	if s.opts.AppendOnly {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
	}
	if s.opts.Cluster {
		args = append(args, "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(s.dir, "nodes.conf"))
		if s.opts.nodeTimeout > 0 {
			args = append(args, "--cluster-node-timeout", strconv.FormatInt(s.opts.nodeTimeout.Milliseconds(), 10),
				// a replica takes over however long it was disconnected
				"--cluster-replica-validity-factor", "0")
		}
	}
	args = append(args, s.opts.args...)
	if s.opts.sentinel != "" {
		conf, err := s.sentinelConf()
		if err != nil {
			return err
		}
		args = append([]string{conf, "--sentinel"}, args...)
	}
	cmd := exec.Command(s.bin, args...)
	cmd.Dir = s.dir
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	done := make(chan struct{})
	go func() { exited <- cmd.Wait(); close(done) }()
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("redis-server exited: %v; log: %s", err, s.logTail())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			return fmt.Errorf("redis-server did not answer PING: %v; log: %s", err, s.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if s.opts.Cluster && !s.opts.node {
		if err := s.ownAllSlots(c); err != nil {
			_ = cmd.Process.Kill()
			<-done
			return err
		}
	}
	s.mu.Lock()
	s.cmd, s.exited = cmd, done
	s.mu.Unlock()
	return nil
}

// ownAllSlots makes a fresh cluster node own every slot and waits until
// the cluster state is ok.
func (s *Server) ownAllSlots(c *redis.Client) error {
	ctx := context.Background()
	info, err := c.ClusterInfo(ctx).Result()
	if err != nil {
		return fmt.Errorf("cluster info: %w", err)
	}
	if !strings.Contains(info, "cluster_slots_assigned:16384") {
		if err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
			return fmt.Errorf("cluster addslotsrange: %w", err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := c.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster state not ok: %v %s", err, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// Stop shuts the server down (SIGTERM, then SIGKILL after 5 s). Stopping a
// stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// Crash kills the server with SIGKILL, losing whatever it did not persist.
func (s *Server) Crash() {
	s.mu.Lock()
	cmd, done := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// Restart starts the server again on the same port and directory after
// Stop or Crash; with AppendOnly the data is back.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	var err error
	for range 50 { // the port may linger briefly
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("redistest: restarting redis-server: %v", err)
}

// Info returns the INFO section of the server as a map.
func Info(ctx context.Context, c redis.UniversalClient, section string) (map[string]string, error) {
	s, err := c.Info(ctx, section).Result()
	if err != nil {
		return nil, err
	}
	m := make(map[string]string)
	for _, line := range strings.Split(s, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m, nil
}

// Running reports whether the server is running (not stopped or crashed).
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}
