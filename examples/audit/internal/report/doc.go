// Package report writes what a person reads from a finished database: the self-contained HTML report
// with its charts, the CSV and JSON exports, and the comparison of two crawls.
//
// It reads only through store (its loaders and export queries) and never crawls or writes the
// database; its output files are written atomically.
package report
