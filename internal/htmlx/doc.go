// Package htmlx extracts links and SEO fields from an HTML page in one
// streaming pass of the golang.org/x/net/html tokenizer, without building a
// DOM.
//
// Input is capped (Options.MaxBytes, 10 MiB by default; Page.Truncated
// reports a cut), every extracted string is capped, and malformed markup
// never makes Parse fail or panic: only a read error is returned. URLs are
// resolved against the first <base href> (wherever it appears) or the page
// URL, with the fragment dropped; links whose scheme is not http or https
// (mailto:, javascript:, tel:, data:) are left out.
//
// Visible text is the text outside script, style, noscript, template, title
// and the other raw-text elements; block elements and <br> separate words,
// inline elements do not. Words are runs of non-space characters (Unicode
// white space, including no-break space, separates them). TextHash is the
// SHA-256 of those words joined by single spaces, so it changes when the
// visible text changes and not when markup or indentation does.
package htmlx
