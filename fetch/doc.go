// Package fetch makes every HTTP request of a polite crawler.
//
// A [Client] sends GET and HEAD requests only, with the crawler's own
// User-Agent and extra headers (names sent as written: X-AGENT stays
// X-AGENT), checks robots.txt before the first URL and before every redirect
// hop (a disallowed target is never requested), passes the run's politeness
// [Gate] before every single request (pages, robots.txt, sitemaps, retries,
// redirect hops), retries 429/5xx by a [backoff.Policy] without holding a
// slot while it waits, bounds each request by a timeout that also covers the
// body, and reads at most MaxBodyBytes of a body.
//
//	behaviour       default                 notes
//	gate            the client's HostGate   nil Gate: 1 request in flight and 1 s between request starts per
//	                                        host, robots.txt and retries included; other hosts never wait;
//	                                        Gate: NoLimits{} for none; frontier.New sets the frontier
//	methods         GET, HEAD               anything else: ErrMethod before any I/O, from every entry point
//	identity        UserAgent + Header      on every request, robots.txt and retries too; replaces the caller's own
//	robots tokens   ProductToken(UserAgent) RobotsTokens: several, in order of preference (robots.Tokens)
//	timeout         15 s per request        starts when the gate admits the request; covers connect, headers
//	                                        and the whole body; ErrTimeout + context.DeadlineExceeded
//	redirects       10 followed             reach the page in 11 requests; an 11th is ErrTooManyRedirects;
//	                                        loops ErrRedirectLoop; bad Location ErrBadRedirect
//	robots per hop  always                  each target checked before it is requested: ErrDisallowed (with
//	                                        the rule), ErrSiteOffLimits (5xx/unreachable), ErrNoVerdict
//	retries         2, on 429/502/503/504   Retry-After or 0.5 s, 1 s; capped at 30 s; no slot held while
//	                                        waiting; every attempt passes the gate again; 429 trips Slowdown
//	body cap        10 MiB                  longer bodies truncated and flagged (Result.Truncated)
//	base transport  NewBaseTransport(nil)   HTTP_PROXY/HTTPS_PROXY/NO_PROXY; curl-style --resolve (ParseResolve)
//	address guard   off (Guard nil)         Client.Guard: internal addresses refused by name and at dial time
//	conditional GET off (Validators nil)    Client.Validators: If-None-Match/If-Modified-Since, 304 = Unchanged
//	bot protection  always classified       Result.Challenge names the signal; never retried
//	redirect dedup  off (Claimer nil)       set by frontier.New/redisfrontier.New: a seen target is not requested
//
// A zero Client is polite on its own: one request in flight per host and
// 1 s between two request starts to one host (DefaultHostInFlight,
// DefaultHostGap), the same through HTTPClient, RoundTripper and a zero
// [Transport]. One connection at a time is what Nutch (one fetch thread
// per host queue) and StormCrawler (one thread per queue) do by default,
// and 1 s is StormCrawler's default delay and the low end of the polite
// crawlers' defaults (Heritrix waits at least 3 s, Nutch 5 s): the
// fastest default a site owner would not call rude, since a bare client
// has no idea whose server it talks to. A [HostGate] with other limits is
// the standalone gate for programs without a frontier; [NoLimits] is the
// explicit "no limits" for tests and benchmarks. A crawl gives the client
// to frontier.New, whose gate then replaces the default.
//
// Robots checks fail closed: a request is sent only when the checker
// returns a nil error and Outcome robots.Allowed; robots.Unknown (the zero
// Verdict) is refused with [ErrNoVerdict].
//
// # Wiring a crawl
//
// Give the client to frontier.New (frontier.Config.Client): the frontier
// becomes the client's Gate, one backoff.Slowdown is shared, and the
// frontier asks the client's robots cache. Gate, Robots, Policy, Slowdown
// and Logger are read at request time, by the client and by every
// [Client.PoliteTransport] (which its private robots cache uses), so no
// order of these calls leaves a request outside the gate.
// [Client.RobotsCache] gives the client's cache to the rest of the run
// (sitemaps), so robots.txt is fetched once.
//
// The slowdown a 429 trips applies to that request's own retry: with the
// frontier as gate, a 429 answered with "Retry-After: 1" is retried 3 s
// later (the slowdown's gap between request starts), not 1 s later;
// Attempt.Wait says 1 s and Result.GateWait the other 2 s.
//
// A gap between request starts is kept where the site sees it: a Gate
// that implements [Pacer] ([HostGate], the frontier) admits a request,
// and just before its bytes are written on the connection the transport
// gave it (after any dial and TLS handshake; httptrace GotConn, on every
// path: Get, retries, redirect hops, robots.txt, HTTPClient, RoundTripper,
// Transport) the request waits until the gap has passed since the last
// start was written. That wait is counted in Result.GateWait, never in
// TTFB or ResponseTime (TestGapHoldsFromRequestStartNotAdmission,
// TestGapHoldsAtTheSitesKernel). A base transport that reports no
// httptrace GotConn (not an *http.Transport) gets no start check.
//
// A Gate that also implements [Observer] (a frontier with
// Config.Adaptive) is told how every request it admitted ended (status or
// error, and the time to the end of the body), from Get, HTTPClient,
// RoundTripper and Transport alike, just before the release.
//
// # Timings
//
// [Result] separates the server's time from what politeness cost. Store
// [Result.ResponseTime] (TTFB + Download of the final request) as a page's
// response time; GateWait, RetryWait and RobotsWait are the waits the
// crawler added, and Total the whole call. Each wait is held by one call:
// in a frontier's loop, Frontier.Next waits until a request to the item
// may start (frontier.Item.Wait), and Get's GateWait is only what is left
// (a retry's or redirect hop's turn, or a request that lost its turn to
// another); from before Next to the return of Get the time is exactly
// Item.Wait + Result.Total.
//
// # net/http
//
// The same politeness is available net/http-natively: [Transport] is a
// RoundTripper that adds identity and the gate (robots.Cache uses it for
// robots.txt), and [Client.RoundTripper] and [Client.HTTPClient] add robots
// checks and retries for third-party code that takes an *http.Client.
//
// # URLs typed by strangers: the address guard
//
// A crawler that fetches URLs from people it does not know (a free
// checking tool, webhook targets) sets Client.Guard = &Guard{}. Every URL
// and redirect hop is then refused, before robots.txt, the gate or DNS,
// when its host is internal whatever DNS says (localhost in any spelling,
// IP literals in every form a browser reads, their Unicode disguises, a
// -resolve mapping to an internal address), and every connection is
// checked at dial time on the address connected, after resolution and
// before connect(2) (Guard.NewTransport, the client's base when Transport
// is nil), so DNS rebinding and redirects are covered. Errors match
// ErrForbiddenAddress and carry an *AddressError naming the URL, the
// address and its range. HTTP_PROXY is ignored under the guard (a proxy
// connects where our dialer cannot see); Guard.Proxy opts in. Allow and
// AllowAddrPorts are the explicit allow-list, for tests against loopback
// servers. Guard.CheckURLResolved also looks a name up, to refuse early
// and clearly (a form that takes a URL); Guard.AlsoControl adds a dial
// check of the program's own after the guard's.
//
// # Conditional requests
//
// With Client.Validators (MemoryValidators, or a store of the program's
// own) every GET sends the validators the URL's last 200 gave, a 304 comes
// back as Result.Unchanged with BytesSaved, and a response marked
// Cache-Control: no-store is never kept.
//
// # Bot protection and sites that refuse the crawler
//
// A challenge or block by bot protection (cf-mitigated: challenge, the
// "Just a moment..." interstitial, Akamai, DataDome, PerimeterX/HUMAN,
// Imperva, AWS WAF, a captcha wall) sets Result.Challenge with the signal
// that matched and is never retried: it is neither a broken page nor a
// change of one. Result.RobotsStatus is the status of the robots.txt that
// allowed the URL; Result.RefusesCrawler reports the plain hard block, 401
// or 403 to both robots.txt and the page (a user-agent rule), where a
// crawl should stop at the site and say the site refuses the crawler.
//
// # Each URL once
//
// Client.Claimer (set by frontier.New and redisfrontier.New for their
// Config.Client) is asked before each redirect target of a Get is
// requested, after its robots.txt check: a target the crawl has queued or
// requested already is not requested again, and Get returns the redirect
// itself, with Result.DuplicateTarget naming the target and a nil error.
// A redirected page's links belong to Result.FinalURL: pass it as Add's
// from. Head, RoundTripper and HTTPClient do not claim.
//
// # Errors
//
// Errors are [*Error] values naming the URL; their causes are the sentinel
// errors of this package (errors.Is), robots verdicts, and for timeouts
// [ErrTimeout] together with context.DeadlineExceeded.
//
// # Decision events
//
// With Client.Logger (or Transport.Logger) set, decisions are logged with
// log/slog; the message is the event name. Durations are slog durations;
// empty attributes are left out. A nil Logger is silent, and a Logger
// whose handler is not enabled for the level costs no allocation.
//
//	event                   level  when                                     attributes
//	fetch.disallowed        Info   robots.txt refused a URL or redirect hop url, outcome, rule, line, hop
//	fetch.redirect_refused  Info   a redirect not followed (limit, loop,    url, to, err
//	                               bad Location, CheckRedirect, target
//	                               already seen by the crawl)
//	fetch.address_refused   Info   Guard refused a URL or hop by name       url, host, addr, reason, hop
//	fetch.retry             Info   a retry scheduled                        url, attempt, status, err, wait
//	slowdown.tripped        Warn   the slowdown tripped (first trip only;   url, status, in_flight, gap
//	                               per host with backoff.PerHost), by a
//	                               page or robots.txt
//
// hop is 0 for the URL asked for and n for the target of the n-th
// redirect; attempt is the number of the attempt that failed (1 = first).
//
// # Performance
//
// go test -run '^$' -bench BenchmarkGet -benchtime=5000x -count=10 ./fetch on a
// shared 2-core machine, Get against a loopback server (robots allow-all
// cached, a gate without limits) versus a plain http.Client sending the same
// request with the same headers and reading the body the same way: CPU per
// request 1.0–1.1× (target ≤ 1.25×), 82 allocations against 85, 10.8 KiB
// against 11.5 KiB. Without any network
// (BenchmarkOverhead) fetch's own work is about 4 µs and 18 allocations per
// request against the plain client's 6–8 µs and 26. A nil Logger and a
// disabled one cost the same (BenchmarkGetLogger, TestDisabledLoggerAllocatesNothing).
// A body sent without Content-Length (chunked) is read into a pooled buffer
// and copied out at its size: a 22.7 KB chunked page allocates 31 KiB per Get
// against 67 KiB when the buffer was doubled from 4 KiB (BenchmarkGetChunkedPage,
// TestChunkedBodyAllocatesItsSize).
package fetch
