package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/internal/htmlx"
	"github.com/politecrawl/polite/robots"
)

// monitor takes the snapshots that are due, politely.
type monitor struct {
	st     *store
	o      options
	now    func() time.Time
	token  string
	header http.Header
	base   http.RoundTripper
}

func newMonitor(st *store, o options, e env) (*monitor, error) {
	base := e.transport
	if base == nil {
		base = fetch.NewBaseTransport(o.resolve)
	}
	return &monitor{
		st:    st,
		o:     o,
		now:   e.clock(),
		token: robots.ProductToken(o.userAgent),
		// X-AGENT: 2-UA, spelled as the page says: fetch sends header names
		// as written (log parsers that grep for "X-AGENT: 2-UA" are not
		// case-insensitive).
		header: http.Header{"X-AGENT": {"2-UA"}},
		base:   base,
	}, nil
}

func (m *monitor) close() {
	if c, ok := m.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
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

	client := &fetch.Client{
		UserAgent:    m.o.userAgent,
		Header:       m.header,
		RobotsTokens: []string{m.token},
		Timeout:      m.o.timeout,
		Gate:         gate,
		Policy:       backoff.Default(),
		Transport:    m.base,
		Now:          m.now,
	}
	// robots.txt requests go through the same gate and carry the same
	// identity as page requests. The timeout is the transport's, which
	// starts when the gate admits the request, not while it waits its turn.
	rc := &robots.Cache{
		Client:  &http.Client{Transport: client.PoliteTransport()},
		TTL:     robotsTTL,
		Recheck: robotsRecheck,
		Store:   robotsStore{m.st},
		// A store failure only costs a refetch, but the one-hour promise
		// depends on the store: say so.
		OnStoreError: func(err error) { printf("warning: robots_cache: %v\n", err) },
		Now:          m.now,
	}
	client.Robots = rc

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
			printf("error   %s: %s\n", p.URL, sn.Error)
			continue
		}
		byURL[res.URL] = p
	}

	var (
		dbErr error
		wg    sync.WaitGroup
	)
	for range m.o.parallel {
		wg.Go(func() {
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
					printf("%s\n", line)
				}
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
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
	v, err := rc.Check(ctx, m.token, p.URL)
	if err != nil {
		if ctx.Err() != nil {
			return "", "", m.st.release(wctx, p.URL)
		}
		sn := &snapshot{PageURL: p.URL, TakenAt: start, Error: err.Error()}
		return outcomeError, fmt.Sprintf("error   %s: %v", p.URL, err), m.st.saveSnapshot(wctx, sn)
	}
	switch v.Outcome {
	case robots.Unreachable:
		// A temporary disallow: nothing is fetched, nothing stored as a
		// snapshot, the page stays due and is retried after the re-check.
		retry := v.RecheckAt
		if retry.IsZero() || !retry.After(start) {
			retry = start.Add(robotsRecheck)
		}
		detail := fmt.Sprintf("robots.txt unreachable (%s); re-check after %s", robotsCause(v), fmtShort(retry))
		return outcomeRobotsWait, fmt.Sprintf("waiting %s: %s", p.URL, detail), m.st.deferPage(wctx, p.URL, start, retry, detail)
	case robots.Disallowed:
		sn := &snapshot{PageURL: p.URL, TakenAt: start, Blocked: true, RobotsRule: v.Decision.String()}
		return outcomeBlocked, fmt.Sprintf("blocked %s: %s", p.URL, sn.RobotsRule), m.st.saveSnapshot(wctx, sn)
	}

	res, err := client.Get(ctx, p.URL)
	if err != nil && ctx.Err() != nil {
		return "", "", m.st.release(wctx, p.URL)
	}
	sn := snapshotOf(p.URL, start, res, err)
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
	return oc, line, m.st.saveSnapshot(wctx, sn)
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
// fetched because of robots.txt.
func snapshotOf(pageURL string, at time.Time, res *fetch.Result, err error) *snapshot {
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
		sn.Error = err.Error()
	}
	if res == nil {
		return sn
	}
	sn.Status = res.Status
	sn.FinalURL = res.FinalURL
	sn.ResponseTime = res.Total
	for _, h := range res.Redirects {
		sn.Redirects = append(sn.Redirects, hop{URL: h.URL, Status: h.Status, Location: h.Location})
	}
	if err != nil || res.Status < 200 || res.Status > 299 {
		return sn
	}
	sn.XRobotsTag = strings.Join(res.Header.Values("X-Robots-Tag"), ", ")
	if mt := res.MediaType(); mt == "text/html" || mt == "application/xhtml+xml" || mt == "" {
		base, perr := url.Parse(res.FinalURL)
		if perr == nil {
			pg, perr := htmlx.Options{ContentType: res.ContentType}.Parse(bytes.NewReader(res.Body), base)
			if perr == nil {
				sn.Title = pg.Title
				sn.MetaDescription = pg.MetaDescription
				sn.Canonical = pg.Canonical
				sn.MetaRobots = pg.MetaRobots
				if len(pg.H1) > 0 {
					sn.H1 = pg.H1[0]
				}
				for _, a := range pg.Hreflang {
					sn.Hreflang = append(sn.Hreflang, alternate{Hreflang: a.Hreflang, URL: a.URL})
				}
				sn.ContentHash = pg.TextHash
				sn.WordCount = pg.WordCount
				return sn
			}
			sn.Error = "parse HTML: " + perr.Error()
		}
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
