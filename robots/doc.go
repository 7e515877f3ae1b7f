// Package robots implements the Robots Exclusion Protocol (RFC 9309) for a
// polite crawler: a tolerant parser, an exact-product-token matcher that can
// explain its decisions, and a per-authority robots.txt cache.
//
// The model: [Parse] turns a robots.txt body into [Rules] and never fails;
// lines it cannot understand are skipped. A crawler identifies itself by a
// product token (see [ProductToken]); [Rules.Allowed] picks the groups whose
// user-agent equals that token (case-insensitively, whole token), or the `*`
// groups if none does, and applies the longest matching rule, Allow winning
// ties. [Rules.Explain] returns the same answer with the rule, its line and
// the group that decided it.
//
// [Cache] fetches /robots.txt once per authority (scheme, host, port) through
// the caller's *http.Client, keeps it for a bounded time, and turns fetch
// outcomes into a [Verdict]: 2xx bodies are parsed, 4xx means no rules, and
// 5xx or network errors make the site [Unreachable] until a re-check.
package robots
