package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/report"
	"github.com/politecrawl/polite/examples/audit/internal/store"
)

const reportUsage = `usage: audit report [-db FILE] [-crawl N] [-format html|csv|json] [-o PATH]

Writes the report of one crawl from the database alone (no request is made):
  html  one self-contained file: charts, findings with severity and advice, top pages by inlinks,
        orphan pages, redirect chains, blocked URLs, the politeness record. Opens offline.
  csv   one CSV per table (pages, links, findings, sitemaps, sitemap_urls, requests) into a folder:
        UTF-8 with a BOM, a header row, RFC 4180; text starting with = + - @ is prefixed with '.
  json  one JSON document: crawl, summary figures and every row of those tables.
The default PATH is <db>-report-<crawl>.html (.json, or a folder for csv) next to the database
(audit-report-1.html for audit.db);
-o - writes html or json to standard output.

Exit status: 0 written, 2 usage error or no such crawl, 1 any other failure.

Flags:
`

// newSubFlags is a flag set that prints nothing itself: errors are said once by usageFailed.
func newSubFlags(cmd string) *flag.FlagSet {
	fs := flag.NewFlagSet("audit "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// subcommandFlags parses flags and positional arguments in any order ("compare 1 2 -o x.html").
func subcommandFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// usageFailed prints a usage error once, with a pointer to -h, and returns exit status 2; -h itself
// prints the usage and returns 0.
func usageFailed(stderr io.Writer, cmd string, err error, usage string, fs *flag.FlagSet) int {
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stderr, usage)
		printFlags(stderr, fs)
		return crawl.ExitOK
	}
	fmt.Fprintf(stderr, "audit %s: %v\n(run audit %s -h for help)\n", cmd, err, cmd)
	return crawl.ExitUsage
}

// failed maps an error of report or compare to its exit status.
func failed(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "audit %s: %v\n", cmd, err)
	var ue *store.UsageError
	if errors.As(err, &ue) || errors.Is(err, store.ErrBadCrawl) {
		return crawl.ExitUsage
	}
	return crawl.ExitFailure
}

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer, now func() time.Time) int {
	fs := newSubFlags("report")
	db := fs.String("db", "audit.db", "SQLite `file` written by the crawl")
	crawlID := fs.Int64("crawl", 0, "crawl `id` (default: the latest)")
	format := fs.String("format", "html", "html, csv or json")
	out := fs.String("o", "", "output `path` (default <db>-report-<crawl>.html/.json or folder, next to the database; - = stdout)")
	pos, err := subcommandFlags(fs, args)
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("unexpected argument %q (crawls are chosen with -crawl N)", pos[0])
	}
	if err == nil && *crawlID < 0 {
		err = fmt.Errorf("-crawl %d: crawl ids start at 1", *crawlID)
	}
	if err == nil {
		switch *format {
		case "html", "csv", "json":
		default:
			err = fmt.Errorf("-format %q: must be html, csv or json", *format)
		}
	}
	if err == nil && *out == "-" && *format == "csv" {
		err = errors.New("-o -: csv writes a folder of files, not standard output")
	}
	if err != nil {
		return usageFailed(stderr, "report", err, reportUsage, fs)
	}
	sqlDB, err := store.OpenReadDB(ctx, *db)
	if err != nil {
		return failed(stderr, "report", err)
	}
	defer sqlDB.Close()
	need := map[string]report.ReportNeeds{"html": report.NeedAll, "json": report.NeedSummary, "csv": report.NeedCrawl}[*format]
	d, err := report.LoadReport(ctx, sqlDB, *crawlID, need)
	if err != nil {
		return failed(stderr, "report", err)
	}
	path := *out
	if path == "" {
		path = report.DefaultReportPath(*db, d.Crawl.ID, *format)
	}
	var werr error
	switch *format {
	case "html":
		werr = report.WriteTo(path, stdout, func(w io.Writer) error { return report.WriteHTML(w, d, now()) })
	case "json":
		werr = report.WriteTo(path, stdout, func(w io.Writer) error { return report.WriteJSON(ctx, w, sqlDB, d) })
	case "csv":
		var files []string
		files, werr = report.WriteCSVDir(ctx, sqlDB, d.Crawl.ID, path)
		if werr == nil {
			names := make([]string, len(files))
			for i, f := range files {
				names[i] = filepath.Base(f)
			}
			fmt.Fprintf(stdout, "Crawl %d exported to %s: %s\n", d.Crawl.ID, path, strings.Join(names, ", "))
		}
	}
	if werr != nil {
		return failed(stderr, "report", werr)
	}
	if path != "-" && *format != "csv" {
		fmt.Fprintf(stdout, "Report of crawl %d written to %s\n", d.Crawl.ID, path)
	}
	return crawl.ExitOK
}

const compareUsage = `usage: audit compare [-db FILE] [-o FILE.html] [A [B]]

Compares two crawls in the database (no request is made): new and removed URLs, status changes, title,
description, canonical and indexability changes, and findings that appeared or were fixed, by kind.
A and B are crawl ids, A the earlier one. With none, the two latest crawls of the same site (the
latest crawl's host, its www twin included); with one, that crawl and the previous crawl of its site.
-o also writes the comparison as a self-contained HTML page.

Exit status: 0 compared (differences are the report, not a failure), 2 usage error or bad crawl ids,
1 any other failure.

Flags:
`

func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer, now func() time.Time) int {
	fs := newSubFlags("compare")
	db := fs.String("db", "audit.db", "SQLite `file` written by the crawls")
	out := fs.String("o", "", "also write the comparison as HTML to `file`")
	pos, err := subcommandFlags(fs, args)
	var ids []int64
	if err == nil && len(pos) > 2 {
		err = fmt.Errorf("at most two crawl ids, got %d: %q", len(pos), pos)
	}
	for _, p := range pos {
		if err != nil {
			break
		}
		id, perr := strconv.ParseInt(p, 10, 64)
		if perr != nil || id < 1 {
			err = fmt.Errorf("%w: %q is not a crawl id (a number from 1)", store.ErrBadCrawl, p)
			break
		}
		ids = append(ids, id)
	}
	if errors.Is(err, store.ErrBadCrawl) {
		return failed(stderr, "compare", err)
	}
	if err != nil {
		return usageFailed(stderr, "compare", err, compareUsage, fs)
	}
	sqlDB, err := store.OpenReadDB(ctx, *db)
	if err != nil {
		return failed(stderr, "compare", err)
	}
	defer sqlDB.Close()
	a, b, err := report.PickCrawls(ctx, sqlDB, ids)
	if err != nil {
		return failed(stderr, "compare", err)
	}
	cmp, err := report.CompareCrawls(ctx, sqlDB, a, b)
	if err != nil {
		return failed(stderr, "compare", err)
	}
	cmp.PrintText(stdout)
	if *out != "" {
		err := report.WriteTo(*out, stdout, func(w io.Writer) error { return cmp.WriteHTML(w, now()) })
		if err != nil {
			return failed(stderr, "compare", err)
		}
		if *out != "-" {
			fmt.Fprintf(stdout, "\nComparison written to %s\n", *out)
		}
	}
	return crawl.ExitOK
}
