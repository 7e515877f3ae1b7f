package robots

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/idna"
)

// Defaults and limits of a [Cache].
const (
	DefaultTTL        = time.Hour       // how long a fetched robots.txt is used
	MaxTTL            = 24 * time.Hour  // RFC 9309 §2.4: never cache longer
	DefaultRecheck    = 5 * time.Minute // how long "unreachable" holds before a re-fetch
	DefaultMaxEntries = 4096            // authorities kept in memory
	MaxRedirects      = 5               // redirects followed when fetching robots.txt
)

// maxClockSkew is how far in the future a stored entry's FetchedAt may lie
// (another machine's clock) before the entry is ignored.
const maxClockSkew = time.Minute

var (
	// ErrUnreachable matches (errors.Is) the Err of an Unreachable verdict:
	// robots.txt answered 5xx or 429, or could not be fetched at all.
	ErrUnreachable = errors.New("robots.txt unreachable")
	// ErrBadURL is returned by Cache methods for a URL that is not an
	// absolute http or https URL with a host.
	ErrBadURL = errors.New("not an absolute http(s) URL")
	// ErrLock matches the error Cache methods return when the Store's
	// [Locker] could not take the fetch lock of an authority. Nothing was
	// fetched or cached; the next call tries again.
	ErrLock = errors.New("robots.txt fetch lock failed")
)

// FetchError is the cause of an Unreachable verdict. It matches
// [ErrUnreachable] and unwraps to the network error, if any.
type FetchError struct {
	URL    string // the robots.txt URL
	Status int    // HTTP status, 0 for a network error
	Err    error  // network error; nil for a status
}

// Error names the robots.txt URL and the status or network error.
func (e *FetchError) Error() string {
	if e.Err != nil {
		return "robots: fetching " + e.URL + ": " + e.Err.Error()
	}
	return fmt.Sprintf("robots: fetching %s: HTTP %d", e.URL, e.Status)
}

// Unwrap returns the network error, if any.
func (e *FetchError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrUnreachable].
func (e *FetchError) Is(target error) bool { return target == ErrUnreachable }

// Outcome classifies a [Verdict].
type Outcome int

const (
	// Unknown is the zero Outcome: no answer was reached (a bad URL, a done
	// context, a zero Verdict). It is not Allowed: code that switches on the
	// outcome and forgets the error still does not fetch.
	Unknown Outcome = iota
	// Allowed means robots.txt permits the URL (or publishes no rules).
	Allowed
	// Disallowed means a robots.txt rule forbids the URL.
	Disallowed
	// Unreachable means robots.txt could not be fetched (5xx, 429 or a
	// network error), so the whole site is off limits for now.
	Unreachable
)

// String returns "unknown", "allowed", "disallowed" or "unreachable".
func (o Outcome) String() string {
	switch o {
	case Unknown:
		return "unknown"
	case Allowed:
		return "allowed"
	case Disallowed:
		return "disallowed"
	case Unreachable:
		return "unreachable"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Verdict is the answer of [Cache.Check] for one URL.
type Verdict struct {
	Outcome   Outcome
	URL       string
	Decision  Decision  // for Allowed/Disallowed
	Status    int       // HTTP status of the robots.txt fetch (0 on network error)
	RecheckAt time.Time // Unreachable (or Stale): when a re-fetch may happen
	// Err, for Unreachable (or Stale), is the cause: a *FetchError matching
	// ErrUnreachable and unwrapping to the original network error (timeout,
	// refused connection...) unless the answer was rebuilt from a Store
	// entry's Err text. For Unknown it is the error Check returned.
	Err   error
	Stale bool // the last refresh was unreachable; Decision comes from the previous copy (Cache.KeepStale)
}

// Allowed reports whether the URL may be fetched. It is false for every
// Outcome but Allowed, the zero Verdict included.
func (v Verdict) Allowed() bool { return v.Outcome == Allowed }

// String describes the verdict for people. It starts with the URL and the
// Outcome's own word ("allowed", "disallowed", "unreachable", "unknown"),
// so it never contradicts Outcome, whatever the other fields hold.
func (v Verdict) String() string {
	switch v.Outcome {
	case Unknown:
		s := v.URL + ": unknown: no robots.txt answer"
		if v.Err != nil {
			s += " (" + v.Err.Error() + ")"
		}
		return s
	case Unreachable:
		s := v.URL + ": unreachable: robots.txt could not be fetched, site off limits"
		if v.Err != nil {
			s += " (" + v.Err.Error() + ")"
		}
		if !v.RecheckAt.IsZero() {
			s += "; re-check at " + v.RecheckAt.Format(time.RFC3339)
		}
		return s
	case Allowed, Disallowed:
		s := v.URL + ": " + v.Outcome.String()
		// The reason, unless the Decision (set by hand?) says the opposite.
		if v.Decision.Allowed == (v.Outcome == Allowed) {
			s += v.Decision.reason()
		}
		if v.Status != 0 && (v.Status < 200 || v.Status > 299) {
			s += fmt.Sprintf(" (robots.txt HTTP %d: no rules)", v.Status)
		}
		if v.Stale {
			s += " (stale copy; refresh failed"
			if v.Err != nil {
				s += ": " + v.Err.Error()
			}
			s += ")"
		}
		return s
	}
	return v.URL + ": " + v.Outcome.String() + ": not an answer"
}

// Entry is the state of one authority's robots.txt, in a form a [Store]
// can persist and [Entry.Rules] can rebuild.
type Entry struct {
	Authority string    // "scheme://host" plus ":port" when not the default
	URL       string    // robots.txt URL requested (Authority + "/robots.txt")
	Status    int       // HTTP status of the final response, 0 on network error
	Body      []byte    // 2xx body, at most MaxBodySize+1 bytes; nil otherwise
	FetchedAt time.Time // when the fetch finished
	ExpiresAt time.Time // when it must be fetched again
	Err       string    // non-empty when unreachable: the cause

	// err is the original error of a network failure, so that errors.Is
	// (timeouts, refused connections) works on a Verdict's Err. It is not
	// exported, so not persisted: a Store that keeps Entry values (like
	// MemoryStore) keeps it; an entry rebuilt from its fields has only Err,
	// and its cause then matches ErrUnreachable but not the original error.
	err error
}

// Unreachable reports whether the entry records a 5xx, 429 or network
// error, meaning the site is off limits until ExpiresAt. An entry with Err
// set, or with a status of 0 (no response: the zero Entry too), 429 or 5xx
// is unreachable whatever its other fields say: a damaged entry never
// reads as "no rules".
func (e Entry) Unreachable() bool {
	return e.Err != "" || e.Status == 0 || e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// Rules rebuilds the parsed rules: the parsed body for 2xx, rules that
// allow everything for other statuses, nil when unreachable.
func (e Entry) Rules() *Rules {
	switch {
	case e.Unreachable():
		return nil
	case e.Status >= 200 && e.Status < 300:
		return Parse(e.Body)
	}
	return emptyRules
}

// cause rebuilds the unreachable error of an entry.
func (e Entry) cause() error {
	if !e.Unreachable() {
		return nil
	}
	if e.Status != 0 {
		return &FetchError{URL: e.URL, Status: e.Status}
	}
	if e.err != nil {
		return &FetchError{URL: e.URL, Err: e.err}
	}
	msg := e.Err
	if msg == "" {
		msg = "no status recorded"
	}
	return &FetchError{URL: e.URL, Err: errors.New(msg)}
}

// emptyRules publishes no rules: everything is allowed.
var emptyRules = &Rules{star: -1}

// Store persists cache entries, for example across runs, or shares them
// between processes. Implementations must be safe for concurrent use.
//
// The Cache never trusts an entry further than its own rules: an entry is
// used until the earlier of its ExpiresAt and FetchedAt plus the Cache's
// TTL (Recheck for an unreachable one), so a store written with a longer
// TTL cannot keep old rules alive. An entry fetched, by its FetchedAt, more
// than a minute in the future (a machine whose clock runs ahead), for
// another authority than the one asked for, or with neither a Status nor an
// Err, is ignored, reported to OnStoreError, and robots.txt is fetched.
type Store interface {
	// Load returns the saved entry of an authority; ok is false if none.
	Load(ctx context.Context, authority string) (e Entry, ok bool, err error)
	// Save records an entry, replacing any earlier one for its authority.
	Save(ctx context.Context, e Entry) error
}

// Locker is an optional interface of a [Store] shared by several processes
// (on Redis, in a database): with it, a fleet of crawlers makes one
// robots.txt request per authority, however many processes need it at the
// same moment.
//
// When the Cache's Store implements Locker, a Cache that finds no fresh
// entry in the Store calls Lock for the authority, loads the Store again
// once it holds the lock (another process may have fetched and saved
// meanwhile), fetches only if the entry is still missing or expired, saves
// the new entry, and only then calls unlock. Within one process, callers
// already share one fetch per authority; Lock is called once per fetch.
//
// Lock blocks until the lock is held, or returns ctx's error when ctx is
// done first. The lock must expire by itself (a lease, e.g. Redis SET NX PX
// with a token checked by unlock) so that a process dying while holding it
// cannot block the fleet; that is the implementer's job. Choose an expiry
// longer than one robots.txt fetch takes (the Client's timeout); a lock
// that expires during a slow fetch only costs a second request. unlock is
// called exactly once, with the lock perhaps already expired.
//
// When Lock fails for any other reason (the shared store is down), the
// Cache fails closed without fetching: the Check returns an error matching
// [ErrLock] with Outcome Unknown, nothing is cached, and the next call tries
// again. Fetching anyway would break the one-request promise for the whole
// fleet just when its store is in trouble, and an Unreachable answer would
// make crawlers stop a site for a fault that is not the site's.
//
// One case is left to each process: with Cache.KeepStale, an unreachable
// refresh is not saved (the Store keeps the last good copy for the others),
// so while a site's robots.txt keeps failing, each process re-checks it
// itself, once per Recheck.
type Locker interface {
	Lock(ctx context.Context, authority string) (unlock func(), err error)
}

// MemoryStore is an in-memory [Store] and [Locker], shared by the Caches
// of one process that are given the same *MemoryStore. The zero value is
// ready to use.
type MemoryStore struct {
	mu    sync.Mutex
	m     map[string]Entry
	locks map[string]*memLock
}

// memLock is one authority's lock: a one-slot channel, so a waiter can give
// up when its context ends; refs counts holder and waiters, so the map
// forgets idle authorities.
type memLock struct {
	ch   chan struct{}
	refs int
}

// Lock implements [Locker]: it waits until no other caller holds the lock
// of authority, or ctx is done. The lock lives in memory, so it cannot
// outlive its process.
func (s *MemoryStore) Lock(ctx context.Context, authority string) (func(), error) {
	s.mu.Lock()
	if s.locks == nil {
		s.locks = make(map[string]*memLock)
	}
	l := s.locks[authority]
	if l == nil {
		l = &memLock{ch: make(chan struct{}, 1)}
		s.locks[authority] = l
	}
	l.refs++
	s.mu.Unlock()
	release := func() {
		s.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(s.locks, authority)
		}
		s.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
		var once sync.Once
		return func() {
			once.Do(func() {
				<-l.ch
				release()
			})
		}, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// Load implements [Store].
func (s *MemoryStore) Load(_ context.Context, authority string) (Entry, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[authority]
	return e, ok, nil
}

// Save implements [Store].
func (s *MemoryStore) Save(_ context.Context, e Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]Entry)
	}
	s.m[e.Authority] = e
	return nil
}

// Cache fetches robots.txt once per authority (scheme, host, port) and
// answers, for any URL, whether a crawler may fetch it. It is safe for
// concurrent use; a cache hit costs a map lookup under a mutex and the
// match. Concurrent callers for one authority share one fetch.
//
// The zero value is ready to use. Set fields before the first call and do
// not change them afterwards.
type Cache struct {
	// Client sends the robots.txt requests, so the crawler's User-Agent,
	// proxy and politeness gate apply. nil means http.DefaultClient. The
	// Cache uses a copy whose redirect policy follows at most MaxRedirects
	// redirects; after that robots.txt counts as unavailable (RFC 9309
	// §2.3.1.2), i.e. no rules.
	Client *http.Client
	// UserAgent, if set, is sent on robots.txt requests (a Client's
	// transport may set its own).
	UserAgent string
	// TTL is how long a fetched robots.txt is used: 0 means DefaultTTL,
	// more than MaxTTL means MaxTTL.
	TTL time.Duration
	// Recheck is how long an Unreachable result holds before robots.txt is
	// fetched again: 0 means DefaultRecheck; negative means for the whole
	// TTL (the site stays off limits, as the audit crawler wants).
	Recheck time.Duration
	// KeepStale, if positive, keeps answering from the previous copy when a
	// refresh is unreachable, for at most KeepStale after that copy
	// expired; the verdict is then marked Stale. 0 means never.
	KeepStale time.Duration
	// MaxEntries bounds the authorities kept in memory, least recently used
	// evicted first: 0 means DefaultMaxEntries.
	MaxEntries int
	// Store, if set, is consulted before fetching and given every new
	// entry. Entries are saved except an unreachable refresh answered from
	// a stale copy, so the store keeps the last good copy.
	Store Store
	// OnStoreError, if set, is told about Store errors, which otherwise
	// only cost a fetch.
	OnStoreError func(err error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger, if set, receives the cache's decision events: "robots.fetch"
	// (Info) after each robots.txt fetch, with robots_url, status, outcome
	// (rules, no_rules, unreachable), expires and err; "robots.decision"
	// (Debug) for each Check and CheckAs, with url, outcome (allowed,
	// disallowed, unreachable, unknown), token, rule and line. Empty
	// attributes are left out. nil is silent; a handler not enabled for
	// Debug costs no allocation on a cache hit.
	Logger *slog.Logger

	once   sync.Once
	client *http.Client

	mu    sync.Mutex
	m     map[string]*slot
	lru   slot // sentinel of the recency list; lru.next is the most recent
	calls map[string]*call
}

// state is one authority's answer; immutable once published.
type state struct {
	entry   Entry
	rules   *Rules // nil: unreachable
	err     error  // unreachable cause (also set when stale)
	stale   bool
	expires time.Time
}

// slot is a map value, linked into the LRU list.
type slot struct {
	key        string
	st         *state
	prev, next *slot
}

// call is a fetch in progress, shared by its waiters.
type call struct {
	done    chan struct{}
	st      *state // set before done is closed; nil if abandoned or failed
	err     error  // set before done is closed when the fetch could not start (ErrLock)
	waiters int
	cancel  context.CancelFunc
}

// Check reports whether the crawler with product token may fetch rawURL,
// fetching the robots.txt of its authority if it is not cached. The error
// is non-nil only for a bad URL, a done context or a failing [Locker], and
// then the Verdict's Outcome is Unknown (never Allowed); robots.txt
// problems are reported as an Unreachable verdict.
func (c *Cache) Check(ctx context.Context, token, rawURL string) (Verdict, error) {
	return c.CheckAs(ctx, []string{token}, rawURL)
}

// CheckAs is Check for a crawler that answers to several product tokens in
// order of preference: the first token some group names decides, and only
// when none is named do the `*` groups apply (see [Rules.AllowedAs]).
func (c *Cache) CheckAs(ctx context.Context, tokens []string, rawURL string) (Verdict, error) {
	v, err := c.checkAs(ctx, tokens, rawURL)
	if c.Logger != nil {
		c.logDecision(ctx, v)
	}
	return v, err
}

func (c *Cache) checkAs(ctx context.Context, tokens []string, rawURL string) (Verdict, error) {
	key, err := authority(rawURL)
	if err != nil {
		return Verdict{URL: rawURL, Err: err}, err
	}
	st, err := c.get(ctx, key)
	if err != nil {
		return Verdict{URL: rawURL, Err: err}, err
	}
	v := Verdict{URL: rawURL, Status: st.entry.Status}
	if st.rules == nil {
		v.Outcome, v.RecheckAt, v.Err = Unreachable, st.expires, st.err
		return v, nil
	}
	v.Decision = st.rules.ExplainAs(tokens, rawURL)
	v.Outcome = Allowed
	if !v.Decision.Allowed {
		v.Outcome = Disallowed
	}
	if st.stale {
		v.Stale, v.RecheckAt, v.Err = true, st.expires, st.err
	}
	return v, nil
}

// logDecision emits "robots.decision". It checks Enabled before building
// anything, so a disabled handler costs no allocation.
func (c *Cache) logDecision(ctx context.Context, v Verdict) {
	if !c.Logger.Enabled(ctx, slog.LevelDebug) {
		return
	}
	attrs := make([]slog.Attr, 0, 5)
	attrs = append(attrs, slog.String("url", v.URL), slog.String("outcome", v.Outcome.String()))
	if v.Decision.Token != "" {
		attrs = append(attrs, slog.String("token", v.Decision.Token))
	}
	if r := v.Decision.Rule; r != nil && (v.Outcome == Allowed || v.Outcome == Disallowed) {
		attrs = append(attrs, slog.String("rule", r.String()), slog.Int("line", r.Line))
	}
	c.Logger.LogAttrs(ctx, slog.LevelDebug, "robots.decision", attrs...)
}

// logFetch emits "robots.fetch" for an entry just fetched.
func (c *Cache) logFetch(ctx context.Context, e Entry) {
	if c.Logger == nil || !c.Logger.Enabled(ctx, slog.LevelInfo) {
		return
	}
	outcome := "no_rules"
	switch {
	case e.Unreachable():
		outcome = "unreachable"
	case e.Status >= 200 && e.Status < 300:
		outcome = "rules"
	}
	attrs := make([]slog.Attr, 0, 5)
	attrs = append(attrs, slog.String("robots_url", e.URL))
	if e.Status != 0 {
		attrs = append(attrs, slog.Int("status", e.Status))
	}
	attrs = append(attrs, slog.String("outcome", outcome), slog.Time("expires", e.ExpiresAt))
	if e.Err != "" {
		attrs = append(attrs, slog.String("err", e.Err))
	}
	c.Logger.LogAttrs(ctx, slog.LevelInfo, "robots.fetch", attrs...)
}

// Sitemaps returns the Sitemap URLs of the robots.txt of rawURL's
// authority, fetching it if needed. When robots.txt is unreachable the
// error matches [ErrUnreachable].
func (c *Cache) Sitemaps(ctx context.Context, rawURL string) ([]string, error) {
	r, err := c.Rules(ctx, rawURL)
	if r == nil {
		return nil, err
	}
	return r.Sitemaps(), nil
}

// Rules returns the rules currently used for rawURL's authority, fetching
// robots.txt if needed; nil with an error matching [ErrUnreachable] when
// it is unreachable.
func (c *Cache) Rules(ctx context.Context, rawURL string) (*Rules, error) {
	key, err := authority(rawURL)
	if err != nil {
		return nil, err
	}
	st, err := c.get(ctx, key)
	if err != nil {
		return nil, err
	}
	if st.rules == nil {
		return nil, st.err
	}
	return st.rules, nil
}

func (c *Cache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// get returns the fresh state of key, joining or starting its fetch.
func (c *Cache) get(ctx context.Context, key string) (*state, error) {
	now := c.now()
	c.mu.Lock()
	s := c.m[key]
	if s != nil && now.Before(s.st.expires) {
		c.touch(s)
		st := s.st
		c.mu.Unlock()
		return st, nil
	}
	cl := c.calls[key]
	if cl == nil {
		var prev *state
		if s != nil {
			prev = s.st
		}
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		cl = &call{done: make(chan struct{}), cancel: cancel}
		if c.calls == nil {
			c.calls = make(map[string]*call)
		}
		c.calls[key] = cl
		go c.run(fctx, key, prev, cl)
	}
	cl.waiters++
	c.mu.Unlock()

	select {
	case <-cl.done:
		if cl.err != nil {
			return nil, cl.err
		}
		if cl.st == nil { // abandoned by all waiters just as we joined
			return nil, fmt.Errorf("robots: %s/robots.txt: %w", key, context.Canceled)
		}
		return cl.st, nil
	case <-ctx.Done():
		c.mu.Lock()
		cl.waiters--
		if cl.waiters == 0 {
			// Nobody wants the answer any more: stop the fetch rather than
			// let it hold a gate slot, and let the next caller start afresh.
			cl.cancel()
			if c.calls[key] == cl {
				delete(c.calls, key)
			}
		}
		c.mu.Unlock()
		return nil, fmt.Errorf("robots: %s/robots.txt: %w", key, ctx.Err())
	}
}

// run fetches key's robots.txt (or loads it from the Store) and publishes
// the result to the waiters of cl.
func (c *Cache) run(ctx context.Context, key string, prev *state, cl *call) {
	defer cl.cancel()
	st, err := c.resolve(ctx, key, prev)
	c.mu.Lock()
	if c.calls[key] == cl {
		delete(c.calls, key)
	}
	switch {
	case err != nil:
		cl.err = err // nothing installed: the next caller tries again
	case ctx.Err() == nil && st != nil:
		cl.st = st
		c.install(key, st)
	}
	c.mu.Unlock()
	close(cl.done)
}

func (c *Cache) ttl() time.Duration {
	switch {
	case c.TTL <= 0:
		return DefaultTTL
	case c.TTL > MaxTTL:
		return MaxTTL
	}
	return c.TTL
}

func (c *Cache) recheck() time.Duration {
	switch {
	case c.Recheck == 0:
		return DefaultRecheck
	case c.Recheck < 0 || c.Recheck > c.ttl():
		return c.ttl()
	}
	return c.Recheck
}

func (c *Cache) storeError(err error) {
	if c.OnStoreError != nil {
		c.OnStoreError(err)
	}
}

// resolve produces the new state of key: from the Store if it holds a
// fresh entry, else by fetching (under the Store's lock if it is a
// Locker). It returns a nil state if ctx was cancelled, and an error only
// when the lock could not be taken.
func (c *Cache) resolve(ctx context.Context, key string, prev *state) (*state, error) {
	if c.Store != nil {
		if st := c.load(ctx, key, &prev); st != nil {
			return st, nil
		}
		if l, ok := c.Store.(Locker); ok {
			unlock, err := l.Lock(ctx, key)
			if err != nil {
				if ctx.Err() != nil {
					return nil, nil
				}
				return nil, fmt.Errorf("robots: %s/robots.txt: %w: %w", key, ErrLock, err)
			}
			// Saved before unlock, so the next holder's load finds it.
			defer unlock()
			// Another process may have fetched while this one waited.
			if st := c.load(ctx, key, &prev); st != nil {
				return st, nil
			}
		}
	}
	e, cause := c.fetch(ctx, key)
	if ctx.Err() != nil {
		return nil, nil
	}
	c.logFetch(ctx, e)
	st := &state{entry: e, expires: e.ExpiresAt}
	if cause == nil {
		st.rules = e.Rules()
	} else {
		st.err = cause
		// A stale state carries the original entry, so its bound is
		// measured from when the good copy expired, not from the last failure.
		if c.KeepStale > 0 && prev != nil && prev.rules != nil &&
			e.FetchedAt.Before(prev.entry.ExpiresAt.Add(c.KeepStale)) {
			return &state{entry: prev.entry, rules: prev.rules, err: st.err, stale: true, expires: e.ExpiresAt}, nil
		}
	}
	if c.Store != nil {
		if err := c.Store.Save(ctx, e); err != nil {
			c.storeError(fmt.Errorf("robots: saving %s: %w", key, err))
		}
	}
	return st, nil
}

// load returns the Store's entry of key as a state if it is fresh. An
// expired entry with rules replaces *prev when it is newer, as a candidate
// stale copy.
func (c *Cache) load(ctx context.Context, key string, prev **state) *state {
	e, ok, err := c.Store.Load(ctx, key)
	switch {
	case err != nil:
		c.storeError(fmt.Errorf("robots: loading %s: %w", key, err))
		return nil
	case !ok:
		return nil
	case e.Authority != key:
		c.storeError(fmt.Errorf("robots: loading %s: the store returned the entry of %q; ignored", key, e.Authority))
		return nil
	case e.Status == 0 && e.Err == "":
		// Neither a response nor an error: not something this package
		// saved. Fetch rather than guess.
		c.storeError(fmt.Errorf("robots: loading %s: entry without a status or an error; ignored", key))
		return nil
	case e.FetchedAt.After(c.now().Add(maxClockSkew)):
		// Its FetchedAt + TTL bound would hold until this clock catches up.
		c.storeError(fmt.Errorf("robots: loading %s: entry fetched in the future (%s); ignored",
			key, e.FetchedAt.Format(time.RFC3339)))
		return nil
	}
	st := c.fromEntry(e)
	if c.now().Before(st.expires) {
		return st
	}
	if st.rules != nil && (*prev == nil || e.FetchedAt.After((*prev).entry.FetchedAt)) {
		*prev = st // expired, but may serve as a stale copy
	}
	return nil
}

// fromEntry rebuilds a state from a stored entry, never trusting it for
// longer than this cache's TTL (or Recheck, when unreachable) after it was
// fetched, whatever its ExpiresAt says.
func (c *Cache) fromEntry(e Entry) *state {
	st := &state{entry: e, expires: e.ExpiresAt}
	limit := c.ttl()
	if e.Unreachable() {
		limit = c.recheck()
		st.err = e.cause()
	} else {
		st.rules = e.Rules()
	}
	if maxExp := e.FetchedAt.Add(limit); maxExp.Before(st.expires) {
		st.expires = maxExp
	}
	return st
}

func (c *Cache) httpClient() *http.Client {
	c.once.Do(func() {
		base := c.Client
		if base == nil {
			base = http.DefaultClient
		}
		cl := *base
		cl.CheckRedirect = func(_ *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return http.ErrUseLastResponse
			}
			return nil
		}
		c.client = &cl
	})
	return c.client
}

// fetch GETs key's robots.txt and classifies the answer (RFC 9309 §2.3.1).
// cause is the error of an unreachable answer, nil otherwise.
func (c *Cache) fetch(ctx context.Context, key string) (e Entry, cause error) {
	e = Entry{Authority: key, URL: key + "/robots.txt"}
	finish := func(status int, body []byte, err error) (Entry, error) {
		e.Status, e.Body = status, body
		e.FetchedAt = c.now()
		if err != nil {
			if status == 0 {
				e.err = err // the value, not just its text: errors.Is must keep working
			}
			if e.Err = err.Error(); e.Err == "" {
				e.Err = "unknown error" // Err != "" is what marks an entry unreachable
			}
			cause = e.cause()
			e.ExpiresAt = e.FetchedAt.Add(c.recheck())
		} else {
			e.ExpiresAt = e.FetchedAt.Add(c.ttl())
		}
		return e, cause
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.URL, nil)
	if err != nil {
		return finish(0, nil, err)
	}
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		// net/http wraps the cause in a *url.Error naming the URL again; FetchError already names it.
		if ue := (*url.Error)(nil); errors.As(err, &ue) && ue.URL == e.URL {
			err = ue.Err
		}
		return finish(0, nil, err)
	}
	defer func() {
		// Drain a little so the connection can be reused, never much.
		_, _ = io.CopyN(io.Discard, resp.Body, 4096)
		resp.Body.Close()
	}()
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodySize+1))
		if err != nil {
			return finish(0, nil, err)
		}
		return finish(code, body, nil)
	case code >= 500 || code == http.StatusTooManyRequests:
		// 429 is the server asking us to back off, not "no rules": treat it
		// as a server error, as Google does.
		return finish(code, nil, fmt.Errorf("HTTP %d", code))
	default:
		// 4xx, and a redirect not followed (more than MaxRedirects, or no
		// Location): unavailable, no rules.
		return finish(code, nil, nil)
	}
}

// install records st for key as the most recently used, evicting the
// least recently used beyond MaxEntries. c.mu must be held.
func (c *Cache) install(key string, st *state) {
	if c.m == nil {
		c.m = make(map[string]*slot)
		c.lru.next, c.lru.prev = &c.lru, &c.lru
	}
	if s := c.m[key]; s != nil {
		s.st = st
		c.touch(s)
		return
	}
	s := &slot{key: key, st: st}
	c.m[key] = s
	c.pushFront(s)
	limit := c.MaxEntries
	if limit <= 0 {
		limit = DefaultMaxEntries
	}
	for len(c.m) > limit {
		old := c.lru.prev
		c.unlink(old)
		delete(c.m, old.key)
	}
}

func (c *Cache) touch(s *slot) {
	if c.lru.next != s {
		c.unlink(s)
		c.pushFront(s)
	}
}

func (c *Cache) unlink(s *slot) {
	s.prev.next, s.next.prev = s.next, s.prev
	s.prev, s.next = nil, nil
}

func (c *Cache) pushFront(s *slot) {
	s.prev, s.next = &c.lru, c.lru.next
	c.lru.next.prev = s
	c.lru.next = s
}

// Len returns the number of authorities held in memory.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// authority returns the cache key of rawURL: "scheme://host" plus ":port"
// when it is not the scheme's default, lower-cased, IDNA hosts in ASCII.
// Canonical URLs take an allocation-free path.
func authority(rawURL string) (string, error) {
	if k, ok := fastAuthority(rawURL); ok {
		return k, nil
	}
	bad := func() (string, error) { return "", fmt.Errorf("robots: %q: %w", rawURL, ErrBadURL) }
	u, err := url.Parse(rawURL)
	if err != nil {
		return bad()
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return bad()
	}
	host := u.Hostname()
	if host == "" {
		return bad()
	}
	host, err = idna.Lookup.ToASCII(host)
	if err != nil {
		host = strings.ToLower(u.Hostname())
		if strings.ContainsAny(host, " /?#@") {
			return bad()
		}
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	port := u.Port()
	if port == defaultPort(scheme) {
		port = ""
	}
	if port != "" {
		return scheme + "://" + host + ":" + port, nil
	}
	return scheme + "://" + host, nil
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// fastAuthority handles lower-case URLs with a plain ASCII host and a
// non-default port or none, returning a substring of rawURL.
func fastAuthority(rawURL string) (string, bool) {
	var scheme string
	switch {
	case strings.HasPrefix(rawURL, "https://"):
		scheme = "https"
	case strings.HasPrefix(rawURL, "http://"):
		scheme = "http"
	default:
		return "", false
	}
	i := len(scheme) + 3
	start := i
	for ; i < len(rawURL); i++ {
		c := rawURL[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			break
		}
	}
	if i == start || rawURL[start] == '.' || rawURL[start] == '-' || rawURL[i-1] == '-' ||
		strings.Contains(rawURL[start:i], "..") || strings.HasPrefix(rawURL[start:i], "xn--") ||
		strings.Contains(rawURL[start:i], ".xn--") {
		return "", false
	}
	if i < len(rawURL) && rawURL[i] == ':' {
		p := i + 1
		j := p
		for ; j < len(rawURL) && '0' <= rawURL[j] && rawURL[j] <= '9'; j++ {
		}
		port := rawURL[p:j]
		if port == "" || len(port) > 5 || port[0] == '0' || port == defaultPort(scheme) ||
			(len(port) == 5 && port > "65535") {
			return "", false
		}
		i = j
	}
	if i < len(rawURL) && rawURL[i] != '/' && rawURL[i] != '?' && rawURL[i] != '#' {
		return "", false
	}
	return rawURL[:i], true
}
