// Package report writes what a person reads from a finished database: the self-contained HTML report
// with its charts, the CSV and JSON exports, and the comparison of two crawls.
//
// It streams: every figure and list is an SQL query over the logical tables and columns of
// store.Schema, read into counters or into lists capped by the report's limits and written before the
// next is read, so memory stays flat in the number of pages. It checks the columns a database has, so
// a file written by an earlier version is read too. It never crawls or writes the database; its output
// files are written atomically.
package report
