// Package snapshot is one polite check of one page and its record: Taker
// checks the address guard, asks robots.txt and, when allowed, makes one
// (conditional) GET through the client it is given; FromFetch turns the
// response into a Snapshot (SEO fields, redirect chain, visible text,
// validators, or the robots.txt rule that blocked it); Classify is the
// monitor's one comparison of two snapshots (changes.Compare's kinds and
// severities), with the one-line summary the dashboard shows.
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
// Classify compares field by field: not blocked by robots.txt, not a bot-protection
// challenge.
func (sn *Snapshot) Comparable() bool { return !sn.Blocked && sn.BotProtection == "" }

// Change is one classified change between two snapshots of a page
// (changes.Compare: its kind and severity, the column and the old and new
// values). For a text change with both texts stored, Text holds the word
// diff to show.
type Change struct {
	changes.Change
	Text *pagetext.WordDiff
}

// Classify is the one comparison of the monitor: the changes sn brings to
// the page's history. last is the snapshot just before sn, of any kind;
// base is the latest comparable snapshot before sn (nil: none), the
// baseline of the SEO fields, so a bot-protection challenge or a robots.txt
// block in between never reads as a content change. Entering or leaving a
// block is reported as its own kind. nil last (the first snapshot) has no
// changes.
func Classify(last, base, sn *Snapshot, o changes.Options) []Change {
	if last == nil {
		return nil
	}
	next := sn.compared()
	var out []changes.Change
	if !sn.Comparable() || !last.Comparable() {
		out = changes.Compare(last.compared(), next, o)
	}
	if sn.Comparable() && base != nil {
		out = append(out, changes.Compare(base.compared(), next, o)...)
	}
	res := make([]Change, 0, len(out))
	for _, c := range out {
		ch := Change{Change: c}
		if c.Kind == changes.KindText && c.Text != nil && base != nil {
			ta, errA := base.Text()
			tb, errB := sn.Text()
			if errA == nil && errB == nil {
				wd := pagetext.Diff(ta, tb)
				wd.OldCut, wd.NewCut = base.TextCut, sn.TextCut
				ch.Text = &wd
			}
		}
		res = append(res, ch)
	}
	return res
}

// compared is sn as changes.Compare reads it.
func (sn *Snapshot) compared() *changes.Snapshot {
	c := &changes.Snapshot{
		Blocked: sn.Blocked, RobotsRule: sn.RobotsRule, BotProtection: sn.BotProtection,
		Status: sn.Status, Error: sn.Error, FinalURL: sn.FinalURL, Redirects: sn.Redirects,
		Title: sn.Title, MetaDescription: sn.MetaDescription, Canonical: sn.Canonical,
		MetaRobots: sn.MetaRobots, XRobotsTag: sn.XRobotsTag, H1: sn.H1, Hreflang: sn.Hreflang,
		ContentHash: sn.ContentHash,
	}
	if len(sn.TextZ) > 0 {
		if t, err := sn.Text(); err == nil {
			c.Text, c.HasText = t, true
		}
	}
	return c
}

// Kinds lists the kinds of changes, in order, without repeats: what
// snapshots.changes stores.
func Kinds(cs []Change) []string {
	var out []string
	for _, c := range cs {
		if k := string(c.Kind); len(out) == 0 || out[len(out)-1] != k {
			out = append(out, k)
		}
	}
	return out
}

// ChangesLine summarises changes in one line for the dashboard: the
// highest severity, then each kind with its values.
func ChangesLine(cs []Change) string {
	if len(cs) == 0 {
		return ""
	}
	plain := make([]changes.Change, len(cs))
	for i, c := range cs {
		plain[i] = c.Change
	}
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		switch {
		case c.Text != nil:
			parts = append(parts, fmt.Sprintf("text +%d −%d words", c.Text.Added, c.Text.Removed))
		case c.Kind == changes.KindText:
			parts = append(parts, "content changed")
		default:
			parts = append(parts, fmt.Sprintf("%s %s → %s", c.Kind, Quote(cut(c.Old, 60)), Quote(cut(c.New, 60))))
		}
	}
	return OneLine("[" + changes.Max(plain).String() + "] " + strings.Join(parts, "; "))
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
