// Package backoff decides what a polite crawler does after one finished HTTP
// attempt: retry or not, how long to wait first, and whether the whole run
// must slow down. It only decides; it never sleeps or sends anything itself,
// so every decision is a pure function of the response, the attempt number
// and the current time. fetch waits (under its context) and trips the latch;
// the politeness gate (the frontier) applies it.
//
// # The defaults
//
// [Policy]{} (and a nil *Policy) behaves exactly like [Default], which is
// the audit crawler's public promise:
//
//	outcome of an attempt        retried?            wait before retry 1, 2           run-wide slowdown
//	429 Too Many Requests        at most twice       Retry-After if valid, else       trips (1 in flight, 3 s
//	                             (3 attempts)        0.5 s, 1 s; each capped at 30 s  between starts, then on)
//	503 Service Unavailable      at most twice       Retry-After if valid, else       no
//	                                                 0.5 s, 1 s; capped at 30 s
//	502, 504                     at most twice       0.5 s, 1 s (no Retry-After)      no
//	any other status             no                  -                                no
//	transport error              no (RetryTransportErrors: same schedule)             no
//	cancelled context            never               -                                no
//
// Retry-After (RFC 9110 §10.2.3) is delta-seconds or any of the three
// HTTP-date forms; a past date means 0. A negative, fractional,
// non-numeric or overflowing value, or two header lines that disagree, is
// ignored and the exponential wait used; a valid huge value is capped at
// 30 s. Jitter is off by default (Jitter: 0.2 lengthens exponential waits
// by up to 20 %, never shortens them, never past the cap).
//
// Every knob is a field with a useful zero value: MaxRetries (0 = 2,
// [NoRetries] = none), Base (500 ms), Multiplier (2), Cap (30 s), Jitter,
// RetryTransportErrors, RetryStatuses (nil = 429/502/503/504),
// SlowdownStatuses (nil = 429), SlowdownInFlight (1), SlowdownGap (3 s),
// SlowdownScope (PerRun).
// The two decisions are plain function types that can be replaced without
// forking: [CheckRetry] (retryable? slow down?) and [Backoff] (how long).
//
// # The slowdown and Retry-After
//
// One 429 anywhere trips the run's [Slowdown] at once, before the retry it
// asks for is sent. From then on at most one request is in flight and
// request starts are at least 3 s apart, and the retry is a request start
// like any other: a 429 answered with "Retry-After: 1" is retried after
// 3 s, not 1 s, because the gap the slowdown imposes is longer than the
// wait the server asked for. Retry-After is a lower bound; the gate may
// add to it (and without a slowdown, a retry waits its backoff plus at most
// one Gap of the run). 503, 502 and 504 never trip the slowdown.
//
// The scope is chosen on the latch (Slowdown.Scope, or
// Policy.SlowdownScope for the latch a frontier makes): [PerRun], the
// default and Crawl Cove's promise, slows every host at the first 429;
// [PerHost] slows only the host that answered 429 (each host trips once),
// so one busy site of a multi-site crawl does not slow the others. Trips
// and TripsSince list the trips for the gate that applies them.
//
// # Adaptive pacing
//
// [Adaptive] is the per-host pacing policy a gate may apply after every
// response ([Observation]: status, error, elapsed): a plain function of
// the configured gap, the cap and the host's current gap, clamped by the
// gate to [configured gap, cap]. [DefaultAdaptive] moves the gap halfway
// towards 3 × the response time after a good answer (AutoThrottle-like;
// it comes back to the configured gap as the server recovers) and doubles
// it, to at least 1 s, after a 5xx, a 429 or a timeout (StormCrawler-like).
// It is opt-in (frontier.Config.Adaptive).
//
// # Cost
//
// go test -run=^$ -bench=. -benchmem ./backoff (2-core shared machine):
// Decide ≈ 0.4–0.5 µs, 61 B, 3 allocations (the Reason string);
// ParseRetryAfter 0 allocations (≈ 15 ns for delta-seconds, ≈ 0.2 µs for an
// HTTP-date); Slowdown.Tripped is one atomic load, 0 allocations.
package backoff
