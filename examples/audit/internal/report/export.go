package report

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/store"
)

// Utf8BOM starts every CSV file: without it Excel reads UTF-8 as the local code page and garbles every
// non-ASCII title. encoding/csv and LibreOffice skip or show it as a zero-width character.
const Utf8BOM = "\ufeff"

// csvNeutral protects a spreadsheet from formulas in crawled text: a text cell that starts with = + - @
// (or a tab or carriage return) is prefixed with a single quote, the usual neutralisation. A crawled
// title "=HYPERLINK(...)" is a site owner's text, not something to run in an auditor's spreadsheet.
// Numbers are never touched. undoCSVNeutral reverses it.
func csvNeutral(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// UndoCSVNeutral reverses the CSV export's formula neutralising: a spreadsheet user (or a test) gets the
// value the database holds back from a cell that begins with "'".
func UndoCSVNeutral(s string) string {
	if len(s) > 1 && s[0] == '\'' && strings.ContainsRune("=+-@\t\r", rune(s[1])) {
		return s[1:]
	}
	return s
}

// cellText is a value as a CSV cell: NULL is empty, numbers in Go's shortest form.
func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case []byte:
		return hex.EncodeToString(x) // a BLOB (pages.fingerprint): binary, which a CSV cell cannot carry
	case string:
		return csvNeutral(x)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	}
	return csvNeutral(fmt.Sprint(v))
}

// WriteCSVDir writes one CSV per exported table into dir (created if missing) and returns the files.
func WriteCSVDir(ctx context.Context, db *sql.DB, crawlID int64, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tables, err := store.TablesOf(ctx, db, crawlID)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, table := range tables {
		path := filepath.Join(dir, table+".csv")
		err := WriteAtomic(path, func(w io.Writer) error { return WriteCSV(ctx, w, db, crawlID, table) })
		if err != nil {
			return files, fmt.Errorf("write %s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}

// WriteCSV writes one table of a crawl (one of store.TablesOf) as CSV, with a BOM for spreadsheets; the
// findings get their kind's severity, advice and category as three more columns. Rows are streamed
// from the table to w, one at a time.
func WriteCSV(ctx context.Context, w io.Writer, db *sql.DB, crawlID int64, table string) error {
	if _, err := io.WriteString(w, Utf8BOM); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	cw.UseCRLF = true // RFC 4180
	var kindCol = -1
	err := store.TableRows(ctx, db, table, crawlID, func(names []string) error {
		head := names
		if table == "findings" {
			for i, n := range names {
				if n == "kind" {
					kindCol = i
				}
			}
			head = append(append([]string{}, names...), "severity", "advice", "category")
		}
		return cw.Write(head)
	}, func(vals []any) error {
		rec := make([]string, len(vals), len(vals)+3)
		for i, v := range vals {
			rec[i] = cellText(v)
		}
		if kindCol >= 0 {
			info := findings.InfoOf(asString(vals[kindCol]))
			rec = append(rec, info.Severity.String(), info.Advice, info.Category)
		}
		return cw.Write(rec)
	})
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

func asString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

// WriteJSON writes the crawl as one JSON document: {"crawl", "summary", "pages", "links", "findings",
// "sitemaps", "sitemap_urls", "requests"}, rows as objects with the tables' column names. It is streamed
// row by row, so a crawl of any size is written in constant memory (the summary aside).
func WriteJSON(ctx context.Context, w io.Writer, db *sql.DB, d *reportData) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = bw.Write(b)
		return err
	}
	if _, err := bw.WriteString(`{"crawl":`); err != nil {
		return err
	}
	if err := store.WriteCrawlJSON(ctx, bw, db, d.Crawl.ID); err != nil {
		return err
	}
	bw.WriteString(`,"summary":`)
	sum, err := d.summarize()
	if err != nil {
		return err
	}
	if err := enc(sum); err != nil {
		return err
	}
	tables, err := store.TablesOf(ctx, db, d.Crawl.ID)
	if err != nil {
		return err
	}
	for _, table := range tables {
		bw.WriteByte(',')
		if err := enc(table); err != nil {
			return err
		}
		bw.WriteString(`:[`)
		var names []string
		var keys [][]byte // each column's `"name":`, encoded once per table
		first := true
		kindCol := -1
		var num []byte
		err := store.TableRows(ctx, db, table, d.Crawl.ID, func(n []string) error {
			names = n
			for i, c := range n {
				if c == "kind" && table == "findings" {
					kindCol = i
				}
				k, err := json.Marshal(c)
				if err != nil {
					return err
				}
				keys = append(keys, append(k, ':'))
			}
			return nil
		}, func(vals []any) error {
			if !first {
				bw.WriteByte(',')
			}
			first = false
			bw.WriteByte('{')
			for i, v := range vals {
				if i > 0 {
					bw.WriteByte(',')
				}
				bw.Write(keys[i])
				// Integers and NULL, most of the values, skip the reflection of encoding/json.
				switch x := v.(type) {
				case nil:
					bw.WriteString("null")
					continue
				case int64:
					num = strconv.AppendInt(num[:0], x, 10)
					bw.Write(num)
					continue
				}
				if err := enc(store.JsonValue(names[i], v)); err != nil {
					return err
				}
			}
			if kindCol >= 0 {
				info := findings.InfoOf(asString(vals[kindCol]))
				for _, kv := range [][2]string{{`,"severity":`, info.Severity.String()}, {`,"advice":`, info.Advice}, {`,"category":`, info.Category}} {
					bw.WriteString(kv[0])
					if err := enc(kv[1]); err != nil {
						return err
					}
				}
			}
			if _, err := bw.Write(nil); err != nil {
				return err // a write failed: stop at once
			}
			return bw.WriteByte('}')
		})
		if err != nil {
			return err
		}
		bw.WriteByte(']')
	}
	bw.WriteString("}\n")
	return bw.Flush()
}
