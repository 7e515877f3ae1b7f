// Package render is the optional rendered pass: a sample of crawled pages loaded in headless Chromium,
// every request of the browser intercepted and sent through the crawl's robots.txt check and gate, and
// what the browser saw recorded for the findings.
//
// It builds on a finished crawl.Crawler and never goes around its gate; it writes its rows through
// store and decides no finding itself (findings does).
package render
