// Package web is `monitor serve`'s site: the dashboard, a page's history,
// the free tool, the JSON API, the alerts page and the Atom feeds, with what
// a listening socket needs (the Host header checked, cross-origin POSTs
// refused, bodies capped, checks bounded server-wide and per client IP,
// html/template, a CSP without inline script).
//
// Handlers read through the store and run the free tool through
// Config.Check, the same function as the CLI's check; the package never
// fetches, opens the database or takes snapshots itself.
package web

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/politecrawl/polite/examples/monitor/internal/card"
	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
	"github.com/politecrawl/polite/examples/monitor/internal/store"
)

// The web side of the monitor: `monitor serve`. Handlers call the same
// functions as the CLI (track's validation, the free tool's check, the
// store's queries); the server adds only what a listening socket needs:
// loopback by default, cross-origin POSTs refused, bodies capped, every
// value escaped by html/template, a Content-Security-Policy without inline
// script, and a per-client-IP token bucket in front of the free tool (each
// check makes the monitor fetch a stranger's site).

//go:embed web
var webFiles embed.FS

const (
	// pageSize is the rows of one dashboard or API page: the dashboard's
	// cost is that of one page, whatever the number of tracked pages.
	pageSize = 50
	// historySize is the snapshots of one history page.
	historySize = 30
	// DefaultChecksInFlight bounds the free-tool checks running at once,
	// server-wide (the per-IP bucket does not bound many clients).
	DefaultChecksInFlight = 8
	// MaxFormBytes caps a request body: forms carry one URL.
	MaxFormBytes = 16 << 10
	// csp allows this origin's files only: no inline script or style, no
	// frames of this page anywhere.
	csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; " +
		"frame-ancestors 'none'; base-uri 'none'"
)

// Config is what the web surfaces need from the program: the database, the
// free tool's check, the validation the CLI applies to a typed URL and
// interval, the address guard, and the identity and limits of the server.
type Config struct {
	Store *store.Store
	// Check runs the free tool on a canonical URL.
	Check func(ctx context.Context, url string) *card.Card
	// CheckURL is the address guard's name check (the track form refuses
	// internal targets at once).
	CheckURL func(ctx context.Context, url string) error
	// CanonicalURL and ValidInterval are the CLI's checks of a typed URL
	// and interval; MinInterval is the form's default interval.
	CanonicalURL  func(raw string) (string, error)
	ValidInterval func(time.Duration) error
	MinInterval   time.Duration
	// When and Duration write times and durations for people, as the CLI
	// does.
	When     func(time.Time) string
	Duration func(time.Duration) string
	// UserAgent and Token name the bot on every page; Addr is -addr, whose
	// host is accepted in the Host header.
	UserAgent, Token, Addr string
	// CheckRate (per minute) and CheckBurst are the per-client-IP bucket;
	// ChecksInFlight bounds checks at once, server-wide (0:
	// DefaultChecksInFlight).
	CheckRate      float64
	CheckBurst     int
	ChecksInFlight int
	// CheckNow takes one snapshot of a tracked page now (schedule.RunNow);
	// nil hides the button.
	CheckNow func(ctx context.Context, url string) (line string, err error)
	Now      func() time.Time
	ErrorLog io.Writer
	// NewAlertChannel checks the alerts page's form as `monitor alert add`
	// checks its flags (the destination through the address guard) and
	// returns the channel to store; nil: the form is refused.
	NewAlertChannel func(ctx context.Context, f AlertForm) (store.Channel, error)
	// TestAlertChannel sends a test message to a channel now, as `monitor
	// alert test` does, and returns its description; nil: refused.
	TestAlertChannel func(ctx context.Context, id int64) (string, error)
}

// Server serves the dashboard, page history, free tool and JSON API.
type Server struct {
	cfg     Config
	st      *store.Store
	limiter *ipLimiter
	// checkSlots holds one token per free-tool check in flight.
	checkSlots chan struct{}
	// nowSlots holds one token per check now in flight.
	nowSlots chan struct{}
	pages    map[string]*template.Template
	now      func() time.Time
	banner   string
	policy   string
	errLog   *log.Logger
}

// New parses the templates and returns the server of cfg.
func New(cfg Config) (*Server, error) {
	s := &Server{
		cfg: cfg, st: cfg.Store, now: cfg.Now,
		limiter: newIPLimiter(rate.Limit(cfg.CheckRate/60), cfg.CheckBurst),
		// ChecksInFlight 0 is the default: a zero option is the safe one.
		checkSlots: make(chan struct{}, cmp.Or(cfg.ChecksInFlight, DefaultChecksInFlight)),
		nowSlots:   make(chan struct{}, checksNowInFlight),
		banner:     card.Banner(cfg.Token),
		policy:     card.PolicyURLOf(cfg.UserAgent),
		errLog:     log.New(cmp.Or[io.Writer](cfg.ErrorLog, io.Discard), "monitor serve: ", 0),
		pages:      map[string]*template.Template{},
	}
	funcs := template.FuncMap{
		"when":  cfg.When,
		"bytes": snapshot.FmtBytes,
		"dur":   cfg.Duration,
		"outcomeLabel": func(oc string) string {
			for _, o := range outcomeChoices {
				if o.Value == oc {
					return o.Label
				}
			}
			if oc == "" {
				return "not checked yet"
			}
			return oc
		},
	}
	for _, name := range []string{"dashboard", "history", "check", "alerts"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(webFiles, "web/base.html", "web/pagetools.html", "web/"+name+".html")
		if err != nil {
			return nil, err
		}
		s.pages[name] = t
	}
	return s, nil
}

// ErrorLog is the logger the http.Server of this site should use.
func (s *Server) ErrorLog() *log.Logger { return s.errLog }

// Handler is the whole site with its protections.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(webFiles, "web/static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.dashboard)
	mux.HandleFunc("GET /page", s.history)
	mux.HandleFunc("GET /check", s.checkForm)
	mux.HandleFunc("POST /check", s.checkPost)
	mux.HandleFunc("POST /track", s.trackPost)
	mux.HandleFunc("POST /untrack", s.untrackPost)
	mux.HandleFunc("POST /page/rules", s.rulesPost)
	mux.HandleFunc("POST /page/check-now", s.checkNowPost)
	mux.HandleFunc("GET /api/pages", s.apiPages)
	mux.HandleFunc("GET /api/pages/{url}/snapshots", s.apiSnapshots)
	mux.HandleFunc("POST /api/check", s.apiCheck)
	mux.HandleFunc("GET /alerts", s.alertsPage)
	mux.HandleFunc("POST /alerts", s.alertAddPost)
	mux.HandleFunc("POST /alerts/remove", s.alertRemovePost)
	mux.HandleFunc("POST /alerts/test", s.alertTestPost)
	mux.HandleFunc("GET /feed.atom", s.feed)
	mux.HandleFunc("GET /page/feed.atom", s.feed)

	cop := http.NewCrossOriginProtection()
	var h http.Handler = mux
	h = cop.Handler(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.knownHost(r.Host) {
			// DNS rebinding: a page on rebind.evil.example whose name now
			// points at 127.0.0.1 would be same-origin with this server.
			http.Error(w, "unknown Host: this server answers to loopback names and its -addr host only", http.StatusMisdirectedRequest)
			return
		}
		hd := w.Header()
		hd.Set("Content-Security-Policy", csp)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "same-origin")
		r.Body = http.MaxBytesReader(w, r.Body, MaxFormBytes)
		h.ServeHTTP(w, r)
	})
}

// knownHost reports whether a request's Host header names this server: an
// IP address literal (no name a rebinding attacker controls), localhost or a
// name under .localhost, or the host of -addr.
func (s *Server) knownHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "" {
		return false
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if a, _, err := net.SplitHostPort(s.cfg.Addr); err == nil && a != "" && strings.EqualFold(strings.TrimSuffix(a, "."), host) {
		return true
	}
	return false
}

// common is what every page shows.
type common struct {
	UA, Token, Policy, Banner string
	Msg, Err                  string
}

// flashes are the only success notices a page shows, chosen by ?done=:
// never text from the URL, which anyone can write into a link.
var flashes = map[string]string{
	"tracked":       "Page tracked: it is checked at its interval from now on.",
	"untracked":     "Page untracked: its snapshots were deleted.",
	"alert-added":   "Alert channel added: matching changes are delivered to it from now on.",
	"alert-removed": "Alert channel removed, with its deliveries.",
	"alert-tested":  "Test message accepted by the channel's receiver.",
	"rules":         "Rules saved: the next snapshot compares only what they select.",
	"checked":       "Checked now: the new snapshot is at the top.",
}

func (s *Server) common(r *http.Request) common {
	return common{UA: s.cfg.UserAgent, Token: s.cfg.Token, Policy: s.policy, Banner: s.banner,
		Msg: flashes[r.URL.Query().Get("done")]}
}

// render executes a page into a buffer first, so a template error is a 500
// and not half a page.
func (s *Server) render(w http.ResponseWriter, status int, name string, data any) {
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "base", data); err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (s *Server) fail(w http.ResponseWriter, err error) {
	s.errLog.Print(err)
	http.Error(w, "internal error (see the server's log)", http.StatusInternalServerError)
}

// outcomeChoice is one option of the dashboard's outcome filter.
type outcomeChoice struct{ Value, Label string }

var outcomeChoices = []outcomeChoice{
	{snapshot.OutcomeOK, "ok"},
	{snapshot.OutcomeError, "error"},
	{snapshot.OutcomeBlocked, "blocked by robots.txt"},
	{snapshot.OutcomeRobotsWait, "robots.txt unreachable"},
	{snapshot.OutcomeBotProtection, "blocked by bot protection"},
	{"new", "not checked yet"},
}

func validOutcome(v string) bool {
	if v == "" {
		return true
	}
	for _, o := range outcomeChoices {
		if o.Value == v {
			return true
		}
	}
	return false
}

// dashRow is one tracked page on the dashboard.
type dashRow struct {
	P       store.Page
	Blocked bool
	Due     time.Time
	DueNow  bool
}

type dashData struct {
	common
	Totals           store.Totals
	Hosts            []string
	HostCount        int  // tracked hosts
	HostTyped        bool // too many hosts for a list: the filter is typed
	Outcomes         []outcomeChoice
	Filter           store.PageFilter
	Rows             []dashRow
	Total            int
	Page, LastPage   int
	PrevURL, NextURL string
	// FailedAlerts is the number of alert deliveries given up on: a banner.
	FailedAlerts int
}

// pageNumber reads ?page=N (1-based).
func pageNumber(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || n < 1 {
		return 1
	}
	return min(n, math.MaxInt32)
}

func (s *Server) filter(r *http.Request) (store.PageFilter, error) {
	q := r.URL.Query()
	f := store.PageFilter{Host: q.Get("host"), Outcome: q.Get("outcome")}
	if !validOutcome(f.Outcome) {
		return f, fmt.Errorf("unknown outcome %q", f.Outcome)
	}
	return f, nil
}

func (s *Server) dashboard(w http.ResponseWriter, r *http.Request) {
	s.dashboardWith(w, r, http.StatusOK, "")
}

func (s *Server) dashboardWith(w http.ResponseWriter, r *http.Request, status int, errMsg string) {
	ctx := r.Context()
	d := dashData{common: s.common(r), Outcomes: outcomeChoices}
	d.Err = errMsg
	f, err := s.filter(r)
	if err != nil {
		d.Err = err.Error()
		status = http.StatusBadRequest
		f = store.PageFilter{}
	}
	d.Filter = f
	d.Page = pageNumber(r)
	d.FailedAlerts = s.failedDeliveries(ctx)
	if d.Totals, err = s.st.Totals(ctx); err != nil {
		s.fail(w, err)
		return
	}
	if d.Hosts, d.HostCount, d.HostTyped, err = hostChoices(ctx, s.st); err != nil {
		s.fail(w, err)
		return
	}
	pages, total, err := s.st.ListPages(ctx, f, pageSize, (d.Page-1)*pageSize)
	if err != nil {
		s.fail(w, err)
		return
	}
	now := s.now()
	for _, p := range pages {
		d.Rows = append(d.Rows, dashRow{P: p, Blocked: p.LastOutcome == snapshot.OutcomeBlocked, Due: p.Due(), DueNow: !p.Due().After(now)})
	}
	d.Total = total
	d.LastPage = max(1, (total+pageSize-1)/pageSize)
	link := func(n int) string {
		v := url.Values{}
		if f.Host != "" {
			v.Set("host", f.Host)
		}
		if f.Outcome != "" {
			v.Set("outcome", f.Outcome)
		}
		v.Set("page", strconv.Itoa(n))
		return "/?" + v.Encode()
	}
	d.PrevURL, d.NextURL = link(d.Page-1), link(d.Page+1)
	s.render(w, status, "dashboard", d)
}

// histEntry is one snapshot on the history page with its changes.
type histEntry struct {
	S       *snapshot.Snapshot
	Outcome string
	Changes []snapshot.Change
	First   bool
}

type histData struct {
	common
	P                store.Page
	Due              time.Time
	DueNow           bool
	Entries          []histEntry
	Total            int
	Page, LastPage   int
	PrevURL, NextURL string
	Tools            pageTools // rules and check now (pagetools.go)
}

// historyEntries loads one page of a page's snapshots (newest first) and
// the changes of each against the ones before it (snapshot.Classify): one
// more snapshot than shown is read, and blocked snapshots' fields are never
// compared.
func (s *Server) historyEntries(ctx context.Context, u string, pageNo int) ([]histEntry, int, error) {
	snaps, total, err := s.st.PageSnapshots(ctx, u, historySize+1, (pageNo-1)*historySize)
	if err != nil {
		return nil, 0, err
	}
	entries := make([]histEntry, 0, len(snaps))
	for i, sn := range snaps {
		if i == historySize {
			break
		}
		oc, _ := sn.Outcome()
		e := histEntry{S: sn, Outcome: oc, First: (pageNo-1)*historySize+i == total-1}
		if i+1 < len(snaps) {
			var base *snapshot.Snapshot
			for _, older := range snaps[i+1:] {
				if older.Comparable() {
					base = older
					break
				}
			}
			e.Changes = snapshot.Classify(snaps[i+1], base, sn, s.st.CompareOptions())
		}
		entries = append(entries, e)
	}
	return entries, total, nil
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	s.historyWith(w, r, r.URL.Query().Get("url"), http.StatusOK, "")
}

// historyWith renders the history of page u with status and an error
// message (a refused form of the page's tools).
func (s *Server) historyWith(w http.ResponseWriter, r *http.Request, u string, status int, errMsg string) {
	ctx := r.Context()
	p, ok, err := s.st.Page(ctx, u)
	if err != nil {
		s.fail(w, err)
		return
	}
	if !ok {
		s.dashboardWith(w, r, http.StatusNotFound, fmt.Sprintf("not tracked: %s", u))
		return
	}
	d := histData{common: s.common(r), P: p, Due: p.Due(), DueNow: !p.Due().After(s.now()), Page: pageNumber(r)}
	d.Err = errMsg
	if d.Tools, err = s.pageTools(ctx, u); err != nil {
		s.fail(w, err)
		return
	}
	d.Entries, d.Total, err = s.historyEntries(ctx, u, d.Page)
	if err != nil {
		s.fail(w, err)
		return
	}
	d.LastPage = max(1, (d.Total+historySize-1)/historySize)
	link := func(n int) string { return "/page?" + url.Values{"url": {u}, "page": {strconv.Itoa(n)}}.Encode() }
	d.PrevURL, d.NextURL = link(d.Page-1), link(d.Page+1)
	s.render(w, status, "history", d)
}

type checkData struct {
	common
	URL  string
	Card *card.Card
}

func (s *Server) checkForm(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "check", checkData{common: s.common(r), URL: r.URL.Query().Get("url")})
}

// admitCheck lets one free-tool check start: a server-wide slot first (a
// check holds up to freeToolMaxBody of a stranger's page and its parse, so
// the number in flight bounds the memory of all of them), then the client's
// token bucket. When it refuses it has answered (503 or 429, both with
// Retry-After); otherwise the caller runs the check and calls release.
func (s *Server) admitCheck(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	select {
	case s.checkSlots <- struct{}{}:
	default:
		w.Header().Set("Retry-After", "2")
		msg := "the free tool is busy with other checks: try again in 2 s"
		if strings.HasPrefix(r.URL.Path, "/api/") {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": msg})
		} else {
			d := checkData{common: s.common(r), URL: r.PostFormValue("url")}
			d.Err = msg
			s.render(w, http.StatusServiceUnavailable, "check", d)
		}
		return nil, false
	}
	release = func() { <-s.checkSlots }
	if s.rateLimited(w, r) {
		release()
		return nil, false
	}
	return release, true
}

// rateLimited answers 429 with Retry-After when the client's bucket is
// empty, and reports whether it did.
func (s *Server) rateLimited(w http.ResponseWriter, r *http.Request) bool {
	ok, wait := s.limiter.allow(clientIP(r), time.Now())
	if ok {
		return false
	}
	secs := int(math.Ceil(wait.Seconds()))
	w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
	msg := fmt.Sprintf("too many checks from your address: try again in %d s", max(secs, 1))
	if strings.HasPrefix(r.URL.Path, "/api/") {
		writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": msg})
	} else {
		d := checkData{common: s.common(r), URL: r.PostFormValue("url")}
		d.Err = msg
		s.render(w, http.StatusTooManyRequests, "check", d)
	}
	return true
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// formURL reads and validates the url field like the CLI does.
func (s *Server) formURL(r *http.Request) (raw, canonical string, err error) {
	if err := r.ParseForm(); err != nil {
		return "", "", fmt.Errorf("bad form: %v", err)
	}
	raw = strings.TrimSpace(r.PostFormValue("url"))
	if raw == "" {
		return "", "", errors.New("no URL given")
	}
	canonical, err = s.cfg.CanonicalURL(raw)
	return raw, canonical, err
}

func (s *Server) checkPost(w http.ResponseWriter, r *http.Request) {
	raw, u, err := s.formURL(r)
	if err != nil {
		d := checkData{common: s.common(r), URL: raw}
		d.Err = err.Error()
		s.render(w, http.StatusBadRequest, "check", d)
		return
	}
	release, ok := s.admitCheck(w, r)
	if !ok {
		return
	}
	c := s.cfg.Check(r.Context(), u)
	release()
	s.render(w, http.StatusOK, "check", checkData{common: s.common(r), URL: u, Card: c})
}

func (s *Server) trackPost(w http.ResponseWriter, r *http.Request) {
	_, u, err := s.formURL(r)
	if err != nil {
		s.dashboardWith(w, r, http.StatusBadRequest, err.Error())
		return
	}
	iv := strings.TrimSpace(r.PostFormValue("interval"))
	interval := s.cfg.MinInterval
	if iv != "" {
		if interval, err = time.ParseDuration(iv); err != nil {
			s.dashboardWith(w, r, http.StatusBadRequest, fmt.Sprintf("interval %q: want a duration such as 6h or 24h", iv))
			return
		}
	}
	if err := s.cfg.ValidInterval(interval); err != nil {
		s.dashboardWith(w, r, http.StatusBadRequest, strings.TrimPrefix(err.Error(), "-"))
		return
	}
	if err := s.cfg.CheckURL(r.Context(), u); err != nil {
		s.dashboardWith(w, r, http.StatusBadRequest, fmt.Sprintf("%s: %v", u, err))
		return
	}
	if err := s.st.Track(r.Context(), []string{u}, interval, s.now()); err != nil {
		s.fail(w, err)
		return
	}
	http.Redirect(w, r, "/?done=tracked", http.StatusSeeOther)
}

func (s *Server) untrackPost(w http.ResponseWriter, r *http.Request) {
	_, u, err := s.formURL(r)
	if err != nil {
		s.dashboardWith(w, r, http.StatusBadRequest, err.Error())
		return
	}
	missing, err := s.st.Untrack(r.Context(), []string{u})
	if err != nil {
		s.fail(w, err)
		return
	}
	if len(missing) > 0 {
		s.dashboardWith(w, r, http.StatusNotFound, "not tracked: "+u)
		return
	}
	http.Redirect(w, r, "/?done=untracked", http.StatusSeeOther)
}

// ipLimiter is a token bucket per client IP. Buckets idle long enough to be
// full again are dropped, so the map stays as small as the set of recent
// clients.
type ipLimiter struct {
	mu      sync.Mutex
	limit   rate.Limit
	burst   int
	buckets map[string]*bucket
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

func newIPLimiter(limit rate.Limit, burst int) *ipLimiter {
	return &ipLimiter{limit: limit, burst: burst, buckets: map[string]*bucket{}}
}

// allow takes one token for ip at now; when there is none it says how long
// until there will be.
func (l *ipLimiter) allow(ip string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buckets) > 10000 {
		full := time.Duration(float64(l.burst) / float64(l.limit) * float64(time.Second))
		for k, b := range l.buckets {
			if now.Sub(b.seen) > full {
				delete(l.buckets, k)
			}
		}
	}
	b := l.buckets[ip]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(l.limit, l.burst)}
		l.buckets[ip] = b
	}
	b.seen = now
	res := b.lim.ReserveN(now, 1)
	if !res.OK() {
		return false, time.Minute
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return false, d
	}
	return true, 0
}
