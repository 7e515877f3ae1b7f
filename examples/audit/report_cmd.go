package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
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
		return exitOK
	}
	fmt.Fprintf(stderr, "audit %s: %v\n(run audit %s -h for help)\n", cmd, err, cmd)
	return exitUsage
}

// failed maps an error of report or compare to its exit status.
func failed(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "audit %s: %v\n", cmd, err)
	var ue *usageError
	if errors.As(err, &ue) || errors.Is(err, errBadCrawl) {
		return exitUsage
	}
	return exitFailure
}

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer, now func() time.Time) int {
	fs := newSubFlags("report")
	db := fs.String("db", "audit.db", "SQLite `file` written by the crawl")
	crawl := fs.Int64("crawl", 0, "crawl `id` (default: the latest)")
	format := fs.String("format", "html", "html, csv or json")
	out := fs.String("o", "", "output `path` (default <db>-report-<crawl>.html/.json or folder, next to the database; - = stdout)")
	pos, err := subcommandFlags(fs, args)
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("unexpected argument %q (crawls are chosen with -crawl N)", pos[0])
	}
	if err == nil && *crawl < 0 {
		err = fmt.Errorf("-crawl %d: crawl ids start at 1", *crawl)
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
	sqlDB, err := openReadDB(ctx, *db)
	if err != nil {
		return failed(stderr, "report", err)
	}
	defer sqlDB.Close()
	need := map[string]reportNeeds{"html": needAll, "json": needSummary, "csv": needCrawl}[*format]
	d, err := loadReport(ctx, sqlDB, *crawl, need)
	if err != nil {
		return failed(stderr, "report", err)
	}
	path := *out
	if path == "" {
		path = defaultReportPath(*db, d.Crawl.ID, *format)
	}
	var werr error
	switch *format {
	case "html":
		werr = writeTo(path, stdout, func(w io.Writer) error { return writeHTML(w, d, now()) })
	case "json":
		werr = writeTo(path, stdout, func(w io.Writer) error { return writeJSON(ctx, w, sqlDB, d) })
	case "csv":
		var files []string
		files, werr = writeCSVDir(ctx, sqlDB, d.Crawl.ID, path)
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
	return exitOK
}

// defaultReportPath is <db>-report-<crawl>.<ext> (a folder for csv) in the database's directory, named
// after the database file without its extension (audit.db -> audit-report-3.html), so that two databases
// in one folder never overwrite each other's reports.
func defaultReportPath(db string, crawlID int64, format string) string {
	base := filepath.Base(db)
	if ext := filepath.Ext(base); ext != "" && ext != base {
		base = strings.TrimSuffix(base, ext)
	}
	name := base + "-report-" + strconv.FormatInt(crawlID, 10)
	if format != "csv" {
		name += "." + format
	}
	return filepath.Join(filepath.Dir(db), name)
}

// writeTo writes to stdout for "-", else to path through writeAtomic.
func writeTo(path string, stdout io.Writer, fn func(io.Writer) error) error {
	if path == "-" {
		bw := bufio.NewWriter(stdout)
		if err := fn(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	return writeAtomic(path, fn)
}

// writeAtomic writes a file through a temporary one renamed into place: a reader never sees half a
// report, and a failed write leaves the previous one.
func writeAtomic(path string, fn func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 256<<10)
	if err = fn(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// writeReport writes the HTML report at the end of a crawl (unless -no-report) and says where. A crawl
// stopped before anything was crawled (robots.txt off limits) has nothing to report.
func (c *crawler) writeReport(res crawlResult, code int, stdout, stderr io.Writer) int {
	if err := c.dropResumeState(res); err != nil && code == exitOK {
		fmt.Fprintf(stderr, "audit: %v\n", err)
		code = exitFailure
	}
	if c.cfg.NoReport || c.st.crawlID == 0 || (res.outcome == "off_limits" && c.count.pages.Load() == 0) || errors.As(res.err, new(*writeStopped)) {
		return code
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path := defaultReportPath(c.cfg.DB, c.st.crawlID, "html")
	d, err := loadReport(ctx, c.st.db, c.st.crawlID, needAll)
	if err == nil {
		err = writeAtomic(path, func(w io.Writer) error { return writeHTML(w, d, c.env.Now()) })
	}
	if err != nil {
		fmt.Fprintf(stderr, "audit: writing the report %s: %v\n", path, err)
		if code == exitOK {
			return exitFailure
		}
		return code
	}
	fmt.Fprintf(stdout, "Report: %s\n", path)
	return code
}
