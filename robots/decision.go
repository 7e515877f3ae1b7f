package robots

import (
	"strconv"
	"strings"
)

// Decision is the answer of [Rules.Explain]: whether a URL is allowed and
// why. Rule and Agents point into the parsed file and must not be modified.
type Decision struct {
	Allowed  bool
	Rule     *Rule    // matching rule, nil if none matched (allowed by default)
	Agents   []string // user-agent values of the group(s) used, as written; nil when no group applied
	Wildcard bool     // the `*` group(s) were used
	// Token is the crawler's product token that a group named, as the
	// crawler spells it ("" when the `*` groups or no group applied). With
	// several tokens (Rules.ExplainAs), it says which one decided.
	Token string

	always bool // the URL was /robots.txt, which is always allowed
}

// String describes the decision for people, e.g.
// `disallowed by "Disallow: /basket/" (line 7, user-agent CrawlCove-Crawler)`.
func (d Decision) String() string {
	if d.Allowed {
		return "allowed" + d.reason()
	}
	return "disallowed" + d.reason()
}

// reason is String without the leading "allowed" or "disallowed".
func (d Decision) reason() string {
	var b strings.Builder
	switch {
	case d.always:
		b.WriteString(": /robots.txt is always allowed")
		return b.String()
	case d.Rule != nil:
		b.WriteString(` by "`)
		b.WriteString(d.Rule.String())
		b.WriteString(`" (line `)
		b.WriteString(strconv.Itoa(d.Rule.Line))
		b.WriteString(", ")
	case !d.Allowed && d.Rule == nil:
		// Only a Decision not made by Rules (the zero value) disallows
		// without a rule; do not explain it as if a group allowed it.
		b.WriteString(": no rule recorded")
		return b.String()
	case d.Agents == nil:
		b.WriteString(": no group applies")
		return b.String()
	default:
		b.WriteString(": no rule matches (")
	}
	b.WriteString("user-agent ")
	b.WriteString(strings.Join(d.Agents, ", "))
	b.WriteString(")")
	return b.String()
}
