package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/politecrawl/polite/examples/audit/internal/app"
	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/demo"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/politecrawl/polite/examples/internal/localweb"
)

const appUsage = `usage: audit app [-addr 127.0.0.1:0] [-db FILE] [-demo] [-no-browser]

The audit's window: a web app on this computer only (127.0.0.1, a random port unless -addr), over the
same database the command line writes. It prints its address, with a token every request needs, and
opens your browser on it. Start a crawl, watch it live, stop and resume it, explore the findings by
kind, compare crawls. Ctrl-C stops the app (a running crawl is interrupted and can be resumed).

Flags:
`

// runApp is `audit app`: it serves internal/app behind localweb until ctx ends.
func runApp(ctx context.Context, args []string, stdout, stderr io.Writer, e crawl.Env) int {
	fs := flag.NewFlagSet("audit app", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("addr", "", "listen `address`, loopback only (default 127.0.0.1 on a random port)")
	db := fs.String("db", "audit.db", "SQLite `file` of the crawls (created when missing)")
	withDemo := fs.Bool("demo", false, "serve the built-in demo shop on loopback and pre-fill its address")
	noBrowser := fs.Bool("no-browser", false, "print the address only; do not open a browser")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, appUsage)
			printFlags(stderr, fs)
			return crawl.ExitOK
		}
		fmt.Fprintf(stderr, "audit app: %v\n(run audit app -h for help)\n", err)
		return crawl.ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "audit app: no arguments expected, got %q (the address to crawl is typed into the app)\n", fs.Args())
		return crawl.ExitUsage
	}
	if _, err := localweb.LoopbackAddr(*addr); err != nil { // before anything is started or opened
		fmt.Fprintf(stderr, "audit app: -addr: %v\n", err)
		return crawl.ExitUsage
	}
	var shop *demo.DemoSite
	if *withDemo {
		var err error
		if shop, err = demo.StartDemo(); err != nil {
			fmt.Fprintf(stderr, "audit app: %v\n", err)
			return crawl.ExitFailure
		}
		defer shop.Stop()
	}
	a, err := app.New(ctx, app.Options{DB: *db, Demo: shop, Env: e, Log: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "audit app: %v\n", err)
		if errors.Is(err, store.ErrNotAudit) {
			return crawl.ExitUsage
		}
		return crawl.ExitFailure
	}
	defer a.Close()
	srv := &localweb.Server{Addr: *addr, Handler: a.Handler()}
	if err := srv.Listen(); err != nil {
		fmt.Fprintf(stderr, "audit app: %v\n", err)
		return crawl.ExitFailure
	}
	srv.Announce(stdout, "audit app", !*noBrowser)
	if shop != nil {
		fmt.Fprintf(stdout, "Demo: the built-in shop is served on loopback as %s; its address is in the form.\n", shop.URL())
	}
	if err := srv.Serve(ctx); err != nil {
		fmt.Fprintf(stderr, "audit app: %v\n", err)
		return crawl.ExitFailure
	}
	return crawl.ExitOK
}
