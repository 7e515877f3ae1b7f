package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/politecrawl/polite/examples/internal/cmdline"
	"github.com/politecrawl/polite/robots"
)

// productToken is the robots.txt token of the configured user agent.
func productToken(userAgent string) string { return robots.ProductToken(userAgent) }

// skippedBanner is the message the 2-UAcomBot page promises for a page whose
// latest check robots.txt prevented.
func skippedBanner(token string) string {
	return "Latest check was skipped — robots.txt disallows " + token + " on this path."
}

// change is one field that differs between two consecutive snapshots. For
// the visible text, Text holds the word diff and Old/New a summary.
type change struct {
	Field    string
	Old, New string
	Text     *wordDiff
}

// diffSnapshots lists the SEO fields that differ from a to b, in a fixed
// order. Times that always differ (taken_at, response time) are not fields.
// A change of content is the word diff of the visible texts ("text"); for a
// response that is not HTML, or snapshots stored before texts were, the
// content is compared by size and hash ("content"), never shown as hashes.
func diffSnapshots(a, b *snapshot) []change {
	var out []change
	add := func(field, old, new string) {
		if old != new {
			out = append(out, change{Field: field, Old: old, New: new})
		}
	}
	add("status", statusText(a.Status), statusText(b.Status))
	add("final_url", a.FinalURL, b.FinalURL)
	add("redirects", hopsText(a.Redirects), hopsText(b.Redirects))
	add("title", a.Title, b.Title)
	add("meta_description", a.MetaDescription, b.MetaDescription)
	add("canonical", a.Canonical, b.Canonical)
	add("meta_robots", a.MetaRobots, b.MetaRobots)
	add("x_robots_tag", a.XRobotsTag, b.XRobotsTag)
	add("h1", a.H1, b.H1)
	add("hreflang", hreflangText(a.Hreflang), hreflangText(b.Hreflang))
	if a.ContentHash != b.ContentHash {
		ta, errA := a.Text()
		tb, errB := b.Text()
		switch {
		case errA == nil && errB == nil && (len(a.TextZ) > 0 || len(b.TextZ) > 0) && ta != tb:
			wd := diffWords(ta, tb)
			wd.OldCut, wd.NewCut = a.TextCut, b.TextCut
			out = append(out, change{Field: "text", Old: fmt.Sprintf("%d words", a.WordCount),
				New: fmt.Sprintf("%d words", b.WordCount), Text: &wd})
		case errA == nil && errB == nil && (len(a.TextZ) > 0 || len(b.TextZ) > 0):
			// Same stored text, different hash: the change is past the
			// stored cap.
			out = append(out, change{Field: "text", Old: "", New: "changed after the first " + fmtBytes(maxTextBytes) + " of text"})
		case a.ContentHash != "" || b.ContentHash != "":
			// Not HTML (or stored before texts were): no words to show, only
			// that the bytes changed, and their size when it is known.
			old, new := "", "changed"
			if a.BodyBytes > 0 && b.BodyBytes > 0 {
				old, new = fmtBytes(a.BodyBytes), fmtBytes(b.BodyBytes)
				if old == new {
					new += ", changed"
				}
			}
			out = append(out, change{Field: "content", Old: old, New: new})
		}
	}
	add("word_count", strconv.Itoa(a.WordCount), strconv.Itoa(b.WordCount))
	add("error", a.Error, b.Error)
	return out
}

// changesLine summarises changes in one line for the dashboard.
func changesLine(changes []change) string {
	parts := make([]string, 0, len(changes))
	for _, c := range changes {
		switch {
		case c.Text != nil:
			parts = append(parts, fmt.Sprintf("text +%d −%d words", c.Text.Added, c.Text.Removed))
		case c.Field == "word_count":
			// implied by the text change
		case c.Field == "title" || c.Field == "h1" || c.Field == "status" || c.Field == "canonical":
			parts = append(parts, fmt.Sprintf("%s %s → %s", c.Field, quote(cut(c.Old, 60)), quote(cut(c.New, 60))))
		default:
			parts = append(parts, c.Field)
		}
	}
	return oneLine(strings.Join(parts, "; "))
}

// words prints "1 word" or "n words".
func words(n int) string {
	if n == 1 {
		return "1 word"
	}
	return fmt.Sprintf("%d words", n)
}

func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// fmtBytes prints a byte count for people: 950 B, 6.1 KB, 3.2 MB.
func fmtBytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	case n < 1000*1000*1000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	default:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	}
}

func statusText(s int) string {
	if s == 0 {
		return ""
	}
	return strconv.Itoa(s)
}

func hopsText(hops []hop) string {
	parts := make([]string, len(hops))
	for i, h := range hops {
		parts[i] = fmt.Sprintf("%d %s", h.Status, h.URL)
	}
	return strings.Join(parts, " -> ")
}

func hreflangText(alts []alternate) string {
	parts := make([]string, len(alts))
	for i, a := range alts {
		parts[i] = a.Hreflang + "=" + a.URL
	}
	return strings.Join(parts, " ")
}

// maxValueRunes bounds one value printed by report: a page's title is
// whatever its owner wrote, a report line should stay readable.
const maxValueRunes = 300

// quote prints a remote value safely: quoted, control characters escaped
// (a title cannot move the terminal's cursor), long values cut.
func quote(s string) string {
	if utf8.RuneCountInString(s) > maxValueRunes {
		r := []rune(s)
		return strconv.Quote(string(r[:maxValueRunes])) + "..."
	}
	return strconv.Quote(s)
}

// writeReport prints, per page, the fields that changed between consecutive
// snapshots. Blocked snapshots carry no fields and are skipped, and a page
// whose latest snapshot is blocked is not mentioned at all: the 2-UAcomBot
// page promises that reports do not mention a URL while robots.txt blocks it.
// since > 0 keeps only changes whose newer snapshot is that recent.
func writeReport(ctx context.Context, st *store, w io.Writer, now time.Time, since time.Duration) error {
	var cutoff time.Time
	if since > 0 {
		cutoff = now.Add(-since)
	}
	// Rows stream in page order; one page's changes are held until its last
	// snapshot says whether the page may be mentioned at all.
	var (
		url      string
		prev     *snapshot
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
	err := st.eachSnapshot(ctx, func(cur *snapshot) error {
		if !started || cur.PageURL != url {
			flush()
			url, prev, started = cur.PageURL, nil, true
		}
		blocked = cur.Blocked
		if cur.Blocked {
			return writeErr
		}
		if prev != nil && !cur.TakenAt.Before(cutoff) {
			if changes := diffSnapshots(prev, cur); len(changes) > 0 {
				fmt.Fprintf(&pageOut, "  %s -> %s\n", fmtShort(prev.TakenAt), fmtShort(cur.TakenAt))
				for _, c := range changes {
					if c.Text != nil {
						fmt.Fprintf(&pageOut, "    text: %s added, %d removed\n", words(c.Text.Added), c.Text.Removed)
						fmt.Fprintf(&pageOut, "      %s\n", oneLine(c.Text.plain()))
						continue
					}
					fmt.Fprintf(&pageOut, "    %s: %s -> %s\n", c.Field, quote(c.Old), quote(c.New))
				}
			}
		}
		prev = cur
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

// fmtShort prints a time for people: UTC, to the second.
func fmtShort(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

// writeStatus prints one line per tracked page: last check, next due, and
// the outcome of the last check.
func writeStatus(ctx context.Context, st *store, w io.Writer, now time.Time, token string) error {
	pages, err := st.pages(ctx)
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
			last = fmtShort(p.LastAttempt)
		}
		next := fmtShort(p.due())
		if !p.due().After(now) {
			next = "now"
		}
		var outcome string
		switch p.LastOutcome {
		case "":
			outcome = "not checked yet"
		case outcomeOK:
			outcome = "ok: " + p.LastDetail
		case outcomeError:
			outcome = "error: " + p.LastDetail
		case outcomeBlocked:
			outcome = skippedBanner(token)
			if i := strings.Index(p.LastDetail, " (after redirect to "); i >= 0 {
				// The page redirects into a disallowed path: say so, as
				// the dashboard does.
				outcome += " " + strings.TrimSpace(p.LastDetail[i:]) + ": " + p.LastDetail[:i]
			}
		case outcomeRobotsWait:
			outcome = "waiting: " + p.LastDetail
		default:
			outcome = p.LastOutcome + ": " + p.LastDetail
		}
		fmt.Fprintf(w, "%s  last check: %s  next due: %s  %s\n", cmdline.Safe(p.URL), last, next, oneLine(outcome))
	}
	t, err := st.totals(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, totalsLine(t))
	return nil
}

// totalsLine is the summary under status and on the dashboard.
func totalsLine(t totals) string {
	return fmt.Sprintf("%d pages tracked, %d snapshots; conditional GET: %d answered 304 not modified, %s not downloaded again",
		t.Pages, t.Snapshots, t.NotModified, fmtBytes(t.BytesSaved))
}

// oneLine keeps a stored message on one line of at most maxValueRunes,
// terminal-safe: line breaks become spaces, every other control or format
// character (ESC, C1 controls, bidi overrides) a visible escape.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) > maxValueRunes {
		s = string([]rune(s)[:maxValueRunes]) + "..."
	}
	return cmdline.Safe(s)
}
