// Package findings turns a crawl's rows into findings: pure functions from pages, links, sitemaps,
// probe answers and rendered pages to (URL, kind, detail), and the one table of kinds with their
// severity, title and advice.
//
// It never touches the database, the network or the terminal: callers load the rows (store) and
// print or render the result (crawl, report).
package findings
