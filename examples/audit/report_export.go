package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// exportTables are the database tables the CSV and JSON exports carry, each with every column in schema
// order (so columns another feature adds are exported too). findings gets two more columns, severity
// and advice, from kindTable. A crawl with a rendered pass (-render) has renderTables too.
var (
	exportTables = []string{"pages", "links", "findings", "sitemaps", "sitemap_urls", "requests"}
	renderTables = []string{"render_runs", "render_pages", "render_links", "render_console", "render_requests"}
)

// tablesOf is what the exports of crawl id carry.
func tablesOf(ctx context.Context, db *sql.DB, id int64) ([]string, error) {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM render_runs WHERE crawl_id = ?`, id).Scan(&n); err != nil {
		return nil, fmt.Errorf("read render_runs: %w", err)
	}
	if n == 0 {
		return exportTables, nil
	}
	return append(append([]string{}, exportTables...), renderTables...), nil
}

// jsonColumns hold JSON text in the database; the JSON export embeds them as JSON, not as strings.
var jsonColumns = map[string]bool{"settings": true, "redirects": true}

// utf8BOM starts every CSV file: without it Excel reads UTF-8 as the local code page and garbles every
// non-ASCII title. encoding/csv and LibreOffice skip or show it as a zero-width character.
const utf8BOM = "\ufeff"

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

func undoCSVNeutral(s string) string {
	if len(s) > 1 && s[0] == '\'' && strings.ContainsRune("=+-@\t\r", rune(s[1])) {
		return s[1:]
	}
	return s
}

// tableRows streams the rows of one table of crawlID: fn gets the column names once, then each row's
// values as the driver returns them (int64, float64, string, []byte or nil).
func tableRows(ctx context.Context, db *sql.DB, table string, crawlID int64, head func([]string) error, fn func([]any) error) error {
	order := "rowid"
	if table == "findings" {
		order = "id"
	}
	rows, err := db.QueryContext(ctx, `SELECT * FROM `+table+` WHERE crawl_id = ? ORDER BY `+order, crawlID)
	if err != nil {
		return fmt.Errorf("read %s: %w", table, err)
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return err
	}
	if err := head(names); err != nil {
		return err
	}
	vals := make([]any, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("read %s: %w", table, err)
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
	return rows.Err()
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
		return csvNeutral(string(x))
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

// writeCSVDir writes one CSV per exported table into dir (created if missing) and returns the files.
func writeCSVDir(ctx context.Context, db *sql.DB, crawlID int64, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tables, err := tablesOf(ctx, db, crawlID)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, table := range tables {
		path := filepath.Join(dir, table+".csv")
		err := writeAtomic(path, func(w io.Writer) error {
			if _, err := io.WriteString(w, utf8BOM); err != nil {
				return err
			}
			cw := csv.NewWriter(w)
			cw.UseCRLF = true // RFC 4180
			var kindCol = -1
			err := tableRows(ctx, db, table, crawlID, func(names []string) error {
				head := names
				if table == "findings" {
					for i, n := range names {
						if n == "kind" {
							kindCol = i
						}
					}
					head = append(append([]string{}, names...), "severity", "advice")
				}
				return cw.Write(head)
			}, func(vals []any) error {
				rec := make([]string, len(vals), len(vals)+2)
				for i, v := range vals {
					rec[i] = cellText(v)
				}
				if kindCol >= 0 {
					info := infoOf(asString(vals[kindCol]))
					rec = append(rec, info.Severity.String(), info.Advice)
				}
				return cw.Write(rec)
			})
			if err != nil {
				return err
			}
			cw.Flush()
			return cw.Error()
		})
		if err != nil {
			return files, fmt.Errorf("write %s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
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

// jsonValue is a database value for the JSON export.
func jsonValue(col string, v any) any {
	switch x := v.(type) {
	case []byte:
		v = string(x)
	}
	if s, ok := v.(string); ok && jsonColumns[col] && json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return v
}

// writeJSON writes the crawl as one JSON document: {"crawl", "summary", "pages", "links", "findings",
// "sitemaps", "sitemap_urls", "requests"}, rows as objects with the tables' column names. It is streamed
// row by row, so a crawl of any size is written in constant memory (the summary aside).
func writeJSON(ctx context.Context, w io.Writer, db *sql.DB, d *reportData) error {
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
	if err := writeJSONRow(ctx, bw, db, `SELECT * FROM crawls WHERE id = ?`, d.Crawl.ID); err != nil {
		return err
	}
	bw.WriteString(`,"summary":`)
	if err := enc(d.summarize()); err != nil {
		return err
	}
	tables, err := tablesOf(ctx, db, d.Crawl.ID)
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
		first := true
		kindCol := -1
		err := tableRows(ctx, db, table, d.Crawl.ID, func(n []string) error {
			names = n
			for i, c := range n {
				if c == "kind" && table == "findings" {
					kindCol = i
				}
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
				if err := enc(names[i]); err != nil {
					return err
				}
				bw.WriteByte(':')
				if err := enc(jsonValue(names[i], v)); err != nil {
					return err
				}
			}
			if kindCol >= 0 {
				info := infoOf(asString(vals[kindCol]))
				bw.WriteString(`,"severity":`)
				enc(info.Severity.String())
				bw.WriteString(`,"advice":`)
				enc(info.Advice)
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

// writeJSONRow writes the one row q returns as a JSON object.
func writeJSONRow(ctx context.Context, w io.Writer, db *sql.DB, q string, args ...any) error {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return err
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		_, err := io.WriteString(w, "null")
		return err
	}
	vals := make([]any, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(names[i])
		b.Write(k)
		b.WriteByte(':')
		vb, err := json.Marshal(jsonValue(names[i], v))
		if err != nil {
			return err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	_, err = io.WriteString(w, b.String())
	return err
}
