package redisfrontier

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/internal/urlnorm"
	"github.com/politecrawl/polite/robots"
)

// Frontier is a crawl frontier and politeness gate shared through Redis by
// every worker (goroutine, process or machine) of one named crawl. It is
// safe for concurrent use. Create one per process with New and Close it
// when done.
type Frontier struct {
	rdb     redis.UniversalClient
	cfg     Config
	tags    []string // key prefix per shard
	ids     []string // crawl id per shard
	worker  string
	channel string
	leaseUS int64
	outage  time.Duration
	defIF   int
	defGap  int64 // µs
	log     *slog.Logger

	seq atomic.Uint64
	rr  atomic.Uint64

	// Next: one caller at a time asks Redis and waits (a token); what the
	// last hand-out said about the next one. Both used by the holder only.
	asker    chan struct{}
	hint     nextHint
	lastNext time.Duration

	// RoundTrips counts the Redis calls this Frontier made (a pipelined
	// batch counts once); for benchmarks and progress displays.
	roundTrips atomic.Int64

	wake *waker

	// Admissions waiting for their requests (see start.go), by URL.
	startWin time.Duration
	admitMu  sync.Mutex
	admits   map[string][]admission
	admitN   int
	ownBase  []*http.Transport // base transports made by Transport (admitMu)

	mu       sync.Mutex
	sites    map[string]Limits   // units known to be sites
	notSites map[string]struct{} // units known not to be sites (cleared when a site registers)
	leases   map[string]int      // item leases held, "shard/id" (ids are per shard) -> shard
	slots    map[string]int      // slot ids held -> shard
	pending  [][]string          // slot ids released, per shard, not yet sent
	drops    map[frontier.Outcome]int
	closed   bool

	tripped atomic.Bool // the local latch's trip has been written to Redis
	tripMu  sync.Mutex

	flush chan struct{}
	stop  chan struct{}
	bg    sync.WaitGroup
}

// New joins (or creates) the crawl cfg.Crawl on rdb — a *redis.Client or,
// for Redis Cluster, a *redis.ClusterClient — and starts this worker's
// background work: the wake-up subscription, lease renewal and the release
// of finished slots. ctx bounds the setup only. A cluster that is not up
// yet (CLUSTERDOWN, TRYAGAIN, LOADING) is waited for, within Config.Outage;
// a Redis that cannot be reached fails New at once.
func New(ctx context.Context, rdb redis.UniversalClient, cfg Config) (*Frontier, error) {
	if cfg.Site == (Limits{}) {
		cfg.Site = DefaultLimits()
	}
	c := cfg.Client
	if c != nil {
		if c.Gate != nil {
			return nil, &frontier.ConfigError{Field: "Client.Gate", Value: "already set (New makes the Frontier the client's gate: one client per Frontier)"}
		}
		switch {
		case cfg.Slowdown == nil && c.Slowdown == nil:
			cfg.Slowdown = c.Policy.NewSlowdown()
		case cfg.Slowdown == nil:
			cfg.Slowdown = c.Slowdown
		case c.Slowdown != nil && c.Slowdown != cfg.Slowdown:
			return nil, &frontier.ConfigError{Field: "Slowdown", Value: "differs from Client.Slowdown (one latch per run: set one of them, or both to the same)"}
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
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if cfg.Shards == 0 {
		cfg.Shards = 1
	}
	if cfg.Lease == 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.StartWindow == 0 {
		cfg.StartWindow = DefaultStartWindow
	}
	f := &Frontier{
		rdb:      rdb,
		cfg:      cfg,
		worker:   workerID(),
		channel:  cfg.Prefix + ":" + cfg.Crawl + ":wake",
		leaseUS:  cfg.Lease.Microseconds(),
		outage:   cfg.Outage,
		defIF:    cfg.Site.InFlight,
		defGap:   cfg.Site.Gap.Microseconds(),
		log:      cfg.Logger,
		sites:    make(map[string]Limits),
		notSites: make(map[string]struct{}),
		leases:   make(map[string]int),
		slots:    make(map[string]int),
		pending:  make([][]string, cfg.Shards),
		drops:    make(map[frontier.Outcome]int),
		flush:    make(chan struct{}, 1),
		asker:    make(chan struct{}, 1),
		stop:     make(chan struct{}),
		startWin: cfg.StartWindow,
		admits:   make(map[string][]admission),
	}
	if f.outage == 0 {
		f.outage = DefaultOutage
	}
	sdIF, sdGap := cfg.Slowdown.Limits() // nil: the defaults
	alpha := intsetEntries(ctx, rdb) * 2 / 5
	newID := randomHex(8)
	initTag := func(t string) (string, error) {
		var res []string
		var err error
		// A cluster just created, or failing over, answers CLUSTERDOWN
		// (or TRYAGAIN, LOADING) for a moment: wait for it, within
		// Outage. A Redis that cannot be reached at all fails at once.
		deadline := time.Now().Add(f.outage)
		for {
			res, err = scriptInit.Run(ctx, rdb, []string{t + "g"}, cfg.Crawl, cfg.Shards, cfg.MaxInFlight,
				cfg.Gap.Microseconds(), sdIF, sdGap.Microseconds(), cfg.StartWindow.Microseconds(), alpha, newID).StringSlice()
			var re redis.Error
			if err == nil || !errors.As(err, &re) || !retryable(err) || f.outage < 0 || time.Now().After(deadline) {
				break
			}
			f.reloadSlots()
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
		if err != nil {
			return "", fmt.Errorf("redisfrontier: joining crawl %q: %w", cfg.Crawl, err)
		}
		if res[0] == "CONFLICT" {
			return "", fmt.Errorf("%w: crawl %q has %s=%s", ErrConfigMismatch, cfg.Crawl, res[1], res[2])
		}
		return res[1], nil
	}
	if cfg.Shards > 1 {
		// The unsharded tag records the shard count too, so that workers
		// started with another -shards are refused instead of crawling
		// the same sites in keys of their own.
		if _, err := initTag(tag(cfg.Prefix, cfg.Crawl, 0, 1)); err != nil {
			return nil, err
		}
	}
	for i := range cfg.Shards {
		t := tag(cfg.Prefix, cfg.Crawl, i, cfg.Shards)
		f.tags = append(f.tags, t)
		id, err := initTag(t)
		if err != nil {
			return nil, err
		}
		f.ids = append(f.ids, id)
	}
	w, err := startWaker(ctx, rdb, f.channel, f.siteRegistered, f.log)
	if err != nil {
		return nil, fmt.Errorf("redisfrontier: subscribing to %s: %w", f.channel, err)
	}
	f.wake = w
	if c != nil {
		c.Slowdown = cfg.Slowdown
		c.Gate = f
		if c.Claimer == nil {
			c.Claimer = f // a redirect target is requested once per crawl, fleet-wide
		}
		// Requests start within the start window of their admission.
		base := c.Transport
		if base == nil && c.Guard != nil {
			base = c.Guard.NewTransport() // the SSRF guard's dialer, wrapped below, not an unguarded default
		}
		c.Transport = f.Transport(base)
		// The fleet shares robots.txt: the client's cache loads what any
		// worker fetched, and takes the fleet-wide fetch lock.
		if rc := c.RobotsCache(); rc != nil && rc.Store == nil {
			rc.Store = f.RobotsStore()
		}
	}
	f.bg.Add(1)
	go f.background()
	return f, nil
}

// clientRobots asks the client's robots checker as it is at each call.
type clientRobots struct{ c *fetch.Client }

func (r clientRobots) CheckAs(ctx context.Context, tokens []string, rawURL string) (robots.Verdict, error) {
	if r.c.Robots != nil {
		return r.c.Robots.CheckAs(ctx, tokens, rawURL)
	}
	return r.c.RobotsCache().CheckAs(ctx, tokens, rawURL)
}

// intsetEntries reads set-max-intset-entries (512 unless configured), the
// size up to which a set of integers stays in the compact encoding.
func intsetEntries(ctx context.Context, rdb redis.UniversalClient) int {
	m, err := rdb.ConfigGet(ctx, "set-max-intset-entries").Result()
	if err == nil {
		if n, err := strconv.Atoi(m["set-max-intset-entries"]); err == nil && n >= 16 {
			return n
		}
	}
	return 512 // CONFIG may be disabled (managed Redis)
}

func workerID() string {
	h, _ := os.Hostname()
	if i := strings.IndexByte(h, '.'); i > 0 {
		h = h[:i]
	}
	return fmt.Sprintf("%s-%d-%s", h, os.Getpid(), randomHex(3))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Worker returns this Frontier's worker id, the prefix of its leases.
func (f *Frontier) Worker() string { return f.worker }

// RoundTrips returns how many Redis calls this Frontier has made.
func (f *Frontier) RoundTrips() int64 { return f.roundTrips.Load() }

// Close stops this worker's background work, sends releases still
// pending and leaves items it still holds to expire with their leases. It
// does not close rdb.
func (f *Frontier) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	f.mu.Unlock()
	close(f.stop)
	f.bg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := f.flushReleases(ctx)
	f.wake.close()
	f.admitMu.Lock()
	own := f.ownBase
	f.admitMu.Unlock()
	for _, t := range own {
		t.CloseIdleConnections()
	}
	return err
}

// background renews leases, sends released slots shortly after release
// when no other call takes them along, and writes a local slowdown trip
// to Redis as soon as it happens.
func (f *Frontier) background() {
	defer f.bg.Done()
	tick := time.NewTicker(f.cfg.Lease / 3)
	defer tick.Stop()
	var sdC <-chan struct{}
	if f.cfg.Slowdown != nil {
		sdC = f.cfg.Slowdown.C()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-f.stop
		cancel()
	}()
	for {
		select {
		case <-f.stop:
			return
		case <-tick.C:
			f.renew(ctx)
			f.sweepAdmissions()
		case <-f.flush:
			// Give the worker's next call (usually Done/Finish, a moment
			// away) the chance to carry the release in the same round trip.
			select {
			case <-time.After(flushDelay):
			case <-f.stop:
				return
			}
			if err := f.flushReleases(ctx); err != nil && ctx.Err() == nil {
				f.warn("redisfrontier.unavailable", "op", "release", "err", err)
			}
		case <-sdC:
			sdC = nil
			if err := f.propagateTrip(ctx); err != nil && ctx.Err() == nil {
				f.warn("redisfrontier.unavailable", "op", "slowdown", "err", err)
			}
		}
	}
}

// flushDelay is how long a released slot may wait for the worker's next
// call to carry it before it is sent alone. The slot stays counted in
// flight meanwhile: the gate errs on the polite side.
const flushDelay = 2 * time.Millisecond

func (f *Frontier) flushReleases(ctx context.Context) error {
	var first error
	for i := range f.tags {
		f.mu.Lock()
		n := len(f.pending[i])
		f.mu.Unlock()
		if n == 0 {
			continue
		}
		if _, err := f.run(ctx, i, scriptRenew); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// renew extends the leases of every item and slot this worker holds.
func (f *Frontier) renew(ctx context.Context) {
	type ids struct{ items, slots []string }
	by := make([]ids, len(f.tags))
	f.mu.Lock()
	for key, s := range f.leases {
		_, id, _ := strings.Cut(key, "/")
		by[s].items = append(by[s].items, id)
	}
	for id, s := range f.slots {
		by[s].slots = append(by[s].slots, id)
	}
	f.mu.Unlock()
	for i, b := range by {
		if len(b.items)+len(b.slots) == 0 {
			continue
		}
		args := make([]any, 0, len(b.items)+len(b.slots)+1)
		for _, id := range b.items {
			args = append(args, id)
		}
		args = append(args, "|")
		for _, id := range b.slots {
			args = append(args, id)
		}
		res, err := f.run(ctx, i, scriptRenew, args...)
		if err != nil {
			if ctx.Err() == nil {
				f.warn("redisfrontier.unavailable", "op", "renew", "err", err)
			}
			continue
		}
		for _, id := range res[1:] {
			f.warn("redisfrontier.lease_lost", "lease", id)
		}
	}
}

// run calls script on shard i with the common arguments, taking along the
// slot releases and drop counts pending for the shard, and retries while
// Redis is unreachable for up to Config.Outage.
func (f *Frontier) run(ctx context.Context, i int, s *redis.Script, extra ...any) ([]any, error) {
	if s != scriptTrip {
		if err := f.propagateTrip(ctx); err != nil {
			return nil, err
		}
	}
	var deadline time.Time
	wait := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		rel, drops := f.takePending(i)
		args := make([]any, 0, 6+len(extra))
		args = append(args, f.ids[i], f.leaseUS, rel, f.worker, f.channel, drops)
		args = append(args, extra...)
		f.roundTrips.Add(1)
		res, err := s.Run(ctx, f.rdb, []string{f.tags[i] + "g"}, args...).Slice()
		lost := err == nil && len(res) > 0 && res[0] == "LOST"
		if err == nil && !lost {
			return res, nil
		}
		f.putBack(i, rel, drops) // a LOST script returned before doing anything
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		stateLost := func() error {
			f.logAt(slog.LevelError, "redisfrontier.state_lost", "crawl", f.cfg.Crawl, "shard", i)
			return fmt.Errorf("%w (crawl %q, shard %d)", ErrStateLost, f.cfg.Crawl, i)
		}
		_, cluster := f.rdb.(*redis.ClusterClient)
		switch {
		case lost && !cluster:
			return nil, stateLost()
		case lost:
			// On a cluster, the node that answered for the shard's slot
			// may not be the one that holds it: while a failover
			// converges, the client's slot map can still name an address
			// the dead master left, where another server may now listen,
			// or a restarted node may serve its old slots, empty, until
			// gossip tells it better. The script stopped before writing,
			// so ask again with a fresh slot map; state missing for all
			// of Outage is lost.
			err = errStateMissing
		case !retryable(err):
			return nil, fmt.Errorf("redisfrontier: %w", err)
		}
		f.reloadSlots()
		if deadline.IsZero() {
			deadline = time.Now().Add(f.outage)
		}
		if f.outage < 0 || time.Now().After(deadline) {
			if lost {
				return nil, stateLost()
			}
			return nil, fmt.Errorf("%w for %v: %w", ErrUnavailable, max(f.outage, 0), err)
		}
		f.warn("redisfrontier.unavailable", "attempt", attempt, "retry_in", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		wait = min(2*wait, time.Second)
	}
}

// retry runs op (one Redis call) until it succeeds, fails for a reason
// an outage does not explain, or Redis has been unreachable for
// Config.Outage.
func (f *Frontier) retry(ctx context.Context, op func() error) error {
	var deadline time.Time
	wait := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		f.roundTrips.Add(1)
		err := op()
		if err == nil || errors.Is(err, redis.Nil) || ctx.Err() != nil || !retryable(err) {
			return err
		}
		f.reloadSlots()
		if deadline.IsZero() {
			deadline = time.Now().Add(f.outage)
		}
		if f.outage < 0 || time.Now().After(deadline) {
			return fmt.Errorf("%w for %v: %w", ErrUnavailable, max(f.outage, 0), err)
		}
		f.warn("redisfrontier.unavailable", "attempt", attempt, "retry_in", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		wait = min(2*wait, time.Second)
	}
}

// reloadSlots makes a cluster client ask the cluster again which master
// serves which slot, after a failure that a failover or resharding may
// explain: the master it knew may be dead, its replica promoted.
func (f *Frontier) reloadSlots() {
	if cc, ok := f.rdb.(*redis.ClusterClient); ok {
		cc.ReloadState(context.Background())
	}
}

// retryable reports whether err may go away when Redis comes back: a
// network error, a server that is loading or failing over (a replica
// being promoted), or a slot in the middle of a migration to another
// master. Every script touches a key that does not exist before it writes
// anything (see prelude), so a script refused during a migration has
// changed nothing and is safely run again.
func retryable(err error) bool {
	var re redis.Error
	if errors.As(err, &re) {
		msg := re.Error()
		for _, p := range []string{"LOADING", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "READONLY", "ASK", "MOVED"} {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
		return strings.Contains(msg, "non local key")
	}
	return !errors.Is(err, redis.ErrClosed)
}

func (f *Frontier) takePending(i int) (string, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rel := strings.Join(f.pending[i], " ")
	f.pending[i] = f.pending[i][:0]
	var drops strings.Builder
	for o, n := range f.drops {
		fmt.Fprintf(&drops, "%d:%d ", int(o), n)
	}
	clear(f.drops)
	return rel, drops.String()
}

// putBack returns what a failed call took along. A release sent twice is
// harmless (the script ignores unknown slots).
func (f *Frontier) putBack(i int, rel, drops string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if rel != "" {
		f.pending[i] = append(f.pending[i], strings.Fields(rel)...)
	}
	for _, kv := range strings.Fields(drops) {
		o, n, _ := strings.Cut(kv, ":")
		oi, _ := strconv.Atoi(o)
		ni, _ := strconv.Atoi(n)
		f.drops[frontier.Outcome(oi)] += ni
	}
}

// propagateTrip writes the local slowdown latch's trip to Redis once.
func (f *Frontier) propagateTrip(ctx context.Context) error {
	if f.cfg.Slowdown == nil || f.tripped.Load() {
		return nil
	}
	ev, ok := f.cfg.Slowdown.Tripped()
	if !ok {
		return nil
	}
	f.tripMu.Lock()
	defer f.tripMu.Unlock()
	if f.tripped.Load() {
		return nil
	}
	if err := f.Trip(ctx, ev.URL); err != nil {
		return fmt.Errorf("redisfrontier: sharing the slowdown tripped by %s: %w", ev.URL, err)
	}
	f.tripped.Store(true)
	return nil
}

// Trip trips the shared slowdown latch as a 429 on rawURL would: for the
// whole crawl (every shard), or for rawURL's site only when
// Config.SlowSiteOnly is set. Every worker's requests are slowed from the
// moment it returns. A local Config.Slowdown trip is shared this way
// automatically; call Trip for later 429s in SlowSiteOnly mode.
func (f *Frontier) Trip(ctx context.Context, rawURL string) error {
	unit := ""
	if f.cfg.SlowSiteOnly {
		u, err := url.Parse(rawURL)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", frontier.ErrInvalidURL, rawURL, err)
		}
		host, err := urlnorm.HostPort(u.Scheme, u.Host)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", frontier.ErrInvalidURL, rawURL, err)
		}
		unit = unitOf(host)
		_, err = f.run(ctx, f.shardOf(unit), scriptTrip, unit, rawURL)
		return err
	}
	for i := range f.tags {
		if _, err := f.run(ctx, i, scriptTrip, "", rawURL); err != nil {
			return err
		}
	}
	return nil
}

var _ frontier.Interface = (*Frontier)(nil)

// errWait: nothing may start now.
var errWait = errors.New("wait")

// Next blocks until a queued URL may be requested now under every limit,
// fleet-wide, and returns it: across sites the one that may start soonest,
// shallowest first within a site. The item is leased to this worker
// (renewed in the background) until Done or Finish. It returns
// frontier.ErrComplete once nothing is queued or handed out anywhere in
// the crawl, ErrStateLost if the crawl's state vanished from Redis,
// ErrUnavailable after a long outage, or ctx's error.
//
// One caller per Frontier at a time asks Redis and, when nothing may go
// yet, waits — for the time Redis named or a wake-up that may bring
// something sooner; the others queue behind it instead of each asking
// again. With one shard, the reply that hands out an item also says when
// the next may go, and the next caller waits until then without asking.
// So a fleet of idle fetchers costs one call per item handed out, plus
// one per wake-up.
func (f *Frontier) Next(ctx context.Context) (frontier.Item, error) {
	select {
	case f.asker <- struct{}{}:
	case <-ctx.Done():
		return frontier.Item{}, fmt.Errorf("redisfrontier: waiting for the next URL: %w", ctx.Err())
	}
	defer func() { <-f.asker }()
	for {
		gen := f.wake.snapshotNext()
		wait, hinted := f.hint.remaining(gen)
		if !hinted {
			var it frontier.Item
			var next time.Duration
			var err error
			it, wait, next, err = f.nextOnce(ctx)
			if err == nil && next >= 0 && len(f.tags) == 1 {
				f.hint = nextHint{set: true, gen: gen, until: time.Now().Add(next), forever: next == 0}
			}
			if err != errWait {
				return it, err
			}
		}
		if err := f.wake.waitNext(ctx, gen, wait); err != nil {
			return frontier.Item{}, fmt.Errorf("redisfrontier: waiting for the next URL: %w", err)
		}
	}
}

// nextHint is what the last hand-out said about the next: nothing may go
// before until (or, forever, before a wake-up), as long as no wake-up
// came after the snapshot gen. Used by the holder of Frontier.asker only.
type nextHint struct {
	set     bool
	gen     uint64
	until   time.Time
	forever bool
}

// remaining returns how long to wait without asking, if the hint holds.
func (h nextHint) remaining(gen uint64) (time.Duration, bool) {
	if !h.set || h.gen != gen {
		return 0, false
	}
	if h.forever {
		return 0, true
	}
	d := time.Until(h.until)
	return d, d > 0
}

// nextOnce asks every shard in turn for an item; next is the shard's hint
// about the following one (-1: none).
func (f *Frontier) nextOnce(ctx context.Context) (it frontier.Item, wait, next time.Duration, err error) {
	it, wait, err = f.nextScan(ctx)
	return it, wait, f.lastNext, err
}

func (f *Frontier) nextScan(ctx context.Context) (frontier.Item, time.Duration, error) {
	n := len(f.tags)
	first := int(f.rr.Add(1) % uint64(n))
	var pushes []int64
	wait, waiting := time.Duration(0), false
	for pass := 0; pass < 2; pass++ {
		for k := range n {
			i := (first + k) % n
			res, err := f.run(ctx, i, scriptNext)
			if err != nil {
				return frontier.Item{}, 0, err
			}
			switch res[0] {
			case "ITEM":
				f.lastNext = -1
				if len(res) > 5 {
					if us := toInt(res[5]); us >= 0 {
						f.lastNext = time.Duration(us) * time.Microsecond
					}
				}
				return f.item(i, res), 0, nil
			case "WAIT":
				d := time.Duration(toInt(res[1])) * time.Microsecond
				if !waiting || (d > 0 && (wait == 0 || d < wait)) {
					wait = d
				}
				waiting = true
			case "DONE":
				if pass == 0 {
					pushes = append(pushes, toInt(res[1]))
				} else if toInt(res[1]) != pushes[k] {
					waiting = true // something was queued meanwhile: look again
				}
			}
		}
		if waiting {
			return frontier.Item{}, wait, errWait
		}
		if n == 1 {
			break
		}
		// Every shard looked complete, one after the other. A second pass
		// that finds the same push counts proves there was a moment when
		// all were complete at once (items of one shard add links to
		// others before they are done).
	}
	return frontier.Item{}, 0, frontier.ErrComplete
}

func (f *Frontier) item(shard int, res []any) frontier.Item {
	id, _ := res[1].(string)
	depth := int(toInt(res[3]))
	entry, _ := res[4].(string)
	u, from, _ := strings.Cut(entry, "\x00")
	key := strconv.Itoa(shard) + "/" + id
	it := frontier.Item{URL: u, Depth: depth, From: from, Host: urlnorm.Host(u), Lease: key}
	f.mu.Lock()
	f.leases[key] = shard
	f.mu.Unlock()
	return it
}

// takeLease returns the lease of an item (Item.Lease, "shard/id") and
// stops renewing it; ok is false for an item Next did not hand out.
func (f *Frontier) takeLease(it frontier.Item) (string, int, bool) {
	sh, id, ok := strings.Cut(it.Lease, "/")
	shard, err := strconv.Atoi(sh)
	if !ok || err != nil || shard < 0 || shard >= len(f.tags) || id == "" {
		return "", 0, false
	}
	f.mu.Lock()
	delete(f.leases, it.Lease)
	f.mu.Unlock()
	return id, shard, true
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

// Done records that the worker has finished with it (err is the fetch's
// error, nil for success) and frees its share of the site's budget. It
// returns ErrLeaseLost if the lease expired and the item was handed out
// again, and Redis errors. Done for an item no Next handed out does
// nothing; a second Done of an item returns ErrLeaseLost.
func (f *Frontier) Done(it frontier.Item, err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), max(f.outage, 0)+10*time.Second)
	defer cancel()
	_, derr := f.Finish(ctx, it, err, nil)
	return derr
}

// Finish adds the links found on it's page (at depth it.Depth+1, from
// it.URL) and marks it done, in one Redis round trip when the links
// belong to its shard: what Add for each link followed by Done does, in
// fewer calls. The results are in the order of links.
func (f *Frontier) Finish(ctx context.Context, it frontier.Item, fetchErr error, links []string) ([]frontier.AddResult, error) {
	return f.FinishFrom(ctx, it, it.URL, fetchErr, links)
}

// FinishFrom is Finish with the links attributed to from, the page that
// holds them: after a redirect, the fetch's final URL (Result.FinalURL),
// never the redirecting it.URL.
func (f *Frontier) FinishFrom(ctx context.Context, it frontier.Item, from string, fetchErr error, links []string) ([]frontier.AddResult, error) {
	ls := make([]link, len(links))
	for i, l := range links {
		ls[i] = link{raw: l, depth: it.Depth + 1, from: from}
	}
	var d *doneReq
	if id, shard, ok := f.takeLease(it); ok {
		d = &doneReq{id: id, shard: shard, failed: fetchErr != nil}
	}
	res, err := f.addAll(ctx, ls, d)
	if err == nil && d != nil && d.status == "LOST" {
		f.warn("redisfrontier.lease_lost", "url", it.URL, "lease", d.id)
		err = fmt.Errorf("%w: %s", ErrLeaseLost, it.URL)
	}
	return res, err
}

type link struct {
	raw   string
	depth int
	from  string
}

type doneReq struct {
	id     string
	shard  int
	failed bool
	status string // after the call: "OK" or "LOST"
}

// Add normalizes rawURL, found at link depth depth on page from ("" for a
// start URL, which has depth 0), and queues it for the whole fleet or says
// why not. A depth-0 URL starts a site with Config.Site limits (see
// AddSite). Robots is asked about a URL of a known site before it is
// queued; ctx bounds that check and the Redis call.
func (f *Frontier) Add(ctx context.Context, rawURL string, depth int, from string) frontier.AddResult {
	if depth == 0 {
		return f.addSite(ctx, rawURL, from, f.cfg.Site)
	}
	res, _ := f.addAll(ctx, []link{{raw: rawURL, depth: depth, from: from}}, nil)
	return res[0]
}

// AddAll is Add for many URLs found on one page at the same depth, in one
// Redis round trip per shard they fall in (one with one shard). The
// results are in the order of rawURLs.
func (f *Frontier) AddAll(ctx context.Context, rawURLs []string, depth int, from string) []frontier.AddResult {
	if depth == 0 {
		res := make([]frontier.AddResult, len(rawURLs))
		for i, u := range rawURLs {
			res[i] = f.Add(ctx, u, 0, from)
		}
		return res
	}
	ls := make([]link, len(rawURLs))
	for i, u := range rawURLs {
		ls[i] = link{raw: u, depth: depth, from: from}
	}
	res, _ := f.addAll(ctx, ls, nil)
	return res
}

// AddSite adds startURL as the start of a site (its host and www/apex
// twin) with its own limits. The first registration of a site in the
// crawl fixes its limits; later ones keep them.
func (f *Frontier) AddSite(ctx context.Context, startURL string, lim Limits) frontier.AddResult {
	if err := lim.validate("Limits."); err != nil {
		return frontier.AddResult{Outcome: frontier.Invalid, URL: startURL, Err: err}
	}
	return f.addSite(ctx, startURL, "", lim)
}

func (f *Frontier) addSite(ctx context.Context, rawURL, from string, lim Limits) frontier.AddResult {
	n, res, ok := f.normalize(rawURL, 0)
	if !ok {
		return res
	}
	unit := unitOf(urlnorm.Host(n))
	r, err := f.run(ctx, f.shardOf(unit), scriptSite, unit, lim.MaxPages, lim.MaxDepth, lim.InFlight, lim.Gap.Microseconds())
	if err != nil {
		return frontier.AddResult{Outcome: frontier.Failed, URL: n, Err: fmt.Errorf("redisfrontier: starting site %s: %w", unit, err)}
	}
	f.knowSite(unit, Limits{MaxPages: int(toInt(r[1])), MaxDepth: int(toInt(r[2])), InFlight: int(toInt(r[3])),
		Gap: time.Duration(toInt(r[4])) * time.Microsecond})
	out, _ := f.addAll(ctx, []link{{raw: n, depth: 0, from: from}}, nil)
	return out[0]
}

func (f *Frontier) knowSite(unit string, lim Limits) {
	f.mu.Lock()
	f.sites[unit] = lim
	delete(f.notSites, unit)
	f.mu.Unlock()
}

// siteRegistered is called when some worker registers a site: units this
// worker took for out of scope may be sites now.
func (f *Frontier) siteRegistered() {
	f.mu.Lock()
	clear(f.notSites)
	f.mu.Unlock()
}

// normalize runs the checks that need no Redis; ok is false with the
// result when the URL is dropped.
func (f *Frontier) normalize(rawURL string, depth int) (string, frontier.AddResult, bool) {
	drop := func(r frontier.AddResult) (string, frontier.AddResult, bool) {
		f.countDrop(r.Outcome)
		f.logAdd(r, "", depth)
		return "", r, false
	}
	if len(rawURL) > frontier.MaxURLLength {
		return drop(frontier.AddResult{Outcome: frontier.TooLong, URL: rawURL, Err: tooLong(rawURL)})
	}
	n, err := urlnorm.Normalize(rawURL)
	if err != nil {
		return drop(frontier.AddResult{Outcome: frontier.Invalid, URL: rawURL, Err: fmt.Errorf("%w: %w", frontier.ErrInvalidURL, err)})
	}
	if depth < 0 {
		return drop(frontier.AddResult{Outcome: frontier.Invalid, URL: n, Err: fmt.Errorf("%w: negative depth %d for %s", frontier.ErrInvalidURL, depth, n)})
	}
	if len(n) > frontier.MaxURLLength {
		return drop(frontier.AddResult{Outcome: frontier.TooLong, URL: rawURL, Err: tooLong(rawURL)})
	}
	return n, frontier.AddResult{}, true
}

func tooLong(rawURL string) error {
	return fmt.Errorf("%w (%d bytes): %.80s", frontier.ErrTooLong, len(rawURL), rawURL)
}

func (f *Frontier) countDrop(o frontier.Outcome) {
	f.mu.Lock()
	f.drops[o]++
	f.mu.Unlock()
}

// pendingAdd is a URL on its way to the update script.
type pendingAdd struct {
	i               int // index in the results
	unit, host, url string
	depth           int
	from, hash      string
	low             int64
	robots          byte // 'A', 'D', 'U' or '?' (see updateScript)
}

// addAll adds links, in as few round trips as the shards allow, then does
// done (if any) in the same call as the adds of its shard.
func (f *Frontier) addAll(ctx context.Context, links []link, done *doneReq) ([]frontier.AddResult, error) {
	res := make([]frontier.AddResult, len(links))
	by := make(map[int][]*pendingAdd)
	for i, l := range links {
		n, r, ok := f.normalize(l.raw, l.depth)
		if !ok {
			res[i] = r
			continue
		}
		host := urlnorm.Host(n)
		p := &pendingAdd{i: i, unit: unitOf(host), host: host, url: n, depth: l.depth, from: l.from}
		p.hash, p.low = urlHash(n)
		res[i].URL = n
		f.mu.Lock()
		lim, known := f.sites[p.unit]
		_, notSite := f.notSites[p.unit]
		f.mu.Unlock()
		switch {
		case notSite:
			res[i].Outcome = frontier.OutOfScope
			f.countDrop(frontier.OutOfScope)
			f.logAdd(res[i], l.from, l.depth)
			continue
		case known && l.depth > lim.MaxDepth:
			res[i].Outcome = frontier.TooDeep
			f.countDrop(frontier.TooDeep)
			f.logAdd(res[i], l.from, l.depth)
			continue
		case known:
			if !f.checkRobots(ctx, p, &res[i]) {
				continue
			}
		default:
			p.robots = '?'
		}
		s := f.shardOf(p.unit)
		by[s] = append(by[s], p)
	}
	order := make([]int, 0, len(by)+1)
	for s := range by {
		if done == nil || s != done.shard {
			order = append(order, s)
		}
	}
	slices.Sort(order)
	if done != nil {
		order = append(order, done.shard) // last: its links of other shards are queued before it is done
	}
	var firstErr error
	for _, s := range order {
		batch := by[s]
		d := done
		if d != nil && d.shard != s {
			d = nil
		}
		for len(batch) > 0 || d != nil {
			r, err := f.update(ctx, s, batch, d)
			if err != nil {
				for _, p := range batch {
					res[p.i].Outcome, res[p.i].Err = frontier.Failed, fmt.Errorf("redisfrontier: adding %s: %w", p.url, err)
				}
				if firstErr == nil {
					firstErr = err
				}
				break
			}
			var again []*pendingAdd
			for k, p := range batch {
				code := toInt(r[2+k])
				if code < 0 { // a site this worker did not know: ask robots.txt, then again
					f.knowSite(p.unit, Limits{MaxDepth: int(-1 - code)})
					if f.checkRobots(ctx, p, &res[p.i]) {
						again = append(again, p)
					}
					continue
				}
				f.result(p, frontier.Outcome(code), &res[p.i])
			}
			if d != nil {
				if st, _ := r[1].(string); st != "DEFER" {
					d.status = st
					d = nil
				}
			}
			batch = again
		}
	}
	if done != nil && done.status == "" && firstErr == nil {
		firstErr = errors.New("redisfrontier: done not recorded")
	}
	return res, firstErr
}

// checkRobots asks Config.Robots about p; false means res is final.
func (f *Frontier) checkRobots(ctx context.Context, p *pendingAdd, res *frontier.AddResult) bool {
	p.robots = 'A'
	if f.cfg.Robots == nil {
		return true
	}
	v, err := f.cfg.Robots.CheckAs(ctx, f.cfg.RobotsTokens, p.url)
	res.Verdict = v
	switch {
	case err != nil:
		res.Outcome, res.Err = frontier.Failed, fmt.Errorf("frontier: robots check of %s: %w", p.url, err)
		f.countDrop(frontier.Failed)
		f.logAdd(*res, p.from, p.depth)
		return false
	case v.Outcome == robots.Disallowed:
		p.robots = 'D'
	case v.Outcome == robots.Unreachable:
		p.robots = 'U'
	case v.Outcome != robots.Allowed:
		res.Outcome, res.Err = frontier.Failed, fmt.Errorf("frontier: robots check of %s: outcome %v", p.url, v.Outcome)
		f.countDrop(frontier.Failed)
		f.logAdd(*res, p.from, p.depth)
		return false
	}
	return true
}

func (f *Frontier) result(p *pendingAdd, o frontier.Outcome, res *frontier.AddResult) {
	res.Outcome = o
	switch o {
	case frontier.OutOfScope:
		f.mu.Lock()
		if _, ok := f.sites[p.unit]; !ok {
			f.notSites[p.unit] = struct{}{}
		}
		f.mu.Unlock()
	case frontier.Stopped:
		res.Err = fmt.Errorf("%w: %s", frontier.ErrStopped, p.url)
	case frontier.RobotsUnreachable:
		res.Err = res.Verdict.Err
		if res.Err == nil {
			res.Err = robots.ErrUnreachable
		}
	case frontier.Duplicate, frontier.TooDeep, frontier.PageLimit, frontier.Queued:
	}
	if o != frontier.Disallowed && o != frontier.RobotsUnreachable && o != frontier.Queued {
		if p.robots != '?' {
			res.Verdict = robots.Verdict{} // the verdict applies only to outcomes it decided
		}
	}
	f.logAdd(*res, p.from, p.depth)
}

// update runs the update script on shard s.
func (f *Frontier) update(ctx context.Context, s int, batch []*pendingAdd, d *doneReq) ([]any, error) {
	args := make([]any, 0, 3+8*len(batch))
	if d != nil {
		failed := "0"
		if d.failed {
			failed = "1"
		}
		args = append(args, d.id, failed)
	} else {
		args = append(args, "", "0")
	}
	args = append(args, len(batch))
	for _, p := range batch {
		args = append(args, p.unit, p.host, p.url, p.depth, p.from, p.hash, p.low, string(p.robots))
	}
	return f.run(ctx, s, scriptUpdate, args...)
}

// Acquire blocks until a request to u's site may start now under every
// limit, fleet-wide, counts it in flight (a slot leased to this worker)
// and returns release, to be called once when the response body is
// finished; extra calls do nothing. It implements fetch.Gate: pages,
// robots.txt, sitemaps, retries and redirect hops all pass through it.
// release sends nothing itself: the slot is freed by this worker's next
// Redis call, or within a few milliseconds. The admission is good for
// Config.StartWindow: the request must be sent through Transport (which
// Config.Client gets), which admits it again if it comes later.
func (f *Frontier) Acquire(ctx context.Context, u *url.URL) (func(), error) {
	if u == nil {
		return nil, fmt.Errorf("%w: nil URL", frontier.ErrInvalidURL)
	}
	host, err := urlnorm.HostPort(u.Scheme, u.Host)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", frontier.ErrInvalidURL, u.Redacted(), err)
	}
	unit := unitOf(host)
	shard := f.shardOf(unit)
	slot := f.worker + ":s" + strconv.FormatUint(f.seq.Add(1), 10)
	var waited time.Time
	for {
		gen := f.wake.snapshot()
		call := time.Now()
		res, err := f.run(ctx, shard, scriptAcquire, unit, slot, f.defIF, f.defGap)
		if err != nil {
			return nil, fmt.Errorf("redisfrontier: waiting to request %s: %w", u.Redacted(), err)
		}
		if res[0] == "OK" {
			if f.log != nil && f.log.Enabled(ctx, slog.LevelDebug) {
				if !waited.IsZero() {
					f.log.LogAttrs(ctx, slog.LevelDebug, "frontier.gate_wait", slog.String("url", u.Redacted()),
						slog.String("host", host), slog.Duration("wait", time.Since(waited)))
				}
				// The fleet's audit trail: when the gate admitted each
				// request, on the Redis server's clock.
				f.log.LogAttrs(ctx, slog.LevelDebug, "redisfrontier.admit", slog.String("url", u.Redacted()),
					slog.String("site", unit), slog.Int64("at_us", toInt(res[1])))
			}
			f.noteAdmission(u.String(), call)
			f.mu.Lock()
			f.slots[slot] = shard
			f.mu.Unlock()
			var once atomic.Bool
			return func() {
				if once.Swap(true) {
					return
				}
				f.mu.Lock()
				delete(f.slots, slot)
				f.pending[shard] = append(f.pending[shard], slot)
				f.mu.Unlock()
				select {
				case f.flush <- struct{}{}:
				default:
				}
			}, nil
		}
		if waited.IsZero() {
			waited = time.Now()
		}
		d := time.Duration(toInt(res[1])) * time.Microsecond
		if err := f.wake.wait(ctx, gen, d); err != nil {
			return nil, fmt.Errorf("redisfrontier: waiting to request %s: %w", u.Redacted(), err)
		}
	}
}

// StopHost drops every URL queued for host (a host[:port] as in
// Item.Host) fleet-wide and makes later Adds for it return Stopped. It
// returns how many queued URLs were dropped.
func (f *Frontier) StopHost(host string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), max(f.outage, 0)+10*time.Second)
	defer cancel()
	unit := unitOf(host)
	res, err := f.run(ctx, f.shardOf(unit), scriptStop, unit, host)
	if err != nil {
		return 0, fmt.Errorf("redisfrontier: stopping %s: %w", host, err)
	}
	return int(toInt(res[1])), nil
}

func (f *Frontier) warn(msg string, args ...any) { f.logAt(slog.LevelWarn, msg, args...) }

func (f *Frontier) logAt(level slog.Level, msg string, args ...any) {
	if f.log != nil {
		f.log.Log(context.Background(), level, msg, args...)
	}
}

func (f *Frontier) logAdd(r frontier.AddResult, from string, depth int) {
	if f.log == nil || !f.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	attrs := []slog.Attr{slog.String("url", r.URL)}
	if from != "" {
		attrs = append(attrs, slog.String("from", from))
	}
	attrs = append(attrs, slog.Int("depth", depth), slog.String("outcome", outcomeName(r.Outcome)))
	if rule := r.Verdict.Decision.Rule; rule != nil {
		attrs = append(attrs, slog.String("rule", rule.String()), slog.Int("line", rule.Line))
	}
	if r.Err != nil {
		attrs = append(attrs, slog.String("err", r.Err.Error()))
	}
	f.log.LogAttrs(context.Background(), slog.LevelDebug, "frontier.add", attrs...)
}

// outcomeName is the event table's spelling: "out_of_scope".
func outcomeName(o frontier.Outcome) string { return strings.ReplaceAll(o.String(), " ", "_") }
