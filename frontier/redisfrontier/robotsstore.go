package redisfrontier

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/polite/internal/urlnorm"
	"github.com/politecrawl/polite/robots"
)

// RobotsStore is a robots.Store on the crawl's Redis, so every worker
// shares each robots.txt fetched, with a fleet-wide fetch lock
// (robots.Locker) so that one worker at a time fetches an authority's
// robots.txt while the others wait for its entry. Entries live under the
// hash tag of their site, expire from Redis MaxTTL after their own
// ExpiresAt (kept that long as a stale copy for Cache.KeepStale), and each
// robots.Cache still applies its own TTL and Recheck to what it loads.
type RobotsStore struct {
	f *Frontier
	// LockTTL is how long a fetch lock is held at most when its holder
	// dies before saving; 0 means 30s (more than fetch's 15 s timeout).
	LockTTL time.Duration
}

// RobotsStore returns the crawl's shared robots.txt store; give it to
// robots.Cache.Store. Its calls, like the Frontier's, retry for up to
// Config.Outage while Redis is unreachable (a failed Lock makes the Cache
// fail closed: no fetch, no verdict).
func (f *Frontier) RobotsStore() *RobotsStore { return &RobotsStore{f: f} }

func (s *RobotsStore) key(authority, kind string) (string, error) {
	u, err := url.Parse(authority)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("redisfrontier: robots authority %q: %w", authority, robots.ErrBadURL)
	}
	host, err := urlnorm.HostPort(u.Scheme, u.Host)
	if err != nil {
		return "", fmt.Errorf("redisfrontier: robots authority %q: %w", authority, err)
	}
	return s.f.tags[s.f.shardOf(unitOf(host))] + kind + authority, nil
}

// Load implements robots.Store.
func (s *RobotsStore) Load(ctx context.Context, authority string) (robots.Entry, bool, error) {
	k, err := s.key(authority, "robots:")
	if err != nil {
		return robots.Entry{}, false, err
	}
	var m map[string]string
	err = s.f.retry(ctx, func() (err error) {
		m, err = s.f.rdb.HGetAll(ctx, k).Result()
		return err
	})
	if err != nil {
		return robots.Entry{}, false, fmt.Errorf("redisfrontier: loading robots.txt of %s: %w", authority, err)
	}
	if len(m) == 0 {
		return robots.Entry{}, false, nil
	}
	e := robots.Entry{Authority: authority, URL: m["url"], Err: m["err"]}
	e.Status, _ = strconv.Atoi(m["status"])
	if b, ok := m["body"]; ok {
		e.Body = []byte(b)
	}
	fetched, _ := strconv.ParseInt(m["fetched"], 10, 64)
	expires, _ := strconv.ParseInt(m["expires"], 10, 64)
	e.FetchedAt, e.ExpiresAt = time.Unix(0, fetched), time.Unix(0, expires)
	return e, true, nil
}

// Save implements robots.Store.
func (s *RobotsStore) Save(ctx context.Context, e robots.Entry) error {
	k, err := s.key(e.Authority, "robots:")
	if err != nil {
		return err
	}
	fields := []any{"url", e.URL, "status", e.Status, "fetched", e.FetchedAt.UnixNano(),
		"expires", e.ExpiresAt.UnixNano(), "err", e.Err}
	if e.Body != nil {
		fields = append(fields, "body", e.Body)
	}
	err = s.f.retry(ctx, func() error {
		_, err := s.f.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, k)
			p.HSet(ctx, k, fields...)
			p.ExpireAt(ctx, k, e.ExpiresAt.Add(robots.MaxTTL))
			return nil
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("redisfrontier: saving robots.txt of %s: %w", e.Authority, err)
	}
	return nil
}

// Lock takes the fleet-wide lock on fetching authority's robots.txt,
// waiting while another worker holds it (it is released when that worker
// saves the entry and unlocks, or after LockTTL if it died). unlock
// releases it; extra calls do nothing.
func (s *RobotsStore) Lock(ctx context.Context, authority string) (unlock func(), err error) {
	k, err := s.key(authority, "rlock:")
	if err != nil {
		return nil, err
	}
	ttl := s.LockTTL
	if ttl <= 0 {
		ttl = 30 * time.Second
	}
	token := s.f.worker + ":r" + strconv.FormatUint(s.f.seq.Add(1), 10)
	for {
		gen := s.f.wake.snapshot()
		var ok bool
		err := s.f.retry(ctx, func() (err error) {
			ok, err = s.f.rdb.SetNX(ctx, k, token, ttl).Result()
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("redisfrontier: locking robots.txt of %s: %w", authority, err)
		}
		if ok {
			done := false
			return func() {
				if done {
					return
				}
				done = true
				uctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				s.f.roundTrips.Add(1)
				_ = scriptUnlock.Run(uctx, s.f.rdb, []string{k}, token, s.f.channel).Err()
			}, nil
		}
		// Wait for the unlock's wake-up, or the lock's expiry.
		var left time.Duration
		err = s.f.retry(ctx, func() (err error) {
			left, err = s.f.rdb.PTTL(ctx, k).Result()
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("redisfrontier: locking robots.txt of %s: %w", authority, err)
		}
		if left <= 0 {
			left = time.Millisecond
		}
		if err := s.f.wake.wait(ctx, gen, left); err != nil {
			return nil, fmt.Errorf("redisfrontier: waiting for the robots.txt lock of %s: %w", authority, err)
		}
	}
}

var (
	_ robots.Store  = (*RobotsStore)(nil)
	_ robots.Locker = (*RobotsStore)(nil)
)
