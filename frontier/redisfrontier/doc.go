// Package redisfrontier is the crawl frontier and politeness gate of
// package frontier, shared through Redis by every worker — goroutine,
// process or machine — of one named crawl, so that the limits a site
// owner reads hold for the whole fleet, not per process.
//
// # Model
//
// A crawl is a set of sites. A site is a start URL's host with its
// www/apex twin (frontier.Twin); both names share one queue, one seen set
// and one budget: Limits.InFlight requests in flight and Limits.Gap
// between request starts, counted across all workers, plus the site's
// page and depth limits. Links to hosts of no started site are out of
// scope. *Frontier implements frontier.Interface — Add, Next, Done,
// Acquire (fetch.Gate), StopHost, Stats — with the meaning they have on
// *frontier.Frontier, so a crawl loop written for one runs on the other,
// and Config.Client wires a fetch.Client in one step as
// frontier.Config.Client does; the program chooses by construction.
//
// Every decision is one Lua script, run atomically by Redis, and every
// time in it is the Redis server's TIME: skew between machines cannot
// shrink a gap. Next hands out the queued URL of the site that may start
// soonest (a sorted set of sites by ready time), shallowest first within
// the site, pacing hand-outs with the gaps and holding at most the site's
// in-flight limit out. Acquire (fetch.Gate: pages, robots.txt, retries,
// redirect hops) admits a request when the site's and the run's in-flight
// counts and gaps allow. Items handed out and in-flight slots are leases:
// a worker renews its leases every Lease/3, and a worker that dies (kill
// -9) loses them when they expire: its items are queued again, at the
// front, and counted as Rehanded; its slots free themselves. Delivery is
// at least once: an item that was in flight when its worker died may be
// fetched twice, and Done then reports ErrLeaseLost to a worker that
// stalled past its lease.
//
// Waiters are woken by a publish on the crawl's channel whenever a script
// frees capacity or queues work, and otherwise sleep exactly until the
// time the script named (the next gap, the next lease expiry): there is no
// polling interval. A release rides on the worker's next call (usually the
// Finish that follows a fetch) or goes alone after 2 ms; meanwhile the
// slot still counts, on the polite side.
//
// A page costs three round trips: Next, Acquire, and Finish, which adds
// the page's links and marks it done in one call (Add per link and Done
// work too, in more calls). Links are checked against robots.txt before
// they are queued (Config.Robots); a disallowed URL is never requested.
//
// # Seen set
//
// A URL is queued once per crawl. Each site keeps the 64-bit xxhash of
// every URL it has seen in integer sets split by linear hashing, so that
// no set grows past Redis's compact intset encoding
// (set-max-intset-entries, 512 by default): 8 bytes per URL plus the
// keys' overhead. Two URLs of one site whose hashes collide count as one
// (probability about n²/2⁶⁵).
//
// # Slowdown
//
// Config.Slowdown is the worker's backoff.Slowdown latch, shared with its
// fetch.Client. The first trip (a 429) is written to Redis before the
// worker's next call, together with the release of the slot that saw it,
// and from that moment every worker's requests to the crawl — or to that
// site only, with SlowSiteOnly — keep at most Slowdown.InFlight in flight
// and Slowdown.Gap between starts, for the rest of the crawl. Trip
// reports further 429s in SlowSiteOnly mode.
//
// # robots.txt
//
// RobotsStore is a robots.Store (and robots.Locker) on the same Redis: a
// robots.Cache in every worker loads what any worker fetched, under its own
// TTL rules, and the fetch lock (SET NX with expiry, woken on unlock) makes
// a fleet starting together request each robots.txt once.
//
// # Keys, shards and Redis Cluster
//
// Every key of a crawl starts with "polite:{<crawl>}:" — one hash tag, so
// one Cluster slot — or, with Config.Shards = N > 1, "polite:{<crawl>/<i>}:"
// where i is the xxhash of the site modulo N. A site, its hosts, queues,
// seen buckets, leases and robots entries all live in one shard, and
// every script touches one shard only, so the crawl spreads over N slots
// and hence over the cluster's masters; give N a few times the number of
// masters. Run-wide limits (MaxInFlight, Gap, the crawl-wide slowdown) are
// then kept per shard; per-site limits are exact at any N. Next visits the
// shards in turn; completion is declared only after two passes over all
// shards find them complete with no URL queued in between.
//
// # Redis failures
//
// Calls retry while Redis is unreachable for up to Config.Outage, then
// fail with ErrUnavailable. With persistence (appendonly) a restarted
// Redis has the crawl back and workers resume. Without it the crawl's
// state is gone; every call then fails with ErrStateLost rather than
// starting the crawl over and fetching pages again.
//
// # Figures
//
// Measured with the benchmarks of this package on a 2-core machine shared
// with other jobs (load average 7 to 22, so times swing), Redis 7.0 on
// loopback: 3.03 round trips and 79 Redis commands (inside scripts) per
// page, 190–280 µs of Redis script time per page; with 1, 2 and 4 workers
// (20 sites answering in 50 ms, gap 0, 4 goroutines per worker) 71, 110
// and 266 pages/s in one run (3.7×), 73, 137 and 235 in another (3.2×);
// at 1,000,000 URLs (1,000 sites), 9.3 bytes per seen URL (MEMORY USAGE of
// the seen sets; no bucket past the intset limit) and 91 bytes per queued
// URL (the URL and the page it was found on, about 80 bytes of text here),
// 95 bytes per URL of used_memory in all.
package redisfrontier
