package redistest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ClusterOptions shape a Redis Cluster started by StartCluster.
type ClusterOptions struct {
	// Masters is the number of masters, each owning an equal range of the
	// 16384 slots; 0 means 3.
	Masters int
	// Replicas is the number of replicas per master (0: none).
	Replicas int
	// NodeTimeout is cluster-node-timeout: how long a master may be
	// unreachable before its replica is promoted; 0 means 1s.
	NodeTimeout time.Duration
}

// Cluster is a running Redis Cluster of loopback nodes, each a
// redis-server in cluster mode on a free port below 55535 (its bus port,
// port+10000, free too), stopped when the test ends.
type Cluster struct {
	t testing.TB
	// Masters are the nodes started as masters, in slot order; Replicas[i]
	// are the replicas of Masters[i]. After a failover the roles differ:
	// ask MasterOf.
	Masters  []*Server
	Replicas [][]*Server

	beforeKeys func()
}

// OnMigrating sets a function MigrateSlot calls while the slot is in the
// migrating state, before it moves the keys: what a client does then
// meets a slot half moved.
func (c *Cluster) OnMigrating(f func()) { c.beforeKeys = f }

// StartCluster starts a cluster for t, joined and with every slot
// covered, and waits until every node reports cluster_state:ok and every
// replica is in sync. A missing redis-server skips t, or fails it under
// CI, as Start does.
func StartCluster(t testing.TB, opts ClusterOptions) *Cluster {
	t.Helper()
	if opts.Masters == 0 {
		opts.Masters = 3
	}
	if opts.NodeTimeout == 0 {
		opts.NodeTimeout = time.Second
	}
	node := Options{Cluster: true, node: true, nodeTimeout: opts.NodeTimeout}
	c := &Cluster{t: t}
	for range opts.Masters {
		c.Masters = append(c.Masters, Start(t, node))
	}
	for range opts.Masters {
		var rs []*Server
		for range opts.Replicas {
			rs = append(rs, Start(t, node))
		}
		c.Replicas = append(c.Replicas, rs)
	}
	if err := c.create(opts); err != nil {
		t.Fatalf("redistest: creating the cluster: %v", err)
	}
	return c
}

// Nodes returns every node, masters first.
func (c *Cluster) Nodes() []*Server {
	out := append([]*Server(nil), c.Masters...)
	for _, rs := range c.Replicas {
		out = append(out, rs...)
	}
	return out
}

// Addrs returns the masters' addresses: seeds for a cluster client.
func (c *Cluster) Addrs() []string {
	var a []string
	for _, m := range c.Masters {
		a = append(a, m.Addr())
	}
	return a
}

// URL is a redis:// URL naming every master (the first as host, the others
// as addr= parameters), as redisfrontier.NewClient and fleet's -redis take
// it with cluster=true.
func (c *Cluster) URL() string {
	u := "redis://" + c.Masters[0].Addr() + "?cluster=true"
	for _, m := range c.Masters[1:] {
		u += "&addr=" + m.Addr()
	}
	return u
}

// Client returns a new cluster client of the cluster, closed when the test
// ends.
func (c *Cluster) Client() *redis.ClusterClient {
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	c.t.Cleanup(func() { _ = cl.Close() })
	return cl
}

func nodeClient(s *Server) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
}

func (c *Cluster) create(opts ClusterOptions) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	all := c.Nodes()
	clients := make([]*redis.Client, len(all))
	for i, s := range all {
		clients[i] = nodeClient(s)
		defer clients[i].Close()
	}
	per := 16384 / len(c.Masters)
	for i, m := range clients[:len(c.Masters)] {
		lo, hi := i*per, (i+1)*per-1
		if i == len(c.Masters)-1 {
			hi = 16383
		}
		if err := m.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			return fmt.Errorf("addslotsrange %d-%d on %s: %w", lo, hi, all[i].Addr(), err)
		}
	}
	for _, s := range all[1:] {
		if err := clients[0].ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(s.port)).Err(); err != nil {
			return fmt.Errorf("cluster meet %s: %w", s.Addr(), err)
		}
	}
	// Every node knows every other.
	if err := waitFor(ctx, func() error {
		for i, cl := range clients {
			nodes, err := cl.ClusterNodes(ctx).Result()
			if err != nil {
				return err
			}
			if n := strings.Count(strings.TrimSpace(nodes), "\n") + 1; n != len(all) || strings.Contains(nodes, "handshake") {
				return fmt.Errorf("%s knows %d of %d nodes", all[i].Addr(), n, len(all))
			}
		}
		return nil
	}); err != nil {
		return err
	}
	k := len(c.Masters)
	for mi := range c.Masters {
		id, err := clients[mi].Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			return err
		}
		for range c.Replicas[mi] {
			if err := clients[k].Do(ctx, "CLUSTER", "REPLICATE", id).Err(); err != nil {
				return fmt.Errorf("cluster replicate on %s: %w", all[k].Addr(), err)
			}
			k++
		}
	}
	return waitFor(ctx, func() error {
		for i, cl := range clients {
			info, err := cl.ClusterInfo(ctx).Result()
			if err != nil {
				return err
			}
			if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_ok:16384") {
				return fmt.Errorf("%s: cluster state not ok", all[i].Addr())
			}
			if i >= len(c.Masters) {
				repl, err := Info(ctx, cl, "replication")
				if err != nil {
					return err
				}
				if repl["master_link_status"] != "up" {
					return fmt.Errorf("%s: replica not in sync", all[i].Addr())
				}
			}
		}
		return nil
	})
}

func waitFor(ctx context.Context, ok func() error) error {
	for {
		err := ok()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// MasterOf returns the node that now serves slot as master, asking the
// live nodes.
func (c *Cluster) MasterOf(ctx context.Context, slot int64) (*Server, error) {
	for _, s := range c.Nodes() {
		if !s.Running() {
			continue
		}
		cl := nodeClient(s)
		shards, err := cl.ClusterShards(ctx).Result()
		cl.Close()
		if err != nil {
			continue
		}
		for _, sh := range shards {
			covers := false
			for _, r := range sh.Slots {
				covers = covers || r.Start <= slot && slot <= r.End
			}
			if !covers {
				continue
			}
			for _, n := range sh.Nodes {
				if n.Role != "master" || n.Health != "online" {
					continue
				}
				for _, srv := range c.Nodes() {
					if srv.port == int(n.Port) {
						return srv, nil
					}
				}
			}
		}
		return nil, fmt.Errorf("%s: no online master serves slot %d", s.Addr(), slot)
	}
	return nil, fmt.Errorf("no live node serves slot %d", slot)
}

// WaitPromoted waits until a node other than old serves slot and the
// cluster is healthy again: old's replica has taken over.
func (c *Cluster) WaitPromoted(ctx context.Context, slot int64, old *Server) error {
	if err := waitFor(ctx, func() error {
		m, err := c.MasterOf(ctx, slot)
		if err != nil {
			return err
		}
		if m == old {
			return fmt.Errorf("slot %d still on %s", slot, old.Addr())
		}
		return nil
	}); err != nil {
		return err
	}
	return c.WaitHealthy(ctx)
}

// WaitHealthy waits until every running node reports cluster_state:ok
// with all slots served.
func (c *Cluster) WaitHealthy(ctx context.Context) error {
	return waitFor(ctx, func() error {
		for _, s := range c.Nodes() {
			if !s.Running() {
				continue
			}
			cl := nodeClient(s)
			info, err := cl.ClusterInfo(ctx).Result()
			cl.Close()
			if err != nil {
				return err
			}
			if !strings.Contains(info, "cluster_state:ok") {
				return fmt.Errorf("%s: cluster state not ok", s.Addr())
			}
		}
		return nil
	})
}

// MigrateSlot moves slot, with every key in it, from its master to the
// master dst, the way redis-cli --cluster reshard does (IMPORTING,
// MIGRATING, MIGRATE, NODE), but moving all the slot's keys in one
// MIGRATE, so that no script sees part of a shard's keys on each node.
// Between the steps clients get ASK and then MOVED redirections. pause is
// slept after each step, so a crawl running meanwhile meets every state.
func (c *Cluster) MigrateSlot(ctx context.Context, slot int64, dst *Server, pause time.Duration) error {
	src, err := c.MasterOf(ctx, slot)
	if err != nil {
		return err
	}
	if src == dst {
		return fmt.Errorf("slot %d is on %s already", slot, dst.Addr())
	}
	sc, dc := nodeClient(src), nodeClient(dst)
	defer sc.Close()
	defer dc.Close()
	srcID, err := sc.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		return err
	}
	dstID, err := dc.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		return err
	}
	steps := []func() error{
		func() error { return dc.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID).Err() },
		func() error { return sc.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID).Err() },
		func() error {
			keys, err := sc.ClusterGetKeysInSlot(ctx, int(slot), 1<<20).Result()
			if err != nil || len(keys) == 0 {
				return err
			}
			args := []any{"MIGRATE", "127.0.0.1", dst.port, "", 0, 10000, "KEYS"}
			for _, k := range keys {
				args = append(args, k)
			}
			return sc.Do(ctx, args...).Err()
		},
		func() error { return dc.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err() },
		func() error { return sc.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err() },
	}
	for i, step := range steps {
		if i == 2 && c.beforeKeys != nil {
			c.beforeKeys()
		}
		if err := step(); err != nil {
			return fmt.Errorf("migrating slot %d, step %d: %w", slot, i, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
	// Tell the other masters at once rather than by gossip.
	for _, m := range c.Nodes() {
		if m == src || m == dst || !m.Running() {
			continue
		}
		cl := nodeClient(m)
		role, _ := Info(ctx, cl, "replication")
		if role["role"] == "master" {
			_ = cl.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err()
		}
		cl.Close()
	}
	return nil
}
