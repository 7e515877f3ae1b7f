package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/internal/urlnorm"
	"github.com/politecrawl/polite/robots"
)

// memoryCrawler runs the fleet in one process: one in-memory Frontier per
// site (its scope and its own limits), behind one gate that sends each
// request to its site's frontier, and one slowdown latch for the run.
type memoryCrawler struct {
	sites []*frontier.Frontier
	byKey map[string]*frontier.Frontier // host and twin -> site
	other *frontier.Frontier            // gate of hosts of no site (redirect targets)
	sd    *backoff.Slowdown

	mu   sync.Mutex
	next int
	wake chan struct{}
}

func newMemoryCrawler(cfg *config, rules *robots.Cache, sd *backoff.Slowdown) (*memoryCrawler, error) {
	m := &memoryCrawler{byKey: make(map[string]*frontier.Frontier), sd: sd, wake: make(chan struct{})}
	mk := func(l frontier.Config) (*frontier.Frontier, error) {
		l.Robots, l.RobotsTokens, l.Slowdown = rules, robots.Tokens(cfg.ua), sd
		return frontier.New(l)
	}
	for _, s := range cfg.sites {
		host := urlnorm.Host(s.URL)
		if m.byKey[host] != nil {
			continue
		}
		f, err := mk(frontier.Config{MaxPages: s.Limits.MaxPages, MaxDepth: s.Limits.MaxDepth,
			MaxInFlight: s.Limits.InFlight, Gap: s.Limits.Gap})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.URL, err)
		}
		m.sites = append(m.sites, f)
		m.byKey[host] = f
		if t := frontier.Twin(host); t != "" {
			m.byKey[t] = f
		}
	}
	other, err := mk(frontier.Config{MaxDepth: 0, MaxInFlight: frontier.DefaultMaxInFlight, Gap: frontier.DefaultGap})
	if err != nil {
		return nil, err
	}
	m.other = other
	return m, nil
}

func (m *memoryCrawler) siteOf(host string) *frontier.Frontier {
	if f := m.byKey[host]; f != nil {
		return f
	}
	return m.other
}

// start adds a start URL to its site's frontier.
func (m *memoryCrawler) start(ctx context.Context, u string) frontier.AddResult {
	return m.siteOf(urlnorm.Host(u)).Add(ctx, u, 0, "")
}

// Claim implements fetch.Claimer: a redirect target of a site is claimed
// in that site's seen set, so it is requested once; a host of no site is
// not recorded, as on Redis.
func (m *memoryCrawler) Claim(ctx context.Context, u *url.URL) (bool, error) {
	host, err := urlnorm.HostPort(u.Scheme, u.Host)
	if err != nil {
		return true, nil // fetch reports the URL
	}
	f := m.siteOf(host)
	if f == m.other {
		return true, nil
	}
	return f.Claim(ctx, u)
}

// Acquire implements fetch.Gate: each site's frontier gates its own hosts.
func (m *memoryCrawler) Acquire(ctx context.Context, u *url.URL) (func(), error) {
	host, err := urlnorm.HostPort(u.Scheme, u.Host)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", frontier.ErrInvalidURL, u.Redacted(), err)
	}
	release, err := m.siteOf(host).Acquire(ctx, u)
	if err != nil {
		return nil, err
	}
	return func() {
		release()
		m.notify() // a Next waiting for a slot of this site may go now
	}, nil
}

// Start implements fetch.Pacer: the site's frontier spaces the request's
// start on the wire too, not only its admission.
func (m *memoryCrawler) Start(ctx context.Context, u *url.URL) error {
	host, err := urlnorm.HostPort(u.Scheme, u.Host)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", frontier.ErrInvalidURL, u.Redacted(), err)
	}
	return m.siteOf(host).Start(ctx, u)
}

// Wrote implements fetch.Pacer.
func (m *memoryCrawler) Wrote(u *url.URL) {
	if host, err := urlnorm.HostPort(u.Scheme, u.Host); err == nil {
		m.siteOf(host).Wrote(u)
	}
}

func (m *memoryCrawler) notify() {
	m.mu.Lock()
	close(m.wake)
	m.wake = make(chan struct{})
	m.mu.Unlock()
}

// Next returns an item of whichever site can give one first; the sites
// are visited in turn, each asked with NextAt (no waiting), and the
// crawler sleeps until the earliest time one named or a Done.
func (m *memoryCrawler) Next(ctx context.Context) (frontier.Item, error) {
	for {
		m.mu.Lock()
		wake := m.wake
		start := m.next
		m.next++
		m.mu.Unlock()
		var soonest time.Time
		complete := true
		for k := range m.sites {
			f := m.sites[(start+k)%len(m.sites)]
			it, retry, err := f.NextAt(time.Now())
			switch {
			case err == nil:
				return it, nil
			case errors.Is(err, frontier.ErrComplete):
			case errors.Is(err, frontier.ErrNotReady):
				complete = false
				if !retry.IsZero() && (soonest.IsZero() || retry.Before(soonest)) {
					soonest = retry
				}
			default:
				return frontier.Item{}, err
			}
		}
		if complete {
			return frontier.Item{}, frontier.ErrComplete
		}
		if err := sleepUntil(ctx, wake, soonest); err != nil {
			return frontier.Item{}, err
		}
	}
}

// sleepUntil waits for wake, until at (zero: no deadline) or ctx.
func sleepUntil(ctx context.Context, wake <-chan struct{}, at time.Time) error {
	var timer <-chan time.Time
	if !at.IsZero() {
		t := time.NewTimer(time.Until(at))
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-wake:
		return nil
	case <-timer:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// finish adds each link to the frontier of its own site (a link into
// another started site belongs to that site, as on Redis) and marks the
// item done.
func (m *memoryCrawler) finish(ctx context.Context, it frontier.Item, from string, err error, links []string) error {
	for _, l := range links {
		if n, nerr := urlnorm.Normalize(l); nerr == nil {
			m.siteOf(urlnorm.Host(n)).Add(ctx, n, it.Depth+1, from)
		}
	}
	m.siteOf(it.Host).Done(it, err)
	m.notify()
	return nil
}

func (m *memoryCrawler) progress(context.Context) (string, error) {
	var sum frontier.Stats
	for _, f := range m.sites {
		st := f.Stats()
		sum.Done += st.Done
		sum.Failed += st.Failed
		sum.Queued += st.Queued
		sum.Out += st.Out
		sum.InFlight += st.InFlight
		sum.Requests += st.Requests
		sum.Blocked += st.Blocked
		sum.Slowdown = sum.Slowdown || st.Slowdown
	}
	return statsLine(sum, len(m.sites), 0), nil
}
