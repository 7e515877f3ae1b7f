// Package sitemap reads sitemaps as a stream and expands sitemap indexes
// through a polite fetcher without being led into unbounded work.
//
// A [Reader] detects the form of a document by its bytes, never by its name:
// gzip by its magic number, then XML (urlset, sitemapindex, RSS 2.0, Atom 1.0)
// when the first non-blank character is '<', otherwise a plain-text list of
// URLs. It uses a small hand-written tokenizer that understands only what
// sitemaps need, so memory does not grow with the document's size: it
// never expands entities declared in a DTD, never fetches anything, and
// stops at 50 MiB of uncompressed data or 50,000 entries (both configurable),
// returning the entries read before the limit and then a typed error.
//
// Entries that are not absolute http(s) URLs with a host, are 2,048
// characters or longer, fall outside the sitemap's scope (sitemaps.org rules,
// widened by [Scope]) or repeat an earlier entry are skipped and counted by
// [SkipReason]; they never stop the reader.
//
// An [Expander] starts from the Sitemap: URLs of robots.txt, fetches each
// through a [Fetcher] (*fetch.Client implements it), follows sitemap indexes
// to a chosen depth, fetches each distinct URL at most once and at most
// MaxFetches in all, streams page entries to a callback and returns one
// [Report] per sitemap fetched.
package sitemap
