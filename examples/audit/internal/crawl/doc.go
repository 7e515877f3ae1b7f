// Package crawl is one run of the library's pieces for an audit: the polite client, the frontier and
// its gate, robots.txt, sitemaps, llms.txt and the WordPress probes, resume after a crash, the progress
// line and the summary at the end.
//
// It writes rows only through store's writer and turns them into findings with findings; it never
// runs a browser (render builds on it) and holds no SQL.
package crawl
