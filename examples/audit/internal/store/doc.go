// Package store is the audit's SQLite file: the schema and its migrations, the mark that makes the file
// Crawl Cove's (application_id 0x43436F76), the one writer that commits a crawl's rows in order, and
// every query that reads them back (for findings, the report, compare and resume).
//
// Nothing else opens the database or holds SQL. It knows rows, not crawling: it never fetches (the
// sitemap cache only replays answers it was given) and never decides what a finding is.
package store
