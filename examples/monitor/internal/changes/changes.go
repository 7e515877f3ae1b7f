// Package changes classifies what changed between two snapshots of one page
// into the kinds of change an SEO cares about, each with a severity, and
// filters them by kind and severity for alerts.
//
// The model: a Snapshot is the handful of fields the monitor stores per check
// (the columns of its snapshots table); Compare(prev, next) returns the
// changes from prev to next, in a fixed order. A snapshot blocked by
// robots.txt or by bot protection has no fields, so only the transition into
// or out of the block is reported: bot protection is never a content change.
// Everything here is a pure function of its arguments.
//
// This package must not do I/O, read the database or know about channels:
// the monitor's store feeds it rows and the alert package delivers what it
// returns.
package changes

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Hop is one response of a redirect chain (snapshots.redirects).
type Hop struct {
	URL      string `json:"url"`
	Status   int    `json:"status"`
	Location string `json:"location,omitempty"`
}

// Alternate is one hreflang link (snapshots.hreflang).
type Alternate struct {
	Hreflang string `json:"hreflang"`
	URL      string `json:"url"`
}

// Snapshot is what Compare needs of one check of a page. The fields mirror
// the monitor's snapshots table; a zero field is an absent one.
type Snapshot struct {
	// Blocked is blocked_by_robots: robots.txt disallowed the page, nothing
	// was fetched and every SEO field is empty. RobotsRule is the deciding
	// rule.
	Blocked    bool
	RobotsRule string
	// BotProtection, when not empty, says the response was a bot-protection
	// challenge (fetch's classification, e.g. "cloudflare challenge"), not
	// the page: its fields are not the page's and are never compared.
	BotProtection string

	Status          int    // HTTP status; 0: no response (Error says why)
	Error           string // why the check failed
	FinalURL        string // last URL of the redirect chain
	Redirects       []Hop  // the hops before FinalURL; empty: no redirect
	Title           string
	MetaDescription string
	Canonical       string
	MetaRobots      string
	XRobotsTag      string
	H1              string
	Hreflang        []Alternate

	// ContentHash identifies the content (the visible text, or the bytes of
	// a non-HTML body). Text is the visible text, one line per block, as
	// compared (after any selector and ignore rules); HasText says Text is
	// known, so a snapshot stored without text is told apart from an empty
	// page.
	ContentHash string
	Text        string
	HasText     bool
}

// Kind is a kind of change. Its string is stable: it is stored in alert
// settings and shown to users.
type Kind string

// The change kinds.
const (
	KindStatus           Kind = "status"            // HTTP status (200 → 404, 200 → 301) or the error of a failed check
	KindRedirect         Kind = "redirect"          // where the page redirects to
	KindTitle            Kind = "title"             // <title>
	KindMetaDescription  Kind = "meta_description"  // <meta name=description>
	KindCanonical        Kind = "canonical"         // <link rel=canonical>
	KindNoindexAdded     Kind = "noindex_added"     // noindex (or none) appeared in meta robots or X-Robots-Tag
	KindNoindexRemoved   Kind = "noindex_removed"   // noindex disappeared
	KindRobotsDirectives Kind = "robots_directives" // meta robots or X-Robots-Tag changed, noindex as it was
	KindH1               Kind = "h1"                // first <h1>
	KindHreflang         Kind = "hreflang"          // the set of hreflang alternates
	KindRobotsBlocked    Kind = "robots_blocked"    // robots.txt newly disallows the page
	KindRobotsUnblocked  Kind = "robots_unblocked"  // robots.txt allows the page again
	KindText             Kind = "text"              // visible text (or non-HTML content) beyond the threshold
	KindBotProtection    Kind = "bot_protection"    // the check hit a bot-protection challenge
	KindBotProtectionEnd Kind = "bot_protection_end"
)

// Kinds lists every kind, in the order Compare reports them.
var Kinds = []Kind{
	KindRobotsBlocked, KindRobotsUnblocked, KindBotProtection, KindBotProtectionEnd,
	KindStatus, KindRedirect, KindNoindexAdded, KindNoindexRemoved, KindRobotsDirectives,
	KindCanonical, KindTitle, KindMetaDescription, KindH1, KindHreflang, KindText,
}

// ParseKind reads a kind as written on the command line.
func ParseKind(s string) (Kind, error) {
	k := Kind(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(Kinds, k) {
		return k, nil
	}
	return "", fmt.Errorf("unknown change kind %q (one of %s)", s, kindList())
}

func kindList() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// Severity orders changes by how urgently a person should look.
type Severity int

// The severities, lowest first.
const (
	Info Severity = iota
	Low
	Medium
	High
	Critical
)

var severityNames = [...]string{"info", "low", "medium", "high", "critical"}

// String returns the severity's name.
func (s Severity) String() string {
	if s >= Info && s <= Critical {
		return severityNames[s]
	}
	return "severity(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText writes the severity's name.
func (s Severity) MarshalText() ([]byte, error) {
	if s < Info || s > Critical {
		return nil, fmt.Errorf("invalid severity %d", int(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads a severity's name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err == nil {
		*s = v
	}
	return err
}

// ParseSeverity reads a severity's name (info, low, medium, high, critical).
func ParseSeverity(s string) (Severity, error) {
	i := slices.Index(severityNames[:], strings.ToLower(strings.TrimSpace(s)))
	if i < 0 {
		return 0, fmt.Errorf("unknown severity %q (one of %s)", s, strings.Join(severityNames[:], ", "))
	}
	return Severity(i), nil
}

// DefaultSeverity is the severity of each kind unless Options say otherwise.
// A noindex appearing is the highest: it takes the page out of search.
var DefaultSeverity = map[Kind]Severity{
	KindNoindexAdded:     Critical,
	KindRobotsBlocked:    High,
	KindStatus:           Medium, // High when the page stops answering 2xx/3xx: see Compare
	KindCanonical:        High,
	KindRedirect:         Medium,
	KindNoindexRemoved:   Medium,
	KindRobotsUnblocked:  Medium,
	KindTitle:            Medium,
	KindRobotsDirectives: Low,
	KindMetaDescription:  Low,
	KindH1:               Low,
	KindHreflang:         Low,
	KindText:             Low,
	KindBotProtection:    Info,
	KindBotProtectionEnd: Info,
}

// TextDelta counts the words of a text change. Words are compared as
// multisets: a word moved elsewhere is no change, a word replaced is one
// removed and one added.
type TextDelta struct {
	Added, Removed int
	// Percent is the share of changed words, 100 × (Added+Removed) /
	// (old words + new words): 0 for the same words, 100 for texts with no
	// word in common, and the same in both directions.
	Percent  float64
	OldWords int
	NewWords int
}

// Change is one classified change from one snapshot to the next.
type Change struct {
	Kind     Kind
	Severity Severity
	Field    string     // the snapshots column that changed (meta_robots, x_robots_tag, ...)
	Old, New string     // the values, as a person reads them
	Text     *TextDelta // KindText of a page with text: the word counts
}

// TextThreshold says how large a text change must be to count. A zero field
// sets no bound; a change is reported when it reaches every bound set, and
// with none set, when any word changed.
type TextThreshold struct {
	Words   int     // at least this many words added plus removed
	Percent float64 // at least this share of words changed (see TextDelta.Percent)
}

// Options tune Compare. The zero value reports every change at its default
// severity.
type Options struct {
	Text     TextThreshold
	Severity map[Kind]Severity // overrides DefaultSeverity per kind
}

func (o *Options) severity(k Kind, def Severity) Severity {
	if s, ok := o.Severity[k]; ok {
		return s
	}
	return def
}

// Compare returns the changes from prev to next, in the order of Kinds; nil
// prev (a page's first snapshot) has none.
//
// prev should be the latest earlier snapshot not blocked by bot protection:
// a challenge page says nothing about the page, so the monitor compares the
// next real response with the last real one. When prev is blocked (robots.txt
// or bot protection) and next is not, only the end of the block is reported;
// a caller that wants the fields compared across the block compares next with
// the last unblocked snapshot as well.
func Compare(prev, next *Snapshot, o Options) []Change {
	if prev == nil || next == nil {
		return nil
	}
	var out []Change
	add := func(k Kind, sev Severity, field, old, new string) {
		out = append(out, Change{Kind: k, Severity: o.severity(k, sev), Field: field, Old: old, New: new})
	}
	def := func(k Kind) Severity { return DefaultSeverity[k] }
	switch {
	case next.Blocked && !prev.Blocked:
		add(KindRobotsBlocked, def(KindRobotsBlocked), "blocked_by_robots", "allowed", blockedText(next))
		return out
	case next.Blocked:
		return nil
	case prev.Blocked:
		add(KindRobotsUnblocked, def(KindRobotsUnblocked), "blocked_by_robots", blockedText(prev), "allowed")
		return out
	case next.BotProtection != "" && prev.BotProtection == "":
		add(KindBotProtection, def(KindBotProtection), "bot_protection", "", next.BotProtection)
		return out
	case next.BotProtection != "":
		return nil
	case prev.BotProtection != "":
		add(KindBotProtectionEnd, def(KindBotProtectionEnd), "bot_protection", prev.BotProtection, "")
		return out
	}

	if a, b := StatusText(prev), StatusText(next); a != b {
		sev := def(KindStatus)
		if answers(prev.Status) && !answers(next.Status) {
			sev = High
		}
		add(KindStatus, sev, "status", a, b)
	}
	if a, b := redirectTarget(prev), redirectTarget(next); a != b {
		add(KindRedirect, def(KindRedirect), "final_url", orNone(a, "(no redirect)"), orNone(b, "(no redirect)"))
	}
	robotsChanges(prev, next, add)
	if prev.Canonical != next.Canonical {
		add(KindCanonical, def(KindCanonical), "canonical", prev.Canonical, next.Canonical)
	}
	if prev.Title != next.Title {
		add(KindTitle, def(KindTitle), "title", prev.Title, next.Title)
	}
	if prev.MetaDescription != next.MetaDescription {
		add(KindMetaDescription, def(KindMetaDescription), "meta_description", prev.MetaDescription, next.MetaDescription)
	}
	if prev.H1 != next.H1 {
		add(KindH1, def(KindH1), "h1", prev.H1, next.H1)
	}
	if a, b := HreflangText(prev.Hreflang), HreflangText(next.Hreflang); a != b {
		add(KindHreflang, def(KindHreflang), "hreflang", a, b)
	}
	if c, ok := textChange(prev, next, o); ok {
		c.Severity = o.severity(KindText, def(KindText))
		out = append(out, c)
	}
	return out
}

// answers reports whether a status is a working page (2xx, 3xx, 304).
func answers(status int) bool { return status >= 200 && status < 400 }

func blockedText(s *Snapshot) string {
	if s.RobotsRule != "" {
		return "blocked by robots.txt: " + s.RobotsRule
	}
	return "blocked by robots.txt"
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

// StatusText is a snapshot's status as a person reads it: "200", or
// "no response: <error>".
func StatusText(s *Snapshot) string {
	if s.Status == 0 {
		if s.Error != "" {
			return "no response: " + s.Error
		}
		return "no response"
	}
	return strconv.Itoa(s.Status)
}

// redirectTarget is where the page redirects to, "" when it does not.
func redirectTarget(s *Snapshot) string {
	if len(s.Redirects) == 0 {
		return ""
	}
	return s.FinalURL
}

// HreflangText is an hreflang set in a canonical order, "de=URL, en=URL":
// equal sets give equal texts whatever their order on the page.
func HreflangText(alts []Alternate) string {
	parts := make([]string, 0, len(alts))
	for _, a := range alts {
		parts = append(parts, strings.ToLower(strings.TrimSpace(a.Hreflang))+"="+strings.TrimSpace(a.URL))
	}
	slices.Sort(parts)
	parts = slices.Compact(parts)
	return strings.Join(parts, ", ")
}

// robotsChanges reports a noindex flip once for the page (meta robots and
// X-Robots-Tag together decide it), else each changed directive field.
func robotsChanges(prev, next *Snapshot, add func(Kind, Severity, string, string, string)) {
	was, is := Noindex(prev.MetaRobots) || Noindex(prev.XRobotsTag), Noindex(next.MetaRobots) || Noindex(next.XRobotsTag)
	if was != is {
		k := KindNoindexAdded
		if was {
			k = KindNoindexRemoved
		}
		field := "meta_robots"
		if Noindex(prev.XRobotsTag) != Noindex(next.XRobotsTag) {
			field = "x_robots_tag"
			if Noindex(prev.MetaRobots) != Noindex(next.MetaRobots) {
				field = "meta_robots,x_robots_tag"
			}
		}
		add(k, DefaultSeverity[k], field, robotsText(prev), robotsText(next))
		return
	}
	if prev.MetaRobots != next.MetaRobots {
		add(KindRobotsDirectives, DefaultSeverity[KindRobotsDirectives], "meta_robots", prev.MetaRobots, next.MetaRobots)
	}
	if prev.XRobotsTag != next.XRobotsTag {
		add(KindRobotsDirectives, DefaultSeverity[KindRobotsDirectives], "x_robots_tag", prev.XRobotsTag, next.XRobotsTag)
	}
}

func robotsText(s *Snapshot) string {
	var parts []string
	if s.MetaRobots != "" {
		parts = append(parts, "meta robots "+strconv.Quote(s.MetaRobots))
	}
	if s.XRobotsTag != "" {
		parts = append(parts, "X-Robots-Tag "+strconv.Quote(s.XRobotsTag))
	}
	if len(parts) == 0 {
		return "(none)"
	}
	return strings.Join(parts, "; ")
}

// Noindex reports whether a meta robots content or X-Robots-Tag value keeps
// the page out of the index: a "noindex" or "none" directive, for every
// crawler or for a named one ("googlebot: noindex"), case-insensitive.
func Noindex(directives string) bool {
	for part := range strings.SplitSeq(directives, ",") {
		d := strings.ToLower(strings.TrimSpace(part))
		// "googlebot: noindex" names a crawler; "unavailable_after: date"
		// is a directive with a value and no crawler.
		if name, rest, ok := strings.Cut(d, ":"); ok && !strings.Contains(name, "unavailable_after") {
			d = strings.TrimSpace(rest)
		}
		if d == "noindex" || d == "none" {
			return true
		}
	}
	return false
}

// textChange compares the texts (or, without texts, the content hashes).
func textChange(prev, next *Snapshot, o Options) (Change, bool) {
	if prev.ContentHash != "" && prev.ContentHash == next.ContentHash {
		return Change{}, false
	}
	if prev.HasText && next.HasText {
		if prev.Text == next.Text {
			return Change{}, false
		}
		d := DiffWords(prev.Text, next.Text)
		if !o.Text.Reached(d) {
			return Change{}, false
		}
		return Change{Kind: KindText, Field: "text", Text: &d,
			Old: strconv.Itoa(d.OldWords) + " words", New: fmt.Sprintf("%d words (+%d −%d, %.1f%% changed)", d.NewWords, d.Added, d.Removed, d.Percent)}, true
	}
	if prev.ContentHash != "" || next.ContentHash != "" {
		// Not HTML, or stored without text: the bytes changed, with no words
		// to count, so no threshold applies.
		return Change{Kind: KindText, Field: "content", New: "changed"}, true
	}
	return Change{}, false
}

// Reached reports whether a text change of d reaches the threshold.
func (t TextThreshold) Reached(d TextDelta) bool {
	n := d.Added + d.Removed
	if n == 0 {
		return false
	}
	if t.Words > 0 && n < t.Words {
		return false
	}
	if t.Percent > 0 && d.Percent < t.Percent {
		return false
	}
	return true
}

// DiffWords counts the words added and removed from old to new. Words are
// runs of non-space characters; they are compared as multisets, in time and
// memory linear in the texts.
func DiffWords(old, new string) TextDelta {
	counts := make(map[string]int)
	var d TextDelta
	for w := range strings.FieldsSeq(old) {
		counts[w]++
		d.OldWords++
	}
	for w := range strings.FieldsSeq(new) {
		d.NewWords++
		if counts[w] > 0 {
			counts[w]--
		} else {
			d.Added++
		}
	}
	for _, n := range counts {
		d.Removed += n
	}
	if total := d.OldWords + d.NewWords; total > 0 {
		d.Percent = 100 * float64(d.Added+d.Removed) / float64(total)
	}
	return d
}

// Filter selects the changes an alert channel wants. The zero value selects
// every change.
type Filter struct {
	Kinds       []Kind   // empty: every kind
	MinSeverity Severity // only changes at least this severe
}

// Match reports whether the filter selects c.
func (f Filter) Match(c Change) bool {
	return c.Severity >= f.MinSeverity && (len(f.Kinds) == 0 || slices.Contains(f.Kinds, c.Kind))
}

// Apply returns the changes the filter selects, in their order.
func (f Filter) Apply(cs []Change) []Change {
	var out []Change
	for _, c := range cs {
		if f.Match(c) {
			out = append(out, c)
		}
	}
	return out
}

// Max returns the highest severity of cs (Info for none).
func Max(cs []Change) Severity {
	m := Info
	for _, c := range cs {
		m = max(m, c.Severity)
	}
	return m
}
