package frontier

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/urlnorm"
	"github.com/politecrawl/polite/robots"
)

// Interface is what a crawl loop needs from a frontier: *Frontier (in
// memory, one process) implements it, and so can shared or persistent
// frontiers (a Redis one), so the loop does not change with the store.
// Acquire makes every Interface a fetch.Gate.
type Interface interface {
	// Add queues rawURL, found at link depth depth on page from ("" for a
	// start URL, depth 0), or says why not.
	Add(ctx context.Context, rawURL string, depth int, from string) AddResult
	// Next blocks until a queued URL may be requested and hands it out, or
	// returns ErrComplete when the crawl is over, or ctx's error.
	Next(ctx context.Context) (Item, error)
	// Done gives back an item Next handed out; err is the fetch's error
	// (nil for success). Its error is the store's, for persistent or
	// shared frontiers; the item's slot is freed either way.
	Done(it Item, err error) error
	// Acquire is the politeness gate (fetch.Gate): it blocks until a
	// request to u may start, and returns its release.
	Acquire(ctx context.Context, u *url.URL) (release func(), err error)
	// StopHost drops every URL queued for host and refuses later ones.
	StopHost(host string) (int, error)
	// Stats returns the current counters.
	Stats() Stats
}

var _ Interface = (*Frontier)(nil)

// Item is a queued URL handed out by Next; give it back with Done.
type Item struct {
	URL   string // normalized
	Depth int    // link depth; start URLs are 0
	From  string // the page the URL was found on, as passed to Add
	Host  string // host[:port] of URL: the key of per-host limits
	// Wait is how long the Next call that returned the item waited for
	// the limits (gaps, requests in flight, a slowdown) to let a request
	// start, while URLs were queued; a wait for work to be queued is not
	// counted. Next holds this wait, the request's own Acquire (in
	// fetch.Result.GateWait) only what is left, so a page's politeness
	// wait is Wait + GateWait, and from before Next to the return of
	// fetch's Get the time is exactly Wait + Result.Total.
	Wait time.Duration
	// Lease is opaque to callers: implementations of Interface other than
	// *Frontier, and PersistentQueue implementations (set in Pop, given
	// back to Ack), use it to identify a hand-out. Pass items back to Done
	// unchanged. The in-memory Frontier keeps its own ticket instead.
	Lease string

	ticket uint64 // identifies the hand-out for Done
	host   *host  // saves Done a map lookup
}

// Frontier is a crawl frontier and politeness gate. It is safe for
// concurrent use.
type Frontier struct {
	cfg     Config
	now     func() time.Time
	queue   Queue
	persist PersistentQueue // queue, when it is one
	log     *slog.Logger
	tokens  []string

	mu    sync.Mutex
	hosts map[string]*host
	ready hostHeap // hosts with queued items that may take another item

	// Effective limits; stricter once a PerRun slowdown trips.
	maxInFlight, perHostInFlight int
	gap, perHostGap              int64 // ns
	sdSeen                       int   // slowdown trips applied so far
	maxHostGap                   int64 // ns: cap of Crawl-delay and Adaptive

	inFlight    int      // requests admitted by Acquire, not released
	out         []uint64 // tickets of items handed out, not Done
	lastStart   int64    // ns of the last request start (admission)
	lastWrite   int64    // ns of the last request start on the wire (Start, Wrote)
	admitGap    int64    // ns: the run's gap when the last request was admitted
	lastHandout int64    // ns of the last item handed out
	nextTicket  uint64
	nextHostID  uint64

	queued, pending, accepted int // pending: Adds between reservation and robots answer
	done, failed, requests    int
	dropped                   [numOutcomes]int

	wake chan struct{} // closed on any change waiters may care about; nil when nobody waits

	// waiters are the Acquire calls blocked so far, in arrival order. The
	// first one whose host may take a request gets the next run-wide slot,
	// so a retry is not overtaken by later requests, and a waiter for a
	// busy host never holds back one for a ready host.
	waiters []*waiter
}

// waiter is one blocked Acquire call.
type waiter struct{ h *host }

type host struct {
	name        string
	id          uint64
	queued      int
	byDepth     []int32 // queued items per depth
	minDepth    int
	out         int // items handed out
	inFlight    int // requests admitted
	lastStart   int64
	lastWrite   int64 // see Frontier.Start
	admitGap    int64 // the host's gap when its last request was admitted
	lastHandout int64
	heapIdx     int // -1 when not in the ready heap
	done        int
	failed      int
	requests    int
	blocked     int
	stopped     bool
	inScope     bool // a start host or its twin (default scope)

	// The host's effective limits, kept up to date by setPaceLocked so
	// the hot path reads one field each: least ns between two of its
	// starts (PerHostGap or its own pace) and most requests in flight.
	pace  int64
	maxIn int
	own   *ownPace // nil until the host gets a pace of its own
}

// ownPace is what can make one host slower than the run's limits: a
// PerHost slowdown, a Crawl-delay, the adaptive policy. gap is the
// largest of the three (ns); cap bounds its requests in flight (0: none).
type ownPace struct {
	cap                         int
	gap                         int64
	slowGap, delayGap, adaptGap int64
	delaySeen                   bool // a Crawl-delay answer was applied
}

// ownPace returns h's own pace, creating it.
func (h *host) ownPace() *ownPace {
	if h.own == nil {
		h.own = &ownPace{}
	}
	return h.own
}

// setPaceLocked recomputes h's effective limits from the run's and its own.
func (f *Frontier) setPaceLocked(h *host) {
	h.pace, h.maxIn = f.perHostGap, f.perHostInFlight
	if p := h.own; p != nil {
		p.gap = max(p.slowGap, p.delayGap, p.adaptGap)
		h.pace = max(h.pace, p.gap)
		if p.cap > 0 && p.cap < h.maxIn {
			h.maxIn = p.cap
		}
	}
}

const never = math.MinInt64 / 4 // "no start yet"; never + any gap stays far in the past

// New returns a Frontier for cfg, or a *ConfigError naming the field and
// its accepted range when a limit is out of range. With cfg.Client set it
// wires the client in (see Config.Client). With a PersistentQueue it
// resumes what the queue holds (see PersistentQueue).
func New(cfg Config) (*Frontier, error) {
	c := cfg.Client
	if c != nil {
		if c.Gate != nil {
			return nil, &ConfigError{Field: "Client.Gate", Value: "already set (New makes the Frontier the client's gate: one client per Frontier)"}
		}
		switch {
		case cfg.Slowdown == nil && c.Slowdown == nil:
			cfg.Slowdown = c.Policy.NewSlowdown()
		case cfg.Slowdown == nil:
			cfg.Slowdown = c.Slowdown
		case c.Slowdown != nil && c.Slowdown != cfg.Slowdown:
			return nil, &ConfigError{Field: "Slowdown", Value: "differs from Client.Slowdown (one latch per run: set one of them, or both to the same)"}
		}
		if cfg.Robots == nil {
			cfg.Robots = clientRobots{c}
		}
		if len(cfg.RobotsTokens) == 0 {
			cfg.RobotsTokens = c.Tokens()
		}
		if cfg.Logger == nil {
			cfg.Logger = c.Logger
		}
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	f := &Frontier{
		cfg:             cfg,
		now:             cfg.Now,
		queue:           cfg.Queue,
		log:             cfg.Logger,
		tokens:          slices.Clone(cfg.RobotsTokens),
		hosts:           make(map[string]*host),
		maxInFlight:     cfg.MaxInFlight,
		perHostInFlight: cfg.PerHostInFlight,
		gap:             int64(cfg.Gap),
		perHostGap:      int64(cfg.PerHostGap),
		lastStart:       never,
		lastWrite:       never,
		lastHandout:     never,
		maxHostGap:      int64(cfg.MaxHostGap),
	}
	if f.maxHostGap == 0 {
		f.maxHostGap = int64(DefaultMaxHostGap)
	}
	if f.perHostInFlight == 0 {
		f.perHostInFlight = min(f.maxInFlight, MaxHostInFlight)
	}
	if f.now == nil {
		f.now = time.Now
	}
	if f.queue == nil {
		f.queue = NewMemoryQueue()
	}
	if pq, ok := f.queue.(PersistentQueue); ok {
		f.persist = pq
		rs, err := pq.Resume()
		if err != nil {
			return nil, fmt.Errorf("frontier: resuming the queue: %w", err)
		}
		if err := f.resume(rs); err != nil {
			return nil, err
		}
	}
	if c != nil {
		c.Slowdown = cfg.Slowdown
		c.Gate = f
		if c.Claimer == nil {
			c.Claimer = f // a redirect target is requested once per crawl too
		}
	}
	return f, nil
}

// clientRobots asks the client's robots checker as it is at each call, so
// a Client.Robots set after New is still the one used.
type clientRobots struct{ c *fetch.Client }

func (r clientRobots) CheckAs(ctx context.Context, tokens []string, rawURL string) (robots.Verdict, error) {
	if rc := r.c.Robots; rc != nil {
		return rc.CheckAs(ctx, tokens, rawURL)
	}
	return r.c.RobotsCache().CheckAs(ctx, tokens, rawURL)
}

// Rules returns the parsed robots.txt for rawURL from the client's checker
// as it is now, for Crawl-delay.
func (r clientRobots) Rules(ctx context.Context, rawURL string) (*robots.Rules, error) {
	if rs, ok := r.c.Robots.(rulesSource); ok {
		return rs.Rules(ctx, rawURL)
	}
	if rc := r.c.RobotsCache(); rc != nil {
		return rc.Rules(ctx, rawURL)
	}
	return nil, errors.New("the client's robots checker has no Rules method")
}

// rulesSource is a Robots that also returns a site's parsed robots.txt;
// *robots.Cache is one. Config.HonorCrawlDelay needs it.
type rulesSource interface {
	Rules(ctx context.Context, rawURL string) (*robots.Rules, error)
}

func hasRules(r Robots) bool {
	switch r := r.(type) {
	case clientRobots:
		_, ok := r.c.Robots.(rulesSource)
		return ok || r.c.Robots == nil
	case rulesSource:
		return true
	}
	return false
}

// resume rebuilds the counts from what a reopened PersistentQueue holds.
func (f *Frontier) resume(rs ResumeState) error {
	now := f.now().UnixNano()
	for name, rh := range rs.Hosts {
		if rh.Done < 0 || rh.Failed < 0 {
			return fmt.Errorf("frontier: resuming the queue: host %s: negative done or failed count", name)
		}
		h := f.hostLocked(name)
		for d, n := range rh.Queued {
			if n < 0 || n > math.MaxInt32 {
				return fmt.Errorf("frontier: resuming the queue: host %s: %d items at depth %d", name, n, d)
			}
			if n == 0 {
				continue
			}
			for len(h.byDepth) <= d {
				h.byDepth = append(h.byDepth, 0)
			}
			h.byDepth[d] = int32(n)
			if h.queued == 0 || d < h.minDepth {
				h.minDepth = d
			}
			h.queued += n
		}
		h.done, h.failed = rh.Done, rh.Failed
		h.stopped = rh.Stopped
		f.queued += h.queued
		f.done += rh.Done
		f.failed += rh.Failed
		f.accepted += h.queued + rh.Done + rh.Failed
		if rh.Start && f.cfg.Scope == nil {
			h.inScope = true
			if t := Twin(name); t != "" {
				f.hostLocked(t).inScope = true
			}
		}
		if !rh.LastStart.IsZero() {
			// Never later than now: a clock that went back (or a bad
			// record) must not stall the crawl for longer than one gap.
			h.lastStart = min(rh.LastStart.UnixNano(), now)
			f.lastStart = max(f.lastStart, h.lastStart)
		}
		f.fixLocked(h)
	}
	return nil
}

// Add normalizes rawURL, found at link depth depth on page from ("" for a
// start URL, which has depth 0), and queues it or says why not. Robots is
// asked only for a URL that passed every other check, before it is queued;
// only an Allowed verdict queues it. ctx bounds that check.
func (f *Frontier) Add(ctx context.Context, rawURL string, depth int, from string) AddResult {
	return f.addLogged(ctx, rawURL, nil, depth, from)
}

// AddURL is Add for a URL the caller has parsed already: it checks, queues
// and answers exactly as Add(ctx, u.String(), depth, from) does. When that
// string is already in normal form (the common case for a crawler that
// normalizes its links), u itself is what Config.Scope is asked about, so
// the URL is not parsed again. A nil u is Invalid.
func (f *Frontier) AddURL(ctx context.Context, u *url.URL, depth int, from string) AddResult {
	if u == nil {
		return f.addLogged(ctx, "", nil, depth, from)
	}
	return f.addLogged(ctx, u.String(), u, depth, from)
}

// addLogged is Add and AddURL: parsed, when not nil, is the parse of rawURL.
func (f *Frontier) addLogged(ctx context.Context, rawURL string, parsed *url.URL, depth int, from string) AddResult {
	var cd crawlDelay
	r := f.add(ctx, rawURL, parsed, depth, from, &cd)
	if f.log != nil {
		f.logAdd(ctx, &r, rawURL, depth, from)
		if cd.changed {
			f.logCrawlDelay(ctx, r.URL, &cd)
		}
	}
	return r
}

// crawlDelay is what Add learned of a host's Crawl-delay.
type crawlDelay struct {
	host           string
	delay, applied time.Duration
	set, changed   bool
}

// readCrawlDelay reads the Crawl-delay that applies to the crawler for n
// into cd.
func (f *Frontier) readCrawlDelay(ctx context.Context, n string, cd *crawlDelay) {
	rs, ok := f.cfg.Robots.(rulesSource)
	if !ok {
		return
	}
	rules, err := rs.Rules(ctx, n)
	if err != nil || rules == nil {
		return
	}
	token := rules.ExplainAs(f.tokens, n).Token // the token whose group applies
	if token == "" && len(f.tokens) > 0 {
		token = f.tokens[0] // no group names a token: the * group's value
	}
	cd.delay, cd.set = rules.CrawlDelay(token)
}

// applyCrawlDelayLocked sets h's Crawl-delay gap from cd.
func (f *Frontier) applyCrawlDelayLocked(h *host, cd *crawlDelay) {
	g := int64(0)
	if cd.set {
		g = int64(min(cd.delay, time.Duration(f.maxHostGap)))
	}
	cd.host, cd.applied = h.name, time.Duration(max(g, f.perHostGap))
	p := h.ownPace()
	if g == p.delayGap && p.delaySeen {
		return
	}
	cd.changed = cd.set || p.delaySeen
	p.delaySeen = true
	p.delayGap = g
	f.setPaceLocked(h)
	f.fixLocked(h)
	f.notifyLocked()
}

func (f *Frontier) add(ctx context.Context, rawURL string, parsed *url.URL, depth int, from string, cd *crawlDelay) AddResult {
	if len(rawURL) > MaxURLLength {
		return f.drop(AddResult{Outcome: TooLong, URL: rawURL, Err: tooLong(rawURL)})
	}
	n, err := urlnorm.Normalize(rawURL)
	if err != nil {
		return f.drop(AddResult{Outcome: Invalid, URL: rawURL, Err: fmt.Errorf("%w: %w", ErrInvalidURL, err)})
	}
	if depth < 0 {
		return f.drop(AddResult{Outcome: Invalid, URL: n, Err: fmt.Errorf("%w: negative depth %d for %s", ErrInvalidURL, depth, n)})
	}
	if len(n) > MaxURLLength {
		return f.drop(AddResult{Outcome: TooLong, URL: rawURL, Err: tooLong(rawURL)})
	}
	res := AddResult{URL: n}
	if f.cfg.Scope != nil {
		u := parsed
		if u == nil || n != rawURL {
			u, err = url.Parse(n)
		}
		if err != nil || !f.cfg.Scope(u) {
			res.Outcome = OutOfScope
			return f.drop(res)
		}
	}
	hostName := urlnorm.Host(n)

	f.mu.Lock()
	h, out, err := f.admitLocked(n, hostName, depth)
	if out != Queued {
		f.dropped[out]++
		f.mu.Unlock()
		res.Outcome, res.Err = out, err
		return res
	}
	if f.cfg.Robots == nil {
		res.Outcome, res.Err = f.pushLocked(h, Item{URL: n, Depth: depth, From: from, Host: hostName})
		f.mu.Unlock()
		return res
	}
	f.mu.Unlock()

	v, err := f.cfg.Robots.CheckAs(ctx, f.tokens, n)
	if err == nil {
		// A context that ended during the check fails the Add even when the verdict was ready at the same
		// moment: the caller has given up, so nothing may be queued for it.
		err = ctx.Err()
	}
	res.Verdict = v
	honor := err == nil && v.Outcome == robots.Allowed && f.cfg.HonorCrawlDelay
	if honor {
		f.readCrawlDelay(ctx, n, cd)
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending--
	switch {
	case err != nil:
		res.Outcome, res.Err = Failed, fmt.Errorf("frontier: robots check of %s: %w", n, err)
	case v.Outcome == robots.Allowed:
		if honor {
			f.applyCrawlDelayLocked(h, cd)
		}
		res.Outcome, res.Err = f.pushLocked(h, Item{URL: n, Depth: depth, From: from, Host: hostName})
		return res
	case v.Outcome == robots.Disallowed:
		res.Outcome = Disallowed
	case v.Outcome == robots.Unreachable:
		res.Outcome, res.Err = RobotsUnreachable, v.Err
		if res.Err == nil {
			res.Err = robots.ErrUnreachable
		}
	default: // Unknown (a zero Verdict) or an outcome this package does not know: fail closed
		res.Outcome, res.Err = Failed, fmt.Errorf("frontier: robots check of %s: %w (outcome %s)", n, fetch.ErrNoVerdict, v.Outcome)
	}
	f.accepted--
	f.dropped[res.Outcome]++
	if res.Outcome == Disallowed || res.Outcome == RobotsUnreachable {
		h.blocked++
	}
	f.notifyLocked() // the crawl may be complete now
	return res
}

func (f *Frontier) drop(r AddResult) AddResult {
	f.mu.Lock()
	f.dropped[r.Outcome]++
	f.mu.Unlock()
	return r
}

// admitLocked runs the checks that need the lock and reserves a page for
// the URL, returning its host and Queued, or why not.
func (f *Frontier) admitLocked(n, hostName string, depth int) (*host, Outcome, error) {
	h := f.hosts[hostName]
	if f.cfg.Scope == nil && (h == nil || !h.inScope) {
		if depth > 0 {
			return nil, OutOfScope, nil
		}
		h = f.hostLocked(hostName)
		h.inScope = true
		if t := Twin(hostName); t != "" {
			f.hostLocked(t).inScope = true
		}
	}
	if depth > f.cfg.MaxDepth {
		return nil, TooDeep, nil
	}
	if h != nil && h.stopped {
		return nil, Stopped, fmt.Errorf("%w: %s", ErrStopped, n)
	}
	seen, err := f.queue.Visit(n)
	if err != nil {
		return nil, Failed, fmt.Errorf("frontier: recording %s as seen: %w", n, err)
	}
	if seen {
		return nil, Duplicate, nil
	}
	if f.cfg.MaxPages > 0 && f.accepted >= f.cfg.MaxPages {
		return nil, PageLimit, nil
	}
	if h == nil {
		h = f.hostLocked(hostName)
	}
	f.accepted++
	f.pending++
	return h, Queued, nil
}

// tooLong is the error of a TooLong URL, naming its start.
func tooLong(rawURL string) error {
	return fmt.Errorf("%w (%d bytes): %.80s", ErrTooLong, len(rawURL), rawURL)
}

// pushLocked queues a reserved item; pending is already decremented when
// Robots was asked, and is decremented here otherwise.
func (f *Frontier) pushLocked(h *host, it Item) (Outcome, error) {
	if f.cfg.Robots == nil {
		f.pending--
	}
	if h.stopped {
		f.accepted--
		f.dropped[Stopped]++
		f.notifyLocked()
		return Stopped, fmt.Errorf("%w: %s", ErrStopped, it.URL)
	}
	if err := f.queue.Push(it); err != nil {
		f.accepted--
		f.dropped[Failed]++
		f.notifyLocked()
		return Failed, fmt.Errorf("frontier: queueing %s: %w", it.URL, err)
	}
	for len(h.byDepth) <= it.Depth {
		h.byDepth = append(h.byDepth, 0)
	}
	h.byDepth[it.Depth]++
	if h.queued == 0 || it.Depth < h.minDepth {
		h.minDepth = it.Depth
	}
	h.queued++
	f.queued++
	f.fixLocked(h)
	f.notifyLocked()
	return Queued, nil
}

func (f *Frontier) hostLocked(name string) *host {
	h := f.hosts[name]
	if h == nil {
		f.nextHostID++
		h = &host{name: name, id: f.nextHostID, heapIdx: -1, lastStart: never, lastWrite: never, lastHandout: never,
			pace: f.perHostGap, maxIn: f.perHostInFlight}
		f.hosts[name] = h
	}
	return h
}

// eligible reports whether h belongs in the ready heap.
func (f *Frontier) eligible(h *host) bool {
	return h.queued > 0 && h.out < f.hostInFlight(h) && !h.stopped
}

// hostInFlight is the most requests in flight to h.
func (f *Frontier) hostInFlight(h *host) int { return h.maxIn }

// hostGap is the least time (ns) between two starts on h.
func (f *Frontier) hostGap(h *host) int64 { return h.pace }

// readyAt is when h may next start a request, as far as h itself goes.
func (f *Frontier) readyAt(h *host) int64 {
	return max(h.lastStart, h.lastHandout) + f.hostGap(h)
}

// fixLocked puts h in, out of or in its place in the ready heap.
func (f *Frontier) fixLocked(h *host) {
	switch in := h.heapIdx >= 0; {
	case f.eligible(h) && in:
		f.ready.fix(f, h.heapIdx)
	case f.eligible(h):
		f.ready.push(f, h)
	case in:
		f.ready.remove(f, h.heapIdx)
	}
}

// checkSlowdownLocked applies the trips of the slowdown latch not yet
// applied: a PerRun trip to the whole run, a PerHost one to its host. It
// is one atomic load when nothing new tripped.
func (f *Frontier) checkSlowdownLocked() {
	sd := f.cfg.Slowdown
	if sd == nil || sd.Trips() == f.sdSeen {
		return
	}
	evs := sd.TripsSince(f.sdSeen)
	f.sdSeen += len(evs)
	inFlight, gap := sd.Limits() // 1 and 3s unless set
	if sd.Scope != backoff.PerHost {
		f.maxInFlight = min(f.maxInFlight, inFlight)
		f.perHostInFlight = min(f.perHostInFlight, inFlight)
		f.gap = max(f.gap, int64(gap))
		f.perHostGap = max(f.perHostGap, int64(gap))
		f.ready.init(f)
		for _, h := range f.hosts {
			f.setPaceLocked(h)
			f.fixLocked(h)
		}
		return
	}
	for _, ev := range evs {
		u, err := url.Parse(ev.URL)
		if err != nil {
			continue
		}
		name, err := urlnorm.HostPort(u.Scheme, u.Host)
		if err != nil {
			continue
		}
		h := f.hostLocked(name)
		p := h.ownPace()
		p.cap = inFlight
		p.slowGap = int64(gap)
		f.setPaceLocked(h)
		f.fixLocked(h)
	}
}

// Next blocks until a queued URL may be requested now under every limit and
// returns it, shallowest first within a host and, across hosts, the host
// that may start soonest. It returns ErrComplete once nothing is queued,
// handed out or being added, or ctx's error. Call Done with the item when
// finished with it.
func (f *Frontier) Next(ctx context.Context) (Item, error) {
	var waited int64
	since := int64(-1) // start of the current wait for the limits, or -1
	for {
		f.mu.Lock()
		now := f.now().UnixNano()
		if since >= 0 {
			waited += now - since
			since = -1
		}
		it, wait, err := f.nextLocked(now)
		if err != ErrNotReady {
			f.mu.Unlock()
			if err == nil {
				it.Wait = time.Duration(waited)
			}
			return it, err
		}
		if f.queued > 0 {
			since = now // URLs are queued: the limits hold them back
		}
		ch := f.waitLocked()
		f.mu.Unlock()
		if err := sleep(ctx, ch, wait); err != nil {
			return Item{}, err
		}
	}
}

// NextAt is the non-blocking form of Next at time now. When nothing may
// start at now it returns ErrNotReady and the time to try again, which is
// zero when only a Done, a release or an Add can make progress.
func (f *Frontier) NextAt(now time.Time) (Item, time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	it, wait, err := f.nextLocked(now.UnixNano())
	if err == ErrNotReady && wait > 0 {
		return it, now.Add(time.Duration(wait)), err
	}
	return it, time.Time{}, err
}

// nextLocked returns an item, or ErrComplete, or ErrNotReady with the wait
// in ns (0: until something changes).
func (f *Frontier) nextLocked(now int64) (Item, int64, error) {
	f.checkSlowdownLocked()
	if f.queued == 0 {
		if len(f.out) == 0 && f.pending == 0 {
			return Item{}, 0, ErrComplete
		}
		return Item{}, 0, ErrNotReady
	}
	if len(f.out) >= f.maxInFlight || f.inFlight >= f.maxInFlight || f.ready.len() == 0 {
		return Item{}, 0, ErrNotReady
	}
	if f.readyWaiterLocked(nil, now) {
		// A blocked Acquire (a retry, robots.txt, an item handed out
		// earlier) takes the next slot; an item handed out now would only
		// queue behind it. Its admission wakes us.
		return Item{}, 0, ErrNotReady
	}
	h := f.ready.top()
	at := max(max(f.lastStart, f.lastHandout)+f.gap, f.readyAt(h))
	if at > now {
		return Item{}, at - now, ErrNotReady
	}
	it, ok, err := f.queue.Pop(h.name)
	if err != nil || !ok {
		if err == nil {
			err = errors.New("queue lost the items of " + h.name)
		}
		return Item{}, 0, fmt.Errorf("frontier: %w", err)
	}
	if it.Depth < 0 || it.Depth >= len(h.byDepth) || h.byDepth[it.Depth] == 0 {
		// A replacement Queue returned something never pushed at that depth:
		// an error, not an index panic or counts gone negative.
		return Item{}, 0, fmt.Errorf("frontier: queue returned %s at depth %d, not queued for %s at that depth", it.URL, it.Depth, h.name)
	}
	h.byDepth[it.Depth]--
	h.queued--
	f.queued--
	for h.queued > 0 && h.byDepth[h.minDepth] == 0 {
		h.minDepth++
	}
	h.out++
	h.lastHandout = now
	f.lastHandout = now
	f.nextTicket++
	it.ticket = f.nextTicket
	it.host = h
	f.out = append(f.out, it.ticket)
	f.fixLocked(h)
	return it, 0, nil
}

// Done records that the caller has finished with it; err is the fetch's
// error, nil for success. It frees the item's slot and, with a
// PersistentQueue, acknowledges the item (Ack) so it does not come back
// after a restart; the error is Ack's. Calling Done twice, or with an item
// this Frontier's Next did not return, does nothing.
func (f *Frontier) Done(it Item, err error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := 0
	for i < len(f.out) && f.out[i] != it.ticket {
		i++
	}
	if i == len(f.out) {
		return nil
	}
	f.out[i] = f.out[len(f.out)-1]
	f.out = f.out[:len(f.out)-1]
	h := it.host
	h.out--
	if err != nil {
		h.failed++
		f.failed++
	} else {
		h.done++
		f.done++
	}
	f.fixLocked(h)
	f.notifyLocked()
	if f.persist != nil {
		if aerr := f.persist.Ack(it, err); aerr != nil {
			return fmt.Errorf("frontier: acknowledging %s: %w", it.URL, aerr)
		}
	}
	return nil
}

// StopHost drops every URL queued for host (a host[:port] as in Item.Host)
// and makes later Adds for it return Stopped: the audit does this when
// robots.txt is unreachable. It returns how many queued URLs were dropped.
func (f *Frontier) StopHost(hostName string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hostLocked(hostName)
	h.stopped = true
	n, err := f.queue.Drop(hostName)
	if err != nil {
		return 0, fmt.Errorf("frontier: stopping %s: %w", hostName, err)
	}
	f.queued -= h.queued
	f.accepted -= h.queued
	f.dropped[Stopped] += h.queued
	h.queued = 0
	clear(h.byDepth)
	f.fixLocked(h)
	f.notifyLocked()
	return n, nil
}

// Acquire blocks until a request to u's host may start now under every
// limit, counts it in flight and returns release, to be called once when
// the response body is finished; extra calls do nothing. It implements
// fetch.Gate: pages, robots.txt, sitemaps, retries and redirect hops all
// pass through it.
//
// Blocked calls are admitted in arrival order among those whose host may
// take a request (per-host limits), so a retry waits its backoff plus at
// most the run's gap, not for every later request; a call for a busy host
// does not hold back a later one for a ready host.
func (f *Frontier) Acquire(ctx context.Context, u *url.URL) (func(), error) {
	if u == nil {
		return nil, fmt.Errorf("%w: nil URL", ErrInvalidURL)
	}
	hostName, err := urlnorm.HostPort(u.Scheme, u.Host)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidURL, u.Redacted(), err)
	}
	var w *waiter // nil until the first attempt fails: a newcomer is behind every waiter
	var t0 int64  // time of the first attempt
	for {
		f.mu.Lock()
		now := f.now().UnixNano()
		if w == nil {
			t0 = now
		}
		release, wait := f.acquireLocked(f.hostLocked(hostName), w, now)
		if release != nil {
			f.mu.Unlock()
			if now > t0 && f.log != nil {
				f.logGateWait(ctx, u, hostName, time.Duration(now-t0))
			}
			return release, nil
		}
		if w == nil {
			w = &waiter{h: f.hostLocked(hostName)}
			f.waiters = append(f.waiters, w)
		}
		ch := f.waitLocked()
		f.mu.Unlock()
		if err := sleep(ctx, ch, wait); err != nil {
			f.mu.Lock()
			f.removeWaiterLocked(w)
			f.notifyLocked() // w may have been first in line
			f.mu.Unlock()
			// Name the URL (errors.Is still sees ctx's error).
			return nil, fmt.Errorf("frontier: waiting to request %s: %w", u.Redacted(), err)
		}
	}
}

// Observe implements fetch.Observer: with Config.Adaptive set, the host's
// gap becomes what the policy makes of this response, clamped between the
// configured gap (the larger of Gap and PerHostGap) and MaxHostGap.
// fetch's Client and Transport call it for every request they send
// through the Frontier; without Adaptive it does nothing.
func (f *Frontier) Observe(u *url.URL, o backoff.Observation) {
	if f.cfg.Adaptive == nil || u == nil {
		return
	}
	name, err := urlnorm.HostPort(u.Scheme, u.Host)
	if err != nil {
		return
	}
	f.mu.Lock()
	h := f.hosts[name]
	if h == nil {
		f.mu.Unlock()
		return
	}
	floor := time.Duration(max(f.gap, f.perHostGap))
	ceil := time.Duration(max(f.maxHostGap, int64(floor)))
	p := h.ownPace()
	cur := max(time.Duration(p.adaptGap), floor)
	next := min(max(f.cfg.Adaptive(floor, ceil, cur, o), floor), ceil)
	changed := next != cur
	if changed {
		p.adaptGap = int64(next)
		if next == floor {
			p.adaptGap = 0 // at the configured pace: no gap of its own
		}
		f.setPaceLocked(h)
		f.fixLocked(h)
		f.notifyLocked() // a shorter gap may let a waiter go sooner
	}
	f.mu.Unlock()
	if changed && f.log != nil {
		f.logHostGap(u, name, next, o)
	}
}

// TryAcquireAt is the non-blocking form of Acquire at time now for a host
// (host[:port] as in Item.Host). If a request may not start at now it
// returns a nil release and the time to try again, which is zero when only
// a release (or the admission of a blocked Acquire, which goes first) can
// make progress.
func (f *Frontier) TryAcquireAt(hostName string, now time.Time) (release func(), retry time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	release, wait := f.acquireLocked(f.hostLocked(hostName), nil, now.UnixNano())
	if release == nil && wait > 0 {
		return nil, now.Add(time.Duration(wait))
	}
	return release, time.Time{}
}

// acquireLocked admits a request to h at now for w (nil: a call not yet
// waiting, so behind every waiter), or returns the wait in ns (0: until
// something changes).
func (f *Frontier) acquireLocked(h *host, w *waiter, now int64) (func(), int64) {
	f.checkSlowdownLocked()
	if h.inFlight >= f.hostInFlight(h) {
		return nil, 0
	}
	hostAt := h.lastStart + f.hostGap(h)
	if hostAt <= now && f.readyWaiterLocked(w, now) {
		return nil, 0 // an earlier waiter takes the next slot; its admission wakes us
	}
	if f.inFlight >= f.maxInFlight {
		return nil, 0
	}
	if at := max(f.lastStart+f.gap, hostAt); at > now {
		return nil, at - now
	}
	if w != nil {
		f.removeWaiterLocked(w)
	}
	f.notifyLocked() // lastStart moved: the next waiter (or Next) re-reckons
	f.inFlight++
	h.inFlight++
	f.lastStart, h.lastStart = now, now
	f.admitGap, h.admitGap = f.gap, f.hostGap(h)
	f.requests++
	h.requests++
	if f.persist != nil {
		f.persist.Started(h.name, time.Unix(0, now))
	}
	if h.heapIdx >= 0 {
		f.ready.fix(f, h.heapIdx)
	}
	var once atomic.Bool
	return func() {
		if once.Swap(true) {
			return
		}
		f.mu.Lock()
		f.inFlight--
		h.inFlight--
		f.notifyLocked()
		f.mu.Unlock()
	}, 0
}

// readyWaiterLocked reports whether a waiter before w (before every
// waiter when w is nil) could take a request for its host at now, per-host
// limits considered: such a waiter goes first for the run-wide budget.
func (f *Frontier) readyWaiterLocked(w *waiter, now int64) bool {
	for _, e := range f.waiters {
		if e == w {
			return false
		}
		if e.h.inFlight < f.hostInFlight(e.h) && e.h.lastStart+f.hostGap(e.h) <= now {
			return true
		}
	}
	return false
}

func (f *Frontier) removeWaiterLocked(w *waiter) {
	if i := slices.Index(f.waiters, w); i >= 0 {
		f.waiters = slices.Delete(f.waiters, i, i+1)
	}
}

// waitLocked returns the channel closed by the next notifyLocked.
func (f *Frontier) waitLocked() <-chan struct{} {
	if f.wake == nil {
		f.wake = make(chan struct{})
	}
	return f.wake
}

func (f *Frontier) notifyLocked() {
	if f.wake != nil {
		close(f.wake)
		f.wake = nil
	}
}

// sleep waits for ch, wait ns (if > 0) or ctx.
func sleep(ctx context.Context, ch <-chan struct{}, wait int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var timer <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(time.Duration(wait))
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ch:
		return nil
	case <-timer:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

var _ fetch.Observer = (*Frontier)(nil)
