package backoff

import "time"

// Observation is what a politeness gate learns about one finished request
// to a host, for an [Adaptive] policy.
type Observation struct {
	Status  int           // the response's status; 0 when none arrived
	Err     error         // transport error, timeout or failed body; nil otherwise
	Elapsed time.Duration // from sending the request to the end of its body (or the failure)
}

// Failed reports whether the host failed to answer well: a 5xx, a 429, or
// no complete response at all (a timeout, a reset connection).
func (o Observation) Failed() bool {
	return o.Err != nil || o.Status == 0 || o.Status >= 500 || o.Status == 429
}

// Adaptive decides a host's gap (least time between two request starts to
// it) after one of its responses, from the configured gap (floor), the
// cap (ceil), the host's current gap (cur; floor before any response) and
// what happened. The gate clamps the result to [floor, ceil], so a policy
// can never make a host's pace faster than configured. [DefaultAdaptive] is
// the policy to start from; any func of this type replaces it.
type Adaptive func(floor, ceil, cur time.Duration, o Observation) time.Duration

// Tuning of [DefaultAdaptive].
const (
	// AdaptiveLatencyFactor is the start-to-start gap DefaultAdaptive
	// aims at, in response times: with one request in flight the host
	// spends at most a third of its time on this crawler.
	AdaptiveLatencyFactor = 3
	// AdaptiveErrorFloor is the least gap after a failure: a host that
	// errs is given at least a second to recover.
	AdaptiveErrorFloor = time.Second
)

// DefaultAdaptive paces a host by its response times, as Scrapy's
// AutoThrottle does by latency, and backs off exponentially on errors, as
// StormCrawler does per queue:
//
//   - after a good response the gap moves halfway from cur towards
//     AdaptiveLatencyFactor (3) × the response time, so it grows as the
//     server slows and falls back, a halving of the distance per
//     response, when it recovers;
//   - after a failure (5xx, 429, timeout, transport error; see
//     Observation.Failed) the gap doubles, and is at least 1 s and at
//     least 3 × that response's time.
//
// The result is clamped to [floor, ceil].
func DefaultAdaptive(floor, ceil, cur time.Duration, o Observation) time.Duration {
	cur = clamp(cur, floor, ceil)
	target := AdaptiveLatencyFactor * o.Elapsed
	var next time.Duration
	if o.Failed() {
		next = max(2*cur, AdaptiveErrorFloor, target)
	} else {
		next = cur/2 + target/2
	}
	return clamp(next, floor, ceil)
}

// clamp bounds d to [lo, hi]; hi <= 0 means no upper bound.
func clamp(d, lo, hi time.Duration) time.Duration {
	if hi > 0 && d > hi {
		d = hi
	}
	if d < lo {
		d = lo
	}
	return d
}
