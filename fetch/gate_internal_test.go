package fetch

import (
	"context"
	"fmt"
	"net/url"
	"testing"
)

// Hosts idle for longer than the gap are forgotten: the map stays bounded
// by the hosts in use, not by every host ever seen.
func TestHostGateForgetsIdleHosts(t *testing.T) {
	g := &HostGate{Gap: -1}
	for i := range 10000 {
		u, _ := url.Parse(fmt.Sprintf("http://h%d.test/", i))
		rel, err := g.Acquire(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		rel()
	}
	if n := len(g.hosts); n > 512 {
		t.Fatalf("%d hosts remembered after 10000 idle ones", n)
	}
}
