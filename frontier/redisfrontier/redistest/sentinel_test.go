package redistest

import (
	"context"
	"testing"
	"time"
)

// TestSentinelFailover: the sentinels of StartSentinel promote the
// replica soon after the master is killed, and the client follows: what
// was written before the kill (and replicated) is read back after it.
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
	old, err := sn.Master(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if old != sn.Nodes[0] {
		t.Fatalf("master %s, want the first node %s", old.Addr(), sn.Nodes[0].Addr())
	}
	if err := c.Wait(ctx, 1, 5*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	old.Crash()
	if err := sn.WaitFailover(ctx, old); err != nil {
		t.Fatal(err)
	}
	t.Logf("replica promoted %v after the kill", time.Since(killed).Round(time.Millisecond))
	for {
		v, err := c.Get(ctx, "k").Result()
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
