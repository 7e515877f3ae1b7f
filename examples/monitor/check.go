package main

import (
	"context"
	"fmt"

	"github.com/politecrawl/polite/examples/monitor/internal/card"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/robots"
)

// The free tool: one URL checked now, with the same robots rules, identity
// headers, address guard and per-host politeness as a snapshot, shown as a
// response card. `monitor check URL` prints it; `serve` shows it at /check
// and returns it from /api/check. Nothing is tracked or stored (except the
// robots.txt answer, in the robots cache of -db).

// freeToolMaxBody caps the body a free-tool check keeps (the decoded body:
// a gzip bomb stops here too).
const freeToolMaxBody = 2 << 20

// freeTool holds the long-lived polite client of the free tool: the
// process's host gate (one request at a time per host, -gap apart, shared
// with the scheduler of serve -watch) and the robots cache (persisted in -db
// when there is one).
type freeTool struct {
	m      *monitor
	client *fetch.Client
	rc     *robots.Cache
	policy string
}

func newFreeTool(m *monitor) (*freeTool, error) {
	client, rc := m.newClient(m.hostGate, func(string, ...any) {})
	// A stranger's URL: keep less of its body than a tracked page's, so
	// maxChecksInFlight checks bound the free tool's memory.
	client.MaxBodyBytes = freeToolMaxBody
	return &freeTool{m: m, client: client, rc: rc, policy: card.PolicyURLOf(m.o.userAgent)}, nil
}

// check runs the free tool on an already canonical URL.
func (f *freeTool) check(ctx context.Context, u string) *card.Card {
	now := f.m.now()
	c := &card.Card{URL: u, CheckedAt: now, PolicyURL: f.policy}
	t, interrupted := f.m.taker().Take(ctx, f.rc, f.client, u, now, nil)
	if interrupted {
		c.Error = "interrupted: " + context.Cause(ctx).Error()
		return c
	}
	if t.WaitUntil != nil {
		c.Waiting = t.WaitDetail
		c.Error = "not fetched: " + t.WaitDetail
		return c
	}
	c.Refused = t.Refused
	sn := t.Snapshot
	if sn.Blocked {
		c.Blocked = true
		c.Banner = card.Banner(f.m.token)
		c.RobotsRule = sn.RobotsRule
		return c
	}
	c.Error = sn.Error
	if sn.BotProtection != "" {
		c.Error = sn.BotBanner()
	}
	if c.Error == "" && sn.Status >= 500 {
		c.Error = fmt.Sprintf("HTTP %d (server error)", sn.Status)
	}
	c.Status, c.FinalURL, c.Redirects = sn.Status, sn.FinalURL, sn.Redirects
	c.Title, c.MetaDescription, c.Canonical = sn.Title, sn.MetaDescription, sn.Canonical
	c.MetaRobots, c.XRobotsTag, c.H1, c.Hreflang = sn.MetaRobots, sn.XRobotsTag, sn.H1, sn.Hreflang
	c.WordCount, c.ResponseMS = sn.WordCount, sn.ResponseTime.Milliseconds()
	return c
}
