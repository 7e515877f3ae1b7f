// Package backoff decides what a polite crawler does after one finished HTTP
// attempt: retry or not, how long to wait first, and whether the whole run
// must slow down. It only decides; it never sleeps or sends anything itself,
// so every decision is a pure function of the response, the attempt number
// and the current time.
//
// The defaults (see [Default]) are the audit crawler's public promise: a 429
// is retried at most twice, waiting what Retry-After asks for or backing off
// exponentially from half a second, each wait capped at thirty seconds; one
// 429 anywhere trips a run-wide [Slowdown] (one request in flight, three
// seconds between request starts, for the rest of the run); 502, 503 and 504
// are retried on the same schedule without the slowdown; every other status
// and, unless asked, every transport error is final; a cancelled context is
// never retried.
//
// A [Policy] is a plain struct whose zero value behaves like [Default]. The
// two decisions a user may want to change, which outcomes are retryable
// ([CheckRetry]) and how long to wait ([Backoff]), are plain function types
// that can be replaced without forking the package.
package backoff
