package crawl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/pagecheck"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/politecrawl/polite/examples/internal/cmdline"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/internal/urlnorm"
	"github.com/politecrawl/polite/robots"
	"github.com/politecrawl/polite/sitemap"
)

// wordPressProbes are the only extra requests made, and only to a site whose HTML looks like WordPress.
var wordPressProbes = []string{"/wp-json/", "/xmlrpc.php", "/wp-content/uploads/", "/?p=1"}

const (
	probeBodyMax = 64 << 10 // llms.txt and WordPress probes: we record status and size, not content
	sitemapLevel = 2        // index files followed two levels deep
)

// Crawler is one audit run: the library's pieces wired together, plus the database.
type Crawler struct {
	Cfg   *Config      // the command line
	Env   Env          // what tests replace (transport, clock, terminal)
	St    *store.Store // where every row goes; its first write error stops the crawl
	Log   io.Writer    // stderr: the progress line and the summary
	Count counters     // the running totals of the progress line and the crawls row

	start  *url.URL
	Origin string   // scheme://host[:port] of the start URL
	Twin   string   // origin of the www/apex twin, "" when there is none
	tokens []string // robots.txt product tokens, in order of preference
	base   http.RoundTripper
	Policy *backoff.Policy // retries and Retry-After, shared by every client of the run
	scope  frontier.Scope  // frontier.SameSite: it reads a URL's scheme and host only (siteMemo relies on it)

	Slow   *backoff.Slowdown  // the 429 slowdown: once slowed, the whole run keeps the longer gap
	Robots *robots.Cache      // robots.txt per host, kept in the database for a resume
	Front  *frontier.Frontier // the queue, scope, limits and per-host gate
	// frontierCfg is the configuration given to frontier.New, kept for the test of the wiring.
	frontierCfg frontier.Config
	Client      *fetch.Client // the polite client for pages and sitemaps (the rendered pass shares its gate)
	probe       *fetch.Client // llms.txt and WordPress probes: redirects not followed

	Prog      *progress // nil unless stderr is a terminal
	mu        sync.Mutex
	recorded  *urlSet               // URLs with a pages row (blocked ones are recorded when first refused)
	linksOf   *urlSet               // final URLs whose links are recorded (a redirect's links are its target's)
	reached   map[string]reachedURL // URLs a redirect chain requested that have no row yet (duplicate.go)
	llmsPage  *store.RequestRecord  // /llms.txt when a link led the crawl to it
	home      string                // scheme://host where the start page ended up; origin until then
	wordpress atomic.Pointer[string]

	stopSite    context.CancelCauseFunc // ends the crawl with an *offLimitsMidway cause
	hostStopped map[string]bool         // other hosts of the site found off limits during the crawl

	// Sitemap page URLs wait here until the link crawl is complete (at most sitemapHoldMax of them).
	held             []heldURL
	heldDropped      int         // in-scope sitemap entries past sitemapHoldMax: not queued from the sitemaps
	heldFirstDropped string      // the first of them, for the finding
	notCrawled       [][2]string // (sitemap, URL) left out by the page limit

	writing   chan struct{}   // a token per finished page not yet committed (bounds what a crash loses); nil without resume
	Resume    *store.CrawlRow // the crawl being resumed; nil for a new one (resume.go)
	requested map[string]bool // llms.txt and probe URLs a resumed crawl has asked already

	// OnPage, when set, is told about every page row as it is handed to the writer (observe.go).
	OnPage func(*store.PageRecord)
}

// NewCrawler wires the library together. This is the part to read to learn how the packages fit.
func NewCrawler(cfg *Config, e Env, st *store.Store, log io.Writer) (*Crawler, error) {
	start, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, err
	}
	c := &Crawler{Cfg: cfg, Env: e, St: st, Log: log, start: start, recorded: newURLSet(), linksOf: newURLSet(), reached: map[string]reachedURL{}, hostStopped: map[string]bool{},
		stopSite: func(error) {}}
	// The site is the start host and its www/apex twin (shop.example <-> www.shop.example).
	if c.scope, err = frontier.SameSite(cfg.URL); err != nil {
		return nil, err
	}
	host, err := urlnorm.HostPort(start.Scheme, start.Host)
	if err != nil {
		return nil, err
	}
	c.Origin = start.Scheme + "://" + host
	c.home = c.Origin
	if tw := frontier.Twin(host); tw != "" {
		c.Twin = start.Scheme + "://" + tw
	}
	// The robots.txt tokens: the one the User-Agent names, by the robots package's rule ("CrawlCove-Crawler"
	// -> "CrawlCove-Crawler"; "Mozilla/5.0 (compatible; X/1.0)" -> "X"), then CrawlCove-Crawler whatever
	// -user-agent says: the bot page promises that rules written for it keep working. The first token a
	// group names decides; the * groups apply only when none is named.
	c.tokens = robots.Tokens(cfg.UserAgent, fallbackToken)

	// The base transport: proxy from the environment, -resolve like curl. Tests swap in an in-memory one.
	base := e.Transport
	if base == nil {
		bt := fetch.NewBaseTransport(cfg.Resolve)
		if cfg.Demo {
			bt.Proxy = nil // the demo shop lives on loopback under a .test name: never ask a proxy for it
		}
		base = bt
	}
	base = countingTransport{gzipTransport{base}, &c.Count.requests}

	// One retry policy and one slowdown latch for the run: fetch trips the latch on a 429, the frontier
	// applies it (1 in flight, 3 s gap) to every request from then on.
	c.Policy = backoff.Default()
	c.Slow = c.Policy.NewSlowdown()

	// robots.txt, cached per host. The frontier asks it before queueing a URL, fetch before every request
	// and redirect hop. Its own HTTP client is set below, once the gate exists.
	// The copies are kept in the crawl's database too, so that a resumed crawl obeys the same ones.
	c.Robots = &robots.Cache{Now: e.Now, Store: &store.RobotsStore{St: st}, Logger: cfg.Logger}

	// The frontier: scope (start host + twin), breadth-first order, limits, robots.txt checked before a URL
	// is queued, and the politeness gate (in flight, gap, slowdown) that every request of the run passes.
	fc := frontier.DefaultConfig()
	fc.MaxPages, fc.MaxDepth = cfg.MaxPages, cfg.MaxDepth
	fc.MaxInFlight, fc.Gap = cfg.Concurrency, cfg.Gap
	fc.Robots, fc.RobotsTokens = c.Robots, c.tokens
	fc.Slowdown = c.Slow
	fc.Scope = c.scope
	fc.Now = e.Now
	fc.Logger = cfg.Logger
	if !e.MemoryQueue {
		fc.Queue = store.NewSQLiteQueue(st, e.Now) // in the crawl's database, for -resume
		c.writing = make(chan struct{}, WriteBacklog*cfg.Concurrency)
	}
	// The polite client for pages: our User-Agent, robots.txt checked for the URL and every redirect hop,
	// 10 hops, the timeout, retries by the policy. Given to the frontier as Config.Client, which makes the
	// frontier its gate and its Claimer: a redirect target the crawl already has (queued, fetched, or
	// reached through another redirect) is not requested again (Result.DuplicateTarget).
	c.base = base
	c.Client = c.newClient(0)
	fc.Client = c.Client
	c.frontierCfg = fc
	if c.Front, err = frontier.New(fc); err != nil {
		return nil, err
	}
	c.Client.Claimer = claimRecorder{c, c.Client.Claimer} // the frontier decides; the crawl notes what it let through
	// Redirects stay on the site: a hop to another host is not requested (links to other sites are
	// recorded, never followed, and neither are redirects to them).
	c.Client.CheckRedirect = func(next *url.URL, via []fetch.Hop) error {
		if !c.InScope(next) {
			return errOffsite
		}
		return nil
	}
	// robots.txt requests go through the same gate, identity and timeout (the client's PoliteTransport),
	// so they count against the in-flight and gap limits like every other request. No http.Client.Timeout:
	// it would also count the wait for the gate, and a robots.txt never sent must not look unreachable.
	c.Robots.Client = &http.Client{Transport: c.Client.PoliteTransport()}

	// llms.txt and the WordPress probes: the same politeness, but exactly one request each, so a
	// redirect is recorded rather than followed.
	c.probe = c.newClient(probeBodyMax)
	c.probe.MaxRedirects = -1
	return c, nil
}

// newClient returns a fetch.Client sharing the run's gate, robots cache, policy and slowdown. Before the
// frontier exists (the pages client, which frontier.New wires) it has no gate yet.
func (c *Crawler) newClient(maxBody int64) *fetch.Client {
	fc := &fetch.Client{
		UserAgent:    c.Cfg.UserAgent,
		RobotsTokens: c.tokens,
		Logger:       c.Cfg.Logger,
		Timeout:      c.Cfg.Timeout,
		MaxRedirects: 10,
		MaxBodyBytes: maxBody,
		Robots:       c.Robots,
		Policy:       c.Policy,
		Slowdown:     c.Slow,
		Transport:    c.base,
		Now:          c.Env.Now,
	}
	if c.Front != nil {
		fc.Gate = c.Front
	}
	return fc
}

// countingTransport counts every request that reaches the network.
type countingTransport struct {
	rt http.RoundTripper
	n  *atomic.Int64
}

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return t.rt.RoundTrip(req)
}

// InScope says whether a URL belongs to the site being audited (the frontier's own scope rule).
// Everything else is external: recorded, never requested.
func (c *Crawler) InScope(u *url.URL) bool { return u != nil && c.scope(u) }

// CrawlResult is how the crawl ended.
type CrawlResult struct {
	Outcome string    // finished | interrupted | off_limits | failed
	Err     error     // why, when it did not finish; main prints it
	Started time.Time // when the run began
	Ended   time.Time // when it stopped
}

// Crawl runs the page's list, in order: robots.txt, sitemaps, pages, llms.txt, WordPress probes.
func (c *Crawler) Crawl(ctx context.Context) CrawlResult {
	started := c.Env.Now()
	res := c.steps(ctx, started)
	// The crawl's time includes writing its rows. A failed write, even the last one, makes the crawl
	// interrupted whatever it was about to be: the file lacks what came after that write, and a resume
	// fetches it again.
	if err := c.St.Flush(); err != nil && c.St.CrawlID != 0 {
		res = CrawlResult{Outcome: "interrupted", Err: &writeStopped{path: c.Cfg.DB, err: err}}
	}
	res.Started, res.Ended = started, c.Env.Now()
	return res
}

// writeStopped is why a crawl stopped when a write to its database failed (a full disk, an I/O error).
type writeStopped struct {
	path string
	err  error
}

func (e *writeStopped) Error() string {
	return fmt.Sprintf("writing %s: %v", e.path, e.err)
}

func (e *writeStopped) Unwrap() error { return e.err }

func (c *Crawler) steps(ctx context.Context, started time.Time) CrawlResult {
	// robots.txt of the site turning unreachable during the crawl (a refresh after the cache's TTL) stops
	// it like an unreachable robots.txt at the start: see siteOffLimits.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	c.stopSite = stop
	// The first failed write stops the crawl: nothing fetched after it could be kept. The goroutine holds
	// the store and the path, not the crawler: it may still be on its way out when the passes start, and
	// the crawler's memory (its frontier above all) must be free by then.
	st, db := c.St, c.Cfg.DB
	go func() {
		select {
		case <-st.Failed():
			stop(&writeStopped{path: db, err: st.Err()})
		case <-ctx.Done():
		}
	}()

	if c.Resume != nil {
		if err := c.resumeCrawl(ctx); err != nil {
			return CrawlResult{Outcome: "failed", Err: err}
		}
	} else if err := c.St.BeginCrawl(ctx, store.CrawlInfo{StartURL: c.Cfg.URL, UserAgent: c.Cfg.UserAgent, Token: strings.Join(c.tokens, ", "),
		Started: started, Settings: c.Cfg.Settings()}); err != nil {
		return CrawlResult{Outcome: "failed", Err: err}
	}
	defer keepProgress(c.St, c.Resume, &c.Count, c.Slow)()
	if !c.Cfg.Quiet && c.Env.Terminal(c.Log) {
		c.Prog = startProgress(c.Log, &c.Count, c.Env.Now, c.ProgressState)
		defer c.Prog.Finish()
	}

	if note := c.twinResolveNote(); note != "" {
		c.Logf("%s", note)
	}

	// 1. robots.txt first, for the start host and its twin.
	v, err := c.Robots.CheckAs(ctx, c.tokens, c.Cfg.URL)
	if err != nil {
		return c.stopped(ctx, err)
	}
	if v.Outcome == robots.Unreachable {
		return CrawlResult{Outcome: "off_limits", Err: offLimitsError(c.Origin, v)}
	}
	if c.Twin != "" {
		tv, err := c.Robots.CheckAs(ctx, c.tokens, c.Twin+c.start.RequestURI())
		if err != nil {
			return c.stopped(ctx, err)
		}
		if tv.Outcome == robots.Unreachable {
			// The twin is off limits for the rest of the run; the start host goes on. A twin that does not
			// exist (no DNS record) is common and not worth a message.
			_, _ = c.Front.StopHost(strings.TrimPrefix(c.Twin, c.start.Scheme+"://"))
			var dns *net.DNSError
			if !errors.As(tv.Err, &dns) || !dns.IsNotFound {
				c.Logf("audit: %s/robots.txt %s: that host is off limits; crawling %s only", c.Twin, unreachableWhy(tv), c.Origin)
			}
		}
	}

	// The start page is queued first so it is fetched first (depth 0).
	if r := c.add(ctx, c.Cfg.URL, 0, "", "start"); r.Outcome == frontier.Disallowed {
		c.Logf("audit: the start page %s is blocked by robots.txt (%s); crawling what the sitemaps list", r.URL, r.Verdict.Decision)
	}

	// 2. Sitemaps named in robots.txt (never a guessed /sitemap.xml), index files two levels deep. Their
	// page URLs are held back, not queued: -max-pages counts URLs when they are queued, so a large sitemap
	// queued now would use up the budget before a single link of the site is followed.
	if err := c.sitemaps(ctx); err != nil && ctx.Err() != nil {
		return c.stopped(ctx, err)
	}

	// 3. Pages, breadth-first, to the limits: first the start page and the links found from it, then the
	// sitemap URLs the links did not reach, in what is left of the budget (their links followed as usual).
	if err := c.pages(ctx); err != nil {
		return c.stopped(ctx, err)
	}
	if c.queueSitemapURLs(ctx) {
		if err := c.pages(ctx); err != nil {
			return c.stopped(ctx, err)
		}
	}
	if ctx.Err() != nil {
		return c.stopped(ctx, ctx.Err())
	}

	// 4. llms.txt, once.  5. WordPress probes, only on a site that looks like WordPress.
	c.llms(ctx)
	c.wordPressProbes(ctx)
	if ctx.Err() != nil {
		return c.stopped(ctx, ctx.Err())
	}
	return CrawlResult{Outcome: "finished"}
}

func (c *Crawler) stopped(ctx context.Context, err error) CrawlResult {
	var ws *writeStopped
	if errors.As(context.Cause(ctx), &ws) {
		return CrawlResult{Outcome: "interrupted", Err: ws}
	}
	var mid *offLimitsMidway
	if errors.As(context.Cause(ctx), &mid) {
		return CrawlResult{Outcome: "off_limits", Err: mid}
	}
	var ref *refusesCrawler
	if errors.As(context.Cause(ctx), &ref) {
		return CrawlResult{Outcome: "refused", Err: ref}
	}
	if ctx.Err() != nil {
		return CrawlResult{Outcome: "interrupted", Err: fmt.Errorf("interrupted: %w", ctx.Err())}
	}
	return CrawlResult{Outcome: "failed", Err: err}
}

// Logf writes a message line to stderr, above the progress line when there is one.
// Site text in it (a robots.txt rule, a URL) is made safe for the terminal first.
func (c *Crawler) Logf(format string, args ...any) {
	msg := cmdline.Safe(fmt.Sprintf(format, args...))
	if c.Prog != nil {
		c.Prog.println(msg)
		return
	}
	fmt.Fprintln(c.Log, msg)
}

// twinResolveNote warns when -resolve sends the start host to a staging address but not its twin: the
// twin is part of the site, so without the note a staging crawl would quietly reach production's www host.
func (c *Crawler) twinResolveNote() string {
	if len(c.Cfg.Resolve) == 0 || c.Twin == "" {
		return ""
	}
	key := func(origin string) string {
		u, err := url.Parse(origin)
		if err != nil {
			return ""
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		return strings.ToLower(net.JoinHostPort(u.Hostname(), port))
	}
	start, twin := key(c.Origin), key(c.Twin)
	if _, ok := c.Cfg.Resolve[start]; !ok {
		return ""
	}
	if _, ok := c.Cfg.Resolve[twin]; ok {
		return ""
	}
	return fmt.Sprintf("audit: note: -resolve maps %s but not its twin %s, which is part of the site and is reached through DNS (add -resolve %s:ADDR to send it to the same server)", start, twin, twin)
}

// offLimitsMidway is why a crawl stopped when the site's robots.txt became unreachable during it.
type offLimitsMidway struct {
	origin string
	why    string
}

func (e *offLimitsMidway) Error() string {
	return fmt.Sprintf("%s/robots.txt %s during the crawl, so the whole site is off limits: the crawl stopped there (Crawl Cove stops when robots.txt is unreachable or answers a server error)", e.origin, e.why)
}

// siteOffLimits is told about every URL refused because its host's robots.txt was unreachable or 5xx
// (after a refresh, since at the start such a host is never crawled). For the site itself (the start
// URL's or the start page's final scheme and host) the crawl stops, as the bot page promises; the twin is
// stopped alone, so its robots.txt is not asked again; the start host's other scheme (a site without https)
// is only reported: its URLs are refused one by one, without a request.
func (c *Crawler) siteOffLimits(raw string, v *robots.Verdict) {
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	hp, err := urlnorm.HostPort(u.Scheme, u.Host)
	if err != nil {
		return
	}
	origin := u.Scheme + "://" + hp
	why := "could not be fetched"
	if v != nil && v.Outcome == robots.Unreachable {
		why = unreachableWhy(*v)
	}
	c.mu.Lock()
	home := c.home
	first := !c.hostStopped[origin]
	c.hostStopped[origin] = true
	c.mu.Unlock()
	homeHost := ""
	if hu, err := url.Parse(home); err == nil {
		if h, err := urlnorm.HostPort(hu.Scheme, hu.Host); err == nil {
			home, homeHost = hu.Scheme+"://"+h, h
		}
	}
	if origin == c.Origin || origin == home {
		c.stopSite(&offLimitsMidway{origin: origin, why: why})
		return
	}
	if !first {
		return
	}
	// The frontier keys hosts without their scheme: https://shop.example being off limits must not stop
	// http://shop.example, the site being crawled. Its URLs are refused one by one instead (no request).
	if hp == homeHost || hp == strings.TrimPrefix(c.Origin, c.start.Scheme+"://") {
		c.Logf("audit: %s/robots.txt %s: URLs under %s are not crawled", origin, why, origin)
		return
	}
	_, _ = c.Front.StopHost(hp)
	c.Logf("audit: %s/robots.txt %s during the crawl: that host is off limits from now on", origin, why)
}

// offLimitsError is the clear message of exit status 3.
func offLimitsError(origin string, v robots.Verdict) error {
	return fmt.Errorf("%s/robots.txt %s, so the whole site is off limits and nothing else was requested (Crawl Cove stops when robots.txt is unreachable or answers a server error)", origin, unreachableWhy(v))
}

func unreachableWhy(v robots.Verdict) string {
	if v.Status != 0 {
		return fmt.Sprintf("answered HTTP %d", v.Status)
	}
	if v.Err != nil {
		return "could not be fetched: " + causeOf(v.Err)
	}
	return "could not be fetched"
}

// causeOf is the part of a robots.txt fetch error worth showing: the layers above it (robots, net/http,
// fetch) each repeat the URL, which the message already names once.
func causeOf(err error) string {
	var fe *fetch.Error
	if errors.As(err, &fe) && fe.Err != nil {
		return fe.Err.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return err.Error()
}

// ProgressState feeds the progress line: queue size and the current politeness limits.
func (c *Crawler) ProgressState() (int, string, bool) {
	st := c.Front.Stats()
	if _, ok := c.Slow.Tripped(); ok && st.Slowdown {
		// The URL that answered 429 is in the summary; here it would push the numbers off a narrow terminal.
		inFlight, gap := c.Slow.Limits()
		return st.Queued, fmt.Sprintf("slowed down after 429: %d in flight, %s gap", inFlight, gap), true
	}
	return st.Queued, fmt.Sprintf("%d in flight max, %s gap", c.Cfg.Concurrency, c.Cfg.Gap), false
}

// add offers a URL to the frontier and records what it refused when that matters to the audit.
func (c *Crawler) add(ctx context.Context, raw string, depth int, from, source string) frontier.AddResult {
	return c.added(c.Front.Add(ctx, raw, depth, from), depth, from, source)
}

// addLink offers the frontier a page's link: n is its normal form and u the parse of what the page
// wrote. A link written in normal form is handed over parsed (frontier.AddURL: not parsed again); its
// String() is n, as urlnorm's normal form prints back unchanged through net/url (userinfo excepted).
func (c *Crawler) addLink(ctx context.Context, n string, u *url.URL, written string, depth int, from string) frontier.AddResult {
	if n == written && u.User == nil {
		return c.added(c.Front.AddURL(ctx, u, depth, from), depth, from, "link")
	}
	return c.add(ctx, n, depth, from, "link")
}

// added does what a URL's outcome asks: a robots.txt gone unreachable, a disallowed URL's row, a
// duplicate a redirect chain reached.
func (c *Crawler) added(r frontier.AddResult, depth int, from, source string) frontier.AddResult {
	if r.Outcome == frontier.RobotsUnreachable {
		c.siteOffLimits(r.URL, &r.Verdict)
	}
	if r.Outcome == frontier.Disallowed {
		c.recordOnce(&store.PageRecord{URL: r.URL, Depth: depth, FoundOn: from, Source: source, Blocked: true,
			RobotsRule: r.Verdict.Decision.String()})
	}
	if r.Outcome == frontier.Duplicate {
		c.rowReached(r.URL, depth, from, source) // a redirect chain requested it already
	}
	return r
}

// recordOnce writes a page row unless the URL already has one.
func (c *Crawler) recordOnce(p *store.PageRecord) {
	c.mu.Lock()
	if !c.recorded.add(p.URL) {
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.Count.pages.Add(1)
	if p.Blocked {
		c.Count.blocked.Add(1)
	} else {
		c.Count.fetched.Add(1)
		if broken, _ := findings.IsBroken(p); broken {
			c.Count.errors.Add(1)
		}
	}
	c.St.Page(p)
	if c.OnPage != nil {
		c.OnPage(p)
	}
}

// sitemaps expands the Sitemap: lines of both hosts' robots.txt and queues their page URLs.
func (c *Crawler) sitemaps(ctx context.Context) error {
	var roots []string
	for _, o := range []string{c.Origin, c.Twin} {
		if o == "" {
			continue
		}
		sms, err := c.Robots.Sitemaps(ctx, o+"/")
		if errors.Is(err, robots.ErrUnreachable) {
			continue // that host is off limits: its sitemaps are not read
		}
		if err != nil {
			return err
		}
		roots = append(roots, sms...)
	}
	if len(roots) == 0 {
		return nil // no advertised sitemap: none is requested
	}
	// Sitemaps go through the same polite client as pages (robots.txt, gate, retries), with a body cap
	// at the protocol's 50 MiB so a full-size sitemap is read whole.
	sc := c.newClient(50 << 20)
	sc.CheckRedirect = c.Client.CheckRedirect
	// Each sitemap's answer is kept in the database: a crawl resumed in the middle of the expansion replays
	// them instead of asking again.
	exp := &sitemap.Expander{Fetcher: &store.SitemapCache{F: sc, St: c.St}, MaxDepth: sitemapLevel}
	seen := map[string]bool{}
	reports, err := exp.Expand(ctx, roots, func(e sitemap.Entry, src sitemap.Source) error {
		u, nerr := urlnorm.Normalize(e.URL)
		if nerr != nil {
			u = e.URL // the frontier will refuse it as invalid, as it would have when listed
		}
		c.St.SitemapURL(src.Sitemap, u)
		if seen[u] {
			return ctx.Err()
		}
		if pu, perr := url.Parse(u); perr != nil || !c.InScope(pu) {
			return ctx.Err() // another site: never queued, so not worth a place in the held list
		}
		if len(c.held) >= findings.SitemapHoldMax {
			// Not remembered in seen either, so memory stays bounded; a URL listed twice counts twice.
			c.heldDropped++
			if c.heldDropped == 1 {
				c.heldFirstDropped = u
			}
			return ctx.Err()
		}
		seen[u] = true
		c.held = append(c.held, heldURL{url: u, sitemap: src.Sitemap})
		return ctx.Err()
	})
	for _, r := range reports {
		if r.Err != nil && ctx.Err() != nil && (errors.Is(r.Err, context.Canceled) || errors.Is(r.Err, context.DeadlineExceeded)) {
			continue // cut short by Ctrl-C (or the site going off limits): not something the site answered
		}
		c.St.Sitemap(sitemapRecordOf(r))
	}
	return err
}

// WriteBacklog × -concurrency is how many finished pages may wait to be written at once. A crash fetches
// them again on resume; a smaller bound costs throughput at -gap 0 (1× cost a quarter of it, 4× about 7 %
// of CPU, none at all measured about 3 %: see BenchmarkPersistedQueueCost).
const WriteBacklog = 4

// heldURL is a sitemap page URL waiting for the link crawl to complete.
type heldURL struct{ url, sitemap string }

// queueSitemapURLs offers the held sitemap URLs to the frontier once the link crawl is complete, so that
// they only get what the links left of the page budget. A URL a link already led to is a duplicate, as
// before. It reports whether anything was queued.
func (c *Crawler) queueSitemapURLs(ctx context.Context) bool {
	held := c.held
	c.held = nil
	queued := false
	for _, h := range held {
		if ctx.Err() != nil {
			return queued // Ctrl-C, or the site went off limits: the caller reports it
		}
		r := c.add(ctx, h.url, 1, "", "sitemap")
		switch r.Outcome {
		case frontier.Queued:
			queued = true
		case frontier.PageLimit:
			// The frontier checks the budget before robots.txt. Ask robots.txt here (cached, no request
			// unless the hour is up) so a disallowed sitemap URL is still reported as blocked, not as
			// left out by the limit.
			if v, err := c.Robots.CheckAs(ctx, c.tokens, r.URL); err == nil && v.Outcome == robots.Disallowed {
				c.recordOnce(&store.PageRecord{URL: r.URL, Depth: 1, Source: "sitemap", Blocked: true,
					RobotsRule: v.Decision.String()})
				continue
			}
			c.mu.Lock()
			c.notCrawled = append(c.notCrawled, [2]string{h.sitemap, r.URL})
			c.mu.Unlock()
		case frontier.Duplicate:
			// A link found it once the page limit was used up: the frontier refused it then and knows it
			// as seen now. Without a row it was not crawled, and the limit is why, unless its host's
			// robots.txt cannot be read (a disallowed URL has its row already).
			c.mu.Lock()
			crawled := c.recorded.has(r.URL)
			c.mu.Unlock()
			if v, err := c.Robots.CheckAs(ctx, c.tokens, r.URL); crawled || err != nil || v.Outcome != robots.Allowed {
				continue
			}
			c.mu.Lock()
			c.notCrawled = append(c.notCrawled, [2]string{h.sitemap, r.URL})
			c.mu.Unlock()
		}
	}
	return queued
}

// pages runs the workers until the frontier is complete.
func (c *Crawler) pages(ctx context.Context) error {
	var wg sync.WaitGroup
	errc := make(chan error, c.Cfg.Concurrency)
	for range c.Cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				it, err := c.Front.Next(ctx)
				if errors.Is(err, frontier.ErrComplete) {
					return
				}
				if err != nil {
					errc <- err
					return
				}
				c.visit(ctx, it)
			}
		}()
	}
	wg.Wait()
	close(errc)
	return <-errc
}

// visit fetches one page, records it and queues its internal links.
func (c *Crawler) visit(ctx context.Context, it frontier.Item) {
	res, err := c.Client.Get(ctx, it.URL)
	if err != nil && ctx.Err() != nil {
		// Interrupted: the page was not fetched, so it is not recorded, nor given back as done: it stays
		// queued in the database and a resumed crawl fetches it.
		return
	}
	// A page answered in full before Ctrl-C is recorded like any other: everything crawled is kept.
	var refused *refusesCrawler
	p := &store.PageRecord{URL: it.URL, Depth: it.Depth, FoundOn: it.From, Source: sourceOf(it), FetchedAt: c.Env.Now()}
	if res != nil {
		p.FinalURL, p.Status, p.ContentType = res.FinalURL, res.Status, res.ContentType
		// The server's time for the final request, never the time waiting at the gate or between retries.
		p.Response, p.TTFB, p.Bytes, p.Truncated, p.Attempts = res.ResponseTime(), res.TTFB, len(res.Body), res.Truncated, len(res.Attempts)
		for _, h := range res.Redirects {
			p.Redirects = append(p.Redirects, store.HopRecord{URL: h.URL, Status: h.Status, Location: h.Location})
		}
		if res.Header != nil {
			p.XRobots = strings.Join(res.Header.Values("X-Robots-Tag"), ", ")
		}
		if res.Challenge != nil {
			// Bot protection answered instead of the site: not a broken page, and nothing to read.
			p.Err, p.ErrKind = "bot protection: "+res.Challenge.String(), findings.ErrKindBotProtection
		}
		if it.Depth == 0 && err == nil && res.RefusesCrawler() {
			// 401/403 to robots.txt and to the start page: a user-agent rule (nginx, Apache, a CDN), the
			// site refusing this crawler. Not a broken page; the crawl stops here (below).
			refused = &refusesCrawler{userAgent: c.Cfg.UserAgent, robots: res.RobotsStatus, page: res.Status}
			p.Err, p.ErrKind = refused.Error(), findings.ErrKindRefused
		}
		if err == nil && res.DuplicateTarget != "" {
			// The redirect leads to a URL the crawl has already: not requested again (duplicate.go).
			duplicateRecord(p, store.HopRecord{URL: res.FinalURL, Status: res.Status, Location: res.Header.Get("Location")}, res.DuplicateTarget)
		}
	}
	if err != nil {
		p.Status = 0
		p.Err, p.ErrKind = err.Error(), errKind(err)
		var fe *fetch.Error
		if errors.As(err, &fe) && len(p.Redirects) == 0 {
			for _, h := range fe.Redirects {
				p.Redirects = append(p.Redirects, store.HopRecord{URL: h.URL, Status: h.Status, Location: h.Location})
			}
		}
	}
	if err == nil && res.Challenge == nil && res.Status == http.StatusOK && store.IsHTML(res.ContentType) {
		c.parse(ctx, p, res)
	} else if err == nil && res.Challenge == nil && res.Status == http.StatusNotFound && store.IsHTML(res.ContentType) {
		notFoundFacts(p, res)
	}
	if it.Depth == 0 && err == nil && res.FinalURL != "" {
		// The site lives where the start page ended up (http -> https, apex -> www): llms.txt is asked there.
		if u, perr := url.Parse(res.FinalURL); perr == nil && c.InScope(u) {
			c.mu.Lock()
			c.home = u.Scheme + "://" + u.Host
			c.mu.Unlock()
		}
	}
	if r := llmsRecordOf(p); r != nil {
		c.mu.Lock()
		c.llmsPage = r
		c.mu.Unlock()
	}
	c.recordOnce(p)
	if res != nil {
		c.rememberReached(p, res, err)
	}
	c.Front.Done(it, err)
	// At most writeBacklog × -concurrency finished pages wait to be written: a crash then costs a resumed
	// crawl only those and the pages in flight, fetched again.
	if c.writing != nil {
		c.writing <- struct{}{}
		c.St.AfterCommit(func() { <-c.writing })
	}
	var fe *fetch.Error
	if errors.Is(err, fetch.ErrSiteOffLimits) && errors.As(err, &fe) {
		c.siteOffLimits(fe.URL, fe.Verdict)
	}
	if refused != nil {
		c.stopSite(refused) // nothing more: no page, no llms.txt, no probe
	}
}

// refusesCrawler is why a crawl stopped at the start page: the site answered 401/403 to robots.txt and
// to the start page, refusing this crawler by its user agent.
type refusesCrawler struct {
	userAgent    string
	robots, page int
}

func (e *refusesCrawler) Error() string {
	return fmt.Sprintf("site refuses this crawler (User-Agent %s): robots.txt %d, start page %d", e.userAgent, e.robots, e.page)
}

// llmsRecordOf is the llms.txt answer of a page row that is an origin's /llms.txt (a link led there).
func llmsRecordOf(p *store.PageRecord) *store.RequestRecord {
	if !strings.HasSuffix(p.URL, "/llms.txt") || strings.Count(p.URL, "/") != 3 {
		return nil
	}
	r := &store.RequestRecord{URL: p.URL, Purpose: "llms", Status: p.Status, ContentType: p.ContentType, Bytes: p.Bytes, Err: p.Err}
	if len(p.Redirects) > 0 {
		r.Status, r.Location = p.Redirects[0].Status, p.Redirects[0].Location
	}
	return r
}

func sourceOf(it frontier.Item) string {
	switch {
	case it.Depth == 0:
		return "start"
	case it.From == "":
		return "sitemap"
	}
	return "link"
}

// parse reads the page's SEO fields and links, and queues the internal links it may follow.
func (c *Crawler) parse(ctx context.Context, p *store.PageRecord, res *fetch.Result) {
	pg, fp, err := readPage(res) // charset, <base href>, links resolved, as fetch/page reads a page
	if pg == nil || err != nil {
		return // a final URL that is not http(s), or a body that could not be read: nothing to read
	}
	p.Parsed = true
	pageFacts(p, pg, fp)
	p.Title, p.TitleCount = pg.Title, pg.TitleCount
	p.Description, p.DescriptionCount = pg.MetaDescription, pg.DescriptionCount
	p.Canonical, p.MetaRobots = pg.Canonical, pg.MetaRobots
	p.H1Count, p.WordCount = len(pg.H1), pg.WordCount
	if len(pg.H1) > 0 {
		p.H1 = pg.H1[0]
	}
	if pg.WordPress {
		p.WordPress, p.WordPressHint = true, pg.WordPressHint
		c.wordpress.CompareAndSwap(nil, &p.FinalURL)
	}
	// A page that asks robots not to follow its links is respected: links recorded, not followed.
	followAll := !hasToken(p.MetaRobots, "nofollow") && !hasToken(p.MetaRobots, "none") &&
		!hasToken(p.XRobots, "nofollow") && !hasToken(p.XRobots, "none")
	// Links belong to the page that contains them: the final URL of a redirect, not the URL that
	// redirected to it. Recorded once per final URL, however many URLs redirect there.
	owner := p.URL
	if p.FinalURL != "" {
		owner = store.NormalizeOrSelf(p.FinalURL)
	}
	c.mu.Lock()
	record := c.linksOf.add(owner)
	c.mu.Unlock()
	// The URLs of the links to pages, parsed once for the page checks and the loop below: assets (img,
	// script, link...) are not pages; meta is a refresh redirect.
	parsed := make([]*url.URL, len(pg.Links))
	for i, l := range pg.Links {
		if l.Tag == "a" || l.Tag == "area" || l.Tag == "meta" {
			if lu, err := url.Parse(l.URL); err == nil {
				parsed[i] = lu
			}
		}
	}
	onSite := (&siteMemo{inScope: c.InScope}).onSite
	if record {
		// The page's own findings, once per document however many URLs redirect to it.
		p.Findings = pagecheck.Check(pagecheck.Input{URL: p.FinalURL, Status: res.Status, Header: res.Header, TTFB: res.TTFB,
			Bytes: len(res.Body), Page: pg, XRobotsTag: p.XRobots, OnSite: onSite, LinkURLs: parsed})
	}
	seen := make(map[string]bool, len(pg.Links))
	if record {
		p.Links = slices.Grow(p.Links, len(pg.Links))
	}
	for i, l := range pg.Links {
		lu := parsed[i]
		if lu == nil || (lu.Scheme != "http" && lu.Scheme != "https") {
			continue
		}
		rec := store.LinkRecord{From: owner, To: l.URL, Nofollow: l.Nofollow, Anchor: Truncate(l.Text, 200), Tag: l.Tag}
		if !onSite(lu) {
			rec.External = true
			p.External++
		} else {
			if n, err := urlnorm.Normalize(l.URL); err == nil {
				rec.To = n
			}
			p.Internal++
			if followAll && !l.Nofollow && !seen[rec.To] {
				seen[rec.To] = true
				c.addLink(ctx, rec.To, lu, l.URL, p.Depth+1, owner)
			}
		}
		if l.Nofollow {
			p.Nofollow++
		}
		if record {
			p.Links = append(p.Links, rec)
		}
	}
}

// siteMemo answers InScope for the links of one page, remembering the answer for each scheme and host
// (a page's links name a handful): the scope reads nothing else of a URL.
type siteMemo struct {
	inScope func(*url.URL) bool
	seen    [8]struct {
		scheme, host string
		in           bool
	}
	n int
}

func (m *siteMemo) onSite(u *url.URL) bool {
	if u == nil {
		return false
	}
	for i := range m.n {
		if e := &m.seen[i]; e.scheme == u.Scheme && e.host == u.Host {
			return e.in
		}
	}
	in := m.inScope(u)
	if m.n < len(m.seen) {
		m.seen[m.n].scheme, m.seen[m.n].host, m.seen[m.n].in = u.Scheme, u.Host, in
		m.n++
	}
	return in
}

func hasToken(v, tok string) bool {
	for _, f := range strings.FieldsFunc(strings.ToLower(v), func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		if f == tok {
			return true
		}
	}
	return false
}

// Truncate cuts s to at most n bytes without splitting a UTF-8 character, so stored anchors, console
// messages and errors stay valid text within their caps.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// errKind classifies a fetch error for pages.error_kind.
func errKind(err error) string {
	switch {
	case errors.Is(err, fetch.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, fetch.ErrTooManyRedirects):
		return "too_many_redirects"
	case errors.Is(err, fetch.ErrRedirectLoop):
		return "redirect_loop"
	case errors.Is(err, fetch.ErrBadRedirect):
		return "bad_redirect"
	case errors.Is(err, fetch.ErrDisallowed):
		return "disallowed_redirect"
	case errors.Is(err, errOffsite):
		return "offsite_redirect"
	case errors.Is(err, fetch.ErrSiteOffLimits):
		return "off_limits"
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return "network"
	}
	return "other"
}

var errOffsite = errors.New("redirect to another site not followed")

// llms requests /llms.txt once, if robots.txt allows, and records whether the site publishes one.
func (c *Crawler) llms(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	c.mu.Lock()
	u := c.home + "/llms.txt"
	r, crawled := c.llmsPage, c.recorded.has(u)
	c.mu.Unlock()
	if c.requested[u] {
		return // a resumed crawl: asked (and recorded) before the interruption
	}
	if r != nil && r.URL != u {
		r = nil // a link reached another host's llms.txt; the site's own is asked below
		crawled = false
	}
	if crawled {
		// A page linked to it and it was fetched then (or blocked): once is enough.
		if r == nil {
			r = &store.RequestRecord{URL: u, Purpose: "llms", Err: "not requested: blocked by robots.txt"}
		}
		c.St.Request(*r)
		return
	}
	c.extra(ctx, u, "llms")
}

// wordPressProbes makes the four WordPress requests, only when a page read looked like WordPress.
func (c *Crawler) wordPressProbes(ctx context.Context) {
	page := c.wordpress.Load()
	if page == nil || ctx.Err() != nil {
		return
	}
	u, err := url.Parse(*page)
	if err != nil {
		return
	}
	for _, p := range wordPressProbes {
		c.extra(ctx, u.Scheme+"://"+u.Host+p, "wordpress")
	}
}

// extra makes one GET (robots-checked, redirects not followed) and records the answer.
func (c *Crawler) extra(ctx context.Context, raw, purpose string) {
	if c.requested[raw] {
		return // a resumed crawl: asked (and recorded) before the interruption
	}
	res, err := c.probe.Get(ctx, raw)
	if ctx.Err() != nil {
		return
	}
	r := store.RequestRecord{URL: raw, Purpose: purpose}
	switch {
	case errors.Is(err, fetch.ErrDisallowed):
		r.Err = "not requested: blocked by robots.txt"
	case err != nil:
		r.Err = err.Error()
	default:
		r.Status, r.ContentType, r.Location, r.Bytes = res.Status, res.ContentType, res.Header.Get("Location"), len(res.Body)
	}
	c.St.Request(r)
}

func sitemapRecordOf(r sitemap.Report) store.SitemapRecord {
	rec := store.SitemapRecord{URL: r.URL, Parent: r.Parent, Level: r.Level, Status: r.Status, Kind: r.Kind.String(),
		Entries: r.Entries, Skipped: r.Skipped.Total(), NotFollowed: r.NotFollowed}
	if r.Err != nil {
		rec.Err = r.Err.Error()
	}
	return rec
}
