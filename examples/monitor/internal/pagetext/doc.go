// Package pagetext is how a snapshot's visible text is kept and compared:
// Compress and Decompress store it (capped at MaxBytes), and Diff compares
// two texts word by word (github.com/sergi/go-diff) for the report, the
// history page and the API. The text itself is extracted by package
// textscope (the whole page, or the part a page's rules select).
//
// It is pure: it never fetches, opens the database or prints.
package pagetext
