package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// ExportTables are the database tables the CSV and JSON exports carry, each with every column in schema
// order (so columns another feature adds are exported too). findings gets two more columns, severity
// and advice, from kindTable. A crawl with a rendered pass (-render) has renderTables too.
var (
	ExportTables = []string{"pages", "links", "findings", "sitemaps", "sitemap_urls", "requests"}
	renderTables = []string{"render_runs", "render_pages", "render_links", "render_console", "render_requests"}
)

// TablesOf is what the exports of crawl id carry.
func TablesOf(ctx context.Context, db *sql.DB, id int64) ([]string, error) {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM render_runs WHERE crawl_id = ?`, id).Scan(&n); err != nil {
		return nil, fmt.Errorf("read render_runs: %w", err)
	}
	if n == 0 {
		return ExportTables, nil
	}
	return append(append([]string{}, ExportTables...), renderTables...), nil
}

// jsonColumns hold JSON text in the database; the JSON export embeds them as JSON, not as strings.
var jsonColumns = map[string]bool{"settings": true, "redirects": true}

// ExportOrder is the ORDER BY of table's rows in the exports: the order they were written in, and for the
// links view (it has no rowid) that of link_rows, which the scan of one crawl follows.
func ExportOrder(table string) string {
	switch table {
	case "findings":
		return "id"
	case "links":
		return "crawl_id"
	}
	return "rowid"
}

// TableRows streams the rows of one table of crawlID: fn gets the column names once, then each row's
// values as the driver returns them (int64, float64, string, []byte or nil).
func TableRows(ctx context.Context, db *sql.DB, table string, crawlID int64, head func([]string) error, fn func([]any) error) error {
	rows, err := db.QueryContext(ctx, `SELECT * FROM `+table+` WHERE crawl_id = ? ORDER BY `+ExportOrder(table), crawlID)
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

// JsonValue is a database value for the JSON export.
func JsonValue(col string, v any) any {
	switch x := v.(type) {
	case []byte:
		return hex.EncodeToString(x) // a BLOB (pages.fingerprint): binary, which a JSON string cannot carry
	}
	if s, ok := v.(string); ok && jsonColumns[col] && json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return v
}

// WriteCrawlJSON writes crawl id's crawls row as a JSON object.
func WriteCrawlJSON(ctx context.Context, w io.Writer, db *sql.DB, id int64) error {
	return writeJSONRow(ctx, w, db, `SELECT * FROM crawls WHERE id = ?`, id)
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
		vb, err := json.Marshal(JsonValue(names[i], v))
		if err != nil {
			return err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	_, err = io.WriteString(w, b.String())
	return err
}
