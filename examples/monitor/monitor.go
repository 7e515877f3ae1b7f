package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/examples/internal/cmdline"
	"github.com/politecrawl/polite/examples/monitor/internal/guard"
	"github.com/politecrawl/polite/fetch"
	fetchpage "github.com/politecrawl/polite/fetch/page"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/robots"
)

// monitor takes the snapshots that are due, politely.
type monitor struct {
	st  *store // nil for `check` without -db
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

// publishedToken is the product token of the 2-UAcomBot page.
const publishedToken = "2-UAcomBot"

func newMonitor(st *store, o options, e env) (*monitor, error) {
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
		base:     condTransport{base: base},
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
		rc.Store = robotsStore{m.st}
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
	due, err := m.st.duePages(ctx, m.now())
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

	byURL := make(map[string]page, len(due))
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
			sn := &snapshot{PageURL: p.URL, TakenAt: m.now(), Error: "not checked: " + detail}
			if err := m.st.saveSnapshot(context.WithoutCancel(ctx), sn); err != nil {
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
				if oc == outcomeError {
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
				case oc == outcomeOK:
					sum.OK++
				case oc == outcomeError:
					sum.Errors++
				case oc == outcomeBlocked:
					sum.Blocked++
				case oc == outcomeRobotsWait:
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
func (m *monitor) check(ctx context.Context, rc *robots.Cache, client *fetch.Client, p page) (string, string, error) {
	// Writes must not be cut by Ctrl-C: a taken snapshot is always recorded.
	wctx := context.WithoutCancel(ctx)
	start := m.now()
	if ok, err := m.st.claim(wctx, p.URL, start, start.Add(claimLease)); err != nil {
		return "", "", err
	} else if !ok {
		return outcomeBusy, fmt.Sprintf("skipped %s: being checked by another monitor process", p.URL), nil
	}
	prev, _, err := m.st.lastGood(wctx, p.URL)
	if err != nil {
		return "", "", errors.Join(err, m.st.release(wctx, p.URL))
	}
	sn, interrupted := m.take(ctx, rc, client, p.URL, start, prev)
	if interrupted {
		return "", "", m.st.release(wctx, p.URL)
	}
	if sn.waitUntil != nil {
		detail := sn.waitDetail
		if err := m.st.deferPage(wctx, p.URL, start, *sn.waitUntil, detail); err != nil {
			// Not recorded: say nothing happened, and give the page back
			// rather than leave it claimed for the lease.
			return "", "", errors.Join(err, m.st.release(wctx, p.URL))
		}
		return outcomeRobotsWait, fmt.Sprintf("waiting %s: %s", p.URL, detail), nil
	}
	oc, detail := sn.outcome()
	var line string
	switch oc {
	case outcomeOK:
		line = fmt.Sprintf("ok      %s: %s", p.URL, detail)
	case outcomeBlocked:
		line = fmt.Sprintf("blocked %s: %s", p.URL, detail)
	default:
		line = fmt.Sprintf("error   %s: %s", p.URL, detail)
	}
	// The line is printed only once the snapshot is committed: "ok" means
	// saved.
	if err := m.st.saveSnapshot(wctx, &sn.snapshot); err != nil {
		return "", "", errors.Join(fmt.Errorf("snapshot of %s not saved: %w", p.URL, err), m.st.release(wctx, p.URL))
	}
	return oc, line, nil
}

// taken is one check's result: a snapshot to store, or (waitUntil set) a
// temporary disallow because robots.txt was unreachable.
type taken struct {
	snapshot
	waitUntil  *time.Time
	waitDetail string
	// refused: the address guard refused the page, its robots.txt or a
	// redirect target.
	refused bool
}

// take does one check of pageURL, the same for a scheduled snapshot and the
// free tool: the address guard, robots.txt, then (if allowed) one polite GET,
// conditional on prev's validators. interrupted means ctx ended first and
// nothing should be recorded.
func (m *monitor) take(ctx context.Context, rc *robots.Cache, client *fetch.Client, pageURL string, start time.Time, prev *snapshot) (*taken, bool) {
	t := &taken{snapshot: snapshot{PageURL: pageURL, TakenAt: start}}
	if err := m.guard.CheckURL(ctx, pageURL); err != nil {
		t.Error, t.refused = err.Error(), true
		return t, false
	}
	v, err := rc.CheckAs(ctx, m.tokens, pageURL)
	if err != nil {
		if ctx.Err() != nil {
			return nil, true
		}
		t.Error = err.Error()
		return t, false
	}
	switch v.Outcome {
	case robots.Allowed:
	case robots.Unreachable:
		if errors.Is(v.Err, guard.ErrForbidden) {
			// The dial hook refused robots.txt's address: that is the
			// answer, not a temporary outage.
			t.Error, t.refused = guard.Cause(v.Err).Error(), true
			return t, false
		}
		// A temporary disallow: nothing is fetched, nothing stored as a
		// snapshot, the page stays due and is retried after the re-check.
		retry := v.RecheckAt
		if retry.IsZero() || !retry.After(start) {
			retry = start.Add(robotsRecheck)
		}
		t.waitUntil = &retry
		t.waitDetail = fmt.Sprintf("robots.txt unreachable (%s); re-check after %s", robotsCause(v), fmtShort(retry))
		return t, false
	case robots.Disallowed:
		t.Blocked, t.RobotsRule = true, v.Decision.String()
		return t, false
	default:
		// Unknown: never read as allowed.
		t.Error = "robots.txt: no answer: " + v.String()
		return t, false
	}

	var cond *validators
	if prev != nil && (prev.ETag != "" || prev.LastModified != "") {
		cond = &validators{URL: prev.FinalURL, ETag: prev.ETag, LastModified: prev.LastModified}
	}
	fctx, info := withFetchInfo(ctx, cond)
	res, err := client.Get(fctx, pageURL)
	if err != nil && ctx.Err() != nil {
		return nil, true
	}
	t.snapshot = *snapshotOf(pageURL, start, res, err, info, prev)
	t.refused = errors.Is(err, guard.ErrForbidden)
	return t, false
}

func robotsCause(v robots.Verdict) string {
	if v.Status != 0 {
		return fmt.Sprintf("HTTP %d", v.Status)
	}
	if v.Err != nil {
		return v.Err.Error()
	}
	return "no answer"
}

// snapshotOf turns a fetch result into a snapshot. A redirect into a path
// robots.txt disallows is a blocked snapshot: the page's content was not
// fetched because of robots.txt. A 304 to a conditional GET carries prev's
// fields over and is flagged NotModified. info says whether validators were
// sent (nil: none).
func snapshotOf(pageURL string, at time.Time, res *fetch.Result, err error, info *exchangeInfo, prev *snapshot) *snapshot {
	sn := &snapshot{PageURL: pageURL, TakenAt: at}
	var fe *fetch.Error
	if err != nil && errors.Is(err, fetch.ErrDisallowed) {
		sn.Blocked = true
		sn.RobotsRule = err.Error()
		if errors.As(err, &fe) && fe.Verdict != nil {
			sn.RobotsRule = fe.Verdict.Decision.String() + " (after redirect to " + fe.Verdict.URL + ")"
		}
		return sn
	}
	if err != nil {
		if errors.Is(err, guard.ErrForbidden) {
			sn.Error = fmt.Sprintf("%s: %v", pageURL, guard.Cause(err))
		} else {
			sn.Error = err.Error()
		}
	}
	if res == nil {
		return sn
	}
	sn.Status = res.Status
	sn.FinalURL = res.FinalURL
	// The server's time for the final request, not the waits politeness
	// added (gate, retries, robots.txt).
	sn.ResponseTime = res.ResponseTime()
	for _, h := range res.Redirects {
		sn.Redirects = append(sn.Redirects, hop{URL: h.URL, Status: h.Status, Location: h.Location})
	}
	if err == nil && res.Status == http.StatusNotModified && prev != nil && info != nil && info.sent() {
		// Unchanged: the page is what prev saw; only the check is new.
		carried := *prev
		carried.ID, carried.TakenAt, carried.Changes = 0, at, nil
		carried.Redirects, carried.FinalURL, carried.ResponseTime = sn.Redirects, sn.FinalURL, sn.ResponseTime
		carried.NotModified, carried.BytesSaved = true, prev.BodyBytes
		carried.text, carried.textOK, carried.textErr = "", false, nil
		return &carried
	}
	sn.BodyBytes = int64(len(res.Body))
	if err != nil || res.Status < 200 || res.Status > 299 {
		return sn
	}
	sn.ETag = res.Header.Get("ETag")
	sn.LastModified = res.Header.Get("Last-Modified")
	sn.XRobotsTag = strings.Join(res.Header.Values("X-Robots-Tag"), ", ") // page.XRobotsTag for HTML
	pg, perr := res.Page()
	switch {
	case perr == nil:
		sn.Title = pg.Title
		sn.MetaDescription = pg.MetaDescription
		sn.Canonical = pg.Canonical
		sn.MetaRobots = pg.MetaRobots
		sn.XRobotsTag = pg.XRobotsTag
		if len(pg.H1) > 0 {
			sn.H1 = pg.H1[0]
		}
		for _, a := range pg.Hreflang {
			sn.Hreflang = append(sn.Hreflang, alternate{Hreflang: a.Hreflang, URL: a.URL})
		}
		sn.ContentHash = pg.TextHash
		sn.WordCount = pg.WordCount
		// The text is read in the encoding fetch/page settled on (its
		// charset, BOM, <meta> and sniffing rules), so both agree.
		ct := res.ContentType
		if pg.Encoding != "" {
			ct = "text/html; charset=" + pg.Encoding
		}
		sn.setText(visibleText(res.Body, ct))
		return sn
	case !errors.Is(perr, fetchpage.ErrNotHTML):
		sn.Error = "parse HTML: " + perr.Error()
	}
	// Not HTML: the content hash is of the bytes themselves.
	sum := sha256.Sum256(res.Body)
	sn.ContentHash = hex.EncodeToString(sum[:])
	return sn
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
		if next, ok, err := m.st.nextDue(ctx); err != nil {
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

var _ fetch.Pacer = bothGates{}
