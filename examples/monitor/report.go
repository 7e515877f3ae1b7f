package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/politecrawl/polite/robots"
)

// productToken is the robots.txt token of the configured user agent.
func productToken(userAgent string) string { return robots.ProductToken(userAgent) }

// skippedBanner is the message the 2-UAcomBot page promises for a page whose
// latest check robots.txt prevented.
func skippedBanner(token string) string {
	return "Latest check was skipped — robots.txt disallows " + token + " on this path."
}

// change is one field that differs between two consecutive snapshots.
type change struct {
	Field    string
	Old, New string
}

// diffSnapshots lists the SEO fields that differ from a to b, in a fixed
// order. Times that always differ (taken_at, response time) are not fields.
func diffSnapshots(a, b *snapshot) []change {
	var out []change
	add := func(field, old, new string) {
		if old != new {
			out = append(out, change{field, old, new})
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
	add("content_hash", a.ContentHash, b.ContentHash)
	add("word_count", strconv.Itoa(a.WordCount), strconv.Itoa(b.WordCount))
	add("error", a.Error, b.Error)
	return out
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
			_, writeErr = fmt.Fprintf(w, "%s\n%s", url, pageOut.String())
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
		case outcomeRobotsWait:
			outcome = "waiting: " + p.LastDetail
		default:
			outcome = p.LastOutcome + ": " + p.LastDetail
		}
		fmt.Fprintf(w, "%s  last check: %s  next due: %s  %s\n", p.URL, last, next, oneLine(outcome))
	}
	return nil
}

// oneLine keeps a stored message on one line of at most maxValueRunes.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) > maxValueRunes {
		s = string([]rune(s)[:maxValueRunes]) + "..."
	}
	return s
}
