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
// # Request starts: what a site owner sees
//
// The gap a site owner reads is between request starts as the site sees
// them. The gate admits a request at a moment of the Redis clock, but the
// request leaves its worker later — after the reply came back, the
// worker's goroutines ran and a connection was found: under -race on a
// loaded 2-core machine 4 ms typically and up to 80 ms, more for one
// request than for the next, enough to bring two requests to a site
// closer than the gap between their admissions (measured: 93 µs apart
// for a 50 ms gap). So an admission is good for Config.StartWindow
// (10 ms), counted on the worker's clock from when it sent the Redis call
// that admitted the request — no clock is compared with Redis's:
//
//   - A request starts when its first bytes are handed to the kernel. The
//     transport Config.Client gets (Frontier.Transport) checks at the last
//     moment — on HTTP/1.x inside the connection's Write, just before
//     write(2); on HTTP/2 when the connection is assigned — that the
//     window has not passed. If it has, the request is not sent but
//     admitted again, waiting for the gaps (its in-flight slot is still
//     counted): FleetStats.Readmitted. That wait happens inside the
//     transport, which reports it (fetch.ReportGateWait), so fetch counts
//     it in Result.GateWait, never in TTFB or ResponseTime.
//   - The gate spaces admissions to a site by its gap plus StartWindow
//     (for every nonzero gap: the site's, the run's, the slowdown's), so
//     requests start at least the gap apart across the fleet.
//   - The worker may still be descheduled between that check and write(2)
//     (measured under the same load: 15 µs typically, a rare stall of
//     18 ms). When the write returns later than the window allowed, the
//     worker records a start at that moment in Redis before going on
//     (FleetStats.LateStarts, event redisfrontier.late_start), which the
//     next admission is spaced from; only a stall longer than the gap plus
//     StartWindow could bring two starts closer than the gap.
//
// The site sees requests arrive at least the gap apart, less the
// difference between two requests' paths from write(2) to its kernel:
// microseconds on loopback (the tests measure arrivals with the server
// kernel's receive timestamps, to within 2 ms), the network's jitter on
// the internet, which no crawler controls. In flight it sees at most the
// limit: a request is handled within its slot. A crawl with a gap runs
// StartWindow per request slower (3 % at the default 300 ms); with gap 0
// nothing is added, and the window still bounds how late a request
// admitted before a 429 may start. A worker whose Redis round trip
// exceeds StartWindow can start nothing: its requests fail with
// ErrLateStart. Every request admitted and every late start can be
// logged (Config.Logger), on the Redis clock.
//
// Waiters are woken by a publish on the crawl's channel when a script
// makes something possible sooner than waiters were told — a site ready
// earlier than before ('n', for Next), a slot freed at a site that was at
// its in-flight limit ('w', for Acquire) — and otherwise sleep exactly
// until the time the script named (the next gap, the next lease expiry):
// there is no polling interval. In each worker one caller of Next at a
// time asks Redis and waits; the others queue behind it, and with one
// shard the reply that hands out an item says when the next may go, so
// idle fetchers cost no calls. A release rides on the worker's next call
// (usually the Finish that follows a fetch) or goes alone after 2 ms;
// meanwhile the slot still counts, on the polite side.
//
// A page costs three round trips: Next, Acquire, and Finish, which adds
// the page's links and marks it done in one call (Add per link and Done
// work too, in more calls); a request that misses its start window (see
// below) costs one more. Links are checked against robots.txt before
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
// Redirect targets are in the seen set too: Config.Client makes the
// Frontier the client's fetch.Claimer, so before following a redirect a
// worker asks Claim (one round trip, only for redirect hops), and a
// target any worker queued or requested is not requested again. Links of
// a redirected page belong to the final URL: FinishFrom(ctx, it,
// res.FinalURL, err, links).
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
// (or "{<crawl>/<i>.<k>}", see Frontier.Shards) where i is the xxhash of
// the site modulo N; shard i's tag falls in the i-th of N equal bands of
// the 16384 slots, so the shards split evenly over masters that own equal
// slot ranges. A site, its hosts, queues,
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
// On Redis Cluster (NewClient with a cluster URL), a call that fails
// because a master died, or with CLUSTERDOWN, TRYAGAIN or LOADING while
// its replica is promoted, makes the client reload the slot map and is
// retried within the same Outage. So is a script that finds no state of
// its shard on the node that answered (it stops before writing): until
// the slot map names the promoted replica, the dead master's address may
// reach another server that took it, or a restarted node serving its old
// slots empty; state missing for all of Outage is ErrStateLost. Replication is asynchronous, so a
// promoted replica may lack the dead master's last writes, among them
// admissions: every admitting script compares the serving master's run
// id with the one recorded in the shard and, when it changed, fences the
// shard — no site of it is admitted until its gap has passed since the
// change (FleetStats.Fences) — so the gap holds at every site across a
// failover (the in-flight count is not fenced: a request admitted in the
// lost moments and still running is unknown to the new master, so its
// site may have one more in flight until it ends). A retried Acquire
// whose first reply was lost finds its slot in and admits nothing twice. A hand-out or a done mark lost with the
// master comes back after the item's lease: such an item is fetched once
// more; at most the items handed out or finished in the replication lag
// before the crash (none in the failover test). Resharding: calls follow
// ASK and MOVED; every script first touches a key that never exists,
// which a master whose slot is migrating away refuses, so the script
// fails before writing anything and is retried on the slot's new master.
// Move each slot's keys in one MIGRATE (redis-cli --cluster reshard
// --cluster-pipeline larger than a slot's keys), so that no script sees
// part of a shard on each side.
//
// # Figures
//
// Measured with the benchmarks of this package on a 2-core machine shared
// with other jobs (load average 1 to 22, so times swing), Redis 7.0 on
// loopback (examples/fleet/README.md has the tables and the commands):
// 3.02–3.05 round trips and 91 Redis commands (inside scripts) per page
// with one shard, at gaps of 0, 20 ms and 300 ms alike (5.2–6.6 and
// 4.7–5.1 at 20 and 300 ms before Next had one asker per worker and
// hand-outs said when the next may go), 0.015–0.065 wake-ups per page,
// no request missing its start window; 180–390 µs of Redis CPU per page
// on a cluster of 1 to 3 masters; an idle worker's visit of 16, 64 and
// 256 shards 0.7, 2.4 and 22–26 ms; a frontier of 100,000 sites and
// 10,000,000 URLs generated through the API: 798 bytes per site, 9.8 per
// seen URL, 93 per queued URL (the URL and the page it was found on,
// about 80 bytes of text), 108 per URL of used_memory in all (at
// 1,000,000 URLs, 10 per site: 18.4, 128 and 198); with 1, 2 and 4
// workers (20 sites answering in 50 ms, gap 0, 4 goroutines per worker)
// 75, 145–149 and 280–291 pages/s (3.7–3.8×, load 1.4–3.6).
//
// The start window, in the fleet test (4 worker processes under -race, 20
// sites, gap 50 ms, load 2–10, about 20 runs): without it a request
// reached its site 4–9 ms after its admission typically, up to 80 ms, and
// two requests to a site 93 µs apart; with it every request arrived
// within 9.7 ms of its admission, the last check to the server's kernel
// took 10–18 µs typically (p99 at most 0.4 ms; one stall of 18 ms in
// about 2,000 requests: what late starts are recorded for), and the least
// gap between arrivals at a site was 54.5–58 ms. Under that load 5–110 %
// of requests were admitted again (without -race, none).
package redisfrontier
