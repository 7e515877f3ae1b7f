// Package fetch makes every HTTP request of a polite crawler.
//
// A [Client] sends GET and HEAD requests only, with the crawler's own
// User-Agent and extra headers, checks robots.txt before the first URL and
// before every redirect hop (a disallowed target is never requested), passes
// the run's politeness [Gate] before every single request (retries and
// robots.txt fetches included), retries 429/5xx by a [backoff.Policy] without
// holding a slot while it waits, bounds each request by a timeout that also
// covers the body, and reads at most MaxBodyBytes of a body.
//
// The same politeness is available net/http-natively: [Transport] is a
// RoundTripper that adds identity and the gate (robots.Cache uses it for
// robots.txt), and [Client.RoundTripper] and [Client.HTTPClient] add robots
// checks and retries for third-party code that takes an *http.Client.
//
// Errors are [*Error] values naming the URL; their causes are the sentinel
// errors of this package (errors.Is), robots verdicts, and for timeouts
// [ErrTimeout] together with context.DeadlineExceeded.
package fetch
