// Package snapshot is one polite check of one page and its record: Taker
// checks the address guard, asks robots.txt and, when allowed, makes one
// (conditional) GET through the client it is given; FromFetch turns the
// response into a Snapshot (SEO fields, redirect chain, visible text,
// validators, or the robots.txt rule that blocked it); Diff lists the fields
// that changed between two snapshots, with the one-line summary the
// dashboard shows.
//
// It never opens the database or prints, and never decides what is due: the
// store persists snapshots, the run schedules them, the report and the web
// pages read them.
package snapshot

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/politecrawl/polite/examples/internal/cmdline"
	"github.com/politecrawl/polite/examples/monitor/internal/changes"
	"github.com/politecrawl/polite/examples/monitor/internal/pagetext"
)

// Outcomes of one check of a page, stored in pages.last_outcome.
const (
	OutcomeOK         = "ok"                 // fetched, snapshot stored
	OutcomeError      = "error"              // fetch failed, snapshot row stored with the error
	OutcomeBlocked    = "blocked"            // robots.txt disallows; snapshot row with blocked_by_robots = 1
	OutcomeRobotsWait = "robots-unreachable" // robots.txt 5xx/unreachable; no snapshot, retried later
	// OutcomeBotProtection: the response was a bot-protection challenge
	// (fetch.Result.Challenge), not the page; snapshot row with
	// bot_protection set and no SEO fields, never compared.
	OutcomeBotProtection = "bot-protection"
)

// Hop is one redirect of a snapshot's chain: the alert groundwork's type
// (package changes), so both read the same snapshots.redirects JSON.
type Hop = changes.Hop

// Alternate is one hreflang link of a snapshot (snapshots.hreflang).
type Alternate = changes.Alternate

// Snapshot is one row of snapshots. A blocked snapshot carries no SEO fields.
type Snapshot struct {
	ID         int64
	PageURL    string
	TakenAt    time.Time
	Blocked    bool
	RobotsRule string // why it was blocked, e.g. `disallowed by "Disallow: /"`
	// BotProtection, when set, is "vendor, signal" of the bot-protection
	// challenge that answered instead of the page (fetch.Challenge): the
	// snapshot has no SEO fields and is never compared, so the previous
	// good snapshot stays the baseline (the field changes.Snapshot has).
	BotProtection   string
	Status          int // 0: no response; a 304 keeps the 200 it confirms (NotModified says so)
	FinalURL        string
	Redirects       []Hop
	Title           string
	MetaDescription string
	Canonical       string
	MetaRobots      string
	XRobotsTag      string
	H1              string
	Hreflang        []Alternate
	ContentHash     string
	WordCount       int
	ResponseTime    time.Duration // the server's time: first byte plus body of the final request
	Error           string

	TextZ        []byte // visible text, deflate (compressText); nil: none stored
	TextCut      bool   // the text was cut at maxTextBytes
	ETag         string // validators of the 200 response (carried over by a 304)
	LastModified string
	NotModified  bool     // the server answered 304 to a conditional GET
	BodyBytes    int64    // body size of the 200 (carried over by a 304)
	BytesSaved   int64    // NotModified: the body the server did not send again
	Changes      []string // fields changed since the previous snapshot (set by saveSnapshot)

	text    string
	textErr error
	textOK  bool
}

// ResetText forgets the decoded text (a copy made for a new snapshot
// decodes its own TextZ).
func (sn *Snapshot) ResetText() { sn.text, sn.textOK, sn.textErr = "", false, nil }

// Text returns the stored visible text.
func (sn *Snapshot) Text() (string, error) {
	if !sn.textOK {
		sn.text, sn.textErr = pagetext.Decompress(sn.TextZ)
		sn.textOK = true
	}
	return sn.text, sn.textErr
}

// SetText stores t (already capped) compressed.
func (sn *Snapshot) SetText(t string, cut bool) {
	sn.TextZ, sn.TextCut = pagetext.Compress(t), cut
	sn.text, sn.textErr, sn.textOK = t, nil, true
}

// Outcome classifies a stored snapshot for pages.last_outcome. A 5xx is an
// error of the site, not a successful check.
func (sn *Snapshot) Outcome() (outcome, detail string) {
	switch {
	case sn.Blocked:
		return OutcomeBlocked, sn.RobotsRule
	case sn.BotProtection != "":
		return OutcomeBotProtection, sn.BotBanner()
	case sn.Error != "":
		return OutcomeError, sn.Error
	case sn.Status >= 500:
		return OutcomeError, fmt.Sprintf("HTTP %d (server error)", sn.Status)
	case sn.NotModified:
		return OutcomeOK, fmt.Sprintf("HTTP 304 not modified (%s saved)", FmtBytes(sn.BytesSaved))
	default:
		return OutcomeOK, fmt.Sprintf("HTTP %d", sn.Status)
	}
}

// BotBanner is what the dashboard, status, report and the free tool say of
// a snapshot answered by bot protection.
func (sn *Snapshot) BotBanner() string {
	return "blocked by bot protection (" + sn.BotProtection + ")"
}

// Comparable reports whether sn is a snapshot of the page's content that
// Diff may compare: not blocked by robots.txt, not a bot-protection
// challenge.
func (sn *Snapshot) Comparable() bool { return !sn.Blocked && sn.BotProtection == "" }

// Change is one field that differs between two consecutive snapshots. For
// the visible text, Text holds the word diff and Old/New a summary.
type Change struct {
	Field    string
	Old, New string
	Text     *pagetext.WordDiff
}

// Diff lists the SEO fields that differ from a to b, in a fixed
// order. Times that always differ (taken_at, response time) are not fields.
// A change of content is the word diff of the visible texts ("text"); for a
// response that is not HTML, or snapshots stored before texts were, the
// content is compared by size and hash ("content"), never shown as hashes.
func Diff(a, b *Snapshot) []Change {
	var out []Change
	add := func(field, old, new string) {
		if old != new {
			out = append(out, Change{Field: field, Old: old, New: new})
		}
	}
	add("status", statusText(a.Status), statusText(b.Status))
	add("final_url", a.FinalURL, b.FinalURL)
	add("redirects", HopsText(a.Redirects), HopsText(b.Redirects))
	add("title", a.Title, b.Title)
	add("meta_description", a.MetaDescription, b.MetaDescription)
	add("canonical", a.Canonical, b.Canonical)
	add("meta_robots", a.MetaRobots, b.MetaRobots)
	add("x_robots_tag", a.XRobotsTag, b.XRobotsTag)
	add("h1", a.H1, b.H1)
	add("hreflang", HreflangText(a.Hreflang), HreflangText(b.Hreflang))
	if a.ContentHash != b.ContentHash {
		ta, errA := a.Text()
		tb, errB := b.Text()
		switch {
		case errA == nil && errB == nil && (len(a.TextZ) > 0 || len(b.TextZ) > 0) && ta != tb:
			wd := pagetext.Diff(ta, tb)
			wd.OldCut, wd.NewCut = a.TextCut, b.TextCut
			out = append(out, Change{Field: "text", Old: fmt.Sprintf("%d words", a.WordCount),
				New: fmt.Sprintf("%d words", b.WordCount), Text: &wd})
		case errA == nil && errB == nil && (len(a.TextZ) > 0 || len(b.TextZ) > 0):
			// Same stored text, different hash: the change is past the
			// stored cap.
			out = append(out, Change{Field: "text", Old: "", New: "changed after the first " + FmtBytes(pagetext.MaxBytes) + " of text"})
		case a.ContentHash != "" || b.ContentHash != "":
			// Not HTML (or stored before texts were): no words to show, only
			// that the bytes changed, and their size when it is known.
			old, new := "", "changed"
			if a.BodyBytes > 0 && b.BodyBytes > 0 {
				old, new = FmtBytes(a.BodyBytes), FmtBytes(b.BodyBytes)
				if old == new {
					new += ", changed"
				}
			}
			out = append(out, Change{Field: "content", Old: old, New: new})
		}
	}
	add("word_count", strconv.Itoa(a.WordCount), strconv.Itoa(b.WordCount))
	add("error", a.Error, b.Error)
	return out
}

// ChangesLine summarises changes in one line for the dashboard.
func ChangesLine(changes []Change) string {
	parts := make([]string, 0, len(changes))
	for _, c := range changes {
		switch {
		case c.Text != nil:
			parts = append(parts, fmt.Sprintf("text +%d −%d words", c.Text.Added, c.Text.Removed))
		case c.Field == "word_count":
			// implied by the text change
		case c.Field == "title" || c.Field == "h1" || c.Field == "status" || c.Field == "canonical":
			parts = append(parts, fmt.Sprintf("%s %s → %s", c.Field, Quote(cut(c.Old, 60)), Quote(cut(c.New, 60))))
		default:
			parts = append(parts, c.Field)
		}
	}
	return OneLine(strings.Join(parts, "; "))
}

// Words prints "1 word" or "n words".
func Words(n int) string {
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

// FmtBytes prints a byte count for people: 950 B, 6.1 KB, 3.2 MB.
func FmtBytes(n int64) string {
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

// HopsText writes a redirect chain on one line: "301 URL -> 302 URL".
func HopsText(hops []Hop) string {
	parts := make([]string, len(hops))
	for i, h := range hops {
		parts[i] = fmt.Sprintf("%d %s", h.Status, h.URL)
	}
	return strings.Join(parts, " -> ")
}

// HreflangText writes hreflang links on one line: "de=URL fr=URL".
func HreflangText(alts []Alternate) string {
	parts := make([]string, len(alts))
	for i, a := range alts {
		parts[i] = a.Hreflang + "=" + a.URL
	}
	return strings.Join(parts, " ")
}

// MaxValueRunes bounds one value printed by report: a page's title is
// whatever its owner wrote, a report line should stay readable.
const MaxValueRunes = 300

// Quote prints a remote value safely: quoted, control characters escaped
// (a title cannot move the terminal's cursor), long values cut.
func Quote(s string) string {
	if utf8.RuneCountInString(s) > MaxValueRunes {
		r := []rune(s)
		return strconv.Quote(string(r[:MaxValueRunes])) + "..."
	}
	return strconv.Quote(s)
}

// OneLine keeps a stored message on one line of at most maxValueRunes,
// terminal-safe: line breaks become spaces, every other control or format
// character (ESC, C1 controls, bidi overrides) a visible escape.
func OneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) > MaxValueRunes {
		s = string([]rune(s)[:MaxValueRunes]) + "..."
	}
	return cmdline.Safe(s)
}
