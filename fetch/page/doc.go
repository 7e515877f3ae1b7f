// Package page reads what one fetched HTML page says about itself — title,
// meta description, canonical, meta robots, hreflang, headings, visible
// text — and where it links, the way a browser reads the same bytes.
//
// [Parse] (or [Options.Parse]) reads a page in one streaming pass of the
// golang.org/x/net/html tokenizer, without building a DOM; for a response of
// package fetch, [github.com/politecrawl/polite/fetch.Result.Page] does it in
// one call. The input is capped ([Options.MaxBytes], 10 MiB by default;
// [Page.Truncated] reports a cut), every string is capped and valid UTF-8,
// and malformed markup is never an error and never a panic: errors are
// [*Error] values for a bad page URL or a failed read.
//
// # Fields
//
//   - Title, TitleCount: the first <title> (outside SVG), white space
//     collapsed; the count of all (0 = missing, 1 with "" = empty,
//     >1 = several).
//   - MetaDescription, DescriptionCount: the first <meta name="description">
//     (name in any case), trimmed; the count of all.
//   - Canonical, CanonicalCount: the href of the first <link rel="canonical">
//     with one, absolute; "#" (any fragment-only href) is the page itself,
//     as link.href is in a browser; "" when absent, empty or not http(s).
//   - MetaRobots: every <meta name="robots"> content, joined by ", ".
//     XRobotsTag: the X-Robots-Tag header values, joined the same way, set by
//     fetch.Result.Page. Neither is interpreted: a directive may name a
//     crawler ("googlebot: noindex").
//   - H1: the text of each <h1> in document order (a nested <h1> counts too,
//     and its text is part of the outer one's), at most 100.
//   - Hreflang: <link rel="alternate" hreflang=... href=...>, absolute.
//   - Lang, Generator, Refresh: <html lang>, the first
//     <meta name="generator">, the target of a <meta http-equiv="refresh">.
//   - WordPress, WordPressHint: a generator naming WordPress, an asset
//     (link, script, img, iframe, frame; not an <a>) under /wp-content/ or
//     /wp-includes/, or the https://api.w.org/ link; the hint names the
//     first evidence.
//   - WordCount, TextHash: the visible text (below). TextHash is the hex
//     SHA-256 of its words joined by single spaces, so it changes when the
//     text changes and not when markup or indentation does.
//   - Links: a[href], area[href], link[href] (Rel says canonical,
//     stylesheet...), img[src], script[src], iframe[src], frame[src] and a
//     meta refresh (Tag "meta", Rel "refresh"), in document order, also
//     inside <noscript> (read as a browser without scripting reads it).
//     Nofollow: rel has nofollow, ugc or sponsored (any case). Text: the
//     anchor text of an <a> (with the alt of its images) or the alt of an
//     <area>.
//
// Content of a <template> is inert, as in a browser: its title, links,
// metadata, headings and text do not count.
//
// # Visible text
//
// Text outside script, style, noscript, template, title, iframe, noembed
// and noframes (and, in SVG and MathML, outside script, style, title and
// desc). Block-level elements (div, p, li, h1-h6, center, table cells...),
// <br> and <img> separate words; inline ones do not: wo<b>rd</b> is one
// word. Words are runs of characters other than Unicode white space
// (no-break space included). NUL characters are dropped, as browsers drop
// them.
//
// # Encoding
//
// As the HTML standard determines it: a byte order mark (UTF-8, UTF-16LE,
// UTF-16BE; it is not text); else the charset of [Options.ContentType];
// else a <meta charset> or <meta http-equiv="Content-Type"> found by a
// prescan of the first KiB, continued like Chrome's while the markup is
// still head content (up to 64 KiB); else sniffing: the non-ASCII bytes
// seen so far decide (valid UTF-8 means UTF-8, anything else
// windows-1252), and when the first KiB is ASCII the first non-ASCII byte
// decides. Invalid bytes read as U+FFFD. [Page.Encoding] names the encoding.
//
// # URLs
//
// Links resolve against the first <base href> (even for links before it)
// or the page URL by the WHATWG URL standard (github.com/nlnwa/whatwg-url),
// so a link's URL is the one a browser would request, spelt as the browser
// spells it: leading and trailing spaces and controls and every tab and
// newline are removed; '\' reads as '/' before the query; "https:/path"
// and "https:path" are relative to a base of the same scheme and
// "https:/host" (any number of slashes) names a host otherwise; the host is
// lower-cased (IDNA, IPv4 numbers in dotted decimal) and a default port
// dropped; "..//a" on /d/page.html is //a, its empty segment kept (net/url's
// ResolveReference makes it /a, golang/go#80282); a space or non-ASCII
// letter is escaped but '(' ')' and, in a path, "'" are not (net/url
// re-escapes them as %28 %29 %27). The fragment is dropped. Fragment-only
// links ("#top"), mailto:, javascript:, tel:, data: and other schemes are
// left out; URLs net/url cannot parse (a '%' not followed by two hex
// digits, which a browser keeps as written; a host no DNS name can have)
// are left out and counted in InvalidLinks. The query is escaped as UTF-8
// whatever the page's encoding (a browser would use the page's).
//
// # What a browser does differently
//
// The extractor keeps the HTML standard's stack of open elements, so that
// headings, anchors, templates and SVG/MathML content end where a browser
// ends them (</h2> closes an open <h1>, </div> the <h1> inside it, a stray
// end tag is ignored). It does not build a tree, and these differences are
// deliberate:
//
//   - Links are counted as written. When tree construction clones a
//     misnested <a> (<p><a href=x>one</p>two: the DOM holds two <a href=x>)
//     the page still has one link, and its text is the text before the
//     element that ended it.
//   - Text inside a <table> but outside its cells is kept where it is
//     written; a browser moves it before the table (foster parenting), which
//     can change word order and joins.
//   - <select> content is read like any other (newer browsers keep it too;
//     the standard's older parser, and x/net/html.Parse, drop most tags in
//     it), <frame src> is a link wherever it appears, and a <frameset> after
//     body content is not treated specially.
//   - Titles are white-space normalised with Unicode white space (a browser
//     collapses ASCII white space only).
//   - <noscript> content is read for links, as a browser without scripting
//     reads it, and its text is not visible text.
//
// The tests check the fields against Chromium's DOM and fuzz them against
// golang.org/x/net/html.Parse.
//
// # Performance
//
// On a 97,855-byte shop category page (1,129 links, 5,016 words; go test
// -bench . -benchmem ./fetch/page ./internal/htmlx, CPU time per op on a
// shared 2-core machine, Go 1.26): about 1.7 ms of CPU per page (≈ 56 MB/s
// per core), 802 KiB and 12,580 allocations, against 2.0 ms, 830 KiB and
// 23,700 allocations for html.Parse building the DOM of the same page
// without extracting anything. The public API adds 0.6 KiB and 5
// allocations to internal/htmlx (links are written into page.Link
// directly) and no measurable time; keeping the stack of open elements
// costs about 5% over the previous extractor, which did not.
package page
