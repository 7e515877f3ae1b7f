// Package robots implements the Robots Exclusion Protocol (RFC 9309) for
// polite crawlers: a tolerant parser, a matcher that can explain its
// answers, and a per-site robots.txt cache.
//
// # Parsing
//
// [Parse] never fails. It reads the first 500 KiB ([MaxBodySize]) of a
// file, ignores a byte order mark, accepts LF, CR and CRLF line ends,
// comments anywhere and spaces around names and values (`User-agent : x`),
// and skips any line it cannot read without losing the rest. A group is a
// run of user-agent lines and the rules after it; Sitemap, Crawl-delay and
// unknown lines neither end nor start one, and rules before the first
// user-agent belong to no group.
//
// # Matching
//
// A crawler is known by its product token ([ProductToken] derives it from a
// User-Agent header). [Rules.Allowed] uses the groups whose user-agent is
// that token, whole and ignoring case (`CrawlCove` does not match
// `CrawlCove-Crawler`; digits are allowed, as in `2-UAcomBot`), merged; if
// none, the `*` groups; if none, everything is allowed. Rules compare with
// the URL's path and query after percent-encoding normalisation, support
// `*` and a final `$`, and the longest pattern wins, Allow on a tie.
// /robots.txt is always allowed. [Rules.Explain] gives the same answer with
// the rule, its line and the group's user-agents, for people and reports.
//
// This package does not use github.com/temoto/robotstxt for parsing or
// matching: it picks groups by prefix, rejects a whole file for one bad
// line, breaks ties by order and has no percent-encoding normalisation,
// and its rules are unexported so a wrapper cannot fix that. The tests
// compare against it where it agrees with the RFC.
//
// # Caching
//
// [Cache] keeps one answer per authority (scheme, host, port) and fetches
// /robots.txt through the caller's *http.Client, once however many callers
// ask at the same time, following up to 5 redirects and reading at most
// 500 KiB and a byte. The answer lasts [Cache.TTL] (1 hour, never more than
// 24) and depends on the status:
//
//	2xx             parse the body
//	4xx (not 429)   no rules: everything allowed
//	3xx after 5     no rules (RFC 9309 §2.3.1.2)
//	5xx, 429, error Unreachable: the whole site is off limits until
//	                Verdict.RecheckAt (Cache.Recheck, 5 minutes), or the
//	                previous copy is used for a while (Cache.KeepStale)
//
// What Unreachable means for a crawl is the caller's choice: stop the site,
// or wait for the re-check. A [Store] persists entries across runs.
package robots
