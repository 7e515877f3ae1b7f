// Package card is the free tool's answer for one URL: the response card
// (status, redirects, SEO fields, response time), or the banner the
// 2-UAcomBot page promises when robots.txt disallows the URL, with the link
// to the policy page; and how a card prints on a terminal. The web pages and
// the JSON API render the same Card.
//
// It holds data and formatting only: it never fetches, stores or decides.
package card

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/politecrawl/polite/examples/internal/cmdline"
	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
)

// Banner is the message the 2-UAcomBot page promises for a page whose
// latest check robots.txt prevented.
func Banner(token string) string {
	return "Latest check was skipped — robots.txt disallows " + token + " on this path."
}

// Card is the free tool's answer for one URL.
type Card struct {
	URL        string    `json:"url"`
	CheckedAt  time.Time `json:"checked_at"`
	Blocked    bool      `json:"blocked_by_robots"`
	Banner     string    `json:"banner,omitempty"`      // the skipped-check message, when Blocked
	RobotsRule string    `json:"robots_rule,omitempty"` // the rule that decided, when Blocked
	PolicyURL  string    `json:"policy_url,omitempty"`  // the bot's policy page, from the user agent
	Waiting    string    `json:"robots_unreachable,omitempty"`
	Error      string    `json:"error,omitempty"`

	Status          int                  `json:"status,omitempty"`
	FinalURL        string               `json:"final_url,omitempty"`
	Redirects       []snapshot.Hop       `json:"redirects,omitempty"`
	Title           string               `json:"title,omitempty"`
	MetaDescription string               `json:"meta_description,omitempty"`
	Canonical       string               `json:"canonical,omitempty"`
	MetaRobots      string               `json:"meta_robots,omitempty"`
	XRobotsTag      string               `json:"x_robots_tag,omitempty"`
	H1              string               `json:"h1,omitempty"`
	Hreflang        []snapshot.Alternate `json:"hreflang,omitempty"`
	WordCount       int                  `json:"word_count"`
	ResponseMS      int64                `json:"response_ms"`

	// Refused: the address guard refused the URL (or a redirect target).
	Refused bool `json:"-"`
}

// HasResponse reports whether the card shows a response (for templates).
func (c *Card) HasResponse() bool { return !c.Blocked && c.Status != 0 }

var policyRE = regexp.MustCompile(`\+(https?://[^\s;)]+)`)

// PolicyURLOf is the self-link of a user agent ("+https://..."), the page the
// banner links to; the published page when the user agent has none.
func PolicyURLOf(userAgent string) string {
	if m := policyRE.FindStringSubmatch(userAgent); m != nil {
		return m[1]
	}
	return "https://2-ua.com/support/robots"
}

// Write prints a card for the terminal; remote values are quoted so a
// title cannot move the cursor.
func Write(w io.Writer, c *Card) {
	if c.Blocked {
		fmt.Fprintf(w, "%s\n%s\n  rule: %s\n  why:  %s\n", cmdline.Safe(c.URL), snapshot.OneLine(c.Banner), snapshot.OneLine(c.RobotsRule), cmdline.Safe(c.PolicyURL))
		return
	}
	if c.Status == 0 {
		fmt.Fprintf(w, "%s\nerror: %s\n", cmdline.Safe(c.URL), snapshot.OneLine(c.Error))
		return
	}
	row := func(name, v string) { fmt.Fprintf(w, "  %-17s %s\n", name+":", v) }
	fmt.Fprintln(w, cmdline.Safe(c.URL))
	row("status", fmt.Sprint(c.Status))
	if c.Error != "" {
		row("error", snapshot.OneLine(c.Error))
	}
	row("final URL", snapshot.Quote(c.FinalURL))
	chain := make([]string, len(c.Redirects))
	for i, h := range c.Redirects {
		chain[i] = fmt.Sprintf("%d %s", h.Status, h.URL)
	}
	if len(chain) > 0 {
		row("redirects", snapshot.OneLine(strings.Join(chain, " -> ")))
	}
	row("title", snapshot.Quote(c.Title))
	row("meta description", snapshot.Quote(c.MetaDescription))
	row("canonical", snapshot.Quote(c.Canonical))
	row("meta robots", snapshot.Quote(c.MetaRobots))
	row("X-Robots-Tag", snapshot.Quote(c.XRobotsTag))
	row("h1", snapshot.Quote(c.H1))
	if len(c.Hreflang) > 0 {
		row("hreflang", snapshot.Quote(snapshot.HreflangText(c.Hreflang)))
	}
	row("words", fmt.Sprint(c.WordCount))
	row("response time", fmt.Sprintf("%d ms", c.ResponseMS))
}
