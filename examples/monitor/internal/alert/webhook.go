package alert

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The headers of a webhook delivery. The signature is
// "sha256=" + hex(HMAC-SHA256(secret, timestamp + "." + body)), so a
// receiver checks both the body and its age (see Verify).
const (
	HeaderSignature = "X-Polite-Signature"
	HeaderTimestamp = "X-Polite-Timestamp"
	HeaderKey       = "Idempotency-Key"
)

// Default limits of an HTTP delivery.
const (
	DefaultTimeout  = 10 * time.Second
	maxResponseRead = 64 << 10 // read (and drained) of a response body
	maxErrorBody    = 200      // shown of it in an error
	defaultAgent    = "polite-alert/1.0"
)

// Webhook posts each message as JSON (the Message fields) to URL, signed
// with Secret. The zero Timeout is DefaultTimeout.
type Webhook struct {
	URL       string
	Secret    []byte // HMAC-SHA256 key; empty: unsigned
	Timeout   time.Duration
	UserAgent string // "": polite-alert/1.0
	Net       Net
	Now       func() time.Time // the signature's timestamp; nil: time.Now
}

// Send posts m once.
func (w *Webhook) Send(ctx context.Context, key string, m *Message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return Permanent(fmt.Errorf("alert: webhook %s: encoding message: %w", w.URL, err))
	}
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set(HeaderKey, key)
	if len(w.Secret) > 0 {
		ts := strconv.FormatInt(now().Unix(), 10)
		h.Set(HeaderTimestamp, ts)
		h.Set(HeaderSignature, Sign(w.Secret, ts, body))
	}
	_, err = post(ctx, w.Net, w.URL, h, body, w.Timeout, w.UserAgent)
	return err
}

// Sign returns the signature header value of body sent at timestamp.
func Sign(secret []byte, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(timestamp))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// ErrBadSignature is returned by Verify for a delivery that was not signed
// with the secret, or is older than the allowed age.
var ErrBadSignature = errors.New("alert: bad webhook signature")

// Verify checks, for a receiver, the signature headers of a delivery with
// body, and that it was signed within maxAge of now.
func Verify(secret []byte, h http.Header, body []byte, now time.Time, maxAge time.Duration) error {
	ts := h.Get(HeaderTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: timestamp %q", ErrBadSignature, ts)
	}
	if age := now.Sub(time.Unix(sec, 0)); age > maxAge || age < -maxAge {
		return fmt.Errorf("%w: signed %s ago", ErrBadSignature, age.Round(time.Second))
	}
	if !hmac.Equal([]byte(h.Get(HeaderSignature)), []byte(Sign(secret, ts, body))) {
		return ErrBadSignature
	}
	return nil
}

// StatusError is an HTTP delivery the receiver did not accept.
type StatusError struct {
	URL    string
	Status int
	Body   string // the start of the response body
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("alert: %s answered %d %s", e.URL, e.Status, http.StatusText(e.Status))
	if e.Body != "" {
		s += ": " + strconv.Quote(e.Body)
	}
	return s
}

// post sends one JSON POST and returns the start of a 2xx body. 408, 425,
// 429 and 5xx are retryable (429/503 with Retry-After say when); any other
// status, a redirect included, is Permanent.
func post(ctx context.Context, n Net, url string, h http.Header, body []byte, timeout time.Duration, ua string) ([]byte, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if ua == "" {
		ua = defaultAgent
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, Permanent(fmt.Errorf("alert: %w", err))
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return nil, Permanent(fmt.Errorf("alert: %s: not an http(s) URL", url))
	}
	req.Header = h
	req.Header.Set("User-Agent", ua)
	resp, err := n.httpClient().Do(req)
	if err != nil {
		var refused *RefusedError
		if errors.As(err, &refused) {
			return nil, Permanent(fmt.Errorf("alert: posting to %s: %w", url, refused))
		}
		return nil, fmt.Errorf("alert: posting to %s: %w", url, err)
	}
	defer resp.Body.Close()
	// Read at most maxResponseRead: a receiver answering forever costs
	// one capped read, then the connection is closed.
	start, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseRead))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return start, nil
	}
	serr := &StatusError{URL: url, Status: resp.StatusCode, Body: clip(oneLine(strings.TrimSpace(string(start))), maxErrorBody)}
	switch c := resp.StatusCode; {
	case c == 429 || c == 503:
		if d, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			return nil, &RetryAfterError{Err: serr, After: d}
		}
		return nil, serr
	case c == 408 || c == 425 || c >= 500:
		return nil, serr
	default:
		return nil, Permanent(serr)
	}
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
		return time.Duration(min(s, 86400)) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), 24*time.Hour), true
	}
	return 0, false
}

// Slack posts each message to a Slack-compatible incoming webhook (Slack,
// Mattermost, Rocket.Chat, Discord's /slack endpoint) as {"text": ...}.
type Slack struct {
	URL       string
	Timeout   time.Duration
	UserAgent string
	Net       Net
}

// Send posts m once.
func (s *Slack) Send(ctx context.Context, key string, m *Message) error {
	body, err := json.Marshal(struct {
		Text string `json:"text"`
	}{SlackText(m)})
	if err != nil {
		return Permanent(err)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set(HeaderKey, key)
	_, err = post(ctx, s.Net, s.URL, h, body, s.Timeout, s.UserAgent)
	return err
}

// slackEscape escapes the three characters Slack's mrkdwn reserves, so a
// page title cannot ping @channel or forge a link.
var slackEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// SlackText is the message in Slack's mrkdwn: the subject in bold, the
// changes as a list, the diff as a code block, and the history link.
func SlackText(m *Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%s*\n", slackEscape.Replace(m.Subject()))
	for _, c := range m.Changes {
		fmt.Fprintf(&b, "• %s (%s): %s → %s\n", c.Kind, c.Severity,
			slackEscape.Replace(oneLine(quoteValue(c.Old))), slackEscape.Replace(oneLine(quoteValue(c.New))))
	}
	if len(m.DiffLines) > 0 {
		b.WriteString("```\n")
		for i, l := range m.DiffLines {
			if i == MaxDiffLines {
				b.WriteString("…\n")
				break
			}
			b.WriteString(slackEscape.Replace(strings.ReplaceAll(clip(oneLine(l), maxLineRunes), "```", "'''")) + "\n")
		}
		b.WriteString("```\n")
	}
	if m.HistoryURL != "" {
		fmt.Fprintf(&b, "<%s|History>\n", slackEscape.Replace(strings.NewReplacer("|", "%7C").Replace(oneLine(m.HistoryURL))))
	}
	return b.String()
}
