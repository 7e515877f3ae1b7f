package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/examples/internal/cmdline"
	"github.com/politecrawl/polite/examples/monitor/internal/condget"
	"github.com/politecrawl/polite/examples/monitor/internal/guard"
	"github.com/politecrawl/polite/examples/monitor/internal/schedule"
	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
	"github.com/politecrawl/polite/examples/monitor/internal/store"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/robots"
)

// monitor takes the snapshots that are due, politely.
type monitor struct {
	st  *store.Store // nil for `check` without -db
	o   options
	now func() time.Time
	// token is the product token of the configured user agent, named in
	// the banner; tokens are the ones robots.txt is asked about, in order:
	// the user agent's own, then 2-UAcomBot, which the monitor answers to
	// whatever -user-agent says (rules site owners wrote for the published
	// bot keep working).
	token  string
	tokens []string
	header http.Header
	base   http.RoundTripper
	guard  *guard.Guard
	// logger receives every component's decision events (-log FILE);
	// nil is silent.
	logger *slog.Logger
	// hostGate is the process's one per-host limit (one request at a time
	// per host, -gap apart), passed by every request of every run and of
	// the free tool, so `serve -watch` never sends a host a check and a
	// snapshot closer together than a run alone would.
	hostGate *frontier.Frontier
}

// publishedToken is the product token of the 2-UAcomBot page.
const publishedToken = "2-UAcomBot"

func newMonitor(st *store.Store, o options, e env) (*monitor, error) {
	// The guard is on unless -allow-private: test hooks only add to it.
	g := guard.New(o.allowPrivate, o.resolve).WithTestHooks(e.guardHooks)
	base := e.transport
	if base == nil {
		base = g.Transport()
	}
	hcfg := frontier.DefaultConfig()
	hcfg.MaxInFlight = maxParallel
	hcfg.Gap = 0
	hcfg.PerHostInFlight = 1
	hcfg.PerHostGap = o.gap
	hcfg.Now = e.clock()
	hcfg.Logger = e.logger
	hostGate, err := frontier.New(hcfg)
	if err != nil {
		return nil, err
	}
	return &monitor{
		st:     st,
		o:      o,
		now:    e.clock(),
		token:  robots.ProductToken(o.userAgent),
		tokens: robots.Tokens(o.userAgent, publishedToken),
		logger: e.logger,
		// X-AGENT: 2-UA, spelled as the page says: fetch sends header names
		// as written (log parsers that grep for "X-AGENT: 2-UA" are not
		// case-insensitive).
		header:   http.Header{"X-AGENT": {"2-UA"}},
		base:     condget.Transport{Base: base},
		guard:    g,
		hostGate: hostGate,
	}, nil
}

func (m *monitor) close() {
	if c, ok := m.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// newClient returns the polite client and robots cache of one run (or of
// the free tool), passing gate before every request, robots.txt included.
func (m *monitor) newClient(gate fetch.Gate, warn func(format string, a ...any)) (*fetch.Client, *robots.Cache) {
	client := &fetch.Client{
		UserAgent:    m.o.userAgent,
		Header:       m.header,
		RobotsTokens: m.tokens,
		Timeout:      m.o.timeout,
		Gate:         gate,
		Policy:       backoff.Default(),
		Transport:    m.base,
		Now:          m.now,
		Logger:       m.logger,
		// Each redirect target is checked before its robots.txt is asked
		// for: a site must not steer the monitor to an internal address
		// (the dial hook would refuse it too, but less clearly).
		CheckRedirect: func(next *url.URL, _ []fetch.Hop) error {
			return m.guard.CheckURL(context.Background(), next.String())
		},
	}
	// robots.txt requests go through the same gate and carry the same
	// identity as page requests. The timeout is the transport's, which
	// starts when the gate admits the request, not while it waits its turn.
	rc := &robots.Cache{
		Client:  &http.Client{Transport: client.PoliteTransport()},
		TTL:     robotsTTL,
		Recheck: robotsRecheck,
		Now:     m.now,
		Logger:  m.logger,
	}
	if m.st != nil {
		rc.Store = m.st.Robots()
		// A store failure only costs a refetch, but the one-hour promise
		// depends on the store: say so.
		rc.OnStoreError = func(err error) { warn("%s\n", cmdline.Safe(fmt.Sprintf("warning: robots_cache: %v", err))) }
	}
	client.Robots = rc
	return client, rc
}

// taker is the one polite check of a page, as this process makes it.
func (m *monitor) taker() snapshot.Taker {
	return snapshot.Taker{Guard: m.guard, Tokens: m.tokens, Recheck: robotsRecheck}
}

// runner is the scheduler of this process: what is due, checked politely,
// committed one snapshot at a time.
func (m *monitor) runner() *schedule.Runner {
	return &schedule.Runner{Store: m.st, Parallel: m.o.parallel, Gap: m.o.gap, HostGate: m.hostGate,
		NewClient: m.newClient, Taker: m.taker(), Now: m.now, Logger: m.logger}
}
