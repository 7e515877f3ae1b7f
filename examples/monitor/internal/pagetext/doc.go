// Package pagetext is the visible text of a snapshot and the word diff
// between two of them: Visible reads the text a reader sees from an HTML
// body (capped at MaxBytes), Compress and Decompress are how it is stored,
// and Diff compares two texts word by word (github.com/sergi/go-diff) for
// the report, the history page and the API.
//
// It is pure: it never fetches, opens the database or prints.
package pagetext
