// Package frontier decides which URL a polite crawler fetches next and when
// any request may start, and enforces the run's politeness limits.
//
// A Frontier has two faces that share one limiter state. Add, Next and Done
// manage the crawl: Add normalizes a URL and queues it or says why not
// (duplicate, out of scope, too deep, page limit, disallowed by robots.txt —
// checked before queueing, so a disallowed URL is never requested —, invalid,
// too long); Next hands out the queued URL whose host may start soonest,
// shallowest first within a host (breadth-first), once a request to it may
// start; Done frees the item. Acquire is the politeness gate that fetch
// calls before every HTTP request it sends — pages, robots.txt, sitemaps,
// retries and redirect hops alike —: it blocks until a request to the host
// may start under every limit and counts it in flight until release.
// Blocked Acquire calls go through in arrival order among those whose host
// may take a request, ahead of items Next has yet to hand out, so a retry
// waits its backoff plus at most one gap.
//
// The limits: at most MaxInFlight requests in flight, at least Gap between
// any two request starts, optionally per host the same, and once the backoff
// Slowdown latch trips, at most its InFlight (1) in flight and at least its
// Gap (3 s) between starts, from that moment on. Next paces hand-outs with
// the same gaps and holds at most MaxInFlight items out at a time, so an item
// it returns can normally start at once; only Acquire counts requests, so a
// page is never counted twice.
//
// Time is read from Config.Now; NextAt and TryAcquireAt are the
// non-blocking forms for callers that keep their own clock, and the blocking
// forms work under testing/synctest.
package frontier
