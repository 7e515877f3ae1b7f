package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/politecrawl/polite/examples/internal/cmdline"
	"github.com/politecrawl/polite/examples/monitor/internal/alert"
	"github.com/politecrawl/polite/examples/monitor/internal/changes"
	"github.com/politecrawl/polite/examples/monitor/internal/store"
	"github.com/politecrawl/polite/examples/monitor/internal/web"
	"github.com/politecrawl/polite/fetch"
)

// The alert side of the command line: `monitor alert add|list|rm|test`, the
// flags run, watch, serve and report take for classifying changes
// (-min-text-words, -min-text-percent) and for the link alerts carry
// (-public-url), and the alert.Sender those commands run.

const alertUsage = `usage:
  monitor alert add  -db PATH (-webhook URL [-secret-env VAR | -secret S] | -slack URL |
                      -email ADDR[,ADDR] -smtp HOST:PORT [-from ADDR] [-smtp-user U -smtp-pass-env VAR] [-smtp-require-tls])
                     [-page URL | -host URL] [-kinds k1,k2] [-min-severity info|low|medium|high|critical]
                     [-name NAME] [-allow-private]
  monitor alert list -db PATH          channels (no secrets) and the latest deliveries
  monitor alert rm   -db PATH ID
  monitor alert test -db PATH [-allow-private] ID   send a test message to the channel now
`

// alertOptions are the flags of classification and alert delivery.
type alertOptions struct {
	minTextWords   int
	minTextPercent float64
	publicURL      string // the dashboard's address in alerts' history links
}

// addAlertFlags registers, for cmd, the flags of classification and of the
// alerts' link.
func addAlertFlags(cmd string, fs *flag.FlagSet, o *alertOptions) {
	switch cmd {
	case "run", "watch", "serve", "report":
		fs.IntVar(&o.minTextWords, "min-text-words", 0, "a visible-text change counts when at least this many words were added plus removed (0: any)")
		fs.Float64Var(&o.minTextPercent, "min-text-percent", 0, "a visible-text change counts when at least this share of words changed, 0-100 (0: any)")
	}
	switch cmd {
	case "run", "watch", "serve":
		fs.StringVar(&o.publicURL, "public-url", "", "the dashboard's address, for the history link in alerts (serve: its own address)")
	}
}

// check validates the flags addAlertFlags registered.
func (o *alertOptions) check() error {
	if err := cmdline.IntIn("min-text-words", o.minTextWords, 0, 1<<20); err != nil {
		return &usageError{err.Error()}
	}
	if err := cmdline.FloatIn("min-text-percent", o.minTextPercent, 0, 100); err != nil {
		return &usageError{err.Error()}
	}
	if o.publicURL != "" {
		u, err := url.Parse(o.publicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usagef("-public-url %q: want http(s)://host[:port]", o.publicURL)
		}
		o.publicURL = strings.TrimSuffix(o.publicURL, "/")
	}
	return nil
}

func (o *alertOptions) compare() changes.Options {
	return changes.Options{Text: changes.TextThreshold{Words: o.minTextWords, Percent: o.minTextPercent}}
}

// alertNet is how alert channels connect from this process: through its
// address guard (the free tool's, checked at dial time on the address
// connected), or without one under -allow-private; -resolve applies.
func (m *monitor) alertNet() alert.Net {
	d := &net.Dialer{Timeout: 30 * time.Second}
	resolve := fetch.Resolve{}
	for k, v := range m.o.resolve {
		resolve[strings.ToLower(k)] = v
	}
	if g := m.guard; g != nil {
		d.Resolver = g.Resolver
		d.Control = func(network, address string, c syscall.RawConn) error { return g.Control(network, address, c) }
	}
	return alert.Net{Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, resolve.Addr(addr))
	}}
}

// historyLink adds the page's history link to the messages a channel sends.
type historyLink struct {
	ch   alert.Channel
	base string
}

func (h historyLink) Send(ctx context.Context, key string, m *alert.Message) error {
	if h.base != "" && m.HistoryURL == "" {
		c := *m
		c.HistoryURL = h.base + "/page?" + url.Values{"url": {m.PageURL}}.Encode()
		m = &c
	}
	return h.ch.Send(ctx, key, m)
}

// channel builds channel id's sender from its stored settings.
func (m *monitor) channel(ctx context.Context, id int64) (alert.Channel, error) {
	c, ok, err := m.st.ChannelByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, alert.Permanent(fmt.Errorf("alert channel %d was removed", id))
	}
	ch, err := c.Config.Channel(m.alertNet())
	if err != nil {
		return nil, alert.Permanent(err)
	}
	return historyLink{ch: ch, base: m.o.alerts.publicURL}, nil
}

// alertSender delivers this database's outbox.
func (m *monitor) alertSender() *alert.Sender {
	return &alert.Sender{Outbox: m.st.Outbox(), Channel: m.channel, Logger: m.logger}
}

// drainAlerts sends every delivery due now once (after `run`): those that
// fail are retried by the next run or a watch, after their backoff.
func (m *monitor) drainAlerts(ctx context.Context, w io.Writer) error {
	s := m.alertSender()
	total := 0
	for range 1000 {
		n, err := s.RunOnce(ctx)
		total += n
		if err != nil {
			return err
		}
		if n == 0 || ctx.Err() != nil {
			break
		}
	}
	if total > 0 {
		fmt.Fprintf(w, "alerts: %d delivery attempts (see: monitor alert list -db %s)\n", total, m.o.db)
	}
	return nil
}

// withAlerts runs work with the alert sender beside it until work returns.
func (m *monitor) withAlerts(ctx context.Context, work func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.alertSender().Run(ctx)
	}()
	err := work(ctx)
	cancel()
	<-done
	return err
}

// alertCommand is `monitor alert SUB ...`.
func alertCommand(ctx context.Context, args []string, stdout, stderr io.Writer, e env) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, alertUsage)
		return usagef("alert needs a subcommand: add, list, rm or test")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "add", "list", "rm", "test":
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, alertUsage)
		return nil
	default:
		fmt.Fprint(stderr, alertUsage)
		return usagef("unknown alert subcommand %q (add, list, rm or test)", sub)
	}
	o := options{resolve: resolveFlag{}}
	fs := flag.NewFlagSet("monitor alert "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.db, "db", "", "path of the monitor's SQLite database")
	var (
		webhook, secret, secretEnv, slack, email, smtpAddr, from, smtpUser, smtpPassEnv string
		page, host, kinds, minSev, name                                                 string
		requireTLS                                                                      bool
	)
	switch sub {
	case "add":
		fs.StringVar(&webhook, "webhook", "", "POST each alert as signed JSON to this URL")
		fs.StringVar(&secret, "secret", "", "webhook: the HMAC-SHA256 key (visible in ps: prefer -secret-env)")
		fs.StringVar(&secretEnv, "secret-env", "", "webhook: read the HMAC-SHA256 key from this environment variable")
		fs.StringVar(&slack, "slack", "", "post each alert to this Slack-compatible incoming webhook URL")
		fs.StringVar(&email, "email", "", "send each alert to these addresses (comma-separated)")
		fs.StringVar(&smtpAddr, "smtp", "", "email: the SMTP server, HOST:PORT")
		fs.StringVar(&from, "from", "", "email: the sender address (default monitor@ the SMTP host)")
		fs.StringVar(&smtpUser, "smtp-user", "", "email: the SMTP user (AUTH PLAIN, over TLS only except to loopback)")
		fs.StringVar(&smtpPassEnv, "smtp-pass-env", "", "email: read the SMTP password from this environment variable")
		fs.BoolVar(&requireTLS, "smtp-require-tls", false, "email: refuse to send unless the server offers STARTTLS")
		fs.StringVar(&page, "page", "", "only changes of this tracked page")
		fs.StringVar(&host, "host", "", "only changes of pages on this host (scheme://host[:port] or a host name)")
		fs.StringVar(&kinds, "kinds", "", "only these change kinds, comma-separated (default every kind)")
		fs.StringVar(&minSev, "min-severity", "info", "only changes at least this severe: info, low, medium, high, critical")
		fs.StringVar(&name, "name", "", "a name for the channel (default channel-ID)")
	}
	switch sub {
	case "add", "test":
		fs.Var(o.resolve, "resolve", "HOST:PORT:ADDR: connect to ADDR for HOST:PORT (repeatable)")
		fs.BoolVar(&o.allowPrivate, "allow-private", false, "allow destinations on loopback, private and other internal addresses (off: refused before connecting)")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &usageError{err.Error()}
	}
	if o.db == "" {
		return usagef("-db PATH is required")
	}
	var id int64
	switch sub {
	case "rm", "test":
		if fs.NArg() != 1 {
			return usagef("alert %s takes one channel ID (see: monitor alert list -db %s)", sub, o.db)
		}
		n, err := strconv.ParseInt(fs.Arg(0), 10, 64)
		if err != nil || n <= 0 {
			return usagef("channel ID %q: want a number from monitor alert list", fs.Arg(0))
		}
		id = n
	default:
		if fs.NArg() > 0 {
			return usagef("unexpected argument %q", fs.Arg(0))
		}
	}
	var ch store.Channel
	if sub == "add" {
		var err error
		ch, err = channelFromFlags(webhook, secret, secretEnv, slack, email, smtpAddr, from, smtpUser, smtpPassEnv, requireTLS)
		if err != nil {
			return err
		}
		ch.Name = name
		if ch.Scope, ch.Target, err = alertTarget(page, host); err != nil {
			return err
		}
		if ch.Filter, err = parseFilter(kinds, minSev); err != nil {
			return err
		}
	}
	st, err := store.Open(ctx, o.db, store.MustExist)
	if err != nil {
		return err
	}
	defer st.Close()
	m, err := newMonitor(st, o, e)
	if err != nil {
		return err
	}
	defer m.close()
	now := e.clock()
	switch sub {
	case "add":
		if err := m.checkDestination(ctx, ch.Config); err != nil {
			return err
		}
		id, err := st.AddChannel(ctx, ch, now())
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "alert channel %d: %s\n", id, cmdline.Safe(ch.Describe()))
		return nil
	case "list":
		return listAlerts(ctx, st, stdout)
	case "rm":
		ok, err := st.RemoveChannel(ctx, id)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("no alert channel %d (see: monitor alert list -db %s)", id, o.db)
		}
		fmt.Fprintf(stdout, "removed alert channel %d and its deliveries\n", id)
		return nil
	case "test":
		desc, err := m.testChannel(ctx, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "test delivery to channel %d (%s): accepted\n", id, cmdline.Safe(desc))
		return nil
	}
	return nil
}

// testChannel sends a test message to channel id now, through the address
// guard (`alert test` and the alerts page's test button), and returns the
// channel's description.
func (m *monitor) testChannel(ctx context.Context, id int64) (string, error) {
	c, ok, err := m.st.ChannelByID(ctx, id)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("no alert channel %d (see: monitor alert list -db %s)", id, m.o.db)
	}
	if err := m.checkDestination(ctx, c.Config); err != nil {
		return "", err
	}
	sender, err := m.channel(ctx, id)
	if err != nil {
		return "", err
	}
	msg := testMessage(m.now())
	if err := sender.Send(ctx, alert.DeliveryKey(msg.ID, id), msg); err != nil {
		return "", fmt.Errorf("test delivery to channel %d (%s) failed: %w", id, c.Config.String(), err)
	}
	return c.Config.String(), nil
}

// testMessage is what `alert test` and the dashboard's test button send.
func testMessage(now time.Time) *alert.Message {
	return &alert.Message{
		ID: "test-" + strconv.FormatInt(now.UnixNano(), 10), Monitor: "2-UAcomBot monitor",
		PageURL: "https://example.com/", TakenAt: now.UTC(), Severity: "info",
		Changes: []alert.Change{{Kind: "test", Severity: "info", Field: "test", Old: "", New: "this is a test alert"}},
	}
}

// channelFromFlags builds a channel's settings from alert add's flags:
// exactly one of -webhook, -slack, -email.
func channelFromFlags(webhook, secret, secretEnv, slack, email, smtpAddr, from, smtpUser, smtpPassEnv string, requireTLS bool) (store.Channel, error) {
	n := 0
	for _, v := range []string{webhook, slack, email} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return store.Channel{}, usagef("give exactly one of -webhook URL, -slack URL or -email ADDR")
	}
	var c alert.Config
	switch {
	case webhook != "":
		c = alert.Config{Kind: "webhook", URL: webhook, Secret: secret}
		if secretEnv != "" {
			if secret != "" {
				return store.Channel{}, usagef("give -secret or -secret-env, not both")
			}
			c.Secret = os.Getenv(secretEnv)
			if c.Secret == "" {
				return store.Channel{}, usagef("-secret-env %s: the variable is empty or unset", secretEnv)
			}
		}
	case slack != "":
		c = alert.Config{Kind: "slack", URL: slack}
	default:
		if smtpAddr == "" {
			return store.Channel{}, usagef("-email needs -smtp HOST:PORT")
		}
		for a := range strings.SplitSeq(email, ",") {
			if a = strings.TrimSpace(a); a != "" {
				c.To = append(c.To, a)
			}
		}
		c.Kind, c.SMTP, c.From, c.Username, c.RequireTLS = "email", smtpAddr, from, smtpUser, requireTLS
		if c.From == "" {
			h, _, _ := net.SplitHostPort(smtpAddr)
			c.From = "2-UAcomBot monitor <monitor@" + h + ">"
		}
		if smtpPassEnv != "" {
			c.Password = os.Getenv(smtpPassEnv)
			if c.Password == "" {
				return store.Channel{}, usagef("-smtp-pass-env %s: the variable is empty or unset", smtpPassEnv)
			}
		}
		if (c.Username == "") != (c.Password == "") {
			return store.Channel{}, usagef("-smtp-user and -smtp-pass-env go together")
		}
	}
	if (webhook == "") && (secret != "" || secretEnv != "") {
		return store.Channel{}, usagef("-secret and -secret-env are for -webhook")
	}
	if _, err := c.Channel(alert.Net{}); err != nil {
		return store.Channel{}, &usageError{strings.TrimPrefix(err.Error(), "alert: ")}
	}
	return store.Channel{Config: c}, nil
}

// alertTarget reads -page and -host: the pages a channel is for.
func alertTarget(page, host string) (scope, target string, err error) {
	switch {
	case page != "" && host != "":
		return "", "", usagef("give -page or -host, not both")
	case page != "":
		u, err := canonicalURL(page)
		if err != nil {
			return "", "", &usageError{err.Error()}
		}
		return "page", u, nil
	case host != "":
		raw := host
		if !strings.Contains(raw, "://") {
			raw = "https://" + raw
		}
		u, err := canonicalURL(raw)
		if err != nil {
			return "", "", &usageError{err.Error()}
		}
		p, _ := url.Parse(u)
		return "host", p.Scheme + "://" + p.Host, nil
	}
	return "monitor", "", nil
}

// parseFilter reads -kinds and -min-severity.
func parseFilter(kinds, minSev string) (changes.Filter, error) {
	var f changes.Filter
	for k := range strings.SplitSeq(kinds, ",") {
		if strings.TrimSpace(k) == "" {
			continue
		}
		kind, err := changes.ParseKind(k)
		if err != nil {
			return f, &usageError{"-kinds: " + err.Error()}
		}
		f.Kinds = append(f.Kinds, kind)
	}
	sev, err := changes.ParseSeverity(minSev)
	if err != nil {
		return f, &usageError{"-min-severity: " + err.Error()}
	}
	f.MinSeverity = sev
	return f, nil
}

// checkDestination refuses, before anything connects, a destination whose
// host is or resolves to an internal address (the free tool's guard),
// unless -allow-private: a usage error, the address being what was typed.
func (m *monitor) checkDestination(ctx context.Context, c alert.Config) error {
	dest := c.Destination()
	raw := c.URL
	if c.Kind == "email" {
		raw = "http://" + dest + "/"
	}
	if err := m.taker().CheckURL(ctx, raw); err != nil {
		return &usageError{fmt.Sprintf("alert destination %s: %v (an internal address is refused unless -allow-private)", dest, err)}
	}
	return nil
}

// listAlerts prints the channels and the latest deliveries.
func listAlerts(ctx context.Context, st *store.Store, w io.Writer) error {
	chans, err := st.Channels(ctx)
	if err != nil {
		return err
	}
	if len(chans) == 0 {
		fmt.Fprintln(w, "no alert channels (add one with: monitor alert add)")
	}
	for _, c := range chans {
		fmt.Fprintf(w, "%d  %s  %s\n", c.ID, cmdline.Safe(c.Name), cmdline.Safe(c.Describe()))
	}
	ds, err := st.Deliveries(ctx, 20)
	if err != nil {
		return err
	}
	if len(ds) > 0 {
		fmt.Fprintln(w, "latest deliveries:")
	}
	for _, d := range ds {
		line := fmt.Sprintf("  %s  channel %d  %s  %s  attempts %d", d.State, d.ChannelID, d.Message.Subject(), d.Key, d.Attempts)
		if d.LastError != "" {
			line += "  last error: " + d.LastError
		}
		fmt.Fprintln(w, cmdline.Safe(line))
	}
	return nil
}

// newAlertChannel is the dashboard's alert form, checked as alert add's
// flags are: the same settings, target and filter parsing, and the
// destination through this process's address guard.
func (m *monitor) newAlertChannel(ctx context.Context, f web.AlertForm) (store.Channel, error) {
	var webhook, slack, email string
	switch f.Kind {
	case "webhook":
		webhook = f.URL
	case "slack":
		slack = f.URL
	case "email":
		email = f.Email
	default:
		return store.Channel{}, fmt.Errorf("unknown channel kind %q (webhook, slack or email)", f.Kind)
	}
	secret := ""
	if f.Kind == "webhook" {
		secret = f.Secret
	}
	ch, err := channelFromFlags(webhook, secret, "", slack, email, f.SMTP, "", "", "", false)
	if err != nil {
		return store.Channel{}, err
	}
	ch.Name = f.Name
	if ch.Scope, ch.Target, err = alertTarget(f.Page, f.Host); err != nil {
		return store.Channel{}, err
	}
	if f.MinSeverity == "" {
		f.MinSeverity = "info"
	}
	if ch.Filter, err = parseFilter(f.Kinds, f.MinSeverity); err != nil {
		return store.Channel{}, err
	}
	if err := m.checkDestination(ctx, ch.Config); err != nil {
		return store.Channel{}, err
	}
	return ch, nil
}
