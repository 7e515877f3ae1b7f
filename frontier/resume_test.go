package frontier_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/internal/htmlx"
	"github.com/politecrawl/polite/internal/testsite"
	"github.com/politecrawl/polite/robots"
)

// disk is what a persistent store keeps. It outlives the Frontier and the
// queue handle that wrote it, as a database file outlives a killed process.
type disk struct {
	mu      sync.Mutex
	seq     int
	items   []*diskItem     // in push order
	pushed  map[string]bool // URLs of items: the durable part of the seen set
	stopped map[string]bool
	last    map[string]time.Time
}

type itemState int

const (
	queued itemState = iota
	leased
	acked
	ackedFailed
	dropped
)

type diskItem struct {
	it    frontier.Item
	seq   int
	state itemState
}

func newDisk() *disk {
	return &disk{pushed: map[string]bool{}, stopped: map[string]bool{}, last: map[string]time.Time{}}
}

var errDead = errors.New("the process that opened this queue is dead")

// diskQueue is one process's handle on a disk, implementing
// frontier.PersistentQueue as the SQLite queue of the audit does: each call
// is one committed transaction. After crash, nothing the handle does
// reaches the disk any more.
type diskQueue struct {
	d       *disk
	dead    atomic.Bool
	visited map[string]bool // seen by this process and not pushed: forgotten at a crash
}

func (q *diskQueue) crash() { q.dead.Store(true) }

func (q *diskQueue) lock() (*disk, error) {
	if q.dead.Load() {
		return nil, errDead
	}
	q.d.mu.Lock()
	return q.d, nil
}

func (q *diskQueue) Visit(u string) (bool, error) {
	d, err := q.lock()
	if err != nil {
		return false, err
	}
	defer d.mu.Unlock()
	if d.pushed[u] || q.visited[u] {
		return true, nil
	}
	if q.visited == nil {
		q.visited = map[string]bool{}
	}
	q.visited[u] = true
	return false, nil
}

func (q *diskQueue) Push(it frontier.Item) error {
	d, err := q.lock()
	if err != nil {
		return err
	}
	defer d.mu.Unlock()
	d.seq++
	d.items = append(d.items, &diskItem{it: it, seq: d.seq})
	d.pushed[it.URL] = true
	return nil
}

func (q *diskQueue) Pop(host string) (frontier.Item, bool, error) {
	d, err := q.lock()
	if err != nil {
		return frontier.Item{}, false, err
	}
	defer d.mu.Unlock()
	var best *diskItem
	for _, e := range d.items {
		if e.state == queued && e.it.Host == host && (best == nil || e.it.Depth < best.it.Depth) {
			best = e // items are in push order: the first at a depth is the oldest
		}
	}
	if best == nil {
		return frontier.Item{}, false, nil
	}
	best.state = leased
	it := best.it
	it.Lease = strconv.Itoa(best.seq)
	return it, true, nil
}

func (q *diskQueue) Drop(host string) (int, error) {
	d, err := q.lock()
	if err != nil {
		return 0, err
	}
	defer d.mu.Unlock()
	n := 0
	for _, e := range d.items {
		if e.state == queued && e.it.Host == host {
			e.state = dropped
			n++
		}
	}
	d.stopped[host] = true
	return n, nil
}

func (q *diskQueue) Resume() (frontier.ResumeState, error) {
	d, err := q.lock()
	if err != nil {
		return frontier.ResumeState{}, err
	}
	defer d.mu.Unlock()
	hosts := map[string]frontier.ResumeHost{}
	for _, e := range d.items {
		if e.state == leased {
			e.state = queued // handed out, never acknowledged: in flight at the crash
		}
		h := hosts[e.it.Host]
		switch e.state {
		case queued:
			for len(h.Queued) <= e.it.Depth {
				h.Queued = append(h.Queued, 0)
			}
			h.Queued[e.it.Depth]++
		case acked:
			h.Done++
		case ackedFailed:
			h.Failed++
		}
		h.Start = h.Start || e.it.Depth == 0
		hosts[e.it.Host] = h
	}
	for host := range d.stopped {
		h := hosts[host]
		h.Stopped = true
		hosts[host] = h
	}
	for host, at := range d.last {
		h := hosts[host]
		h.LastStart = at
		hosts[host] = h
	}
	return frontier.ResumeState{Hosts: hosts}, nil
}

func (q *diskQueue) Ack(it frontier.Item, ferr error) error {
	d, err := q.lock()
	if err != nil {
		return err
	}
	defer d.mu.Unlock()
	for _, e := range d.items {
		if strconv.Itoa(e.seq) == it.Lease {
			if e.state != leased {
				return fmt.Errorf("item %s (lease %s) is not handed out", it.URL, it.Lease)
			}
			e.state = acked
			if ferr != nil {
				e.state = ackedFailed
			}
			return nil
		}
	}
	return fmt.Errorf("no item with lease %q", it.Lease)
}

func (q *diskQueue) Started(host string, at time.Time) {
	d, err := q.lock()
	if err != nil {
		return
	}
	defer d.mu.Unlock()
	d.last[host] = at
}

var _ frontier.PersistentQueue = (*diskQueue)(nil)

// treeSite serves / linking to /p1../p5, each /pi linking to /pi-1../pi-3
// and back to /, each /pi-j linking to /pi-j-x (a level too deep for
// MaxDepth 2) and an external page; robots.txt disallows /p2-2.
func treeSite(n *testsite.Network) *testsite.Site {
	s := n.Add("shop.test")
	s.Robots("User-agent: *\nDisallow: /p2-2\n")
	link := func(p string) string { return `<a href="` + p + `">` + p + `</a> ` }
	home := ""
	for i := 1; i <= 5; i++ {
		pi := fmt.Sprintf("/p%d", i)
		home += link(pi)
		body := link("/")
		for j := 1; j <= 3; j++ {
			pij := fmt.Sprintf("%s-%d", pi, j)
			body += link(pij)
			s.HTML(pij, link(pij+"-x")+link("https://elsewhere.example/"))
		}
		s.HTML(pi, body)
	}
	s.HTML("/", home)
	return s
}

// crawlUntil runs one worker over f with client, adding the links of every
// page, until the crawl completes or, when crashAfter >= 0, until
// crashAfter items are Done: then it takes one more item, fetches it, adds
// its links and "crashes" before Done, as kill -9 would.
func crawlUntil(t *testing.T, f *frontier.Frontier, client *fetch.Client, crashAfter int) {
	crawlUntilDead(t, f, client, crashAfter, nil)
}

// crawlUntilDead is crawlUntil that also stops, as a killed process does,
// as soon as q is dead.
func crawlUntilDead(t *testing.T, f *frontier.Frontier, client *fetch.Client, crashAfter int, q *diskQueue) {
	t.Helper()
	ctx := t.Context()
	for done := 0; ; done++ {
		it, err := f.Next(ctx)
		if errors.Is(err, frontier.ErrComplete) {
			require.Less(t, crashAfter, 0, "the crawl ended before the crash point")
			return
		}
		require.NoError(t, err)
		res, err := client.Get(ctx, it.URL)
		if err == nil {
			base, _ := url.Parse(res.FinalURL)
			page, _ := htmlx.Parse(bytes.NewReader(res.Body), base)
			for _, l := range page.Links {
				f.Add(ctx, l.URL, it.Depth+1, it.URL)
				if q != nil && q.dead.Load() {
					return
				}
			}
		}
		if done == crashAfter {
			return // killed with the item in flight: never Done
		}
		require.NoError(t, f.Done(it, err))
	}
}

// pathsSeen counts the server's requests per path, robots.txt aside.
func pathsSeen(s *testsite.Site) map[string]int {
	m := map[string]int{}
	for _, r := range s.Requests() {
		if r.Path != "/robots.txt" {
			m[r.Path]++
		}
	}
	return m
}

func resumeConfig(client *fetch.Client, q frontier.Queue) frontier.Config {
	cfg := frontier.DefaultConfig() // 300 ms gap
	cfg.MaxDepth = 2
	cfg.Client, cfg.Queue = client, q
	return cfg
}

// A crawl killed after K pages and resumed from its persistent queue ends
// with the same pages as one never interrupted; only the page in flight at
// the kill is fetched twice; and the 300 ms gap holds across the restart,
// the new process's first request (its robots.txt) included.
func TestResumeAfterCrashCrawlsTheSamePages(t *testing.T) {
	var want map[string]int
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		site := treeSite(n)
		client := &fetch.Client{UserAgent: "CrawlCove-Crawler", Transport: n.Transport()}
		f, err := frontier.New(resumeConfig(client, &diskQueue{d: newDisk()}))
		require.NoError(t, err)
		f.Add(t.Context(), site.URL()+"/", 0, "")
		crawlUntil(t, f, client, -1)
		want = pathsSeen(site)
	})
	require.Len(t, want, 1+5+14, "home, 5 sections, 15 leaves but the disallowed one")
	for p, c := range want {
		require.Equal(t, 1, c, p)
	}

	for _, k := range []int{0, 1, 3, 6, 12, 18} {
		t.Run(fmt.Sprintf("killed after %d pages", k), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := testsite.NewNetwork(t, testsite.InMemory)
				site := treeSite(n)
				d := newDisk()

				q1 := &diskQueue{d: d}
				c1 := &fetch.Client{UserAgent: "CrawlCove-Crawler", Transport: n.Transport()}
				f1, err := frontier.New(resumeConfig(c1, q1))
				require.NoError(t, err)
				f1.Add(t.Context(), site.URL()+"/", 0, "")
				crawlUntil(t, f1, c1, k)
				before := len(site.Requests())
				lastBefore := site.Requests()[before-1]
				q1.crash()
				inFlight := lastBefore.Path

				// The new process: a new client (its robots.txt cache is
				// empty), the same store; the start URL is not even re-added.
				c2 := &fetch.Client{UserAgent: "CrawlCove-Crawler", Transport: n.Transport()}
				f2, err := frontier.New(resumeConfig(c2, &diskQueue{d: d}))
				require.NoError(t, err)
				st := f2.Stats()
				assert.Equal(t, k, st.Done, "Done counts come back")
				assert.Positive(t, st.Queued, "the in-flight item is queued again")
				crawlUntil(t, f2, c2, -1)

				got := pathsSeen(site)
				assert.Equal(t, slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got)), "same pages")
				for p, c := range got {
					if p == inFlight {
						assert.Equal(t, 2, c, "%s was in flight at the kill: fetched again", p)
					} else {
						assert.Equal(t, 1, c, "%s fetched once", p)
					}
				}
				reqs := site.Requests()
				require.Greater(t, len(reqs), before)
				assert.Equal(t, "/robots.txt", reqs[before].Path, "the new process fetches robots.txt first")
				for i := 1; i < len(reqs); i++ {
					assert.GreaterOrEqual(t, reqs[i].Time.Sub(reqs[i-1].Time), 300*time.Millisecond,
						"%s after %s (request %d; the restart was after request %d)", reqs[i].Path, reqs[i-1].Path, i, before-1)
				}
				assert.Equal(t, len(want), f2.Stats().Done+0, "every page Done by the end, across both runs")
			})
		})
	}
}

// MaxPages counts the pages accepted before the crash: the resumed crawl
// does not get a fresh budget.
func TestResumeKeepsThePageBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		site := treeSite(n)
		d := newDisk()
		q1 := &diskQueue{d: d}
		c1 := &fetch.Client{UserAgent: "CrawlCove-Crawler", Transport: n.Transport()}
		cfg := resumeConfig(c1, q1)
		cfg.MaxPages = 8
		f1, err := frontier.New(cfg)
		require.NoError(t, err)
		f1.Add(t.Context(), site.URL()+"/", 0, "")
		crawlUntil(t, f1, c1, 2)
		q1.crash()

		c2 := &fetch.Client{UserAgent: "CrawlCove-Crawler", Transport: n.Transport()}
		cfg = resumeConfig(c2, &diskQueue{d: d})
		cfg.MaxPages = 8
		f2, err := frontier.New(cfg)
		require.NoError(t, err)
		crawlUntil(t, f2, c2, -1)
		assert.Len(t, pathsSeen(site), 8)
		assert.Equal(t, 8, f2.Stats().Done)
		assert.Positive(t, f2.Stats().Dropped[frontier.PageLimit])
	})
}

// A stopped host stays stopped after a resume, and Done reports a store
// that can no longer be written.
func TestResumeKeepsStoppedHostsAndReportsAckErrors(t *testing.T) {
	synctest.Test(t, testResumeKeepsStoppedHosts)
}

func testResumeKeepsStoppedHosts(t *testing.T) {
	d := newDisk()
	q1 := &diskQueue{d: d}
	f1, err := frontier.New(resumeConfig(nil, q1))
	require.NoError(t, err)
	ctx := t.Context()
	require.Equal(t, frontier.Queued, f1.Add(ctx, "https://shop.example/", 0, "").Outcome)
	require.Equal(t, frontier.Queued, f1.Add(ctx, "https://down.example/", 0, "").Outcome)
	_, err = f1.StopHost("down.example")
	require.NoError(t, err)
	it, err := f1.Next(ctx)
	require.NoError(t, err)
	q1.crash()
	assert.ErrorIs(t, f1.Done(it, nil), errDead)
	assert.Equal(t, 1, f1.Stats().Done, "the slot is freed all the same")

	f2, err := frontier.New(resumeConfig(nil, &diskQueue{d: d}))
	require.NoError(t, err)
	r := f2.Add(ctx, "https://down.example/other", 0, "")
	assert.Equal(t, frontier.Stopped, r.Outcome)
	st := f2.Stats()
	assert.True(t, st.Hosts["down.example"].Stopped)
	assert.Equal(t, 1, st.Queued, "the unacknowledged item is back")
	assert.Equal(t, frontier.OutOfScope, f2.Add(ctx, "https://other.example/", 1, "").Outcome)
	assert.Equal(t, frontier.Queued, f2.Add(ctx, "https://www.shop.example/a", 1, "").Outcome, "the start host's twin is in scope again")
	it2, err := f2.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, it.URL, it2.URL, "the unacknowledged item first: it is the oldest")
	assert.NoError(t, f2.Done(it2, nil))
	it3, err := f2.Next(ctx)
	require.NoError(t, err)
	assert.NoError(t, f2.Done(it3, nil))
	_, err = f2.Next(ctx)
	assert.ErrorIs(t, err, frontier.ErrComplete)

	// A queue that cannot resume makes New fail.
	dead := &diskQueue{d: d}
	dead.crash()
	_, err = frontier.New(resumeConfig(nil, dead))
	assert.ErrorIs(t, err, errDead)
}

// A recorded last start in the future (a clock that went back) costs at
// most one gap, not the time until then.
func TestResumeWithALastStartInTheFuture(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDisk()
		d.last["shop.example"] = time.Now().Add(time.Hour)
		f, err := frontier.New(resumeConfig(nil, &diskQueue{d: d}))
		require.NoError(t, err)
		start := time.Now()
		rel, err := f.Acquire(t.Context(), mustURL(t, "https://shop.example/"))
		require.NoError(t, err)
		rel()
		assert.Equal(t, frontier.DefaultGap, time.Since(start))
	})
}

// crashingRobots answers like the client's robots cache and kills the
// process (its queue) while checking the URL ending in at: the crash comes
// between the Add's Visit and its Push.
type crashingRobots struct {
	c  *fetch.Client
	at string
	q  *diskQueue
}

func (r crashingRobots) CheckAs(ctx context.Context, tokens []string, rawURL string) (robots.Verdict, error) {
	if strings.HasSuffix(rawURL, r.at) {
		r.q.crash()
	}
	return r.c.RobotsCache().CheckAs(ctx, tokens, rawURL)
}

// A URL whose Add was cut by the crash (seen, not yet queued) is not lost:
// a visit is durable only with its push, so the page that linked to it,
// fetched again after the resume, queues it again.
func TestResumeAfterACrashMidAdd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := testsite.NewNetwork(t, testsite.InMemory)
		site := treeSite(n)
		d := newDisk()
		q1 := &diskQueue{d: d}
		c1 := &fetch.Client{UserAgent: "CrawlCove-Crawler", Transport: n.Transport()}
		cfg := resumeConfig(c1, q1)
		cfg.Robots = crashingRobots{c: c1, at: "/p3-1", q: q1}
		f1, err := frontier.New(cfg)
		require.NoError(t, err)
		f1.Add(t.Context(), site.URL()+"/", 0, "")
		crawlUntilDead(t, f1, c1, -1, q1)
		require.True(t, q1.dead.Load())
		require.Zero(t, site.Count("/p3-1"))

		c2 := &fetch.Client{UserAgent: "CrawlCove-Crawler", Transport: n.Transport()}
		f2, err := frontier.New(resumeConfig(c2, &diskQueue{d: d}))
		require.NoError(t, err)
		crawlUntil(t, f2, c2, -1)
		assert.Equal(t, 1, site.Count("/p3-1"), "queued again when /p3 was fetched again")
		assert.Equal(t, 2, site.Count("/p3"), "/p3 was in flight at the crash")
		assert.Len(t, pathsSeen(site), 1+5+14)
	})
}
