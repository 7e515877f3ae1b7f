package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/store"
)

const migrateUsage = `usage: audit migrate [-db FILE]

Converts a database written by an earlier version of the audit to this version's layout (links kept as
integer pairs over interned URLs), keeping every crawl. A crawl or -resume of the file does the same;
report, compare and the app ask for it. Nothing is requested from any site.

Exit status: 0 converted (or already current), 2 usage error or not an audit database, 1 any other failure.

Flags:
`

// runMigrate is "audit migrate": opening the file for writing migrates it (store.OpenStore).
func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newSubFlags("migrate")
	db := fs.String("db", "audit.db", "the SQLite `file` to convert")
	pos, err := subcommandFlags(fs, args)
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("unexpected argument %q", pos[0])
	}
	if err != nil {
		return usageFailed(stderr, "migrate", err, migrateUsage, fs)
	}
	// The read checks first: a missing file is not created, another program's is refused.
	rdb, err := store.OpenReadDB(ctx, *db)
	if err != nil && !errors.Is(err, store.ErrOldLayout) {
		return failed(stderr, "migrate", err)
	}
	if rdb != nil {
		rdb.Close()
	}
	st, err := store.OpenStore(ctx, *db)
	if err != nil {
		if errors.Is(err, store.ErrNotAudit) {
			fmt.Fprintf(stderr, "audit migrate: %v\n", err)
			return crawl.ExitUsage
		}
		return failed(stderr, "migrate", err)
	}
	if err := st.Close(); err != nil {
		return failed(stderr, "migrate", err)
	}
	fmt.Fprintf(stdout, "%s: in this version's layout\n", *db)
	return crawl.ExitOK
}
