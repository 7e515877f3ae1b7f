// Package report is what the CLI prints from the database: `monitor report`
// (per page, the classified changes between consecutive snapshots and the
// word diff of the text, never a page while robots.txt blocks it) and
// `monitor status` (one line per page, then the totals).
//
// It reads through the store and writes text; it never fetches or writes
// the database.
package report

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/politecrawl/polite/examples/internal/cmdline"
	"github.com/politecrawl/polite/examples/monitor/internal/card"
	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
	"github.com/politecrawl/polite/examples/monitor/internal/store"
	"github.com/politecrawl/polite/robots"
)

// ProductToken is the robots.txt token of the configured user agent.
func ProductToken(userAgent string) string { return robots.ProductToken(userAgent) }

// Changes prints, per page, the classified changes between consecutive
// snapshots (snapshot.Classify: kind, severity, old and new value). Blocked snapshots carry no fields and are skipped; a check
// answered by bot protection is listed as such and never compared. A page
// whose latest snapshot is blocked is not mentioned at all: the 2-UAcomBot
// page promises that reports do not mention a URL while robots.txt blocks it.
// since > 0 keeps only changes whose newer snapshot is that recent.
func Changes(ctx context.Context, st *store.Store, w io.Writer, now time.Time, since time.Duration) error {
	var cutoff time.Time
	if since > 0 {
		cutoff = now.Add(-since)
	}
	// Rows stream in page order; one page's changes are held until its last
	// snapshot says whether the page may be mentioned at all.
	var (
		url      string
		last     *snapshot.Snapshot // the page's previous snapshot, of any kind
		base     *snapshot.Snapshot // its latest comparable one
		opts     = st.CompareOptions()
		blocked  bool // the page's latest snapshot so far is blocked
		pageOut  strings.Builder
		printed  int
		started  bool
		writeErr error
	)
	flush := func() {
		if started && !blocked && pageOut.Len() > 0 && writeErr == nil {
			_, writeErr = fmt.Fprintf(w, "%s\n%s", cmdline.Safe(url), pageOut.String())
			printed++
		}
		pageOut.Reset()
	}
	err := st.EachSnapshot(ctx, func(cur *snapshot.Snapshot) error {
		if !started || cur.PageURL != url {
			flush()
			url, last, base, started = cur.PageURL, nil, nil, true
		}
		blocked = cur.Blocked
		if cur.BotProtection != "" && !cur.TakenAt.Before(cutoff) {
			// A challenge, not the page: never compared, and the last
			// good snapshot stays the baseline of the next comparison.
			fmt.Fprintf(&pageOut, "  %s: %s\n", snapshot.When(cur.TakenAt), snapshot.OneLine(cur.BotBanner()))
		}
		if cur.Comparable() && last != nil && !cur.TakenAt.Before(cutoff) {
			if changes := snapshot.Classify(last, base, cur, opts); len(changes) > 0 {
				from := last
				if base != nil {
					from = base // the snapshot the fields are compared with
				}
				fmt.Fprintf(&pageOut, "  %s -> %s\n", snapshot.When(from.TakenAt), snapshot.When(cur.TakenAt))
				for _, c := range changes {
					if c.Text != nil {
						fmt.Fprintf(&pageOut, "    %s (%s): %s added, %d removed\n", c.Kind, c.Severity, snapshot.Words(c.Text.Added), c.Text.Removed)
						fmt.Fprintf(&pageOut, "      %s\n", snapshot.OneLine(c.Text.Plain()))
						continue
					}
					fmt.Fprintf(&pageOut, "    %s (%s): %s -> %s\n", c.Kind, c.Severity, snapshot.Quote(c.Old), snapshot.Quote(c.New))
				}
			}
		}
		last = cur
		if cur.Comparable() {
			base = cur
		}
		return writeErr
	})
	if err != nil {
		return err
	}
	flush()
	if writeErr != nil {
		return writeErr
	}
	if printed == 0 {
		fmt.Fprintln(w, "no changes")
	}
	return nil
}

// Status prints one line per tracked page: last check, next due, and
// the outcome of the last check.
func Status(ctx context.Context, st *store.Store, w io.Writer, now time.Time, token string) error {
	pages, err := st.Pages(ctx)
	if err != nil {
		return err
	}
	if len(pages) == 0 {
		fmt.Fprintln(w, "no pages tracked")
		return nil
	}
	for _, p := range pages {
		last := "never"
		if !p.LastAttempt.IsZero() {
			last = snapshot.When(p.LastAttempt)
		}
		next := snapshot.When(p.Due())
		if !p.Due().After(now) {
			next = "now"
		}
		var outcome string
		switch p.LastOutcome {
		case "":
			outcome = "not checked yet"
		case snapshot.OutcomeOK:
			outcome = "ok: " + p.LastDetail
		case snapshot.OutcomeError:
			outcome = "error: " + p.LastDetail
		case snapshot.OutcomeBlocked:
			outcome = card.Banner(token)
			if i := strings.Index(p.LastDetail, " (after redirect to "); i >= 0 {
				// The page redirects into a disallowed path: say so, as
				// the dashboard does.
				outcome += " " + strings.TrimSpace(p.LastDetail[i:]) + ": " + p.LastDetail[:i]
			}
		case snapshot.OutcomeRobotsWait:
			outcome = "waiting: " + p.LastDetail
		case snapshot.OutcomeBotProtection:
			outcome = p.LastDetail // blocked by bot protection (vendor, signal)
		default:
			outcome = p.LastOutcome + ": " + p.LastDetail
		}
		var change string
		if p.LastChange != "" {
			// The classified change: "[critical] noindex_added ...".
			change = "  last change " + snapshot.When(p.LastChanged) + ": " + snapshot.OneLine(p.LastChange)
		}
		fmt.Fprintf(w, "%s  last check: %s  next due: %s  %s%s\n", cmdline.Safe(p.URL), last, next, snapshot.OneLine(outcome), change)
	}
	t, err := st.Totals(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, TotalsLine(t))
	return nil
}

// TotalsLine is the summary under status and on the dashboard.
func TotalsLine(t store.Totals) string {
	return fmt.Sprintf("%d pages tracked, %d snapshots; conditional GET: %d answered 304 not modified, %s not downloaded again",
		t.Pages, t.Snapshots, t.NotModified, snapshot.FmtBytes(t.BytesSaved))
}
