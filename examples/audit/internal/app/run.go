package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/demo"
	"github.com/politecrawl/polite/examples/audit/internal/render"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/politecrawl/polite/examples/internal/live"
)

// A run is one crawl started (or resumed) from the app, from its start to its summary.
type run struct {
	n        int // runs of this app, from 1
	url      string
	resumed  bool
	cancel   context.CancelFunc
	done     chan struct{}
	crawlID  atomic.Int64
	c        *crawl.Crawler
	started  time.Time
	summary  bytes.Buffer // the command line's summary, once done
	outcome  string
	exitCode int
}

// ErrBusy is a start refused because a crawl is running already.
var ErrBusy = errors.New("a crawl is running already")

// liveItem is one page of the live view's latest list.
type liveItem struct {
	Run     int    `json:"run"`
	URL     string `json:"url"`
	Status  int    `json:"status"`
	Title   string `json:"title"`
	Blocked bool   `json:"blocked"`
	Err     string `json:"error,omitempty"`
}

// start runs a new crawl of cfg, or resumes row when it is not nil, in the background. The store is the
// crawl's own (OpenStore): the app's reads go through another connection.
func (a *App) start(cfg *crawl.Config, row *store.CrawlRow) (*run, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r := a.cur; r != nil {
		select {
		case <-r.done:
		default:
			return nil, fmt.Errorf("%w (crawl %d of %s): stop it or wait for it to end; one crawl at a time per database", ErrBusy, r.crawlID.Load(), r.url)
		}
	}
	ctx := context.Background()
	st, err := store.OpenStore(ctx, a.opt.DB)
	if err != nil {
		return nil, err
	}
	if err := st.CheckNotBusy(ctx); err != nil {
		st.Close()
		return nil, err
	}
	if row != nil {
		if err := store.Resumable(ctx, st.Reader(), row); err != nil {
			st.Close()
			return nil, err
		}
		if err := crawl.ResumeConfig(cfg, row); err != nil {
			st.Close()
			return nil, fmt.Errorf("crawl %d: %w", row.ID, err)
		}
		st.CrawlID = row.ID // the queue reads its rows when the frontier is made
	}
	if cfg.Demo {
		shop, err := a.demoSite()
		if err != nil {
			st.Close()
			return nil, err
		}
		cfg.Resolve = shop.Resolve()
	}
	if cfg.Render > 0 {
		if cfg.Browser, err = render.FindBrowser(cfg.Browser); err != nil {
			st.Close()
			return nil, err
		}
	}
	cfg.Quiet = true
	c, err := crawl.NewCrawler(cfg, a.opt.Env, st, a.opt.Log)
	if err != nil {
		st.Close()
		return nil, err
	}
	c.Resume = row
	a.runs++
	rctx, cancel := context.WithCancel(ctx)
	r := &run{n: a.runs, url: cfg.URL, resumed: row != nil, cancel: cancel, done: make(chan struct{}), c: c, started: time.Now()}
	if row != nil {
		r.crawlID.Store(row.ID)
	}
	c.OnPage = func(p *store.PageRecord) {
		// Workers call this after BeginCrawl: the crawl's id is known and written.
		if r.crawlID.Load() == 0 {
			r.crawlID.Store(st.CrawlID)
		}
		it := liveItem{Run: r.n, URL: p.URL, Status: p.Status, Title: p.Title, Blocked: p.Blocked, Err: p.ErrKind}
		a.hub.Publish(live.Event{Item: it})
	}
	a.cur = r
	a.wg.Add(1)
	go a.execute(rctx, r, st)
	return r, nil
}

// execute runs r to its end as the command line does (runCrawl in main): the crawl, the rendered pass,
// the summary and findings, the report; the live view is fed meanwhile.
func (a *App) execute(ctx context.Context, r *run, st *store.Store) {
	defer a.wg.Done()
	defer st.Close()
	stopFeed := make(chan struct{})
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		a.feed(r, stopFeed)
	}()
	c := r.c
	res := c.Crawl(ctx)
	rr := &render.RenderRun{Crawler: c}
	res = rr.RenderPass(ctx, res)
	if r.crawlID.Load() == 0 {
		r.crawlID.Store(st.CrawlID)
	}
	var out bytes.Buffer
	end := c.Ending(res)
	end.SummaryExtra = rr.RenderSummary()
	code := end.Finish(&out, &out)
	code = end.WriteReport(code, &out, &out)
	close(stopFeed)
	<-fed
	r.cancel()
	a.mu.Lock()
	r.summary = out
	r.outcome = res.Outcome
	r.exitCode = code
	a.mu.Unlock()
	a.publishState(r, "done")
	close(r.done)
	if a.opt.Log != nil {
		fmt.Fprintf(a.opt.Log, "audit app: crawl %d of %s ended: %s\n", r.crawlID.Load(), r.url, res.Outcome)
	}
}

// feedInterval is how often the state of a running crawl is offered to the hub; the hub sends a browser
// at most one message per its own Interval whatever the rate.
const feedInterval = 100 * time.Millisecond

// robotsEvery is how often (in feed ticks) the robots.txt answers are read from the file.
const robotsEvery = 3

// feed publishes r's state until stop is closed.
func (a *App) feed(r *run, stop <-chan struct{}) {
	t := time.NewTicker(feedInterval)
	defer t.Stop()
	for i := 0; ; i++ {
		a.publishState(r, "running")
		if i%robotsEvery == 0 {
			a.publishRobots(r)
		}
		select {
		case <-stop:
			a.publishRobots(r)
			return
		case <-t.C:
		}
	}
}

// publishState publishes the figures of r now; phase is running or done.
func (a *App) publishState(r *run, phase string) {
	l := r.c.Live()
	s := map[string]string{
		"run":      strconv.Itoa(r.n),
		"crawl":    strconv.FormatInt(r.crawlID.Load(), 10),
		"url":      r.url,
		"phase":    phase,
		"pages":    strconv.FormatInt(l.Pages, 10),
		"fetched":  strconv.FormatInt(l.Fetched, 10),
		"blocked":  strconv.FormatInt(l.Blocked, 10),
		"errors":   strconv.FormatInt(l.Errors, 10),
		"requests": strconv.FormatInt(l.Requests, 10),
		"queued":   strconv.Itoa(l.Queued),
		"inflight": strconv.Itoa(l.InFlight),
		"limits":   fmt.Sprintf("%d in flight at most, %s between request starts", l.MaxInFlight, l.Gap),
		"slowed":   "",
		"outcome":  "",
	}
	if !l.SlowedAt.IsZero() {
		s["slowed"] = fmt.Sprintf("slowed down since %s after a 429 from %s (for the rest of the run)", l.SlowedAt.Local().Format("15:04:05"), l.SlowedBy)
	}
	if phase == "done" {
		a.mu.Lock()
		s["outcome"] = r.outcome
		a.mu.Unlock()
	}
	if a.lastState.changed(s) {
		a.hub.Publish(live.Event{Set: s})
	}
}

// publishRobots publishes the robots.txt answer of each host of r's crawl.
func (a *App) publishRobots(r *run) {
	id := r.crawlID.Load()
	if id == 0 {
		return
	}
	rs, err := store.LoadRobotsStatus(context.Background(), a.db, id)
	if err != nil {
		return
	}
	var b bytes.Buffer
	for _, x := range rs {
		fmt.Fprintf(&b, "%s/robots.txt: %s\n", x.Authority, robotsText(x))
	}
	s := map[string]string{"robots": b.String()}
	if a.lastRobots.changed(s) {
		a.hub.Publish(live.Event{Set: s})
	}
}

// robotsText says what a robots.txt answer means for the crawl.
func robotsText(x store.RobotsStatus) string {
	switch {
	case x.Status >= 200 && x.Status < 300:
		return fmt.Sprintf("HTTP %d, its rules are obeyed", x.Status)
	case x.Status >= 400 && x.Status < 500 && x.Status != 429:
		return fmt.Sprintf("HTTP %d: no rules, everything allowed", x.Status)
	case x.Status != 0:
		return fmt.Sprintf("HTTP %d: the host is off limits", x.Status)
	case x.Err != "":
		return "unreachable (" + x.Err + "): the host is off limits"
	}
	return "unreachable: the host is off limits"
}

// lastSet remembers the state last published, so an unchanged state is not published again.
type lastSet struct {
	mu   sync.Mutex
	last map[string]string
}

func (l *lastSet) changed(s map[string]string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(s) == len(l.last) {
		same := true
		for k, v := range s {
			if l.last[k] != v {
				same = false
				break
			}
		}
		if same {
			return false
		}
	}
	l.last = s
	return true
}

// stop interrupts the running crawl, if any: what it crawled is kept and it is marked interrupted.
func (a *App) stop() bool {
	a.mu.Lock()
	r := a.cur
	a.mu.Unlock()
	if r == nil {
		return false
	}
	select {
	case <-r.done:
		return false
	default:
	}
	r.cancel()
	return true
}

// demoSite is the built-in demo shop, started on first use when the app was not started with -demo (a
// demo crawl being resumed).
func (a *App) demoSite() (*demo.DemoSite, error) {
	a.demoMu.Lock()
	defer a.demoMu.Unlock()
	if a.shop == nil {
		shop, err := demo.StartDemo()
		if err != nil {
			return nil, err
		}
		a.shop, a.ownShop = shop, true
	}
	return a.shop, nil
}
