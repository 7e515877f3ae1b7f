package report

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DefaultReportPath is <db>-report-<crawl>.<ext> (a folder for csv) in the database's directory, named
// after the database file without its extension (audit.db -> audit-report-3.html), so that two databases
// in one folder never overwrite each other's reports.
func DefaultReportPath(db string, crawlID int64, format string) string {
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

// WriteTo writes to stdout for "-", else to path through writeAtomic.
func WriteTo(path string, stdout io.Writer, fn func(io.Writer) error) error {
	if path == "-" {
		bw := bufio.NewWriter(stdout)
		if err := fn(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	return WriteAtomic(path, fn)
}

// WriteAtomic writes a file through a temporary one renamed into place: a reader never sees half a
// report, and a failed write leaves the previous one.
func WriteAtomic(path string, fn func(io.Writer) error) (err error) {
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

// TruncateRunes cuts s to at most n characters, marking the cut with an ellipsis.
func TruncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
