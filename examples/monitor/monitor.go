package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/http/httpproxy"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/examples/internal/cmdline"
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
	// base is the clients' Transport: nil under the guard (fetch builds
	// Guard.NewTransport), the plain base with -allow-private, or a
	// test's network.
	base http.RoundTripper
	// guard is the address guard of this process; nil only under
	// -allow-private. clientGuard is the one the clients dial through:
	// guard, unless a test replaced the network (env.transport), where
	// only the name checks apply, as before the guard moved to fetch.
	guard, clientGuard *fetch.Guard
	// logger receives every component's decision events (-log FILE);
	// nil is silent.
	logger *slog.Logger
	// hostGate is the process's one per-host limit (one request at a time
	// per host, -gap apart), passed by every request of every run and of
	// the free tool, so `serve -watch` never sends a host a check and a
	// snapshot closer together than a run alone would.
	hostGate *frontier.Frontier
}

// guardHooks are what a test may add to the address guard (a resolver that
// maps test names, a recorder of every connection about to be made, the
// exact loopback addresses of its own servers); none can turn it off.
type guardHooks struct {
	// Resolver answers the guard's lookups and its dialer's.
	Resolver *net.Resolver
	// AlsoControl runs after the guard's dial check, on addresses it let
	// through.
	AlsoControl func(network, address string, c syscall.RawConn) error
	// Exempt lists exact loopback address:port pairs let through; anything
	// else in it is ignored.
	Exempt []netip.AddrPort
}

// newGuard returns the process's address guard: on, refusing every
// internal address fetch.Guard knows, unless -allow-private (then nil).
// This is the one place the default is set; hooks only add to it.
func newGuard(o options, h guardHooks) *fetch.Guard {
	if o.allowPrivate {
		return nil
	}
	resolve := fetch.Resolve{}
	for k, v := range o.resolve {
		resolve[strings.ToLower(k)] = v
	}
	// HTTP_PROXY/HTTPS_PROXY/NO_PROXY are honoured under the guard too:
	// the dial check then sees the proxy's address, and only the name
	// check the target's.
	proxy := httpproxy.FromEnvironment().ProxyFunc()
	g := &fetch.Guard{
		Resolve:     resolve,
		Proxy:       func(req *http.Request) (*url.URL, error) { return proxy(req.URL) },
		Resolver:    h.Resolver,
		AlsoControl: h.AlsoControl,
	}
	for _, ap := range h.Exempt {
		if ap.Addr().Unmap().IsLoopback() {
			g.AllowAddrPorts = append(g.AllowAddrPorts, ap)
		}
	}
	return g
}

// publishedToken is the product token of the 2-UAcomBot page.
const publishedToken = "2-UAcomBot"

func newMonitor(st *store.Store, o options, e env) (*monitor, error) {
	g := newGuard(o, e.guardHooks)
	clientGuard := g
	if e.transport != nil {
		clientGuard = nil
	}
	// Under the guard the clients' Transport stays nil: fetch then dials
	// through Guard.NewTransport (the -resolve map is Guard.Resolve), so a
	// refused address is never connected.
	base := e.transport
	if base == nil && g == nil {
		base = fetch.NewBaseTransport(o.resolve)
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
		header:      http.Header{"X-AGENT": {"2-UA"}},
		base:        base,
		guard:       g,
		clientGuard: clientGuard,
		hostGate:    hostGate,
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
		Guard:        m.clientGuard,
		// Each redirect target is checked before its robots.txt is asked
		// for: a site must not steer the monitor to an internal address
		// (the dial hook would refuse it too, but less clearly).
		CheckRedirect: func(next *url.URL, _ []fetch.Hop) error {
			return m.taker().CheckURL(context.Background(), next.String())
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
		// Conditional GET: the snapshots are the validator store.
		client.Validators = m.st.Validators()
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
		NewClient: m.newClient, Taker: m.taker(), Now: m.now, Logger: m.logger, CatchUp: m.o.catchUp}
}
