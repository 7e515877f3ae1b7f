// Command monitor is a tracked-URL change monitor that behaves as the
// 2-UAcomBot page promises site owners: it takes periodic plain-HTTP
// snapshots of the pages a user tracks, extracts their SEO fields, and reports
// what changed between consecutive snapshots.
//
// Every request (robots.txt included) carries the 2-UAcomBot user agent and
// the header X-AGENT: 2-UA. Before every snapshot the host's robots.txt is
// consulted; parsed rules are cached per host for one hour in the database,
// so the one-hour promise holds across runs. A disallowed page is not fetched;
// its snapshot row says blocked_by_robots = 1 and carries no SEO fields. A
// robots.txt answering 5xx, or not answering, is a temporary disallow that is
// re-checked after five minutes; 404 and 410 mean no rules. Pages of one host
// are fetched one at a time with a gap of at least one second.
//
// Every connection is checked at dial time against internal addresses
// (loopback, private, link-local, CGNAT...), so neither a visitor of the free
// tool nor a redirect can point the monitor into the local network;
// -allow-private turns the check off. Snapshots are conditional GETs once a
// page has sent validators; a 304 is recorded as an unchanged snapshot. The
// visible text of each snapshot is stored (compressed, capped) so a change of
// content reads as a word diff.
//
// Usage:
//
//	monitor track   -db PATH [-interval 6h] [-select CSS] [-exclude CSS] [-ignore REGEXP]... URL...
//	monitor untrack -db PATH URL...
//	monitor rules   -db PATH [-select CSS] [-exclude CSS] [-ignore REGEXP]... [-clear] URL
//	monitor run     -db PATH          take every due snapshot once (for cron)
//	monitor run     -db PATH -now URL one snapshot of a tracked page now
//	monitor watch   -db PATH          the same in a loop until Ctrl-C
//	monitor report  -db PATH [-since DURATION]
//	monitor status  -db PATH
//	monitor check   [-db PATH] URL    the free tool: one polite check, printed as a card
//	monitor serve   -db PATH [-addr 127.0.0.1:8080] [-watch]
//	monitor alert   add|list|rm|test -db PATH ...
//
// serve is the web dashboard, page history, free tool and JSON API
// (README.md in this directory is the manual). Common flags: -user-agent,
// -timeout (15s), -resolve HOST:PORT:ADDR (repeatable), -allow-private,
// -log FILE (decision events of every component as JSON lines). The
// proxy environment (HTTPS_PROXY, NO_PROXY, ...) is honoured. Exit status:
// 0 success, 2 usage error, 1 failure, 3 run -now refused for now.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/politecrawl/polite/examples/internal/cmdline"
	"github.com/politecrawl/polite/examples/monitor/internal/card"
	"github.com/politecrawl/polite/examples/monitor/internal/report"
	"github.com/politecrawl/polite/examples/monitor/internal/schedule"
	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
	"github.com/politecrawl/polite/examples/monitor/internal/store"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/urlnorm"
)

const (
	// defaultUserAgent is the identity the 2-UAcomBot page publishes.
	defaultUserAgent = "Mozilla/5.0 (compatible; 2-UAcomBot/1.0; +https://2-ua.com/support/robots)"
	// minInterval is the smallest snapshot interval: the page promises at
	// most one snapshot per tracked page per six hours.
	minInterval = schedule.MinSnapshotGap
	// minGap is the smallest pause between two requests to one host.
	minGap = time.Second
	// robotsTTL is how long parsed robots.txt rules are reused, across runs.
	robotsTTL = time.Hour
	// robotsRecheck is when an unreachable (5xx) robots.txt is asked again.
	robotsRecheck = 5 * time.Minute
	// maxURLLen bounds a tracked URL (the frontier's limit).
	maxURLLen = 8192
	// maxParallel is the most requests in flight at once (the frontier's limit).
	maxParallel = 256
	// maxInterval, maxTimeout, maxGap, maxCheckRate and maxCheckBurst bound
	// the numeric flags from above: a value past them is a typo, not a plan.
	maxInterval   = 366 * 24 * time.Hour
	maxTimeout    = 10 * time.Minute
	maxGap        = time.Hour
	maxCheckRate  = 600 // per minute
	maxCheckBurst = 100
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	// exitRefused: run -now refused for now (the six-hour minimum, the
	// robots.txt re-check wait, a check in progress); the message says
	// when it is allowed.
	exitRefused = 3
)

func main() {
	// The first Ctrl-C cancels the context: in-flight requests stop, every
	// snapshot already taken is committed, the database is closed cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// env is what tests replace: the clock, the way watch sleeps, and the base
// HTTP transport. The zero value is the real world.
type env struct {
	now       func() time.Time
	sleep     func(ctx context.Context, d time.Duration) error
	transport http.RoundTripper // base transport under the polite one; nil: proxy env + -resolve
	// anyGap lets benchmarks set -gap below the one-second floor.
	anyGap bool
	// anyCatchUp lets benchmarks set -catch-up above its ceiling.
	anyCatchUp bool
	// guardHooks are added to the address guard (a resolver that maps test
	// names, a dial hook that records, exact loopback test servers let
	// through); they cannot turn it off: only -allow-private does.
	guardHooks guardHooks
	// listening, when set, is told the server's address once it listens.
	listening func(addr string)
	// logger receives the decision events of every component; -log FILE
	// sets it.
	logger *slog.Logger
}

func (e env) clock() func() time.Time {
	if e.now != nil {
		return e.now
	}
	return time.Now
}

func (e env) sleeper() func(ctx context.Context, d time.Duration) error {
	if e.sleep != nil {
		return e.sleep
	}
	return func(ctx context.Context, d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// run is main without the process: it parses args, does the work, and
// returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runEnv(ctx, args, stdout, stderr, env{})
}

// usageError is a bad command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

const usageText = `usage:
  monitor track   -db PATH [-interval 6h] [-select CSS] [-exclude CSS] [-ignore REGEXP]... URL...
  monitor untrack -db PATH URL...
  monitor run     -db PATH [-gap 1s] [-parallel 8]
  monitor watch   -db PATH [-gap 1s] [-parallel 8]
  monitor report  -db PATH [-since DURATION]
  monitor status  -db PATH
  monitor check   [-db PATH] URL        the free tool: one polite check, prints the response card
  monitor serve   -db PATH [-addr 127.0.0.1:8080] [-watch]   dashboard, free tool and JSON API
  monitor rules   -db PATH [-select CSS] [-exclude CSS] [-ignore REGEXP]... [-clear] URL
  monitor run     -db PATH -now URL     one snapshot of a tracked page now
  monitor alert   add|list|rm|test -db PATH ...   alert channels (run "monitor alert help")
common flags: -user-agent UA, -timeout 15s, -resolve HOST:PORT:ADDR (repeatable),
  -allow-private (track, run, watch, check, serve: allow internal addresses),
  -log FILE (run, watch, check, serve: decision events as JSON lines)
run "monitor COMMAND -h" for the flags of one command
`

func runEnv(ctx context.Context, args []string, stdout, stderr io.Writer, e env) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	var err error
	switch cmd {
	case "track", "untrack", "run", "watch", "report", "status", "serve", "check", "rules":
		err = command(ctx, cmd, rest, stdout, stderr, e)
	case "alert":
		err = alertCommand(ctx, rest, stdout, stderr, e)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usageText)
		return exitOK
	default:
		fmt.Fprintf(stderr, "monitor: unknown command %q\n%s", cmd, usageText)
		return exitUsage
	}
	var ue *usageError
	var refused *refusedError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &refused):
		fmt.Fprintf(stderr, "monitor %s: %v\n", cmd, err)
		return exitRefused
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "monitor %s: %v\n", cmd, err)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "monitor %s: %v\n", cmd, err)
		return exitFailure
	}
}

// options are the parsed flags of one command.
type options struct {
	db        string
	userAgent string
	timeout   time.Duration
	resolve   resolveFlag
	interval  time.Duration
	since     time.Duration
	gap       time.Duration
	parallel  int
	// allowPrivate turns the SSRF guard off.
	allowPrivate bool
	// logFile receives decision events as JSON lines (-log).
	logFile string
	// serve
	addr       string
	watch      bool
	checkRate  float64 // free-tool checks per minute per client IP
	checkBurst int
	// checksInFlight bounds free-tool checks at once, server-wide; 0 is
	// maxChecksInFlight (no flag: tests set it explicitly).
	checksInFlight int
	// rules are -select, -exclude, -ignore and -clear (track, rules).
	rules ruleFlags
	// now is run -now URL: one snapshot of that page, now.
	now string
	// catchUp is -catch-up (run, watch, serve): backlog checks a minute.
	catchUp float64
	// alerts: classification and alert delivery (alertcmd.go).
	alerts alertOptions
}

// resolveFlag collects -resolve HOST:PORT:ADDR values, like curl --resolve.
type resolveFlag map[string]string

func (r resolveFlag) String() string { return fmt.Sprint(map[string]string(r)) }

func (r resolveFlag) Set(v string) error {
	m, err := fetch.ParseResolve(v)
	if err != nil {
		return err
	}
	for k, to := range m {
		r[k] = to
	}
	return nil
}

func command(ctx context.Context, cmd string, args []string, stdout, stderr io.Writer, e env) error {
	o := options{resolve: resolveFlag{}}
	fs := flag.NewFlagSet("monitor "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbHelp := "path of the SQLite database (created if missing)"
	switch cmd {
	case "status", "report":
		dbHelp = "path of the SQLite database (must exist)"
	case "check":
		dbHelp = "optional: a monitor database whose robots.txt cache to use and update (must exist)"
	}
	fs.StringVar(&o.db, "db", "", dbHelp)
	fs.StringVar(&o.userAgent, "user-agent", defaultUserAgent, "User-Agent of every request; its product token is matched in robots.txt")
	fs.DurationVar(&o.timeout, "timeout", 15*time.Second, "timeout of one request")
	fs.Var(o.resolve, "resolve", "HOST:PORT:ADDR: connect to ADDR for HOST:PORT (repeatable)")
	switch cmd {
	case "track", "run", "watch", "serve", "check":
		fs.BoolVar(&o.allowPrivate, "allow-private", false, "allow fetching loopback, private, link-local and other internal addresses (off: refused before connecting)")
	}
	switch cmd {
	case "run", "watch", "serve", "check":
		fs.StringVar(&o.logFile, "log", "", "append every decision (robots.txt, queue, gate waits, redirects, retries) to FILE as JSON lines (slog, Debug level)")
	}
	switch cmd {
	case "track":
		fs.DurationVar(&o.interval, "interval", minInterval, "time between two snapshots of a page (minimum 6h)")
		o.rules.add(fs, false)
	case "rules":
		o.rules.add(fs, true)
	case "report":
		fs.DurationVar(&o.since, "since", 0, "only changes found in this recent period (0: all)")
	case "run", "watch", "serve", "check":
		fs.DurationVar(&o.gap, "gap", minGap, "pause between two requests to one host (minimum 1s)")
		fs.IntVar(&o.parallel, "parallel", 8, "hosts fetched at the same time")
		if cmd != "check" {
			fs.Float64Var(&o.catchUp, "catch-up", schedule.DefaultCatchUp, "most backlog checks (pages overdue after downtime, pages never checked) started a minute")
		}
		if cmd == "run" {
			fs.StringVar(&o.now, "now", "", "take one snapshot of this tracked URL now (refused within 6h of its last snapshot or in robots.txt's re-check wait)")
		}
	}
	if cmd == "serve" {
		fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on (loopback by default: binding elsewhere exposes the free tool)")
		fs.BoolVar(&o.watch, "watch", false, "also take due snapshots in this process (the scheduler of watch)")
		fs.Float64Var(&o.checkRate, "check-rate", 10, "free-tool checks per minute per client IP")
		fs.IntVar(&o.checkBurst, "check-burst", 3, "free-tool checks a client IP may make at once before the rate applies")
	}
	addAlertFlags(cmd, fs, &o.alerts)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &usageError{err.Error()}
	}
	if err := o.alerts.check(); err != nil {
		return err
	}
	if o.db == "" && cmd != "check" {
		return usagef("-db PATH is required")
	}
	if err := cmdline.DurationIn("timeout", o.timeout, time.Millisecond, maxTimeout); err != nil {
		return &usageError{err.Error()}
	}
	if strings.TrimSpace(o.userAgent) == "" || len(o.userAgent) > 512 || strings.ContainsAny(o.userAgent, "\r\n") {
		return usagef("-user-agent must be one non-empty line of at most 512 bytes")
	}
	var urls []string
	switch cmd {
	case "track", "untrack", "check", "rules":
		if fs.NArg() == 0 {
			return usagef("no URL given")
		}
		if (cmd == "check" || cmd == "rules") && fs.NArg() > 1 {
			return usagef("%s takes one URL, got %d", cmd, fs.NArg())
		}
		for _, raw := range fs.Args() {
			u, err := canonicalURL(raw)
			if err != nil {
				return &usageError{err.Error()}
			}
			urls = append(urls, u)
		}
		if cmd == "track" {
			if err := validInterval(o.interval); err != nil {
				return &usageError{err.Error()}
			}
		}
		if err := o.rules.check(); err != nil {
			return &usageError{err.Error()}
		}
	default:
		if fs.NArg() > 0 {
			return usagef("unexpected argument %q", fs.Arg(0))
		}
	}
	if cmd == "report" && o.since < 0 {
		return usagef("-since must not be negative, got %v", o.since)
	}
	switch cmd {
	case "run", "watch", "serve", "check":
		if !e.anyGap && o.gap < minGap {
			return usagef("-gap %s is below the minimum of %s", fmtDuration(o.gap), fmtDuration(minGap))
		}
		if err := cmdline.DurationIn("gap", o.gap, 0, maxGap); err != nil {
			return &usageError{err.Error()}
		}
		if o.parallel < 1 || o.parallel > maxParallel {
			return usagef("-parallel must be between 1 and %d, got %d", maxParallel, o.parallel)
		}
		if cmd != "check" {
			if err := checkCatchUp(&o, e); err != nil {
				return err
			}
		}
	}
	if cmd == "serve" {
		// NaN compares false with everything: FloatIn refuses it, and
		// infinities, so no value can turn the rate limit off.
		if err := cmdline.FloatIn("check-rate", o.checkRate, 0.01, maxCheckRate); err != nil {
			return &usageError{err.Error()}
		}
		if err := cmdline.IntIn("check-burst", o.checkBurst, 1, maxCheckBurst); err != nil {
			return &usageError{err.Error()}
		}
		if _, _, err := net.SplitHostPort(o.addr); err != nil {
			return usagef("-addr %q: want HOST:PORT (%v)", o.addr, err)
		}
	}

	if o.logFile != "" {
		f, err := os.OpenFile(o.logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("-log: %w", err)
		}
		defer f.Close()
		e.logger = slog.New(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}

	var st *store.Store
	if o.db != "" {
		// Read-only commands never create a database, nor write to one.
		mode := store.CreateIfMissing
		switch cmd {
		case "status", "report":
			mode = store.ReadOnly
		case "check":
			mode = store.MustExist
		}
		var err error
		st, err = store.Open(ctx, o.db, mode)
		if err != nil {
			return err
		}
		defer st.Close()
		st.SetCompareOptions(o.alerts.compare())
	}
	now := e.clock()

	switch cmd {
	case "track":
		m, err := newMonitor(st, o, e)
		if err != nil {
			return err
		}
		defer m.close()
		for _, u := range urls {
			if err := m.taker().CheckURL(ctx, u); err != nil {
				return &usageError{fmt.Sprintf("%s: %v", u, err)}
			}
		}
		if err := st.Track(ctx, urls, o.interval, now()); err != nil {
			return err
		}
		if err := o.rules.store(ctx, st, urls, stdout); err != nil {
			return err
		}
		for _, u := range urls {
			fmt.Fprintf(stdout, "tracking %s every %s\n", u, fmtDuration(o.interval))
		}
		return nil
	case "untrack":
		missing, err := st.Untrack(ctx, urls)
		if err != nil {
			return err
		}
		for _, u := range urls {
			if !contains(missing, u) {
				fmt.Fprintf(stdout, "untracked %s\n", u)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("not tracked: %s", strings.Join(missing, " "))
		}
		return nil
	case "report":
		return report.Changes(ctx, st, stdout, now(), o.since)
	case "status":
		return report.Status(ctx, st, stdout, now(), report.ProductToken(o.userAgent))
	case "check":
		m, err := newMonitor(st, o, e)
		if err != nil {
			return err
		}
		defer m.close()
		tool, err := newFreeTool(m)
		if err != nil {
			return err
		}
		c := tool.check(ctx, urls[0])
		card.Write(stdout, c)
		if c.Refused {
			// An internal address is the user's input refused: exit 2.
			return &usageError{c.Error}
		}
		if c.Error != "" {
			return errors.New(c.Error)
		}
		return nil
	case "rules":
		return o.rules.command(ctx, st, urls[0], stdout)
	case "run":
		m, err := newMonitor(st, o, e)
		if err != nil {
			return err
		}
		defer m.close()
		if o.now != "" {
			// The check's alerts are sent as run sends its checks' alerts.
			if err := m.runNow(ctx, o.now, stdout); err != nil {
				return err
			}
			return m.drainAlerts(ctx, stdout)
		}
		sum, err := m.runner().RunOnce(ctx, stdout)
		line := sum.String()
		if sum.Due == 0 && err == nil {
			line += m.nextDueText(ctx)
		}
		fmt.Fprintln(stdout, line)
		if err != nil {
			return err
		}
		// One pass over the alert outbox; what fails waits for its backoff,
		// and an interrupted run leaves every delivery in the outbox.
		if ctx.Err() == nil {
			if err := m.drainAlerts(ctx, stdout); err != nil {
				return err
			}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: %w (every snapshot taken is saved; the rest stay due)", ctx.Err())
		}
		return nil
	case "watch":
		m, err := newMonitor(st, o, e)
		if err != nil {
			return err
		}
		defer m.close()
		return m.withAlerts(ctx, func(ctx context.Context) error { return m.runner().Watch(ctx, stdout, e.sleeper()) })
	case "serve":
		m, err := newMonitor(st, o, e)
		if err != nil {
			return err
		}
		defer m.close()
		return serve(ctx, m, e, stdout, stderr)
	}
	return usagef("unknown command %q", cmd)
}

// validInterval is the one check of a snapshot interval, for the CLI and
// the web form alike.
func validInterval(d time.Duration) error {
	if d < minInterval {
		return fmt.Errorf("-interval %s is below the minimum of %s", fmtDuration(d), fmtDuration(minInterval))
	}
	if d > maxInterval {
		return fmt.Errorf("-interval %s is above the maximum of %s", fmtDuration(d), fmtDuration(maxInterval))
	}
	return nil
}

// nextDueText tells, after a run with nothing due, when something will be.
func (m *monitor) nextDueText(ctx context.Context) string {
	next, ok, err := m.st.NextDue(ctx)
	switch {
	case err != nil:
		return ""
	case !ok:
		return "; no pages tracked (add some with: monitor track -db " + m.o.db + " URL)"
	default:
		in := next.Sub(m.now()).Round(time.Second)
		return fmt.Sprintf("; next page due at %s (in %s)", snapshot.When(next), fmtDuration(max(in, 0)))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// canonicalURL checks a URL typed by a person (track, untrack, check, the
// web forms) with the start-URL rules the audit uses too
// (urlnorm.StartURL: an absolute http(s) URL, or a bare host name with a
// dot, read as https://host/) and returns it in the one form stored in the
// database (lower-case scheme and host, no default port, no fragment, "/"
// for an empty path), which is also the form the frontier hands back.
func canonicalURL(raw string) (string, error) {
	if len(raw) > maxURLLen {
		return "", fmt.Errorf("URL longer than %d bytes (starts %.60q)", maxURLLen, raw)
	}
	n, err := urlnorm.StartURL(raw)
	if err != nil {
		return "", fmt.Errorf("bad URL %q: want an absolute http:// or https:// URL, or a host name such as example.com (%v)", raw, err)
	}
	if u, err := url.Parse(n); err != nil || u.User != nil {
		return "", fmt.Errorf("bad URL %q: want http(s)://host/path without user info", raw)
	}
	return n, nil
}

// fmtDuration prints 6h0m0s as 6h and 1m30s as 1m30s.
func fmtDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
