package redistest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestSentinelFailover: the sentinels of StartSentinel promote the
// replica soon after the master is killed, and the client follows: what
// was written just before the kill is read back after it. (The replica
// had it: StartSentinel returns only once the master streams writes to
// its replicas, which, after the first sync, it does from the replica's
// next acknowledgement, up to a second after the replica says it is in
// sync.)
func TestSentinelFailover(t *testing.T) {
	began := time.Now()
	sn := StartSentinel(t, SentinelOptions{})
	t.Logf("started in %v", time.Since(began).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c := sn.Client()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // replication on loopback: well under a millisecond
	killed := time.Now()
	old, err := sn.KillMaster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if old != sn.Nodes[0] {
		t.Fatalf("killed %s, want the first node %s, the master", old.Addr(), sn.Nodes[0].Addr())
	}
	if err := sn.WaitFailover(ctx, old); err != nil {
		t.Fatal(err)
	}
	t.Logf("replica promoted %v after the kill", time.Since(killed).Round(time.Millisecond))
	for {
		v, err := c.Get(ctx, "k").Result()
		if errors.Is(err, redis.Nil) {
			t.Fatal("k lost in the failover: the replica never had it")
		}
		if err == nil {
			if v != "v" {
				t.Fatalf("k = %q after the failover, want v", v)
			}
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("the client never reached the new master: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
