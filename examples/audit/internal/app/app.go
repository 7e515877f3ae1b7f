package app

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/demo"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/report"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/politecrawl/polite/examples/internal/live"
)

//go:embed web
var webFiles embed.FS

// Options are what the app is started with.
type Options struct {
	// DB is the SQLite file (created and marked when missing, as a crawl does).
	DB string
	// Demo, when set, is the built-in demo shop served by the caller: its address pre-fills the form and
	// a crawl of it goes to its loopback server.
	Demo *demo.DemoSite
	// Env is the crawl's environment (tests: the transport, the clock); the zero Env is the real one.
	Env crawl.Env
	// Log receives the crawls' messages (stderr); nil discards them.
	Log io.Writer
}

// App is the audit's web app over one database. Serve its Handler behind localweb's Guard; Close it at
// the end.
type App struct {
	opt   Options
	st    *store.Store // the app's own connection: reads, and the file opened (created, marked) once
	db    *sql.DB
	hub   *live.Hub
	pages *template.Template

	mu   sync.Mutex
	cur  *run // the latest run; running until its done is closed
	runs int
	wg   sync.WaitGroup

	lastState, lastRobots lastSet

	demoMu  sync.Mutex
	shop    *demo.DemoSite
	ownShop bool
}

// New opens the database (creating it as a crawl would) and makes the app.
func New(ctx context.Context, opt Options) (*App, error) {
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	if opt.Env.Now == nil {
		opt.Env.Now = time.Now
	}
	if opt.Env.Terminal == nil {
		opt.Env.Terminal = func(io.Writer) bool { return false }
	}
	st, err := store.OpenStore(ctx, opt.DB)
	if err != nil {
		return nil, err
	}
	t, err := template.New("").Funcs(funcs).ParseFS(webFiles, "web/*.html")
	if err != nil {
		st.Close()
		return nil, err
	}
	if err := st.AddAppIndexes(ctx); err != nil {
		st.Close()
		return nil, err
	}
	return &App{opt: opt, st: st, db: st.Reader(), hub: &live.Hub{}, pages: t, shop: opt.Demo}, nil
}

// Close interrupts a running crawl (what it crawled is kept, and it can be resumed), waits for it to
// write its end, and closes the database.
func (a *App) Close() error {
	a.stop()
	a.wg.Wait()
	a.demoMu.Lock()
	if a.ownShop {
		a.shop.Stop()
	}
	a.demoMu.Unlock()
	return a.st.Close()
}

// Wait waits until no crawl runs (tests).
func (a *App) Wait() { a.wg.Wait() }

// Handler is the app's routes. Serve it behind localweb's Guard, which checks the token, the Host and
// the origin of POSTs and sets the CSP.
func (a *App) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(webFiles, "web/static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", a.home)
	mux.HandleFunc("POST /crawl", a.startCrawl)
	mux.HandleFunc("POST /stop", a.stopCrawl)
	mux.HandleFunc("POST /resume", a.resumeCrawl)
	mux.HandleFunc("GET /live", a.liveView)
	mux.Handle("GET /events", a.hub)
	mux.HandleFunc("GET /crawls/{id}", a.explore)
	mux.HandleFunc("GET /crawls/{id}/report", a.report)
	mux.HandleFunc("GET /crawls/{id}/export.json", a.exportJSON)
	mux.HandleFunc("GET /crawls/{id}/export/{table}", a.exportCSV)
	mux.HandleFunc("GET /compare", a.compare)
	return mux
}

var funcs = template.FuncMap{
	"thousands": report.Thousands,
	"ms": func(d time.Duration) string {
		if d < 0 {
			return "–"
		}
		ms := float64(d.Microseconds()) / 1000
		if ms < 10 {
			return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
		}
		return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
	},
	"kindTitle": func(kind string) string { return findings.InfoOf(kind).Title },
	"status": func(status int, blocked bool, errKind string) string {
		switch {
		case blocked:
			return "blocked"
		case status == 0 && errKind != "":
			return errKind
		case status == 0:
			return "–"
		}
		return strconv.Itoa(status)
	},
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "–"
		}
		return t.Local().Format("2006-01-02 15:04")
	},
}

// form is the start form's values, as typed.
type form struct {
	URL, MaxPages, MaxDepth, Concurrency, Gap, UserAgent, Render string
}

func defaultForm(demoURL string) form {
	d := crawl.Defaults()
	return form{URL: demoURL, MaxPages: strconv.Itoa(d.MaxPages), MaxDepth: strconv.Itoa(d.MaxDepth),
		Concurrency: strconv.Itoa(d.Concurrency), Gap: d.Gap.String(), UserAgent: d.UserAgent, Render: "0"}
}

// limits are the ranges the form states next to its fields: the ones Check enforces.
type limits struct {
	MaxPages, MaxDepth, MinConcurrency, MaxConcurrency, MaxRender int
	MaxGap                                                        time.Duration
}

var formLimits = limits{crawl.MaxMaxPages, crawl.MaxMaxDepth, crawl.MinConcurrency, crawl.MaxConcurrency, crawl.MaxRender, crawl.MaxGap}

// config reads the form into a crawl configuration and checks it as the command line does, with the
// command line's messages.
func (a *App) config(f form) (*crawl.Config, error) {
	cfg := crawl.Defaults()
	cfg.DB = a.opt.DB
	var err error
	num := func(name, v string, dst *int) {
		if err != nil {
			return
		}
		n, perr := strconv.Atoi(strings.TrimSpace(v))
		if perr != nil {
			err = store.Usagef("invalid value %q for flag -%s: parse error", v, name)
			return
		}
		*dst = n
	}
	num("max-pages", f.MaxPages, &cfg.MaxPages)
	num("max-depth", f.MaxDepth, &cfg.MaxDepth)
	num("concurrency", f.Concurrency, &cfg.Concurrency)
	num("render", f.Render, &cfg.Render)
	if err != nil {
		return nil, err
	}
	if cfg.Gap, err = time.ParseDuration(strings.TrimSpace(f.Gap)); err != nil {
		return nil, store.Usagef("invalid value %q for flag -gap: parse error (a duration needs a unit: 300ms, 2s, 1m)", f.Gap)
	}
	cfg.UserAgent = f.UserAgent
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if strings.TrimSpace(f.URL) == "" {
		return nil, store.Usagef("missing URL to crawl")
	}
	if cfg.URL, err = crawl.StartURL(strings.TrimSpace(f.URL)); err != nil {
		return nil, err
	}
	if a.opt.Demo != nil && cfg.URL == a.opt.Demo.URL() {
		cfg.Demo = true
	}
	return cfg, nil
}

// crawlView is one crawl of the history.
type crawlView struct {
	*store.CrawlRow
	Resumable bool
}

type homeView struct {
	Form      form
	Limits    limits
	Error     string
	Running   *runView
	Crawls    []crawlView
	DB        string
	Demo      bool
	Interrupt string
}

type runView struct {
	N       int
	CrawlID int64
	URL     string
	Running bool
	Outcome string
	Summary string
	Resumed bool
}

func (a *App) runView() *runView {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.cur
	if r == nil {
		return nil
	}
	v := &runView{N: r.n, CrawlID: r.crawlID.Load(), URL: r.url, Resumed: r.resumed, Running: true}
	select {
	case <-r.done:
		v.Running, v.Outcome, v.Summary = false, r.outcome, r.summary.String()
	default:
	}
	return v
}

func (a *App) home(w http.ResponseWriter, r *http.Request) {
	demoURL := ""
	if a.opt.Demo != nil {
		demoURL = a.opt.Demo.URL()
	}
	a.renderHome(w, r, http.StatusOK, defaultForm(demoURL), "")
}

func (a *App) renderHome(w http.ResponseWriter, r *http.Request, status int, f form, msg string) {
	v := homeView{Form: f, Limits: formLimits, Error: msg, Running: a.runView(), DB: a.opt.DB, Demo: a.opt.Demo != nil}
	rows, err := store.LoadCrawls(r.Context(), a.db)
	if err != nil {
		a.fail(w, err)
		return
	}
	for i := len(rows) - 1; i >= 0; i-- { // newest first
		c := rows[i]
		res := c.Outcome != "finished" && c.Outcome != "off_limits" && store.Resumable(r.Context(), a.db, c) == nil
		if v.Running != nil && v.Running.Running && v.Running.CrawlID == c.ID {
			res = false
		}
		v.Crawls = append(v.Crawls, crawlView{CrawlRow: c, Resumable: res})
	}
	a.page(w, status, "home.html", v)
}

func (a *App) startCrawl(w http.ResponseWriter, r *http.Request) {
	f := form{URL: r.PostFormValue("url"), MaxPages: r.PostFormValue("max_pages"), MaxDepth: r.PostFormValue("max_depth"),
		Concurrency: r.PostFormValue("concurrency"), Gap: r.PostFormValue("gap"), UserAgent: r.PostFormValue("user_agent"),
		Render: r.PostFormValue("render")}
	if f.Render == "" {
		f.Render = "0"
	}
	cfg, err := a.config(f)
	if err != nil {
		a.renderHome(w, r, http.StatusBadRequest, f, err.Error())
		return
	}
	if _, err := a.start(cfg, nil); err != nil {
		a.renderHome(w, r, refusalStatus(err), f, err.Error())
		return
	}
	http.Redirect(w, r, "/live", http.StatusSeeOther)
}

// refusalStatus is the HTTP status of a crawl that could not start.
func refusalStatus(err error) int {
	var busy *store.BusyError
	switch {
	case errors.Is(err, ErrBusy), errors.As(err, &busy):
		return http.StatusConflict
	case errors.As(err, new(*store.UsageError)), errors.Is(err, store.ErrBadCrawl):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

func (a *App) stopCrawl(w http.ResponseWriter, r *http.Request) {
	a.stop()
	http.Redirect(w, r, "/live", http.StatusSeeOther)
}

func (a *App) resumeCrawl(w http.ResponseWriter, r *http.Request) {
	demoURL := ""
	if a.opt.Demo != nil {
		demoURL = a.opt.Demo.URL()
	}
	id, err := strconv.ParseInt(r.PostFormValue("crawl"), 10, 64)
	if err != nil || id <= 0 {
		a.renderHome(w, r, http.StatusBadRequest, defaultForm(demoURL), "resume: no such crawl")
		return
	}
	row, err := store.LoadCrawl(r.Context(), a.db, id)
	if err == nil {
		cfg := crawl.Defaults()
		cfg.DB, cfg.Resume, cfg.Crawl = a.opt.DB, true, id
		_, err = a.start(cfg, row)
	}
	if err != nil {
		a.renderHome(w, r, refusalStatus(err), defaultForm(demoURL), "resume: "+err.Error())
		return
	}
	http.Redirect(w, r, "/live", http.StatusSeeOther)
}

type liveView struct {
	Run   *runView
	State map[string]string
}

func (a *App) liveView(w http.ResponseWriter, r *http.Request) {
	rv := a.runView()
	if rv == nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	state := a.hub.Snapshot().State
	if state["run"] != strconv.Itoa(rv.N) {
		state = map[string]string{} // the hub still holds the run before: its figures are not this one's
	}
	a.page(w, http.StatusOK, "live.html", liveView{Run: rv, State: state})
}

// crawlID is the {id} of the path, an existing crawl, or an error page written.
func (a *App) crawlID(w http.ResponseWriter, r *http.Request) (*store.CrawlRow, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		a.message(w, http.StatusNotFound, "No such crawl", fmt.Sprintf("%q is not a crawl id.", r.PathValue("id")))
		return nil, false
	}
	row, err := store.LoadCrawl(r.Context(), a.db, id)
	if errors.Is(err, store.ErrBadCrawl) {
		a.message(w, http.StatusNotFound, "No such crawl", err.Error())
		return nil, false
	}
	if err != nil {
		a.fail(w, err)
		return nil, false
	}
	return row, true
}

// tab is a category's tab (Category set), or a kind's within it (Kind set).
type tab struct {
	Category, Kind, Title, Severity string
	Count                           int
	Active                          bool
	Href                            string
}

type column struct {
	Key, Title, Href string
	Sorted, Desc     bool
}

type exploreView struct {
	Crawl    *store.CrawlRow
	Tabs     []tab // All URLs and one per category with findings
	Kinds    []tab // the active category's kinds
	Category string
	Kind     string
	Info     findings.KindInfo
	Query    string
	Sort     string
	Desc     bool
	Columns  []column
	Rows     []store.URLRow
	Hrefs    []string // each row's detail link
	Total    int
	From, To int
	Prev     string
	Next     string
	Detail   *detailView
	Tables   []string
}

type detailView struct {
	*store.URLDetail
	Findings []findingView
	Close    string
	Href     func(string) string
}

type findingView struct {
	store.FindingRecord
	Info findings.KindInfo
}

// pageSize is the rows of a URL table per page.
const pageSize = 100

func (a *App) explore(w http.ResponseWriter, r *http.Request) {
	row, ok := a.crawlID(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	q := r.URL.Query()
	v := exploreView{Crawl: row, Category: q.Get("cat"), Kind: q.Get("kind"), Query: q.Get("q"), Sort: q.Get("sort"), Desc: q.Get("desc") == "1"}
	if v.Sort == "" {
		v.Sort = "url"
	}
	offset, _ := strconv.Atoi(q.Get("offset"))
	offset = max(offset, 0)
	counts, err := store.FindingCounts(ctx, a.db, row.ID)
	if err != nil {
		a.fail(w, err)
		return
	}
	if v.Kind != "" && counts[v.Kind] == 0 {
		v.Kind = ""
	}
	if v.Kind != "" {
		v.Category = findings.InfoOf(v.Kind).Category // a kind's link needs no category
	}
	byCategory := map[string]int{}
	worst := map[string]string{} // a category's most severe kind's severity: its colour
	for _, k := range findings.OrderedKinds(counts) {
		info := findings.InfoOf(k)
		if byCategory[info.Category] == 0 || findings.KindRank(k) < findings.KindRank(worst[info.Category]) {
			worst[info.Category] = k
		}
		byCategory[info.Category] += counts[k]
	}
	if byCategory[v.Category] == 0 {
		v.Category = ""
	}
	link := func(change map[string]string) string {
		u := url.Values{}
		for _, k := range []string{"cat", "kind", "q", "sort", "desc", "offset", "url"} {
			if val := q.Get(k); val != "" {
				u.Set(k, val)
			}
		}
		for k, val := range change {
			if val == "" {
				u.Del(k)
			} else {
				u.Set(k, val)
			}
		}
		s := fmt.Sprintf("/crawls/%d", row.ID)
		if e := u.Encode(); e != "" {
			s += "?" + e
		}
		return s
	}
	v.Tabs = append(v.Tabs, tab{Title: "All URLs", Count: row.Pages, Active: v.Category == "",
		Href: link(map[string]string{"cat": "", "kind": "", "offset": "", "url": ""})})
	for _, c := range findings.Categories {
		if byCategory[c] > 0 {
			v.Tabs = append(v.Tabs, tab{Category: c, Title: c, Severity: findings.InfoOf(worst[c]).Severity.String(), Count: byCategory[c], Active: v.Category == c,
				Href: link(map[string]string{"cat": c, "kind": "", "offset": "", "url": ""})})
		}
	}
	var kinds []string // the table's kinds: the chosen one, or the category's
	if v.Category != "" {
		v.Kinds = append(v.Kinds, tab{Category: v.Category, Title: "All " + v.Category, Count: byCategory[v.Category], Active: v.Kind == "",
			Href: link(map[string]string{"kind": "", "offset": "", "url": ""})})
		for _, k := range findings.KindsOf(v.Category) {
			if counts[k] == 0 {
				continue
			}
			kinds = append(kinds, k)
			info := findings.InfoOf(k)
			v.Kinds = append(v.Kinds, tab{Category: v.Category, Kind: k, Title: info.Title, Severity: info.Severity.String(), Count: counts[k], Active: v.Kind == k,
				Href: link(map[string]string{"kind": k, "offset": "", "url": ""})})
		}
	}
	if v.Kind != "" {
		v.Info = findings.InfoOf(v.Kind)
		kinds = []string{v.Kind}
	}
	uq := store.URLQuery{Kinds: kinds, Search: v.Query, Sort: v.Sort, Desc: v.Desc, Offset: offset, Limit: pageSize}
	var more bool
	if v.Rows, more, err = store.ListURLs(ctx, a.db, row.ID, uq); err != nil {
		a.fail(w, err)
		return
	}
	// The total is known without a walk of every row, except for a search.
	switch {
	case v.Query != "":
		v.Total, err = store.CountURLs(ctx, a.db, row.ID, uq)
	case v.Kind != "":
		v.Total = counts[v.Kind]
	case v.Category != "":
		v.Total = byCategory[v.Category]
	default:
		v.Total = row.Pages
	}
	if err != nil {
		a.fail(w, err)
		return
	}
	cols := []column{{Key: "url", Title: "URL"}, {Key: "status", Title: "Status"}, {Key: "title", Title: "Title"}, {Key: "depth", Title: "Depth"}, {Key: "response", Title: "Response"}}
	for i := range cols {
		c := &cols[i]
		c.Sorted = v.Sort == c.Key
		desc := ""
		if c.Sorted && !v.Desc {
			desc = "1"
		}
		c.Desc = c.Sorted && v.Desc
		c.Href = link(map[string]string{"sort": c.Key, "desc": desc, "offset": ""})
	}
	v.Columns = cols
	for _, u := range v.Rows {
		v.Hrefs = append(v.Hrefs, link(map[string]string{"url": u.URL}))
	}
	v.From, v.To = offset+1, offset+len(v.Rows)
	if offset > 0 {
		v.Prev = link(map[string]string{"offset": strconv.Itoa(max(offset-pageSize, 0))})
	}
	if more {
		v.Next = link(map[string]string{"offset": strconv.Itoa(offset + pageSize)})
	}
	if u := q.Get("url"); u != "" {
		d, err := store.LoadURL(ctx, a.db, row.ID, u)
		if err != nil {
			a.fail(w, err)
			return
		}
		dv := &detailView{URLDetail: d, Close: link(map[string]string{"url": ""}),
			Href: func(to string) string { return link(map[string]string{"url": to}) }}
		for _, f := range d.Findings {
			dv.Findings = append(dv.Findings, findingView{f, findings.InfoOf(f.Kind)})
		}
		v.Detail = dv
	}
	if v.Tables, err = store.TablesOf(ctx, a.db, row.ID); err != nil {
		a.fail(w, err)
		return
	}
	a.page(w, http.StatusOK, "explore.html", v)
}

func (a *App) report(w http.ResponseWriter, r *http.Request) {
	row, ok := a.crawlID(w, r)
	if !ok {
		return
	}
	d, err := report.LoadReport(r.Context(), a.db, row.ID, report.NeedAll)
	if err != nil {
		a.fail(w, err)
		return
	}
	setReportHeaders(w)
	if err := report.WriteHTML(w, d, time.Now()); err != nil {
		fmt.Fprintf(a.opt.Log, "audit app: report of crawl %d: %v\n", row.ID, err)
	}
}

func (a *App) exportJSON(w http.ResponseWriter, r *http.Request) {
	row, ok := a.crawlID(w, r)
	if !ok {
		return
	}
	d, err := report.LoadReport(r.Context(), a.db, row.ID, report.NeedSummary)
	if err != nil {
		a.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="crawl-%d.json"`, row.ID))
	if err := report.WriteJSON(r.Context(), w, a.db, d); err != nil {
		fmt.Fprintf(a.opt.Log, "audit app: JSON of crawl %d: %v\n", row.ID, err)
	}
}

func (a *App) exportCSV(w http.ResponseWriter, r *http.Request) {
	row, ok := a.crawlID(w, r)
	if !ok {
		return
	}
	table, found := strings.CutSuffix(r.PathValue("table"), ".csv")
	tables, err := store.TablesOf(r.Context(), a.db, row.ID)
	if err != nil {
		a.fail(w, err)
		return
	}
	known := false
	for _, t := range tables {
		known = known || t == table
	}
	if !found || !known {
		a.message(w, http.StatusNotFound, "No such table", fmt.Sprintf("The export has the tables %s, as TABLE.csv.", strings.Join(tables, ", ")))
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="crawl-%d-%s.csv"`, row.ID, table))
	if err := report.WriteCSV(r.Context(), w, a.db, row.ID, table); err != nil {
		fmt.Fprintf(a.opt.Log, "audit app: CSV of crawl %d: %v\n", row.ID, err)
	}
}

func (a *App) compare(w http.ResponseWriter, r *http.Request) {
	var ids []int64
	for _, k := range []string{"a", "b"} {
		if s := r.URL.Query().Get(k); s != "" {
			id, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				a.message(w, http.StatusBadRequest, "Cannot compare", fmt.Sprintf("%q is not a crawl id.", s))
				return
			}
			ids = append(ids, id)
		}
	}
	ctx := r.Context()
	ca, cb, err := report.PickCrawls(ctx, a.db, ids)
	if err != nil {
		a.message(w, http.StatusBadRequest, "Cannot compare", err.Error())
		return
	}
	cmp, err := report.CompareCrawls(ctx, a.db, ca, cb)
	if err != nil {
		a.fail(w, err)
		return
	}
	setReportHeaders(w)
	if err := cmp.WriteHTML(w, time.Now()); err != nil {
		fmt.Fprintf(a.opt.Log, "audit app: compare: %v\n", err)
	}
}

// setReportHeaders makes a response the report's or compare's self-contained page: their own CSP (inline
// style, one hashed script, nothing that fetches), not framed.
func setReportHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", report.CSP()+"; frame-ancestors 'none'")
}

type messageView struct{ Title, Text string }

func (a *App) message(w http.ResponseWriter, status int, title, text string) {
	a.page(w, status, "message.html", messageView{title, text})
}

func (a *App) fail(w http.ResponseWriter, err error) {
	fmt.Fprintf(a.opt.Log, "audit app: %v\n", err)
	a.message(w, http.StatusInternalServerError, "Something went wrong", err.Error())
}

// page renders a template into memory first, so a failure is an error page, never half a page.
func (a *App) page(w http.ResponseWriter, status int, name string, data any) {
	var b strings.Builder
	if err := a.pages.ExecuteTemplate(&b, name, data); err != nil {
		fmt.Fprintf(a.opt.Log, "audit app: page %s: %v\n", name, err)
		http.Error(w, "the page could not be made: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	io.WriteString(w, b.String())
}
