// Package findings derives the findings of a crawl and holds the one table of kinds with their
// severity, category, title and advice.
//
// The model: a page's own findings (kinds_page.go) are found while it is fetched (package pagecheck)
// and written with it. After the crawl, Run makes passes over the crawl in the database, each one query
// of store's named queries (store/passes.go) read as a stream: the pages with their referrer counts;
// the documents (titles, descriptions, headings, directives); duplicate groups by GROUP BY, one finding
// per group with its members listed; near-duplicates and soft 404s (neardup's index, fed the stored
// fingerprints); canonical and hreflang targets by joins; sitemaps, external links, the site's
// requests, the rendered pass; and the link score (linkscore's PageRank, written into pages.link_score).
// All findings are written in one transaction (store.ReplaceFindings). Memory does not grow with the
// site beyond neardup's 140 bytes and linkscore's 32 bytes a page and 4 a link (TestRunMemoryFlatInPages).
//
// It never touches the network or the terminal, and reads and writes the database only through store.
package findings
