package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/politecrawl/polite/examples/internal/cmdline"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/robots"
)

// The free tool: one URL checked now, with the same robots rules, identity
// headers, address guard and per-host politeness as a snapshot, shown as a
// response card. `monitor check URL` prints it; `serve` shows it at /check
// and returns it from /api/check. Nothing is tracked or stored (except the
// robots.txt answer, in the robots cache of -db).

// card is the free tool's answer for one URL.
type card struct {
	URL        string    `json:"url"`
	CheckedAt  time.Time `json:"checked_at"`
	Blocked    bool      `json:"blocked_by_robots"`
	Banner     string    `json:"banner,omitempty"`      // the skipped-check message, when Blocked
	RobotsRule string    `json:"robots_rule,omitempty"` // the rule that decided, when Blocked
	PolicyURL  string    `json:"policy_url,omitempty"`  // the bot's policy page, from the user agent
	Waiting    string    `json:"robots_unreachable,omitempty"`
	Error      string    `json:"error,omitempty"`

	Status          int         `json:"status,omitempty"`
	FinalURL        string      `json:"final_url,omitempty"`
	Redirects       []hop       `json:"redirects,omitempty"`
	Title           string      `json:"title,omitempty"`
	MetaDescription string      `json:"meta_description,omitempty"`
	Canonical       string      `json:"canonical,omitempty"`
	MetaRobots      string      `json:"meta_robots,omitempty"`
	XRobotsTag      string      `json:"x_robots_tag,omitempty"`
	H1              string      `json:"h1,omitempty"`
	Hreflang        []alternate `json:"hreflang,omitempty"`
	WordCount       int         `json:"word_count"`
	ResponseMS      int64       `json:"response_ms"`

	// refused: the address guard refused the URL (or a redirect target).
	refused bool
}

// HasResponse reports whether the card shows a response (for templates).
func (c *card) HasResponse() bool { return !c.Blocked && c.Status != 0 }

// freeTool holds the long-lived polite client of the free tool: the
// process's host gate (one request at a time per host, -gap apart, shared
// with the scheduler of serve -watch) and the robots cache (persisted in -db
// when there is one).
type freeTool struct {
	m      *monitor
	client *fetch.Client
	rc     *robots.Cache
	policy string
}

func newFreeTool(m *monitor) (*freeTool, error) {
	client, rc := m.newClient(m.hostGate, func(string, ...any) {})
	// A stranger's URL: keep less of its body than a tracked page's, so
	// maxChecksInFlight checks bound the free tool's memory.
	client.MaxBodyBytes = freeToolMaxBody
	return &freeTool{m: m, client: client, rc: rc, policy: policyURL(m.o.userAgent)}, nil
}

// check runs the free tool on an already canonical URL.
func (f *freeTool) check(ctx context.Context, u string) *card {
	now := f.m.now()
	c := &card{URL: u, CheckedAt: now, PolicyURL: f.policy}
	t, interrupted := f.m.take(ctx, f.rc, f.client, u, now, nil)
	if interrupted {
		c.Error = "interrupted: " + context.Cause(ctx).Error()
		return c
	}
	if t.waitUntil != nil {
		c.Waiting = t.waitDetail
		c.Error = "not fetched: " + t.waitDetail
		return c
	}
	c.refused = t.refused
	sn := t.snapshot
	if sn.Blocked {
		c.Blocked = true
		c.Banner = skippedBanner(f.m.token)
		c.RobotsRule = sn.RobotsRule
		return c
	}
	c.Error = sn.Error
	if c.Error == "" && sn.Status >= 500 {
		c.Error = fmt.Sprintf("HTTP %d (server error)", sn.Status)
	}
	c.Status, c.FinalURL, c.Redirects = sn.Status, sn.FinalURL, sn.Redirects
	c.Title, c.MetaDescription, c.Canonical = sn.Title, sn.MetaDescription, sn.Canonical
	c.MetaRobots, c.XRobotsTag, c.H1, c.Hreflang = sn.MetaRobots, sn.XRobotsTag, sn.H1, sn.Hreflang
	c.WordCount, c.ResponseMS = sn.WordCount, sn.ResponseTime.Milliseconds()
	return c
}

var policyRE = regexp.MustCompile(`\+(https?://[^\s;)]+)`)

// policyURL is the self-link of a user agent ("+https://..."), the page the
// banner links to; the published page when the user agent has none.
func policyURL(userAgent string) string {
	if m := policyRE.FindStringSubmatch(userAgent); m != nil {
		return m[1]
	}
	return "https://2-ua.com/support/robots"
}

// writeCard prints a card for the terminal; remote values are quoted so a
// title cannot move the cursor.
func writeCard(w io.Writer, c *card) {
	if c.Blocked {
		fmt.Fprintf(w, "%s\n%s\n  rule: %s\n  why:  %s\n", cmdline.Safe(c.URL), oneLine(c.Banner), oneLine(c.RobotsRule), cmdline.Safe(c.PolicyURL))
		return
	}
	if c.Status == 0 {
		fmt.Fprintf(w, "%s\nerror: %s\n", cmdline.Safe(c.URL), oneLine(c.Error))
		return
	}
	row := func(name, v string) { fmt.Fprintf(w, "  %-17s %s\n", name+":", v) }
	fmt.Fprintln(w, cmdline.Safe(c.URL))
	row("status", fmt.Sprint(c.Status))
	if c.Error != "" {
		row("error", oneLine(c.Error))
	}
	row("final URL", quote(c.FinalURL))
	chain := make([]string, len(c.Redirects))
	for i, h := range c.Redirects {
		chain[i] = fmt.Sprintf("%d %s", h.Status, h.URL)
	}
	if len(chain) > 0 {
		row("redirects", oneLine(strings.Join(chain, " -> ")))
	}
	row("title", quote(c.Title))
	row("meta description", quote(c.MetaDescription))
	row("canonical", quote(c.Canonical))
	row("meta robots", quote(c.MetaRobots))
	row("X-Robots-Tag", quote(c.XRobotsTag))
	row("h1", quote(c.H1))
	if len(c.Hreflang) > 0 {
		row("hreflang", quote(hreflangText(c.Hreflang)))
	}
	row("words", fmt.Sprint(c.WordCount))
	row("response time", fmt.Sprintf("%d ms", c.ResponseMS))
}
