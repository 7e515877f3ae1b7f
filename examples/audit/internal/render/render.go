package render

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	fetchpage "github.com/politecrawl/polite/fetch/page"
	"github.com/politecrawl/polite/robots"
)

const (
	MaxRender = crawl.MaxRender // -render accepts 0..MaxRender
	// renderSettle is how long the page must have had no request in flight, after the load event, before
	// its DOM is read: scripts that fetch data and then write the page get to finish.
	renderSettle = 300 * time.Millisecond
	// renderSettleMax bounds that wait, so a page that polls forever does not take the whole timeout.
	renderSettleMax = 2 * time.Second
	// renderHTMLMax caps the rendered DOM read back from the browser, like the crawler's body cap.
	renderHTMLMax = 10 << 20
	// renderListMax bounds what is kept per page: requests, console messages, links.
	renderListMax = 2000
)

// sectionOf is the first path segment of u, "/" when there is none.
func sectionOf(u *url.URL) string {
	p := strings.TrimPrefix(u.EscapedPath(), "/")
	if p == "" {
		return "/"
	}
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return "/" + p[:i+1]
	}
	return "/" + p
}

// sampleForRender picks at most n candidates so that the sample covers the site rather than its first
// n pages in crawl order. The rule (documented in RENDER.md):
//
//  1. Candidates are grouped by section, the first segment of their path (/products/tent and
//     /products/kayak are one section; /about is its own), a cheap stand-in for "pages of one template".
//  2. Within a section, pages are ordered depth by depth in turns: the shallowest page of each depth
//     first, then the next of each depth, so one section's sample spans its depths too.
//  3. Sections take turns, ordered by their shallowest page and then by name: the first round takes one
//     page from every section, the second round a second page, and so on until n are taken.
//
// It is deterministic: the same crawl gives the same sample.
func sampleForRender(cands []store.RenderCandidate, n int) []store.RenderCandidate {
	if n <= 0 || len(cands) == 0 {
		return nil
	}
	type section struct {
		name     string
		minDepth int
		pages    []store.RenderCandidate
	}
	bySection := map[string]*section{}
	var sections []*section
	for _, c := range cands {
		s := bySection[c.Section]
		if s == nil {
			s = &section{name: c.Section, minDepth: c.Depth}
			bySection[c.Section] = s
			sections = append(sections, s)
		}
		s.minDepth = min(s.minDepth, c.Depth)
		s.pages = append(s.pages, c)
	}
	for _, s := range sections {
		s.pages = interleaveDepths(s.pages)
	}
	sort.Slice(sections, func(i, j int) bool {
		if sections[i].minDepth != sections[j].minDepth {
			return sections[i].minDepth < sections[j].minDepth
		}
		return sections[i].name < sections[j].name
	})
	var out []store.RenderCandidate
	for round := 0; len(out) < n; round++ {
		took := false
		for _, s := range sections {
			if round < len(s.pages) && len(out) < n {
				out = append(out, s.pages[round])
				took = true
			}
		}
		if !took {
			break
		}
	}
	return out
}

// interleaveDepths orders one section's pages in turns over their depths: the first page of each depth
// (shallowest depth first), then the second of each, and so on; within a depth, by URL.
func interleaveDepths(pages []store.RenderCandidate) []store.RenderCandidate {
	byDepth := map[int][]store.RenderCandidate{}
	var depths []int
	for _, p := range pages {
		if _, ok := byDepth[p.Depth]; !ok {
			depths = append(depths, p.Depth)
		}
		byDepth[p.Depth] = append(byDepth[p.Depth], p)
	}
	sort.Ints(depths)
	for _, d := range depths {
		sort.Slice(byDepth[d], func(i, j int) bool { return byDepth[d][i].Final < byDepth[d][j].Final })
	}
	out := make([]store.RenderCandidate, 0, len(pages))
	for i := 0; len(out) < len(pages); i++ {
		for _, d := range depths {
			if i < len(byDepth[d]) {
				out = append(out, byDepth[d][i])
			}
		}
	}
	return out
}

// RenderRun is the rendered pass of one crawl: the crawl's pieces (its gate, robots.txt cache, store,
// client identity), which every request of the browser goes through, and the pass's own counts.
type RenderRun struct {
	*crawl.Crawler
	render store.RenderStats
}

// RenderPass runs the rendered pass after a finished crawl when -render asks for one, and returns the
// run's result: interrupted when Ctrl-C came during the pass (what was rendered by then is kept).
func (c *RenderRun) RenderPass(ctx context.Context, res crawl.CrawlResult) crawl.CrawlResult {
	if c.Cfg.Render <= 0 || res.Outcome != "finished" || ctx.Err() != nil {
		return res
	}
	st := &c.render
	st.Ran, st.Started = true, c.Env.Now()
	out := c.renderSteps(ctx, res)
	st.Ended = c.Env.Now()
	out.Started, out.Ended = res.Started, st.Ended // the run's time includes the rendered pass
	return out
}

func (c *RenderRun) renderSteps(ctx context.Context, res crawl.CrawlResult) crawl.CrawlResult {
	st := &c.render

	cands, err := c.St.RenderCandidates(context.WithoutCancel(ctx), c.InScope)
	if err != nil {
		st.Outcome, st.ErrorMsg = "failed", err.Error()
		return crawl.CrawlResult{Outcome: "failed", Err: fmt.Errorf("rendered pass: %w", err)}
	}
	for i := range cands {
		if u, err := url.Parse(cands[i].Final); err == nil {
			cands[i].Section = sectionOf(u)
		}
	}
	sample := sampleForRender(cands, c.Cfg.Render)
	st.Sampled.Store(int64(len(sample)))
	if len(sample) == 0 {
		st.Outcome = "finished"
		c.Logf("audit: rendered pass: no HTML page with status 200 to render")
		return res
	}
	if !c.Cfg.Quiet && c.Env.Terminal(c.Log) {
		c.Prog = crawl.StartPhaseProgress(c.Log, &c.Count, c.Env.Now, c.ProgressState, c.renderPhase)
		defer func() { c.Prog.Finish(); c.Prog = nil }()
	}

	b, err := startBrowser(ctx, c.Cfg.Browser, c.Cfg.Resolve)
	if err != nil {
		if ctx.Err() != nil {
			st.Outcome = "interrupted"
			return crawl.CrawlResult{Outcome: "interrupted", Err: fmt.Errorf("interrupted: %w", ctx.Err())}
		}
		st.Outcome, st.ErrorMsg = "failed", err.Error()
		return crawl.CrawlResult{Outcome: "failed", Err: fmt.Errorf("rendered pass (the crawl itself finished): %w", err)}
	}
	defer b.close() // normal end, error, Ctrl-C: the browser goes, and its profile with it
	if err := b.guard(c.browserPaused); err != nil {
		st.Outcome, st.ErrorMsg = "failed", err.Error()
		return crawl.CrawlResult{Outcome: "failed", Err: fmt.Errorf("rendered pass (the crawl itself finished): intercepting the browser's requests: %w", err)}
	}
	if ua, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`navigator.userAgent`)); err == nil {
		st.Ua = ua
	}
	runID := c.St.BeginRender(c.Cfg.Browser, st.Ua, c.Cfg.Render, len(sample), st.Started)

	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(c.Cfg.Concurrency, len(sample)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(sample) {
					return
				}
				rec := c.renderPage(ctx, b, sample[i])
				if rec == nil {
					return // interrupted before anything of it was kept
				}
				if err := c.St.WriteRendered(rec); err != nil {
					c.St.SetErr(err)
				}
				st.Done.Add(1)
				if rec.Err != "" {
					st.Failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	st.Ended = c.Env.Now()
	if ctx.Err() != nil {
		st.Outcome = "interrupted"
		c.St.EndRender(runID, st)
		return crawl.CrawlResult{Outcome: "interrupted", Err: fmt.Errorf("interrupted: %w", ctx.Err())}
	}
	st.Outcome = "finished"
	c.St.EndRender(runID, st)
	return res
}

// renderPhase is the progress line's text during the rendered pass.
func (c *RenderRun) renderPhase() string {
	st := &c.render
	return fmt.Sprintf("rendered pass: %d/%d pages · %d requests to the site · %d blocked by robots.txt",
		st.Done.Load(), st.Sampled.Load(), st.Site.Load(), st.Blocked.Load())
}

// sameSite reports whether u is on the audited site for the browser: the start host or its twin, on any
// scheme and port (the politeness promise is to the site's server, whatever the port).
func (c *RenderRun) sameSite(u *url.URL) bool {
	h := hostOnly(u.Host)
	for _, o := range []string{c.Origin, c.Twin} {
		if o == "" {
			continue
		}
		if ou, err := url.Parse(o); err == nil && hostOnly(ou.Host) == h {
			return true
		}
	}
	return false
}

// renderTokens are the product tokens robots.txt is read with for the browser: the crawl's own, as
// its page client has them, so the browser follows exactly the rules the crawler follows.
func (c *RenderRun) renderTokens() []string { return c.Client.Tokens() }

// tab is one page being rendered: its interception state. Events arrive on the tab's listener (in
// order, and it must not block); decisions that wait (robots.txt, the gate) run in goroutines.
type tab struct {
	c       *RenderRun
	ctx     context.Context // the browser tab, for DevTools commands
	gateCtx context.Context // the page's budget for waiting at the gate and for robots.txt
	frame   cdp.FrameID

	mu       sync.Mutex
	hops     map[network.RequestID][]*store.RenderRequest
	held     map[network.RequestID]func()        // gate slots, released when the response is finished
	wire     map[network.RequestID]chan struct{} // closed when the browser reports the request sent
	active   map[network.RequestID]time.Time     // paused or sent, not finished: when its response headers came (zero: not yet)
	changed  time.Time                           // last time active changed
	requests []*store.RenderRequest
	console  []store.ConsoleEntry
	docSeen  bool
	docCode  int
	pending  pendingGroup // decide goroutines

	closing  atomic.Bool // the page is done with: every request paused from now on is failed, unsent
	stopGate context.CancelFunc
	closeTab context.CancelFunc
	once     sync.Once
}

// pendingGroup counts goroutines like a sync.WaitGroup, but may be added to while another goroutine
// waits: events keep arriving (and starting decisions) while a page is being shut down.
type pendingGroup struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed when n drops to 0
}

func (p *pendingGroup) add() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 {
		p.zero = make(chan struct{})
	}
	p.n++
}

func (p *pendingGroup) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n--; p.n == 0 {
		close(p.zero)
	}
}

// wait returns once no goroutine is counted.
func (p *pendingGroup) wait() {
	p.mu.Lock()
	if p.n == 0 {
		p.mu.Unlock()
		return
	}
	ch := p.zero
	p.mu.Unlock()
	<-ch
}

// shutdown ends the page without letting anything more reach the site. A request still paused when
// the DevTools session goes away would be let go by the browser, so every paused request is answered
// first: those waiting for robots.txt or the gate are failed, new ones are failed at once, and the tab
// is sent to about:blank (which cancels whatever the page still had running) before it is closed.
// Slots still held then (a request the closing tab cancelled may never report its end) go back last.
func (t *tab) shutdown() {
	t.once.Do(func() {
		t.closing.Store(true)
		t.stopGate()
		t.pending.wait()
		bctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
		_ = chromedp.Do(bctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, cdppage.Navigate, cdppage.NavigateParams{URL: "about:blank"})
			return err
		}))
		cancel()
		t.pending.wait()
		cctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
		_ = chromedp.Cancel(cctx)
		cancel()
		t.closeTab()
		t.pending.wait()
		t.mu.Lock()
		for id, rel := range t.held {
			rel()
			delete(t.held, id)
		}
		t.active = map[network.RequestID]time.Time{}
		t.mu.Unlock()
	})
}

// renderPage loads one page in a fresh tab and reads its rendered DOM. It returns nil only when the run
// was interrupted before the page got anywhere.
func (c *RenderRun) renderPage(ctx context.Context, b *browser, cand store.RenderCandidate) *store.RenderRecord {
	rec := &store.RenderRecord{URL: cand.URL, FinalURL: cand.Final, CrawledFinal: cand.Final, Depth: cand.Depth, Section: cand.Section, RenderedAt: c.Env.Now()}
	gateCtx, stopGate := context.WithCancel(ctx)
	defer stopGate()
	t := &tab{c: c, gateCtx: gateCtx, hops: map[network.RequestID][]*store.RenderRequest{},
		held: map[network.RequestID]func(){}, wire: map[network.RequestID]chan struct{}{}, active: map[network.RequestID]time.Time{}, changed: time.Now()}
	tctx, closeTab := chromedp.NewContext(b.ctx, chromedp.WithListener(t.onEvent))
	t.ctx = tctx
	t.stopGate, t.closeTab = stopGate, closeTab
	defer t.shutdown()

	// Open the tab and switch the interception on before the page is asked for.
	err := chromedp.Do(tctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		t.mu.Lock()
		t.frame = cdp.FrameID(tg.TargetID) // a page target's id is its main frame's id
		t.mu.Unlock()
		if _, err := cdp.Call(ctx, tg, network.SetBypassServiceWorker, network.SetBypassServiceWorkerParams{Bypass: true}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}})
		return err
	}))
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		rec.Err = "could not open a tab: " + err.Error()
		return rec
	}

	lctx, cancel := context.WithTimeout(tctx, c.Cfg.Timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel) // Ctrl-C ends the load at once
	defer stop()
	start := time.Now()
	err = chromedp.Do(lctx, chromedp.Navigate(cand.Final))
	rec.Load = time.Since(start)
	switch {
	case ctx.Err() != nil:
		rec.Err = "interrupted"
	case err != nil && lctx.Err() != nil:
		rec.Err = fmt.Sprintf("timed out: the page did not finish loading within %s", c.Cfg.Timeout)
	case err != nil:
		rec.Err = "navigation failed: " + err.Error()
	default:
		t.settle(lctx)
		if err := t.read(lctx, rec); err != nil && rec.Err == "" {
			if lctx.Err() != nil {
				rec.Err = fmt.Sprintf("timed out: the page did not finish within %s", c.Cfg.Timeout)
			} else {
				rec.Err = "reading the rendered page failed: " + err.Error()
			}
		}
	}
	if rec.Err == "interrupted" && len(t.snapshotRequests()) == 0 {
		return nil
	}
	// The page is done with: close it before the records are read, so that no event changes them.
	t.shutdown()
	t.finish(rec)
	if rec.Parsed {
		c.markOnlyRendered(rec)
	}
	return rec
}

// settle waits, after the load event, until no request of the page has been in flight for renderSettle,
// at most renderSettleMax. The quiet time counts from the load event at the earliest: a request a script
// started before it may reach us (Fetch.requestPaused) only after it, so a page whose last request ended
// long before the load event (a slow load, a loaded machine) is not read the moment it loads.
func (t *tab) settle(ctx context.Context) {
	loaded := time.Now()
	deadline := loaded.Add(renderSettleMax)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		t.mu.Lock()
		quiet := time.Since(loaded) >= renderSettle && time.Since(t.changed) >= renderSettle
		for _, at := range t.active {
			// A response whose headers came a while ago counts as answered: the browser does not always
			// report the end of a body nobody reads (a fetch() whose result is ignored).
			quiet = quiet && !at.IsZero() && time.Since(at) >= renderSettle
		}
		t.mu.Unlock()
		if quiet {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// renderedDOM is what the page script returns: the document's URL and its serialized DOM.
type renderedDOM struct {
	URL       string `json:"url"`
	HTML      string `json:"html"`
	Truncated bool   `json:"truncated"`
}

var readDOMScript = `(() => {
	const el = document.documentElement;
	let html = el ? el.outerHTML : "";
	const truncated = html.length > ` + strconv.Itoa(renderHTMLMax) + `;
	if (truncated) html = html.slice(0, ` + strconv.Itoa(renderHTMLMax) + `);
	return {url: String(location.href), html: html, truncated: truncated};
})()`

// read takes the rendered DOM and extracts its fields and links with the crawler's own parser, so the
// comparison with the crawler's view is like for like.
func (t *tab) read(ctx context.Context, rec *store.RenderRecord) error {
	dom, err := chromedp.Run(ctx, chromedp.Evaluate[renderedDOM](readDOMScript))
	if err != nil {
		return err
	}
	final, err := url.Parse(dom.URL)
	if err != nil || (final.Scheme != "http" && final.Scheme != "https") {
		return fmt.Errorf("the page ended at %q", dom.URL)
	}
	rec.FinalURL = final.String()
	pg, err := fetchpage.Options{ContentType: "text/html; charset=utf-8"}.Parse(strings.NewReader(dom.HTML), final.String())
	if err != nil {
		return err
	}
	rec.Parsed = true
	rec.Title, rec.TitleCount = pg.Title, pg.TitleCount
	rec.Description, rec.DescriptionCount = pg.MetaDescription, pg.DescriptionCount
	rec.Canonical, rec.MetaRobots = pg.Canonical, pg.MetaRobots
	rec.H1Count, rec.WordCount = len(pg.H1), pg.WordCount
	for _, a := range pg.Hreflang {
		rec.Hreflang = append(rec.Hreflang, store.HreflangRecord{Hreflang: a.Hreflang, URL: a.URL})
	}
	if len(pg.H1) > 0 {
		rec.H1 = pg.H1[0]
	}
	seen := map[string]bool{}
	for _, l := range pg.Links {
		if l.Tag != "a" && l.Tag != "area" {
			continue // scripts, stylesheets and images are in render_requests
		}
		lu, err := url.Parse(l.URL)
		if err != nil || (lu.Scheme != "http" && lu.Scheme != "https") {
			continue
		}
		rl := store.RenderLink{To: l.URL, Nofollow: l.Nofollow, Anchor: crawl.Truncate(l.Text, 200), Tag: l.Tag}
		if t.c.InScope(lu) {
			rl.To = store.NormalizeOrSelf(l.URL)
			rec.Internal++
		} else {
			rl.External = true
			rec.External++
		}
		key := rl.To + "\x00" + rl.Anchor
		if seen[key] || len(rec.Links) >= renderListMax {
			continue
		}
		seen[key] = true
		rec.Links = append(rec.Links, rl)
	}
	return nil
}

// markOnlyRendered flags the rendered internal links that the crawler's HTML of the page did not have.
func (c *RenderRun) markOnlyRendered(rec *store.RenderRecord) {
	// The crawler's links of a page are recorded under the URL its redirects ended at (the document's).
	raw, err := c.St.RawLinkTargets(store.NormalizeOrSelf(rec.CrawledFinal))
	if err != nil {
		return
	}
	for i := range rec.Links {
		l := &rec.Links[i]
		l.OnlyRendered = !l.External && !raw[l.To]
	}
}

// onEvent is the tab's listener: it runs in the loop that reads the tab's messages, so it only records
// and hands slow work to goroutines.
func (t *tab) onEvent(ev any) {
	switch ev := ev.(type) {
	case *fetch.EventRequestPaused:
		// Counted as in flight from the moment it is paused, so the page is not read while a request
		// waits at the gate.
		id := ev.NetworkID
		if id == "" {
			id = network.RequestID(ev.RequestID)
		}
		t.mu.Lock()
		t.active[id] = time.Time{}
		t.changed = time.Now()
		t.mu.Unlock()
		t.pending.add()
		go func() {
			defer t.pending.done()
			t.decide(ev)
		}()
	case *network.EventRequestWillBeSent:
		if ev.RedirectResponse != nil {
			t.mu.Lock()
			for _, h := range t.hops[ev.RequestID] {
				if h.URL == ev.RedirectResponse.URL && h.Status == 0 {
					h.Status = int(ev.RedirectResponse.Status)
					if h.Outcome == store.OutSent {
						h.Outcome = store.OutLoaded
					}
					break
				}
			}
			t.mu.Unlock()
		}
	case *network.EventRequestWillBeSentExtraInfo:
		t.onWire(ev.RequestID)
	case *network.EventRequestServedFromCache:
		t.onWire(ev.RequestID)
	case *network.EventResponseReceived:
		t.onWire(ev.RequestID)
		t.response(ev)
	case *network.EventLoadingFinished:
		t.onWire(ev.RequestID)
		t.end(ev.RequestID, "", false)
	case *network.EventLoadingFailed:
		t.onWire(ev.RequestID)
		t.end(ev.RequestID, ev.ErrorText, ev.Canceled)
	case *runtime.EventExceptionThrown:
		t.addConsole(store.ConsoleEntry{Kind: "exception", Message: exceptionMessage(ev.ExceptionDetails), Source: exceptionSource(ev.ExceptionDetails)})
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError {
			t.addConsole(store.ConsoleEntry{Kind: "console_error", Message: consoleMessage(ev.Args), Source: stackSource(ev.StackTrace)})
		}
	}
}

func (t *tab) addConsole(e store.ConsoleEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.console) < renderListMax {
		e.Message = crawl.Truncate(e.Message, 1000)
		t.console = append(t.console, e)
	}
}

// decide answers one paused request: let it go, or fail it without sending it.
func (t *tab) decide(ev *fetch.EventRequestPaused) {
	id := ev.NetworkID
	if id == "" {
		id = network.RequestID(ev.RequestID)
	}
	req := &store.RenderRequest{URL: ev.Request.URL, Type: string(ev.ResourceType), Method: ev.Request.Method, Outcome: store.OutSent}
	u, perr := url.Parse(ev.Request.URL)
	if perr == nil {
		req.Host = strings.ToLower(u.Host)
	}
	t.mu.Lock()
	// A new hop of a request: the previous hop's response (a redirect) is complete, so its slot goes back.
	if rel := t.held[id]; rel != nil {
		rel()
		delete(t.held, id)
	}
	if len(t.requests) < renderListMax {
		t.requests = append(t.requests, req)
	}
	t.hops[id] = append(t.hops[id], req)
	t.mu.Unlock()

	switch {
	case t.closing.Load():
		t.refuse(ev.RequestID, id, req, store.OutNotSent, "", "the page was already done with")
		return
	case perr != nil || (u.Scheme != "http" && u.Scheme != "https"):
		t.let(ev.RequestID, id, req, nil, nil) // not a network request of a site (data:, blob:...)
		return
	case notLoaded(ev.ResourceType, u, ev.Request.Headers):
		t.refuse(ev.RequestID, id, req, store.OutNotLoaded, "", "")
		t.c.render.Skipped.Add(1)
		return
	case !t.c.sameSite(u):
		t.c.render.Other.Add(1)
		t.let(ev.RequestID, id, req, nil, nil)
		return
	}
	req.SameSite = true
	if ev.Request.Method != http.MethodGet && ev.Request.Method != http.MethodHead {
		t.refuse(ev.RequestID, id, req, store.OutNotSent, "", ev.Request.Method+" not sent: the rendered pass only reads (GET and HEAD)")
		return
	}
	v, err := t.c.Robots.CheckAs(t.gateCtx, t.c.renderTokens(), ev.Request.URL)
	switch {
	case err != nil && t.gateCtx.Err() != nil:
		t.refuse(ev.RequestID, id, req, store.OutNotSent, "", "page given up before robots.txt was read")
		return
	case err != nil || !v.Allowed():
		t.refuse(ev.RequestID, id, req, store.OutBlocked, robotsWhy(v, err), "")
		t.c.render.Blocked.Add(1)
		return
	}
	release, sent, err := t.c.acquireForBrowser(t.gateCtx, u)
	if err != nil {
		t.refuse(ev.RequestID, id, req, store.OutNotSent, "", "page given up while the request waited for the politeness gate")
		return
	}
	t.let(ev.RequestID, id, req, release, sent)
}

// acquireForBrowser is the gate for a browser request to the site. Beyond frontier.Acquire, it makes
// the gap hold from the moment the browser really sent the previous request: the browser may send a
// request some time after it is let go (its own scheduling, a busy machine), and two requests let go a
// gap apart could then reach the server closer than that. So browser requests are let go one at a time:
// the next one waits until the previous one was seen leaving (sent, called by let) plus the run's
// current gap, then passes the frontier's gate as every request does.
func (c *RenderRun) acquireForBrowser(ctx context.Context, u *url.URL) (release, sent func(), err error) {
	st := &c.render
	st.SendMu.Lock()
	gap := c.Cfg.Gap
	if _, ok := c.Slow.Tripped(); ok {
		_, sg := c.Slow.Limits()
		gap = max(gap, sg)
	}
	if wait := time.Until(st.LastSent.Add(gap)); wait > 0 {
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			st.SendMu.Unlock()
			return nil, nil, ctx.Err()
		}
	}
	release, err = c.Front.Acquire(ctx, u)
	if err != nil {
		st.SendMu.Unlock()
		return nil, nil, err
	}
	var once sync.Once
	return release, func() {
		once.Do(func() {
			st.LastSent = time.Now()
			st.SendMu.Unlock()
		})
	}, nil
}

// browserPaused decides a request paused by the browser-wide interception: one a tab let go passes;
// one no tab saw (the browser's own favicon and icon fetches, prefetches) is not sent: it is not needed
// to render the page, and it would otherwise reach the site around robots.txt and the gate.
func (c *RenderRun) browserPaused(ev *fetch.EventRequestPaused) bool {
	if c.render.UnmarkLet(ev.Request.URL) {
		return true
	}
	c.render.Unseen.Add(1)
	c.render.Skipped.Add(1)
	return false
}

// let continues a paused request; release (the gate slot, nil for other hosts) is held until the
// browser reports the response finished or failed.
func (t *tab) let(fid fetch.RequestID, id network.RequestID, req *store.RenderRequest, release, sent func()) {
	if sent == nil {
		sent = func() {}
	}
	defer sent()
	wire := make(chan struct{})
	t.mu.Lock()
	if release != nil {
		t.held[id] = release
	}
	t.active[id] = time.Time{}
	t.changed = time.Now()
	t.wire[id] = wire
	t.mu.Unlock()
	t.c.render.MarkLet(req.URL)
	err := chromedp.Do(t.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: fid})
		return err
	}))
	if err != nil {
		// The tab went away first: nothing was sent.
		t.c.render.UnmarkLet(req.URL)
		t.mu.Lock()
		if rel := t.held[id]; rel != nil {
			rel()
			delete(t.held, id)
		}
		delete(t.active, id)
		req.Outcome, req.Err = store.OutNotSent, "page closed before the request was sent"
		t.mu.Unlock()
		return
	}
	if req.SameSite {
		t.c.render.Site.Add(1)
		// Wait until the browser reports the request on its way (its raw headers sent, or an answer, or
		// a failure), so that the next one is not let go before this one has left.
		timer := time.NewTimer(2 * time.Second)
		defer timer.Stop()
		select {
		case <-wire:
		case <-timer.C:
		case <-t.gateCtx.Done():
		}
	}
}

// onWire closes the wait of let for request id: the browser reported it sent, answered or failed.
func (t *tab) onWire(id network.RequestID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ch := t.wire[id]; ch != nil {
		close(ch)
		delete(t.wire, id)
	}
}

// refuse fails a paused request without sending it.
func (t *tab) refuse(fid fetch.RequestID, id network.RequestID, req *store.RenderRequest, outcome, rule, why string) {
	t.mu.Lock()
	req.Outcome, req.RobotsRule, req.Err = outcome, rule, why
	delete(t.active, id)
	t.changed = time.Now()
	t.mu.Unlock()
	_ = chromedp.Do(t.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, fetch.FailRequest, fetch.FailRequestParams{RequestID: fid, ErrorReason: network.ErrorReasonBlockedByClient})
		return err
	}))
}

// response records a response's status; a same-site answer that the backoff policy says slows the run
// (429) trips the run-wide slowdown, exactly as the crawler's own 429 would.
func (t *tab) response(ev *network.EventResponseReceived) {
	r := ev.Response
	if r == nil {
		return
	}
	t.mu.Lock()
	var req *store.RenderRequest
	if hops := t.hops[ev.RequestID]; len(hops) > 0 {
		req = hops[len(hops)-1]
	}
	if _, ok := t.active[ev.RequestID]; ok {
		t.active[ev.RequestID] = time.Now()
	}
	if req != nil {
		req.Status = int(r.Status)
		req.Cached = r.FromDiskCache || r.FromServiceWorker || r.FromPrefetchCache
	}
	if ev.Type == network.ResourceTypeDocument && ev.FrameID == t.frame && !t.docSeen {
		t.docSeen, t.docCode = true, int(r.Status)
	}
	t.mu.Unlock()
	if req == nil || !req.SameSite {
		return
	}
	resp := &http.Response{StatusCode: int(r.Status), Header: http.Header{}}
	for k, v := range r.Headers {
		if s, ok := v.(string); ok {
			resp.Header.Set(k, s)
		}
	}
	now := t.c.Env.Now()
	if t.c.Policy.Decide(1, resp, nil, now).Slowdown {
		t.c.Slow.Trip(r.URL, now)
	}
}

// end is a request's last event: its gate slot goes back and its outcome is settled.
func (t *tab) end(id network.RequestID, errText string, canceled bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if rel := t.held[id]; rel != nil {
		rel()
		delete(t.held, id)
	}
	if _, ok := t.active[id]; ok {
		delete(t.active, id)
		t.changed = time.Now()
	}
	hops := t.hops[id]
	if len(hops) == 0 {
		return
	}
	req := hops[len(hops)-1]
	if req.Outcome != store.OutSent {
		return // refused by us, or already settled
	}
	switch {
	case canceled && req.Status >= 400:
		req.Outcome = store.OutFailed // the answer came; the page was closed before the browser read its body
	case canceled && req.Status > 0:
		req.Outcome = store.OutLoaded
	case canceled:
		req.Outcome, req.Err = store.OutCanceled, errText
	case errText != "":
		req.Outcome, req.Err = store.OutFailed, errText
	case req.Status >= 400:
		req.Outcome = store.OutFailed
	default:
		req.Outcome = store.OutLoaded
	}
}

func (t *tab) snapshotRequests() []*store.RenderRequest {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]*store.RenderRequest(nil), t.requests...)
}

// finish copies the tab's records into rec once the tab is closed.
func (t *tab) finish(rec *store.RenderRecord) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.docSeen {
		rec.Status = t.docCode
	}
	rec.Console = t.console
	rec.Requests = t.requests
	for _, r := range t.requests {
		if r.Outcome == store.OutSent { // no end reported before the tab closed
			switch {
			case r.Status >= 400:
				r.Outcome = store.OutFailed
			case r.Status > 0:
				r.Outcome = store.OutLoaded
			default:
				r.Outcome = store.OutUnfinished
			}
		}
		switch {
		case r.Outcome == store.OutBlocked:
			rec.Blocked++
		case r.Outcome == store.OutNotLoaded:
			rec.NotLoaded++
		case r.Outcome == store.OutNotSent:
			rec.NotSent++
		case !r.SameSite:
			rec.OtherRequests++
		case !r.Cached:
			rec.SiteRequests++
		}
		if r.Outcome == store.OutFailed {
			rec.Failed++
		}
	}
	for _, e := range t.console {
		if e.Kind == "exception" {
			rec.Exceptions++
		} else {
			rec.ConsoleErrors++
		}
	}
}

// notLoaded says which requests the rendered pass never sends: images, media and fonts (and the
// browser's icon fetches: /favicon.ico, <link rel=icon>, typed Other but asking for an image) do not
// change the DOM, and they are most of a page's bytes.
func notLoaded(t network.ResourceType, u *url.URL, h network.Headers) bool {
	switch t {
	case network.ResourceTypeImage, network.ResourceTypeMedia, network.ResourceTypeFont:
		return true
	case network.ResourceTypeOther:
		accept := ""
		for k, v := range h {
			if s, ok := v.(string); ok && strings.EqualFold(k, "Accept") {
				accept = s
			}
		}
		return u.Path == "/favicon.ico" || strings.HasPrefix(accept, "image/")
	}
	return false
}

// robotsWhy is the rule (or the reason) a browser request was refused for.
func robotsWhy(v robots.Verdict, err error) string {
	switch {
	case err != nil:
		return "robots.txt could not be read: " + err.Error()
	case v.Outcome == robots.Disallowed:
		return v.Decision.String()
	case v.Outcome == robots.Unreachable:
		return "robots.txt unreachable: the host is off limits"
	}
	return "robots.txt: " + v.Outcome.String()
}

func exceptionMessage(d *runtime.ExceptionDetails) string {
	if d == nil {
		return ""
	}
	if d.Exception != nil && d.Exception.Description != "" {
		// The description is the stack; its first line is the message.
		msg, _, _ := strings.Cut(d.Exception.Description, "\n")
		return msg
	}
	return d.Text
}

func exceptionSource(d *runtime.ExceptionDetails) string {
	if d == nil {
		return ""
	}
	if s := stackSource(d.StackTrace); s != "" {
		return s
	}
	if d.URL != "" {
		return fmt.Sprintf("%s:%d:%d", d.URL, d.LineNumber+1, d.ColumnNumber+1)
	}
	return ""
}

func stackSource(st *runtime.StackTrace) string {
	if st == nil || len(st.CallFrames) == 0 {
		return ""
	}
	f := st.CallFrames[0]
	return fmt.Sprintf("%s:%d:%d", f.URL, f.LineNumber+1, f.ColumnNumber+1)
}

func consoleMessage(args []*runtime.RemoteObject) string {
	var parts []string
	for _, a := range args {
		switch {
		case a == nil:
		case a.Type == runtime.RemoteObjectTypeString:
			var s string
			if err := jsonUnmarshalString(a.Value, &s); err == nil {
				parts = append(parts, s)
				continue
			}
			parts = append(parts, string(a.Value))
		case a.Description != "":
			parts = append(parts, a.Description)
		case len(a.Value) > 0:
			parts = append(parts, string(a.Value))
		default:
			parts = append(parts, string(a.Type))
		}
	}
	return strings.Join(parts, " ")
}

func jsonUnmarshalString(v []byte, s *string) error { return json.Unmarshal(v, s) }

// RenderSummary is the rendered pass's line of the summary ("" when there was none), for
// crawl.Ending's SummaryExtra: a string made once the pass is over, so that the end of the run keeps no
// reference to the RenderRun and through it to the crawler.
func (c *RenderRun) RenderSummary() string {
	var b strings.Builder
	c.PrintRenderSummary(&b)
	return b.String()
}

// PrintRenderSummary adds the rendered pass's line to the summary, when there was one.
func (c *RenderRun) PrintRenderSummary(w io.Writer) {
	st := &c.render
	if !st.Ran {
		return
	}
	done, site := int(st.Done.Load()), int(st.Site.Load())
	perPage := 0.0
	if done > 0 {
		perPage = float64(site) / float64(done)
	}
	ua := st.Ua
	if ua == "" {
		ua = "unknown"
	}
	fmt.Fprintf(w, "Rendered pass: %d of %d sampled page%s in %s (%d could not be rendered); %d request%s to the site (%.1f a page), %d refused by robots.txt, %d images/media/fonts not loaded, %d to other hosts. Browser User-Agent: %s\n",
		done, st.Sampled.Load(), store.Plural(int(st.Sampled.Load())), st.Ended.Sub(st.Started).Round(time.Millisecond), st.Failed.Load(),
		site, store.Plural(site), perPage, st.Blocked.Load(), st.Skipped.Load(), st.Other.Load(), ua)
}
