// Package htmlx extracts links and SEO fields from an HTML page in one
// streaming pass of the golang.org/x/net/html tokenizer, without building a
// DOM. It is the implementation of the public package fetch/page, whose
// documentation states the field rules; this package's tests check them
// against Chromium (browser_test.go).
//
// Input is capped (Options.MaxBytes, 10 MiB by default; Page.Truncated
// reports a cut), every extracted string is capped and valid UTF-8, and
// malformed markup never makes Parse fail or panic: only a read error (or
// an error of Options.Text's writer) is returned.
//
// Two opt-ins cost nothing when off: Options.Text streams the visible words
// to a writer in the same pass (a near-duplicate hasher, say), and
// Options.Facts gathers Page.Facts, what an SEO audit checks on one page
// (headings, images, where the canonical and robots meta are, Open Graph,
// JSON-LD, forms, DOM size), in facts.go, every list capped.
//
// The pieces: charset.go decides the encoding as the HTML standard does
// (BOM, Content-Type, <meta charset> prescan, sniffing) and decodes to
// UTF-8 as the tokenizer reads; tree.go keeps the standard's stack of open
// elements, enough to end headings, anchors, templates and SVG/MathML where
// a browser ends them; htmlx.go extracts the fields and resolves URLs with
// internal/weburl (github.com/nlnwa/whatwg-url, the WHATWG URL standard a
// browser follows; net/url's ResolveReference differs: golang/go#80282),
// with its short cut for the plain links the parser would return as
// written.
package htmlx
