// Package alert tells people that a tracked page changed: it renders one
// Message per change and delivers it through a channel (a signed generic
// webhook, a Slack-compatible incoming webhook, email over SMTP), from an
// outbox that survives a crash, and writes Atom feeds of changes.
//
// The model: the monitor writes a Delivery into the outbox (Schema) in the
// same transaction as the snapshot that caused it, one per change and
// channel, under an idempotency key, so a change is never lost and never
// queued twice. A Sender claims due deliveries under a lease, sends each,
// and records the attempt: delivered, retried later with backoff, or failed
// after MaxAttempts. Delivery is at least once: a process killed after a
// receiver accepted a message but before the attempt was recorded sends it
// again after the lease, with the same key (Idempotency-Key header, email
// Message-ID, Atom entry id), so a receiver can drop the repeat.
//
// Every outbound connection goes through Net: by default a dialer that
// refuses anything but public addresses, checked at dial time by the
// library's fetch.Guard (one classification for the monitor); the monitor
// passes its own guard, and tests set AllowLoopback.
//
// This package must not fetch tracked pages, classify changes or open the
// monitor's database: it is handed messages, a *sql.DB and channel settings.
package alert

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/politecrawl/polite/fetch"
)

// Change is one change of a Message, as the changes package classified it.
type Change struct {
	Kind     string `json:"kind"`     // e.g. "noindex_added", "title"
	Severity string `json:"severity"` // info, low, medium, high, critical
	Field    string `json:"field"`    // the snapshots column
	Old      string `json:"old"`
	New      string `json:"new"`
}

// Message is what one alert says about one change of one page.
type Message struct {
	// ID identifies the change (one snapshot of one page), the same for
	// every channel: it makes the email Message-ID and the Atom entry id.
	ID         string    `json:"id"`
	Monitor    string    `json:"monitor,omitempty"` // who sends it, e.g. "2-UAcomBot monitor"
	PageURL    string    `json:"page_url"`
	HistoryURL string    `json:"history_url"` // the page's history in the dashboard
	TakenAt    time.Time `json:"taken_at"`    // when the snapshot that changed was taken
	Severity   string    `json:"severity"`    // the highest of Changes
	Changes    []Change  `json:"changes"`
	// DiffLines are the first lines of the word diff of a text change
	// ("[-removed-]{+added+}"), at most MaxDiffLines.
	DiffLines []string `json:"diff_lines,omitempty"`
}

// Limits on what one message shows.
const (
	MaxDiffLines  = 10
	maxValueRunes = 300
	maxLineRunes  = 200
)

// Subject is the message's one-line summary: "[critical] noindex_added,
// title: https://example.com/pricing".
func (m *Message) Subject() string {
	kinds := make([]string, 0, len(m.Changes))
	for _, c := range m.Changes {
		if len(kinds) == 0 || kinds[len(kinds)-1] != c.Kind {
			kinds = append(kinds, c.Kind)
		}
	}
	s := fmt.Sprintf("[%s] %s: %s", m.Severity, strings.Join(kinds, ", "), m.PageURL)
	return clip(oneLine(s), maxValueRunes)
}

// Text is the message as plain text: the summary, each change with its old
// and new value, the first lines of the word diff, and the history link.
func (m *Message) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s changed", oneLine(m.PageURL))
	if !m.TakenAt.IsZero() {
		fmt.Fprintf(&b, " (checked %s)", m.TakenAt.UTC().Format("2006-01-02 15:04:05Z"))
	}
	b.WriteString("\n\n")
	for _, c := range m.Changes {
		fmt.Fprintf(&b, "%s (%s): %s -> %s\n", c.Kind, c.Severity, quoteValue(c.Old), quoteValue(c.New))
	}
	if len(m.DiffLines) > 0 {
		b.WriteString("\nText diff:\n")
		for i, l := range m.DiffLines {
			if i == MaxDiffLines {
				b.WriteString("  …\n")
				break
			}
			fmt.Fprintf(&b, "  %s\n", clip(oneLine(l), maxLineRunes))
		}
	}
	if m.HistoryURL != "" {
		fmt.Fprintf(&b, "\nHistory: %s\n", oneLine(m.HistoryURL))
	}
	return b.String()
}

func quoteValue(s string) string {
	if s == "" {
		return "(none)"
	}
	return strconv.Quote(clip(s, maxValueRunes))
}

// oneLine replaces line breaks and other control characters with spaces:
// a value from a page never starts a line of its own (a header, a
// Slack command).
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// Channel delivers messages. Send is one attempt: key is the delivery's
// idempotency key, which a receiver uses to drop a repeat.
type Channel interface {
	Send(ctx context.Context, key string, m *Message) error
}

// permanentError marks an error that a retry would not fix.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent marks err as one a retry would not fix (a 4xx, an address the
// server refuses): the Sender marks the delivery failed at once.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// IsPermanent reports whether err, or an error it wraps, was marked
// Permanent.
func IsPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}

// RetryAfterError is a refusal with the time the receiver asked us to wait
// (HTTP 429/503 Retry-After); the Sender waits at least that long.
type RetryAfterError struct {
	Err   error
	After time.Duration
}

func (e *RetryAfterError) Error() string { return fmt.Sprintf("%v (retry after %s)", e.Err, e.After) }
func (e *RetryAfterError) Unwrap() error { return e.Err }

// Net is how channels connect. Its zero value reaches public addresses only.
type Net struct {
	// HTTPClient sends webhook and Slack requests. nil: a client that
	// follows no redirects, ignores proxy settings and dials through
	// Dial. A client given here is used as it is: its own guard decides.
	HTTPClient *http.Client
	// Dial opens connections (SMTP, and HTTP without HTTPClient). nil: a
	// dialer that refuses, after resolving and before connecting, every
	// address that is not public (loopback, private, link-local, CGNAT,
	// multicast, unspecified, reserved).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// AllowLoopback lets the default dialer reach 127.0.0.0/8 and ::1, and
	// nothing else internal. Tests against loopback receivers only.
	AllowLoopback bool
}

// RefusedError is the default dialer's refusal of an address. The
// classification is the library's (fetch.Guard, fetch.InternalReason):
// the monitor judges addresses in one place. It unwraps to the
// *fetch.AddressError, so it matches fetch.ErrForbiddenAddress.
type RefusedError struct {
	Addr   string // the address refused, ip:port
	Reason string // why, in fetch.InternalReason's words: "a loopback address (127.0.0.0/8)"
	err    error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("alert: refusing to connect to %s: %s", e.Addr, e.Reason)
}

// Unwrap returns the guard's error.
func (e *RefusedError) Unwrap() error { return e.err }

func (n Net) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if n.Dial != nil {
		return n.Dial(ctx, network, addr)
	}
	d := net.Dialer{Timeout: 30 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		return checkAddr(address, n.AllowLoopback)
	}}
	return d.DialContext(ctx, network, addr)
}

func (n Net) httpClient() *http.Client {
	if n.HTTPClient != nil {
		return n.HTTPClient
	}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil, // a proxy would be dialled instead of the destination the guard checks
			DialContext:           n.dial,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 30 * time.Second,
			MaxIdleConns:          4,
			IdleConnTimeout:       30 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// loopbackOnly is what AllowLoopback lets through the guard.
var loopbackOnly = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// checkAddr returns a RefusedError unless address (ip:port) is public, or
// loopback with allowLoopback: fetch.Guard's dial-time check.
func checkAddr(address string, allowLoopback bool) error {
	g := &fetch.Guard{}
	if allowLoopback {
		g.Allow = loopbackOnly
	}
	err := g.Control("tcp", address, nil)
	var ae *fetch.AddressError
	if errors.As(err, &ae) {
		return &RefusedError{Addr: address, Reason: ae.Reason, err: err}
	}
	return err
}
