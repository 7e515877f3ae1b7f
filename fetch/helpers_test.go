package fetch_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/testsite"
	"github.com/politecrawl/polite/robots"
)

const testUA = "Mozilla/5.0 (compatible; 2-UAcomBot/1.0; +https://2-ua.com/support/robots)"

// testGate is a small real gate: an optional in-flight limit (a semaphore)
// and a record of every acquire and release, checking each release happens
// exactly once.
type testGate struct {
	t     testing.TB
	slots chan struct{} // nil: unlimited

	mu       sync.Mutex
	acquired []string // URL of every admitted request, in order
	inFlight int
	maxIn    int
	released int
}

func newGate(t testing.TB, limit int) *testGate {
	g := &testGate{t: t}
	if limit > 0 {
		g.slots = make(chan struct{}, limit)
	}
	t.Cleanup(func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.inFlight != 0 {
			t.Errorf("gate: %d slot(s) never released (acquired %v)", g.inFlight, g.acquired)
		}
	})
	return g
}

func (g *testGate) Acquire(ctx context.Context, u *url.URL) (func(), error) {
	if g.slots != nil {
		select {
		case g.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	g.mu.Lock()
	g.acquired = append(g.acquired, u.String())
	g.inFlight++
	g.maxIn = max(g.maxIn, g.inFlight)
	g.mu.Unlock()
	var once sync.Once
	released := false
	return func() {
		g.mu.Lock()
		if released {
			g.mu.Unlock()
			g.t.Errorf("gate: release called twice for %s", u)
			return
		}
		released = true
		g.inFlight--
		g.released++
		g.mu.Unlock()
		once.Do(func() {
			if g.slots != nil {
				<-g.slots
			}
		})
	}, nil
}

func (g *testGate) Acquired() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.acquired...)
}

func (g *testGate) InFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inFlight
}

// newClient returns a monitor-like client over the in-memory network n, with
// the default robots.Cache (fetching through the same transport and gate).
func newClient(n *testsite.Network, g fetch.Gate) *fetch.Client {
	return &fetch.Client{
		UserAgent: testUA,
		Header:    http.Header{"X-Agent": {"2-UA"}},
		Gate:      g,
		Transport: n.Transport(),
		Slowdown:  &backoff.Slowdown{},
	}
}

// assertIdentity checks that every request the servers saw carried the
// crawler's identity, robots.txt fetches included.
func assertIdentity(t *testing.T, reqs []testsite.Request) {
	t.Helper()
	require.NotEmpty(t, reqs)
	for _, r := range reqs {
		assert.Equal(t, testUA, r.Header.Get("User-Agent"), "User-Agent of %s %s%s", r.Method, r.Site, r.Path)
		assert.Equal(t, "2-UA", r.Header.Get("X-AGENT"), "X-AGENT of %s %s%s", r.Method, r.Site, r.Path)
	}
}

// seen lists what the network saw as "host/path".
func seen(reqs []testsite.Request) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.Site + r.Path
	}
	return out
}

// requireFetchError checks err is an *fetch.Error naming wantURL.
func requireFetchError(t *testing.T, err error, wantURL string) *fetch.Error {
	t.Helper()
	require.Error(t, err)
	var fe *fetch.Error
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, wantURL, fe.URL)
	assert.True(t, strings.Contains(err.Error(), wantURL), "message %q does not name %s", err, wantURL)
	return fe
}

// elapsed measures fake time inside a synctest bubble.
func elapsed(start time.Time) time.Duration { return time.Since(start) }

// allowAll is a RobotsChecker with no rules, for tests about other things.
type allowAll struct{}

func (allowAll) CheckAs(_ context.Context, _ []string, rawURL string) (robots.Verdict, error) {
	return robots.Verdict{Outcome: robots.Allowed, URL: rawURL, Decision: robots.Decision{Allowed: true}}, nil
}
