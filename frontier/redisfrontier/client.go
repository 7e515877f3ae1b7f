package redisfrontier

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"
)

// NewClient returns the Redis client a redis:// or rediss:// URL names,
// for New:
//
//	redis://127.0.0.1:6379/0                                  one Redis
//	redis://10.0.0.1:7000?cluster=true&addr=10.0.0.2:7000     Redis Cluster (seed nodes)
//	redis://10.0.0.1:26379?master_name=crawl&addr=10.0.0.2:26379   through Sentinel
//
// A URL with cluster=true, or with addr= parameters and no master_name,
// gives a *redis.ClusterClient; one with master_name a Sentinel-backed
// *redis.Client that follows failovers (the host and addr= are the
// sentinels); any other a *redis.Client. Other parameters are go-redis's
// (dial_timeout, read_timeout, pool_size...). The caller closes the client.
func NewClient(rawURL string) (redis.UniversalClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redisfrontier: Redis URL: %w", err)
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, fmt.Errorf("redisfrontier: Redis URL %s: scheme must be redis or rediss", u.Redacted())
	}
	q := u.Query()
	cluster := false
	if v := q.Get("cluster"); v != "" {
		switch strings.ToLower(v) {
		case "true", "1", "yes":
			cluster = true
		case "false", "0", "no":
		default:
			return nil, fmt.Errorf("redisfrontier: Redis URL %s: cluster=%q: want true or false", u.Redacted(), v)
		}
		q.Del("cluster")
	}
	sentinel := q.Has("master_name")
	if sentinel && cluster {
		return nil, fmt.Errorf("redisfrontier: Redis URL %s: cluster and master_name (Sentinel) exclude each other", u.Redacted())
	}
	if !sentinel && q.Has("addr") {
		cluster = true
	}
	u.RawQuery = q.Encode()
	switch {
	case sentinel:
		o, err := redis.ParseFailoverURL(u.String())
		if err != nil {
			return nil, fmt.Errorf("redisfrontier: Sentinel URL %s: %w", u.Redacted(), err)
		}
		return redis.NewFailoverClient(o), nil
	case cluster:
		o, err := redis.ParseClusterURL(u.String())
		if err != nil {
			return nil, fmt.Errorf("redisfrontier: Redis Cluster URL %s: %w", u.Redacted(), err)
		}
		return redis.NewClusterClient(o), nil
	default:
		o, err := redis.ParseURL(u.String())
		if err != nil {
			return nil, fmt.Errorf("redisfrontier: Redis URL %s: %w", u.Redacted(), err)
		}
		return redis.NewClient(o), nil
	}
}
