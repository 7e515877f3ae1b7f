package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/examples/internal/cmdline"
	"github.com/politecrawl/polite/examples/monitor/internal/condget"
	"github.com/politecrawl/polite/examples/monitor/internal/guard"
	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
	"github.com/politecrawl/polite/examples/monitor/internal/store"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/robots"
)

// monitor takes the snapshots that are due, politely.
type monitor struct {
	st  *store.Store // nil for `check` without -db
	o   options
	now func() time.Time
	// token is the product token of the configured user agent, named in
	// the banner; tokens are the ones robots.txt is asked about, in order:
	// the user agent's own, then 2-UAcomBot, which the monitor answers to
	// whatever -user-agent says (rules site owners wrote for the published
	// bot keep working).
	token  string
	tokens []string
	header http.Header
	base   http.RoundTripper
	guard  *guard.Guard
	// logger receives every component's decision events (-log FILE);
	// nil is silent.
	logger *slog.Logger
	// hostGate is the process's one per-host limit (one request at a time
	// per host, -gap apart), passed by every request of every run and of
	// the free tool, so `serve -watch` never sends a host a check and a
	// snapshot closer together than a run alone would.
	hostGate *frontier.Frontier
}

// bothGates passes a run's own gate, then the process's host gate.
type bothGates struct{ run, host fetch.Gate }

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

// publishedToken is the product token of the 2-UAcomBot page.
const publishedToken = "2-UAcomBot"

func newMonitor(st *store.Store, o options, e env) (*monitor, error) {
	// The guard is on unless -allow-private: test hooks only add to it.
	g := guard.New(o.allowPrivate, o.resolve).WithTestHooks(e.guardHooks)
	base := e.transport
	if base == nil {
		base = g.Transport()
	}
	hcfg := frontier.DefaultConfig()
	hcfg.MaxInFlight = maxParallel
	hcfg.Gap = 0
	hcfg.PerHostInFlight = 1
	hcfg.PerHostGap = o.gap
	hcfg.Now = e.clock()
	hcfg.Logger = e.logger
	hostGate, err := frontier.New(hcfg)
	if err != nil {
		return nil, err
	}
	return &monitor{
		st:     st,
		o:      o,
		now:    e.clock(),
		token:  robots.ProductToken(o.userAgent),
		tokens: robots.Tokens(o.userAgent, publishedToken),
		logger: e.logger,
		// X-AGENT: 2-UA, spelled as the page says: fetch sends header names
		// as written (log parsers that grep for "X-AGENT: 2-UA" are not
		// case-insensitive).
		header:   http.Header{"X-AGENT": {"2-UA"}},
		base:     condget.Transport{Base: base},
		guard:    g,
		hostGate: hostGate,
	}, nil
}

func (m *monitor) close() {
	if c, ok := m.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// newClient returns the polite client and robots cache of one run (or of
// the free tool), passing gate before every request, robots.txt included.
func (m *monitor) newClient(gate fetch.Gate, warn func(format string, a ...any)) (*fetch.Client, *robots.Cache) {
	client := &fetch.Client{
		UserAgent:    m.o.userAgent,
		Header:       m.header,
		RobotsTokens: m.tokens,
		Timeout:      m.o.timeout,
		Gate:         gate,
		Policy:       backoff.Default(),
		Transport:    m.base,
		Now:          m.now,
		Logger:       m.logger,
		// Each redirect target is checked before its robots.txt is asked
		// for: a site must not steer the monitor to an internal address
		// (the dial hook would refuse it too, but less clearly).
		CheckRedirect: func(next *url.URL, _ []fetch.Hop) error {
			return m.guard.CheckURL(context.Background(), next.String())
		},
	}
	// robots.txt requests go through the same gate and carry the same
	// identity as page requests. The timeout is the transport's, which
	// starts when the gate admits the request, not while it waits its turn.
	rc := &robots.Cache{
		Client:  &http.Client{Transport: client.PoliteTransport()},
		TTL:     robotsTTL,
		Recheck: robotsRecheck,
		Now:     m.now,
		Logger:  m.logger,
	}
	if m.st != nil {
		rc.Store = m.st.Robots()
		// A store failure only costs a refetch, but the one-hour promise
		// depends on the store: say so.
		rc.OnStoreError = func(err error) { warn("%s\n", cmdline.Safe(fmt.Sprintf("warning: robots_cache: %v", err))) }
	}
	client.Robots = rc
	return client, rc
}

// outcomeBusy: another monitor process on the same database holds the page.
const outcomeBusy = "busy"

// claimLease bounds how long a check may hold its page before another
// process may take it (a crashed process's pages come back after it): far
// more than one check with its retries and robots.txt fetch takes.
const claimLease = 15 * time.Minute

// errFetchFailed tells the frontier's statistics that a page failed.
var errFetchFailed = errors.New("fetch failed")

// summary counts the outcomes of one run.
type summary struct {
	Due, OK, Errors, Blocked, Waiting, Busy, Unfinished int
}

func (s summary) String() string {
	line := fmt.Sprintf("run: %d due, %d snapshots (%d with errors), %d blocked by robots.txt, %d waiting for robots.txt",
		s.Due, s.OK+s.Errors, s.Errors, s.Blocked, s.Waiting)
	if s.Busy > 0 {
		line += fmt.Sprintf(", %d skipped (being checked by another monitor process)", s.Busy)
	}
	if s.Unfinished > 0 {
		line += fmt.Sprintf(", %d not checked (interrupted)", s.Unfinished)
	}
	return line
}

// runOnce checks every page due now, once. Pages of one host go one at a
// time with the configured gap; different hosts go in parallel. Each
// snapshot is committed as soon as it is taken, so an interrupted run loses
// nothing it finished. The error is for the database only: a page that
// cannot be fetched is a stored outcome, not a failure.
func (m *monitor) runOnce(ctx context.Context, w io.Writer) (summary, error) {
	var sum summary
	due, err := m.st.DuePages(ctx, m.now())
	if err != nil {
		return sum, err
	}
	sum.Due = len(due)
	if len(due) == 0 {
		return sum, nil
	}

	cfg := frontier.DefaultConfig()
	cfg.MaxPages = len(due)
	cfg.MaxDepth = 0
	cfg.MaxInFlight = m.o.parallel
	cfg.Gap = 0
	cfg.PerHostInFlight = 1
	cfg.PerHostGap = m.o.gap
	cfg.Now = m.now
	cfg.Logger = m.logger
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

	client, rc := m.newClient(bothGates{run: gate, host: m.hostGate}, printf)

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
			sn := &snapshot.Snapshot{PageURL: p.URL, TakenAt: m.now(), Error: "not checked: " + detail}
			if err := m.st.SaveSnapshot(context.WithoutCancel(ctx), sn); err != nil {
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
	for range m.o.parallel {
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
				oc, line, err := m.check(ctx, rc, client, p)
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
				case oc == outcomeBusy:
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
func (m *monitor) check(ctx context.Context, rc *robots.Cache, client *fetch.Client, p store.Page) (string, string, error) {
	// Writes must not be cut by Ctrl-C: a taken snapshot is always recorded.
	wctx := context.WithoutCancel(ctx)
	start := m.now()
	if ok, err := m.st.Claim(wctx, p.URL, start, start.Add(claimLease)); err != nil {
		return "", "", err
	} else if !ok {
		return outcomeBusy, fmt.Sprintf("skipped %s: being checked by another monitor process", p.URL), nil
	}
	prev, _, err := m.st.LastGood(wctx, p.URL)
	if err != nil {
		return "", "", errors.Join(err, m.st.Release(wctx, p.URL))
	}
	sn, interrupted := m.taker().Take(ctx, rc, client, p.URL, start, prev)
	if interrupted {
		return "", "", m.st.Release(wctx, p.URL)
	}
	if sn.WaitUntil != nil {
		detail := sn.WaitDetail
		if err := m.st.DeferPage(wctx, p.URL, start, *sn.WaitUntil, detail); err != nil {
			// Not recorded: say nothing happened, and give the page back
			// rather than leave it claimed for the lease.
			return "", "", errors.Join(err, m.st.Release(wctx, p.URL))
		}
		return snapshot.OutcomeRobotsWait, fmt.Sprintf("waiting %s: %s", p.URL, detail), nil
	}
	oc, detail := sn.Outcome()
	var line string
	switch oc {
	case snapshot.OutcomeOK:
		line = fmt.Sprintf("ok      %s: %s", p.URL, detail)
	case snapshot.OutcomeBlocked:
		line = fmt.Sprintf("blocked %s: %s", p.URL, detail)
	default:
		line = fmt.Sprintf("error   %s: %s", p.URL, detail)
	}
	// The line is printed only once the snapshot is committed: "ok" means
	// saved.
	if err := m.st.SaveSnapshot(wctx, &sn.Snapshot); err != nil {
		return "", "", errors.Join(fmt.Errorf("snapshot of %s not saved: %w", p.URL, err), m.st.Release(wctx, p.URL))
	}
	return oc, line, nil
}

// taker is the one polite check of a page, as this process makes it.
func (m *monitor) taker() snapshot.Taker {
	return snapshot.Taker{Guard: m.guard, Tokens: m.tokens, Recheck: robotsRecheck}
}

// watch runs runOnce until ctx ends, sleeping until the next page is due.
// Stopping it (Ctrl-C) is the normal way out and not an error.
func (m *monitor) watch(ctx context.Context, w io.Writer, sleep func(context.Context, time.Duration) error) error {
	for {
		sum, err := m.runOnce(ctx, w)
		if sum.Due > 0 {
			fmt.Fprintln(w, sum)
		}
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		wait := maxWatchSleep
		if next, ok, err := m.st.NextDue(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		} else if ok {
			wait = min(max(next.Sub(m.now()), time.Second), maxWatchSleep)
		}
		if err := sleep(ctx, wait); err != nil {
			return nil
		}
	}
}
