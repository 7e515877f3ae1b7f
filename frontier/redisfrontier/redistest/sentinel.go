package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// MasterName is the name the sentinels of StartSentinel monitor the
// master by: the master_name of a Sentinel URL.
const MasterName = "mymaster"

// SentinelOptions shape a Sentinel setup started by StartSentinel.
type SentinelOptions struct {
	// Sentinels is the number of sentinels watching the master; 0 means
	// 1. Their quorum is a majority of them.
	Sentinels int
	// Replicas is the number of replicas of the master; 0 means 1.
	Replicas int
	// DownAfter is down-after-milliseconds: how long the master may be
	// unreachable before the sentinels fail it over; 0 means 500ms.
	DownAfter time.Duration
}

// Sentinel is a running Redis master with its replicas, watched by Redis
// Sentinels (redis-server --sentinel, the redis-server binary in sentinel
// mode), every process on a free loopback port and stopped when the test
// ends.
type Sentinel struct {
	t testing.TB
	// Nodes are the data nodes: Nodes[0] started as the master, the
	// others as its replicas. After a failover the roles differ: ask
	// Master.
	Nodes []*Server
	// Sentinels watch the master and promote a replica when it fails.
	Sentinels []*Server
}

// StartSentinel starts a master, its replicas and its sentinels for t,
// and waits until every replica is in sync and every sentinel knows the
// replicas and the other sentinels, so that a failover can begin at once.
// A missing redis-server skips t, or fails it under CI, as Start does.
func StartSentinel(t testing.TB, opts SentinelOptions) *Sentinel {
	t.Helper()
	if opts.Sentinels == 0 {
		opts.Sentinels = 1
	}
	if opts.Replicas == 0 {
		opts.Replicas = 1
	}
	if opts.DownAfter == 0 {
		opts.DownAfter = 500 * time.Millisecond
	}
	// Replicas sync at once, without the 5 s a master waits by default
	// for more replicas to share a diskless transfer.
	master := Start(t, Options{args: []string{"--repl-diskless-sync-delay", "0", "--loglevel", "notice"}})
	s := &Sentinel{t: t, Nodes: []*Server{master}}
	for range opts.Replicas {
		replicaOf := []string{"--replicaof", "127.0.0.1", strconv.Itoa(master.port), "--repl-diskless-sync-delay", "0", "--loglevel", "notice"}
		s.Nodes = append(s.Nodes, Start(t, Options{args: replicaOf}))
	}
	conf := fmt.Sprintf("sentinel monitor %[1]s 127.0.0.1 %[2]d %[3]d\n"+
		"sentinel down-after-milliseconds %[1]s %[4]d\n"+
		"sentinel failover-timeout %[1]s 5000\n",
		MasterName, master.port, opts.Sentinels/2+1, opts.DownAfter.Milliseconds())
	for range opts.Sentinels {
		s.Sentinels = append(s.Sentinels, Start(t, Options{sentinel: conf}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := waitFor(ctx, func() error { return s.ready(ctx, opts) }); err != nil {
		t.Fatalf("redistest: starting Sentinel: %v", err)
	}
	return s
}

// sentinelConf writes the sentinel's configuration on its first start and
// returns its path. A sentinel rewrites its file with what it learns (its
// id, the replicas, the other sentinels, the current master), so a
// restart keeps that.
func (s *Server) sentinelConf() (string, error) {
	p := filepath.Join(s.dir, "sentinel.conf")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return p, os.WriteFile(p, []byte(s.opts.sentinel), 0o644)
}

// ready reports why the setup cannot fail over yet, or nil.
func (s *Sentinel) ready(ctx context.Context, opts SentinelOptions) error {
	for _, r := range s.Nodes[1:] {
		c := nodeClient(r)
		repl, err := Info(ctx, c, "replication")
		c.Close()
		if err != nil {
			return err
		}
		if repl["master_link_status"] != "up" {
			return fmt.Errorf("replica %s not in sync", r.Addr())
		}
	}
	// A replica reports its link up as soon as it has loaded the master's
	// data, but after a diskless transfer the master streams writes to
	// it only from the replica's next acknowledgement, up to a second
	// later: a master killed before that takes every write with it. So
	// wait until the replicas have acknowledged a write.
	// (WAIT counts the replicas that have this connection's writes.)
	mc := nodeClient(s.Nodes[0])
	conn := mc.Conn()
	err := conn.Set(ctx, "redistest:sync", 1, 0).Err()
	if err == nil {
		err = conn.Del(ctx, "redistest:sync").Err()
	}
	var acked int64
	if err == nil {
		acked, err = conn.Wait(ctx, opts.Replicas, 100*time.Millisecond).Result()
	}
	conn.Close()
	mc.Close()
	if err != nil {
		return err
	}
	if acked < int64(opts.Replicas) {
		return fmt.Errorf("%d of %d replicas acknowledged a write", acked, opts.Replicas)
	}
	for _, sn := range s.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr(), MaxRetries: -1})
		m, err := c.Master(ctx, MasterName).Result()
		if err != nil {
			c.Close()
			return err
		}
		if m["num-other-sentinels"] != strconv.Itoa(opts.Sentinels-1) {
			c.Close()
			return fmt.Errorf("sentinel %s knows %s other sentinels of %d", sn.Addr(), m["num-other-sentinels"], opts.Sentinels-1)
		}
		rs, err := c.Replicas(ctx, MasterName).Result()
		c.Close()
		if err != nil {
			return err
		}
		good := 0
		for _, r := range rs {
			if r["flags"] == "slave" && r["master-link-status"] == "ok" {
				good++
			}
		}
		if good != opts.Replicas {
			return fmt.Errorf("sentinel %s sees %d of %d replicas in sync", sn.Addr(), good, opts.Replicas)
		}
	}
	return nil
}

// URL is the redis:// URL of the master through the sentinels (the first
// as host, the others as addr= parameters, master_name=MasterName), as
// redisfrontier.NewClient and fleet's -redis take it.
func (s *Sentinel) URL() string {
	u := "redis://" + s.Sentinels[0].Addr() + "?master_name=" + MasterName
	for _, sn := range s.Sentinels[1:] {
		u += "&addr=" + sn.Addr()
	}
	return u
}

// Client returns a new Sentinel-backed client of the master, which follows
// failovers, closed when the test ends.
func (s *Sentinel) Client() *redis.Client {
	var addrs []string
	for _, sn := range s.Sentinels {
		addrs = append(addrs, sn.Addr())
	}
	c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: MasterName, SentinelAddrs: addrs})
	s.t.Cleanup(func() { _ = c.Close() })
	return c
}

// Master returns the data node that the running sentinels name as master
// and that reports itself master.
func (s *Sentinel) Master(ctx context.Context) (*Server, error) {
	var errs []error
	for _, sn := range s.Sentinels {
		if !sn.Running() {
			continue
		}
		c := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr(), MaxRetries: -1})
		addr, err := c.GetMasterAddrByName(ctx, MasterName).Result()
		c.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("sentinel %s: %w", sn.Addr(), err))
			continue
		}
		port, _ := strconv.Atoi(addr[1])
		for _, n := range s.Nodes {
			if n.port != port || !n.Running() {
				continue
			}
			nc := nodeClient(n)
			repl, err := Info(ctx, nc, "replication")
			nc.Close()
			if err != nil {
				return nil, fmt.Errorf("%s, master by sentinel %s: %w", n.Addr(), sn.Addr(), err)
			}
			if repl["role"] != "master" {
				return nil, fmt.Errorf("%s, master by sentinel %s, reports role %s", n.Addr(), sn.Addr(), repl["role"])
			}
			return n, nil
		}
		return nil, fmt.Errorf("sentinel %s names %s, no running node", sn.Addr(), strings.Join(addr, ":"))
	}
	return nil, fmt.Errorf("no sentinel names the master: %w", errors.Join(errs...))
}

// WaitFailover waits until the sentinels name a master other than old
// and it reports itself master: a replica has taken over.
func (s *Sentinel) WaitFailover(ctx context.Context, old *Server) error {
	return waitFor(ctx, func() error {
		m, err := s.Master(ctx)
		if err != nil {
			return err
		}
		if m == old {
			return fmt.Errorf("%s still master", old.Addr())
		}
		return nil
	})
}

// Describe says, for a failed test's log, what each process is: every
// data node's role, master and number of keys, and the tail of each
// log.
func (s *Sentinel) Describe(ctx context.Context) string {
	var b strings.Builder
	for i, n := range s.Nodes {
		fmt.Fprintf(&b, "node %d %s: ", i, n.Addr())
		if !n.Running() {
			b.WriteString("not running\n")
		} else {
			c := nodeClient(n)
			repl, err := Info(ctx, c, "replication")
			keys, kerr := c.DBSize(ctx).Result()
			c.Close()
			fmt.Fprintf(&b, "role %s, master %s:%s, link %s, %d keys (%v %v)\n", repl["role"], repl["master_host"], repl["master_port"],
				repl["master_link_status"], keys, err, kerr)
		}
		fmt.Fprintf(&b, "  log: %s\n", n.logTail())
	}
	for i, sn := range s.Sentinels {
		fmt.Fprintf(&b, "sentinel %d %s log: %s\n", i, sn.Addr(), sn.logTail())
	}
	return b.String()
}

// KillMaster kills the master with SIGKILL, as a crash would, and holds
// its port until the test ends with a listener that closes every
// connection at once: the sentinels and clients find the master dead as
// they would a dead machine, and no other test's server can take the
// address meanwhile (the sentinels would make it a replica, wiping it,
// and clients that still have the old address would write to it).
func (s *Sentinel) KillMaster(ctx context.Context) (*Server, error) {
	m, err := s.Master(ctx)
	if err != nil {
		return nil, err
	}
	m.Crash()
	var l net.Listener
	for range 50 {
		if l, err = net.Listen("tcp", m.Addr()); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		return m, fmt.Errorf("redistest: holding the killed master's port: %w", err)
	}
	s.t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	return m, nil
}
