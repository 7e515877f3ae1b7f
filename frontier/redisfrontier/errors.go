package redisfrontier

import "errors"

// Errors of a Frontier, matched with errors.Is.
var (
	// ErrStateLost: the crawl's state is gone from Redis (the server was
	// restarted without persistence, flushed, or the keys were deleted) or
	// belongs to another run. Continuing would fetch pages again, so
	// every call fails with it: stop the worker.
	ErrStateLost = errors.New("redisfrontier: crawl state lost from Redis (restarted without persistence or flushed); stopping rather than crawling again")
	// ErrUnavailable: Redis stayed unreachable for longer than
	// Config.Outage. It wraps the last network error.
	ErrUnavailable = errors.New("redisfrontier: Redis unavailable")
	// ErrLeaseLost: Done or Finish came after the item's lease had expired
	// and the item was handed out again (at-least-once: it may be fetched
	// twice); counted as Rehanded in FleetStats.
	ErrLeaseLost = errors.New("redisfrontier: item lease expired and the item was handed out again")
	// ErrConfigMismatch: a worker's Config disagrees with the crawl's
	// stored settings (another worker created the crawl differently).
	ErrConfigMismatch = errors.New("redisfrontier: config differs from the crawl's stored settings")
	// ErrLateStart: a request was admitted again and again but each time
	// could not start within Config.StartWindow of its admission (see the
	// package doc); the Redis round trip from this worker is longer than
	// the window. The request was not sent.
	ErrLateStart = errors.New("redisfrontier: request could not start within the start window of its admission")
	// ErrClosed: the Frontier was closed.
	ErrClosed = errors.New("redisfrontier: closed")
)

// errStateMissing: a script on a Redis Cluster found no state of its
// shard on the node that answered, retried while the cluster converges
// (see Frontier.run); it becomes ErrStateLost after Config.Outage.
var errStateMissing = errors.New("no crawl state on the node that answered for the shard's slot")
