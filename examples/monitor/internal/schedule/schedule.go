// Package schedule is the snapshot scheduler: which tracked pages are due,
// one run over them (pages of one host one at a time, -gap apart, hosts in
// parallel, each page claimed in the store first so two processes never
// check it twice, each snapshot committed as soon as it is taken), and the
// loop of `watch`.
//
// It decides when and in which order; the check itself is snapshot.Taker's
// and the rows are the store's. It prints one line per page and never
// serves the web.
package schedule

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/politecrawl/polite/examples/internal/cmdline"
	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
	"github.com/politecrawl/polite/examples/monitor/internal/store"
	"github.com/politecrawl/polite/examples/monitor/internal/textscope"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/robots"
)

// MaxWatchSleep bounds one sleep of Watch so that pages tracked by another
// process while it sleeps are picked up within a minute.
const MaxWatchSleep = time.Minute

// Runner runs the checks of one process. HostGate is the process's one
// per-host limit, shared with the free tool; NewClient makes the polite
// client and robots cache of one run over the gate it is given.
type Runner struct {
	Store     *store.Store
	Parallel  int
	Gap       time.Duration
	HostGate  fetch.Gate
	NewClient func(gate fetch.Gate, warn func(format string, a ...any)) (*fetch.Client, *robots.Cache)
	Taker     snapshot.Taker
	Now       func() time.Time
	Logger    *slog.Logger
	// CatchUp bounds the backlog (pages overdue by more than CatchUpGrace,
	// and pages never checked) to this many checks a minute, after a
	// burst of CatchUpBurst (pace.go); 0 is DefaultCatchUp.
	CatchUp float64

	catchUpOnce sync.Once
	catchUp     *rate.Limiter
}

// bothGates passes a run's own gate, then the process's host gate.
type bothGates struct{ run, host fetch.Gate }

// Acquire implements fetch.Gate: the run's gate, then the host gate.
func (g bothGates) Acquire(ctx context.Context, u *url.URL) (func(), error) {
	rel1, err := g.run.Acquire(ctx, u)
	if err != nil {
		return nil, err
	}
	rel2, err := g.host.Acquire(ctx, u)
	if err != nil {
		rel1()
		return nil, err
	}
	return func() { rel2(); rel1() }, nil
}

// Start implements fetch.Pacer: each gate that spaces starts on the wire
// (the host gate, a frontier) checks the request just before it is
// written.
func (g bothGates) Start(ctx context.Context, u *url.URL) error {
	for _, gate := range []fetch.Gate{g.run, g.host} {
		if p, ok := gate.(fetch.Pacer); ok {
			if err := p.Start(ctx, u); err != nil {
				return err
			}
		}
	}
	return nil
}

// Wrote implements fetch.Pacer.
func (g bothGates) Wrote(u *url.URL) {
	for _, gate := range []fetch.Gate{g.run, g.host} {
		if p, ok := gate.(fetch.Pacer); ok {
			p.Wrote(u)
		}
	}
}

// OutcomeBusy: another monitor process on the same database holds the page.
const OutcomeBusy = "busy"

// ClaimLease bounds how long a check may hold its page before another
// process may take it (a crashed process's pages come back after it): far
// more than one check with its retries and robots.txt fetch takes.
const ClaimLease = 15 * time.Minute

// errFetchFailed tells the frontier's statistics that a page failed.
var errFetchFailed = errors.New("fetch failed")

// Summary counts the outcomes of one run.
type Summary struct {
	Due, OK, Errors, Blocked, Waiting, Busy, Unfinished int
	// BotProtection counts checks answered by a bot-protection challenge
	// (snapshots, never compared).
	BotProtection int
	// Later counts backlog pages left due for a later pass: the catch-up
	// bound (pace.go) took as many as it allows.
	Later int
	// CatchUp is the bound Later was left by, per minute.
	CatchUp float64
}

// String is the run line: "run: N due, N snapshots (...)".
func (s Summary) String() string {
	line := fmt.Sprintf("run: %d due, %d snapshots (%d with errors), %d blocked by robots.txt, %d waiting for robots.txt",
		s.Due, s.OK+s.Errors+s.BotProtection, s.Errors, s.Blocked, s.Waiting)
	if s.BotProtection > 0 {
		line += fmt.Sprintf(", %d blocked by bot protection", s.BotProtection)
	}
	if s.Busy > 0 {
		line += fmt.Sprintf(", %d skipped (being checked by another monitor process)", s.Busy)
	}
	if s.Later > 0 {
		line += fmt.Sprintf(", %d overdue left for later (catch-up: at most %g a minute)", s.Later, s.CatchUp)
	}
	if s.Unfinished > 0 {
		line += fmt.Sprintf(", %d not checked (interrupted)", s.Unfinished)
	}
	return line
}

// RunOnce checks every page due now, once. Pages of one host go one at a
// time with the configured gap; different hosts go in parallel. Each
// snapshot is committed as soon as it is taken, so an interrupted run loses
// nothing it finished. The error is for the database only: a page that
// cannot be fetched is a stored outcome, not a failure.
func (r *Runner) RunOnce(ctx context.Context, w io.Writer) (Summary, error) {
	var sum Summary
	due, err := r.Store.DuePages(ctx, r.Now())
	if err != nil {
		return sum, err
	}
	due, backlog, later := r.pace(due, r.Now())
	sum.Due, sum.Later, sum.CatchUp = len(due), later, r.catchUpRate()
	if len(due) == 0 {
		return sum, nil
	}

	cfg := frontier.DefaultConfig()
	cfg.MaxPages = len(due)
	cfg.MaxDepth = 0
	cfg.MaxInFlight = r.Parallel
	cfg.Gap = 0
	cfg.PerHostInFlight = 1
	cfg.PerHostGap = r.Gap
	cfg.Now = r.Now
	cfg.Logger = r.Logger
	gate, err := frontier.New(cfg)
	if err != nil {
		return sum, err
	}

	var mu sync.Mutex // guards w and the counts
	printf := func(format string, a ...any) {
		mu.Lock()
		fmt.Fprintf(w, format, a...)
		mu.Unlock()
	}

	client, rc := r.NewClient(bothGates{run: gate, host: r.HostGate}, printf)

	byURL := make(map[string]store.Page, len(due))
	for _, p := range due {
		res := gate.Add(ctx, p.URL, 0, "")
		if res.Outcome != frontier.Queued {
			// Only a row written by hand can get here (track stores the
			// frontier's own form). Record it like a failed fetch, so the
			// page waits its interval instead of being due on every pass
			// of watch.
			detail := res.Outcome.String()
			if res.Err != nil {
				detail = res.Err.Error()
			}
			sn := &snapshot.Snapshot{PageURL: p.URL, TakenAt: r.Now(), Error: "not checked: " + detail}
			if err := r.Store.SaveSnapshot(context.WithoutCancel(ctx), sn); err != nil {
				return sum, err
			}
			sum.Errors++
			printf("%s\n", cmdline.Safe(fmt.Sprintf("error   %s: %s", p.URL, sn.Error)))
			continue
		}
		byURL[res.URL] = p
	}

	// The first database error stops the run: a disk that cannot take one
	// snapshot will not take the next, and the pages not checked stay due.
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	var (
		dbErr error
		wg    sync.WaitGroup
	)
	for range r.Parallel {
		wg.Go(func() {
			ctx := runCtx
			for {
				it, err := gate.Next(ctx)
				if err != nil {
					return // complete, or ctx done
				}
				p, ok := byURL[it.URL]
				if !ok {
					gate.Done(it, nil)
					continue
				}
				if backlog[p.URL] {
					if err := r.catchUpLimiter().Wait(ctx); err != nil {
						gate.Done(it, nil)
						return // interrupted: the page stays due
					}
				}
				oc, line, err := r.check(ctx, rc, client, p)
				var failed error
				if oc == snapshot.OutcomeError {
					failed = errFetchFailed
				}
				gate.Done(it, failed)
				mu.Lock()
				switch {
				case err != nil:
					dbErr = errors.Join(dbErr, err)
					stopRun()
				case oc == "":
					sum.Unfinished++
				case oc == snapshot.OutcomeOK:
					sum.OK++
				case oc == snapshot.OutcomeError:
					sum.Errors++
				case oc == snapshot.OutcomeBlocked:
					sum.Blocked++
				case oc == snapshot.OutcomeRobotsWait:
					sum.Waiting++
				case oc == snapshot.OutcomeBotProtection:
					sum.BotProtection++
				case oc == OutcomeBusy:
					sum.Busy++
				}
				mu.Unlock()
				if line != "" {
					// The line carries site text (a robots.txt rule, an
					// error from the server): never raw to a terminal.
					printf("%s\n", cmdline.Safe(line))
				}
			}
		})
	}
	wg.Wait()
	if runCtx.Err() != nil {
		sum.Unfinished = sum.Due - sum.OK - sum.Errors - sum.Blocked - sum.Waiting - sum.Busy
	}
	return sum, dbErr
}

// check consults robots.txt and, if allowed, takes one snapshot of p. It
// returns the outcome ("" when interrupted, nothing recorded) and a line
// for the run's output; the error is from the database.
func (r *Runner) check(ctx context.Context, rc *robots.Cache, client *fetch.Client, p store.Page) (string, string, error) {
	// Writes must not be cut by Ctrl-C: a taken snapshot is always recorded.
	wctx := context.WithoutCancel(ctx)
	start := r.Now()
	if ok, err := r.Store.Claim(wctx, p.URL, start, start.Add(ClaimLease)); err != nil {
		return "", "", err
	} else if !ok {
		return OutcomeBusy, fmt.Sprintf("skipped %s: being checked by another monitor process", p.URL), nil
	}
	oc, line, _, err := r.take(ctx, rc, client, p, start)
	return oc, line, err
}

// take checks a page its caller has claimed and records the outcome; the
// time is when robots.txt asked to wait, if it did.
func (r *Runner) take(ctx context.Context, rc *robots.Cache, client *fetch.Client, p store.Page, start time.Time) (string, string, time.Time, error) {
	wctx := context.WithoutCancel(ctx)
	oc, line, wait, err := r.takeClaimed(ctx, rc, client, p, start)
	if err != nil || oc == "" {
		// Not recorded: give the page back rather than leave it claimed
		// for the lease.
		err = errors.Join(err, r.Store.Release(wctx, p.URL))
	}
	return oc, line, wait, err
}

func (r *Runner) takeClaimed(ctx context.Context, rc *robots.Cache, client *fetch.Client, p store.Page, start time.Time) (string, string, time.Time, error) {
	wctx := context.WithoutCancel(ctx)
	tk := r.Taker
	if rules, err := r.Store.Rules(wctx, p.URL); err != nil {
		return "", "", time.Time{}, err
	} else if tk.Scope, err = textscope.Compile(rules); err != nil {
		// Stored rules are checked when they are set: only a row edited
		// by hand gets here. Say so in the page's record.
		sn := &snapshot.Snapshot{PageURL: p.URL, TakenAt: start, Error: "rules unusable: " + err.Error()}
		if err := r.Store.SaveSnapshot(wctx, sn); err != nil {
			return "", "", time.Time{}, err
		}
		return snapshot.OutcomeError, fmt.Sprintf("error   %s: %s", p.URL, sn.Error), time.Time{}, nil
	}
	prev, _, err := r.Store.LastGood(wctx, p.URL)
	if err != nil {
		return "", "", time.Time{}, err
	}
	sn, interrupted := tk.Take(ctx, rc, client, p.URL, start, prev)
	if interrupted {
		return "", "", time.Time{}, nil
	}
	if sn.WaitUntil != nil {
		detail := sn.WaitDetail
		if err := r.Store.DeferPage(wctx, p.URL, start, *sn.WaitUntil, detail); err != nil {
			return "", "", time.Time{}, err
		}
		return snapshot.OutcomeRobotsWait, fmt.Sprintf("waiting %s: %s", p.URL, detail), *sn.WaitUntil, nil
	}
	oc, detail := sn.Outcome()
	var line string
	switch oc {
	case snapshot.OutcomeOK:
		line = fmt.Sprintf("ok      %s: %s", p.URL, detail)
	case snapshot.OutcomeBlocked:
		line = fmt.Sprintf("blocked %s: %s", p.URL, detail)
	case snapshot.OutcomeBotProtection:
		line = fmt.Sprintf("bot     %s: %s", p.URL, detail)
	default:
		line = fmt.Sprintf("error   %s: %s", p.URL, detail)
	}
	// The line is printed only once the snapshot is committed: "ok" means
	// saved.
	if err := r.Store.SaveSnapshot(wctx, &sn.Snapshot); err != nil {
		return "", "", time.Time{}, fmt.Errorf("snapshot of %s not saved: %w", p.URL, err)
	}
	return oc, line, time.Time{}, nil
}

// Watch runs RunOnce until ctx ends, sleeping until the next page is due.
// Stopping it (Ctrl-C) is the normal way out and not an error.
func (r *Runner) Watch(ctx context.Context, w io.Writer, sleep func(context.Context, time.Duration) error) error {
	for {
		sum, err := r.RunOnce(ctx, w)
		if sum.Due > 0 {
			fmt.Fprintln(w, sum)
		}
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		wait := MaxWatchSleep
		if next, ok, err := r.Store.NextDue(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		} else if ok {
			wait = min(max(next.Sub(r.Now()), time.Second), MaxWatchSleep)
		}
		if err := sleep(ctx, wait); err != nil {
			return nil
		}
	}
}

// bothGates must pass the start checks through, or the gates behind it
// would space admissions but not the requests on the wire.
var _ fetch.Pacer = bothGates{}
