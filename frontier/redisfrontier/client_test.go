package redisfrontier_test

import (
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier/redisfrontier"
)

// TestNewClientKinds: the URL picks one Redis, a Cluster or Sentinel, and
// refuses what it cannot mean. (The cluster kind runs a real crawl in
// TestClusterFailover and in examples/fleet's tests.)
func TestNewClientKinds(t *testing.T) {
	kind := func(u string) string {
		c, err := redisfrontier.NewClient(u)
		require.NoError(t, err, u)
		defer c.Close()
		switch cl := c.(type) {
		case *redis.ClusterClient:
			return "cluster"
		case *redis.Client:
			if cl.Options().Addr == "FailoverClient" {
				return "sentinel"
			}
			return "single " + cl.Options().Addr
		}
		return "?"
	}
	assert.Equal(t, "single 127.0.0.1:6379", kind("redis://127.0.0.1:6379/0"))
	assert.Equal(t, "cluster", kind("redis://127.0.0.1:7000?cluster=true"))
	assert.Equal(t, "cluster", kind("redis://127.0.0.1:7000?addr=127.0.0.1:7001"))
	assert.Equal(t, "sentinel", kind("redis://127.0.0.1:26379?master_name=crawl&addr=127.0.0.1:26380"))
	for _, bad := range []string{
		"http://127.0.0.1:6379",
		"redis://127.0.0.1:7000?cluster=maybe",
		"redis://127.0.0.1:7000?cluster=true&master_name=crawl",
		"redis://127.0.0.1:6379?speed=9",
	} {
		_, err := redisfrontier.NewClient(bad)
		assert.Error(t, err, bad)
	}
}
