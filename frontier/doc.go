// Package frontier decides which URL a polite crawler fetches next and when
// any request may start, and enforces the run's politeness limits.
//
// A Frontier has two faces that share one limiter state. Add, Next and Done
// run the crawl: Add normalizes a URL and queues it or says why not
// (robots.txt is asked before a URL is queued, so a disallowed URL is never
// requested); Next hands out the queued URL whose host may start soonest,
// shallowest first within a host (breadth-first), once a request to it may
// start, and holds at most MaxInFlight items out; Done frees the item.
// AddURL is Add for a URL the caller has parsed already (a crawler that
// parsed its links to read them): the same answer, without parsing it again.
// Acquire is the politeness gate (fetch.Gate) that fetch calls before every
// HTTP request — pages, robots.txt, sitemaps, retries and redirect hops
// alike —: it blocks until a request to the host may start under every
// limit and counts it in flight until release. Only Acquire counts
// requests, so a page is never counted twice. Blocked Acquire calls go
// through in arrival order among those whose host may take a request, ahead
// of items Next has yet to hand out, so a retry waits its backoff plus at
// most one gap.
//
// # Wiring
//
// One step: set Config.Client to the run's *fetch.Client and New makes the
// Frontier its gate, shares one backoff.Slowdown between them and asks the
// client's robots.txt cache before queueing (see Config.Client). The crawl
// loop is then:
//
//	f.Add(ctx, start, 0, "")
//	for { // in up to MaxInFlight goroutines
//		it, err := f.Next(ctx)
//		if err != nil {
//			break // ErrComplete, or ctx ended
//		}
//		res, err := client.Get(ctx, it.URL)
//		// ... f.Add(ctx, link, it.Depth+1, res.FinalURL) for each link of res ...
//		f.Done(it, err)
//	}
//
// Next holds most of the politeness wait (it hands an item out only when
// a request to it may start; Item.Wait says how long that took), and the
// Get's Acquire the rest (Result.GateWait): the loop's time per page is
// Item.Wait + Result.Total, nothing unaccounted.
//
// [Interface] is what such a loop needs; other frontiers (a shared one on
// Redis) implement it too.
//
// # Each URL requested once
//
// A URL is requested at most once per crawl, whether a link, a sitemap or
// a redirect led to it: Add deduplicates what is queued, and New makes the
// Frontier its client's fetch.Claimer, so before following a redirect the
// client asks Claim, which marks the target seen (a later Add of it is a
// Duplicate) or, when it was seen already, makes the client stop at the
// redirect (Result.DuplicateTarget). A redirected page's links belong to
// the page that holds them, the final URL: pass res.FinalURL, not it.URL,
// as Add's from. Redirect targets outside the scope are not recorded;
// claimed targets count against no limit and are remembered in memory
// only (with a PersistentQueue, a resumed crawl may request one again).
//
// # Limits
//
//	setting          default          accepted   notes
//	MaxPages         500              0 (none)+  URLs ever queued, start pages included
//	MaxDepth         5                0..1000    start URLs are depth 0
//	MaxInFlight      4                1..256     requests in flight, run-wide; also items handed out
//	Gap              300 ms           0..60 s    least time between two request starts, run-wide
//	PerHostInFlight  0 (MaxInFlight)  1..16      requests in flight to one host (0: MaxInFlight, at most 16)
//	PerHostGap       0                0..60 s    least time between two starts on one host, on top of Gap
//	HonorCrawlDelay  false            -          a host's robots.txt Crawl-delay becomes its PerHostGap (below)
//	Adaptive         nil (off)        -          a host's gap follows its answers (backoff.DefaultAdaptive)
//	MaxHostGap       30 s             0..60 s    cap of what Crawl-delay and Adaptive give one host
//	slowdown         1 in flight, 3 s            from the moment backoff.Slowdown trips, for the rest of the run;
//	                                             run-wide (backoff.PerRun, default) or on the 429's host only
//	                                             (Slowdown.Scope or Policy.SlowdownScope = backoff.PerHost)
//
// Values outside the ranges are rejected by New with a *ConfigError naming
// the field and its range, never clamped. Proved on what a loopback server
// saw under testing/synctest: never more than MaxInFlight requests in
// flight; no request starts sooner than Gap after the previous one, nor
// sooner than PerHostGap after the previous one to its host; a slow host
// never blocks a ready one; once the slowdown trips, no request starts
// while another is in flight and starts are at least 3 s apart — the retry
// of the 429 that tripped it included, whatever its Retry-After.
//
// A start is when the request's bytes are written, not when Acquire
// admitted it: a request whose new connection took most of the gap to
// dial would otherwise bring the next one closer to the site than the
// gap. The Frontier is a fetch.Pacer: fetch calls Start on the connection
// a request gets, just before writing it, and the request waits there
// for the gaps since the last start on the wire (counted in
// Result.GateWait, never in the server's timings); Wrote moves that start
// to when the write really ended (TestGapHoldsFromRequestStart).
//
// # A host's own pace
//
// Three things can make one host slower than the limits above, never
// faster; the longest of them applies, and Stats().Hosts[h].Gap shows it:
//
//   - a PerHost slowdown (backoff.Slowdown.Scope): 1 in flight and 3 s for
//     the host that answered 429, the others untouched;
//   - HonorCrawlDelay, for a crawler that promises to honour Crawl-delay
//     (Crawl Cove promises not to, so DefaultConfig leaves it off): the
//     Crawl-delay of the robots.txt group that applies to the crawler's
//     tokens, read when one of the host's URLs is queued, capped at
//     MaxHostGap (30 s, as Nutch and StormCrawler cap it; Heritrix allows
//     300 s, which would make a 500-page site a two-day crawl) and never
//     below PerHostGap; each change is a frontier.crawl_delay event;
//   - Adaptive, a plain function (backoff.Adaptive) that fetch's Client
//     and Transport feed with every response (fetch.Observer): the default
//     aims at three response times between starts and doubles on 5xx,
//     429 and timeouts, clamped between the configured gap and
//     MaxHostGap, and falls back to the configured gap as the server
//     recovers (a frontier.host_gap event per change).
//
// # What Add answers
//
//	outcome            when                                                        marked seen
//	Queued             passed every check; Next will hand it out                   yes
//	Duplicate          the normalized URL was seen before                          -
//	OutOfScope         another site: report it, never follow it (at any depth)     no
//	TooDeep            depth > MaxDepth                                            no
//	PageLimit          MaxPages URLs already queued                                yes
//	Disallowed         robots.txt forbids it (Verdict says which rule)             yes
//	RobotsUnreachable  robots.txt answered 5xx/429 or failed: stop the site        yes
//	Invalid            not an absolute http(s) URL with a valid host, or depth < 0 no
//	TooLong            over 8 KiB, before or after normalization                   no
//	Stopped            its host was stopped with StopHost                          no
//	Failed             ctx ended during the robots check, robots gave no answer   yes
//	                   (fetch.ErrNoVerdict), or the Queue failed
//
// Scope (Config.Scope): nil means the hosts of the start URLs (added at
// depth 0) plus their www/apex twin (shop.example ↔ www.shop.example; none
// for IP addresses, public suffixes or other subdomains); SameDomain is the
// whole registrable domain; any func(*url.URL) bool works. URLs are
// normalized (internal/urlnorm) before deduplication. Stats gives at any
// moment queued, being added, handed out, in flight, done, failed,
// requests, blocked by robots.txt, dropped by reason, and the same per host.
//
// # Storage and resuming
//
// The queue and the seen set sit behind [Queue] (Visit, Push, Pop, Drop),
// in memory by default (NewMemoryQueue: seen URLs kept as 64-bit hashes, so
// two distinct URLs collide with probability about n²/2⁶⁵, 3·10⁻⁸ at a
// million URLs). A store that outlives the process implements
// [PersistentQueue] too (Resume, Ack, Started): items handed out but never
// Done come back after a crash, New rebuilds its counts (per host and
// depth, the page budget, stopped hosts, the default scope) and the last
// request start, so a resumed crawl fetches the same pages as an
// uninterrupted one and its first request still waits out the gap.
//
// # Decision events
//
// With Config.Logger (or the Client's Logger) set, decisions are logged
// with log/slog; the message is the event name, durations are slog
// durations, empty attributes are left out. A nil Logger is silent, and one
// whose handler is not enabled for Debug costs no allocation.
//
//	event               level  when                          attributes
//	frontier.add        Debug  every Add                     url, from, depth, outcome, rule, line, err
//	frontier.gate_wait  Debug  an Acquire that had to wait   url, host, wait
//	frontier.claim      Debug  a redirect target checked     url, outcome (claimed, duplicate, out_of_scope)
//	frontier.crawl_delay Info  HonorCrawlDelay changed a     url, host, crawl_delay (as read), gap
//	                           host's gap                    (applied), capped
//	frontier.host_gap   Debug  Adaptive changed a host's gap url, host, gap, elapsed, status, err
//
// outcome is one of queued, duplicate, out_of_scope, too_deep, page_limit,
// disallowed, robots_unreachable, invalid, too_long, stopped, failed; rule
// and line name the robots.txt rule that decided, when one did.
//
// # Time
//
// Time is read from Config.Now; NextAt and TryAcquireAt are the
// non-blocking forms for callers that keep their own clock, and the
// blocking forms work under testing/synctest.
//
// # Performance
//
// go test -run '^$' -bench . -benchmem -cpu 1 ./frontier (shared 2-core
// machine): Add+Next+Done of 100,000 URLs on 1,000 hosts with no gap,
// 1.3–1.55 M URLs/s, about 650 ns of CPU per URL, on an idle machine (best
// of 20 runs 1.27 M/s at load average 15–20; target ≥ 1 M/s); at 1,000,000
// 80-byte URLs, 132 B per queued URL (string included, target ≤ 200 B) and
// 13.8 B per done URL (target ≤ 16 B); Acquire + release about 80 ns, 2
// allocations; a gap-bound crawl (300 ms, one in flight, 1,000 requests,
// synctest) takes exactly n × gap. A nil Logger and a disabled one cost
// the same allocations (BenchmarkLogger, TestDisabledLoggerAllocatesNothing).
package frontier
