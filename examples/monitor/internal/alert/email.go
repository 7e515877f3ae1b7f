package alert

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strings"
	"time"
)

// DefaultSMTPTimeout bounds one email delivery, connect to QUIT.
const DefaultSMTPTimeout = 30 * time.Second

// Email sends each message as a plain-text email through an SMTP server.
// It upgrades with STARTTLS whenever the server offers it, and
// authenticates (AUTH PLAIN) when Username is set: over TLS only, except to
// a server on loopback.
type Email struct {
	Addr       string   // host:port of the SMTP server, e.g. smtp.example.com:587
	From       string   // "Monitor <monitor@example.com>"
	To         []string // one or more addresses
	Username   string
	Password   string
	RequireTLS bool        // refuse to send unless the server offers STARTTLS
	TLSConfig  *tls.Config // for STARTTLS; nil: verify the server's certificate for its host name
	Hello      string      // the EHLO name; "": localhost
	Timeout    time.Duration
	Net        Net
	Now        func() time.Time // the Date header; nil: time.Now
}

// ErrNoTLS is returned when RequireTLS is set and the server does not
// offer STARTTLS.
var ErrNoTLS = errors.New("alert: SMTP server does not offer STARTTLS")

// Validate checks the addresses, so a bad setting is refused when it is
// typed rather than at the first change.
func (e *Email) Validate() error {
	if _, _, err := net.SplitHostPort(e.Addr); err != nil {
		return fmt.Errorf("alert: SMTP address %q: %w", e.Addr, err)
	}
	if _, err := mail.ParseAddress(e.From); err != nil {
		return fmt.Errorf("alert: from address %q: %w", e.From, err)
	}
	if len(e.To) == 0 {
		return errors.New("alert: email without a recipient")
	}
	for _, to := range e.To {
		if _, err := mail.ParseAddress(to); err != nil {
			return fmt.Errorf("alert: recipient %q: %w", to, err)
		}
	}
	return nil
}

// Send delivers m once.
func (e *Email) Send(ctx context.Context, key string, m *Message) (err error) {
	if err := e.Validate(); err != nil {
		return Permanent(err)
	}
	from, _ := mail.ParseAddress(e.From)
	var to []*mail.Address
	for _, s := range e.To {
		a, _ := mail.ParseAddress(s)
		to = append(to, a)
	}
	msg, err := e.render(key, from, to, m)
	if err != nil {
		return Permanent(err)
	}
	timeout := e.Timeout
	if timeout <= 0 {
		timeout = DefaultSMTPTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer func() {
		if err != nil {
			err = smtpError(e.Addr, err)
		}
	}()

	conn, err := e.Net.dial(ctx, "tcp", e.Addr)
	if err != nil {
		return err
	}
	// net/smtp has no context: the deadline bounds every read and write,
	// and cancellation closes the connection.
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	defer conn.Close()

	host, _, _ := net.SplitHostPort(e.Addr)
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		return err
	}
	hello := e.Hello
	if hello == "" {
		hello = "localhost"
	}
	if err := c.Hello(hello); err != nil {
		return err
	}
	if ok, _ := c.Extension("STARTTLS"); ok {
		cfg := e.TLSConfig
		if cfg == nil {
			cfg = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
		}
		if err := c.StartTLS(cfg); err != nil {
			return err
		}
	} else if e.RequireTLS {
		return Permanent(ErrNoTLS)
	}
	if e.Username != "" {
		// PlainAuth itself refuses to send the password over a connection
		// that is neither TLS nor to localhost.
		if err := c.Auth(smtp.PlainAuth("", e.Username, e.Password, host)); err != nil {
			return err
		}
	}
	if err := c.Mail(from.Address); err != nil {
		return err
	}
	for _, a := range to {
		if err := c.Rcpt(a.Address); err != nil {
			return err
		}
	}
	wc, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := wc.Write(msg); err != nil {
		return err
	}
	if err := wc.Close(); err != nil {
		return err
	}
	return c.Quit()
}

// smtpError names the server and marks 5xx replies Permanent.
func smtpError(addr string, err error) error {
	var te *textproto.Error
	var refused *RefusedError
	wrapped := fmt.Errorf("alert: SMTP %s: %w", addr, err)
	if (errors.As(err, &te) && te.Code >= 500) || errors.As(err, &refused) || IsPermanent(err) {
		return Permanent(wrapped)
	}
	return wrapped
}

// render writes the email: headers with no value able to start a header
// of its own, a Message-ID made of key (so a repeat is the same email), and
// the text quoted-printable.
func (e *Email) render(key string, from *mail.Address, to []*mail.Address, m *Message) ([]byte, error) {
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	var b bytes.Buffer
	hdr := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	hdr("From", from.String())
	addrs := make([]string, len(to))
	for i, a := range to {
		addrs[i] = a.String()
	}
	hdr("To", strings.Join(addrs, ", "))
	hdr("Subject", mime.QEncoding.Encode("utf-8", m.Subject()))
	hdr("Date", now().UTC().Format(time.RFC1123Z))
	hdr("Message-ID", "<"+messageIDPart(key)+"@polite.alert>")
	hdr("X-Polite-Change", messageIDPart(m.ID))
	hdr("MIME-Version", "1.0")
	hdr("Content-Type", "text/plain; charset=utf-8")
	hdr("Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	if _, err := qp.Write([]byte(strings.ReplaceAll(m.Text(), "\n", "\r\n"))); err != nil {
		return nil, err
	}
	if err := qp.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// messageIDPart keeps the characters a Message-ID may hold.
func messageIDPart(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".-_+=", r) {
			return r
		}
		return '_'
	}, clip(s, 200))
}
