package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/politecrawl/polite/examples/internal/cmdline"
	"github.com/politecrawl/polite/frontier"
)

// The report, the exports and compare read a crawl back from the database alone: they run the same
// right after a crawl, on a file copied from another machine, or years later.

// errBadCrawl is a crawl id that is not in the file, or a file without crawls: exit 2.
var errBadCrawl = errors.New("no such crawl")

// openReadDB opens an existing audit database for reading. It never creates a file: a mistyped -db
// must not leave an empty database behind.
func openReadDB(ctx context.Context, path string) (*sql.DB, error) {
	if path == "" {
		return nil, usagef("-db: no database path")
	}
	if strings.Contains(path, "?") {
		return nil, usagef("-db %q: the path must not contain '?'", path)
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, usagef("-db %s: no such file (crawl first: audit -db %s URL)", path, path)
		}
		return nil, fmt.Errorf("-db %s: %w", path, err)
	}
	if strings.HasPrefix(path, "file:") {
		path = "./" + path // a plain name, not a URI the driver would percent-decode
	}
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	var id int64
	if err := db.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&id); err == nil && id != 0 && uint32(id) != ApplicationID {
		db.Close()
		return nil, usagef("-db %s: not an audit database: it belongs to another program (SQLite application_id 0x%08X; Crawl Cove's is 0x%08X)", path, uint32(id), ApplicationID)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM crawls`).Scan(&n); err != nil {
		db.Close()
		return nil, usagef("-db %s: not an audit database (%v)", path, err)
	}
	return db, nil
}

// crawlRow is one crawls row.
type crawlRow struct {
	ID                   int64
	StartURL             string
	UserAgent, Token     string
	Started, Finished    time.Time
	Settings             settings
	Outcome, Message     string
	Pages, Requests      int
	SlowedAt             time.Time
	SlowedBy             string
	settingsJSON         string
	startedRaw, endedRaw string
}

// Duration is how long the crawl ran; 0 while it runs or when it never finished.
func (c *crawlRow) Duration() time.Duration {
	if c.Finished.IsZero() || c.Started.IsZero() {
		return 0
	}
	return c.Finished.Sub(c.Started)
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

const crawlColumns = `id, start_url, user_agent, robots_token, started_at, COALESCE(finished_at,''), settings, outcome,
	COALESCE(message,''), COALESCE(pages,0), COALESCE(requests,0), COALESCE(slowed_at,''), COALESCE(slowed_by,'')`

func scanCrawl(sc interface{ Scan(...any) error }) (*crawlRow, error) {
	c := &crawlRow{}
	var slowed string
	if err := sc.Scan(&c.ID, &c.StartURL, &c.UserAgent, &c.Token, &c.startedRaw, &c.endedRaw, &c.settingsJSON, &c.Outcome,
		&c.Message, &c.Pages, &c.Requests, &slowed, &c.SlowedBy); err != nil {
		return nil, err
	}
	c.Started, c.Finished, c.SlowedAt = parseTime(c.startedRaw), parseTime(c.endedRaw), parseTime(slowed)
	_ = json.Unmarshal([]byte(c.settingsJSON), &c.Settings) // shown as far as it could be read
	return c, nil
}

// loadCrawl reads crawl id, or the latest crawl when id is 0.
func loadCrawl(ctx context.Context, db *sql.DB, id int64) (*crawlRow, error) {
	q := `SELECT ` + crawlColumns + ` FROM crawls WHERE id = ?`
	args := []any{id}
	if id == 0 {
		q, args = `SELECT `+crawlColumns+` FROM crawls ORDER BY id DESC LIMIT 1`, nil
	}
	c, err := scanCrawl(db.QueryRowContext(ctx, q, args...))
	if errors.Is(err, sql.ErrNoRows) {
		if id == 0 {
			return nil, fmt.Errorf("%w: the database holds no crawl yet", errBadCrawl)
		}
		return nil, fmt.Errorf("%w: crawl %d is not in the database%s", errBadCrawl, id, crawlList(ctx, db))
	}
	return c, err
}

// crawlListMax is how many crawls a "no such crawl" message lists (the latest ones).
const crawlListMax = 20

// crawlList is the crawls the database holds, for a message about a crawl id that is not there: one
// line each (id, start, outcome, URL), the latest crawlListMax of them.
func crawlList(ctx context.Context, db *sql.DB) string {
	rows, err := db.QueryContext(ctx, `SELECT id, started_at, outcome, start_url, (SELECT COUNT(*) FROM crawls) FROM crawls ORDER BY id DESC LIMIT ?`, crawlListMax)
	if err != nil {
		return ""
	}
	defer rows.Close()
	var lines []string
	total := 0
	for rows.Next() {
		var id int64
		var started, outcome, start string
		if rows.Scan(&id, &started, &outcome, &start, &total) != nil {
			return ""
		}
		lines = append(lines, fmt.Sprintf("\n  %d  %s  %s  %s", id, parseTime(started).Format("2006-01-02 15:04"), outcome, cmdline.Safe(start)))
	}
	if len(lines) == 0 {
		return "; it holds no crawl yet"
	}
	slices.Reverse(lines)
	head := "; the crawls it holds:"
	if total > len(lines) {
		head = fmt.Sprintf("; the latest %d of its %d crawls:", len(lines), total)
	}
	return head + strings.Join(lines, "")
}

// loadCrawls reads every crawls row, oldest first.
func loadCrawls(ctx context.Context, db *sql.DB) ([]*crawlRow, error) {
	rows, err := db.QueryContext(ctx, `SELECT `+crawlColumns+` FROM crawls ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*crawlRow
	for rows.Next() {
		c, err := scanCrawl(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// loadFullPages reads every pages row of a crawl with all the columns the report shows.
func loadFullPages(ctx context.Context, db *sql.DB, crawlID int64) ([]*pageRecord, error) {
	rows, err := db.QueryContext(ctx, `SELECT url, COALESCE(final_url,''), COALESCE(status,0), COALESCE(redirects,''), depth,
		COALESCE(found_on,''), source, COALESCE(content_type,''), COALESCE(response_ms,-1), COALESCE(ttfb_ms,-1), COALESCE(bytes,0),
		truncated, COALESCE(attempts,0), title IS NOT NULL, COALESCE(title,''), COALESCE(title_count,0),
		COALESCE(meta_description,''), COALESCE(description_count,0), COALESCE(canonical,''), COALESCE(meta_robots,''),
		COALESCE(x_robots_tag,''), COALESCE(h1,''), COALESCE(h1_count,0), COALESCE(word_count,0), COALESCE(links_internal,0),
		COALESCE(links_external,0), COALESCE(links_nofollow,0), wordpress, COALESCE(wordpress_hint,''), blocked_by_robots,
		COALESCE(robots_rule,''), COALESCE(error,''), COALESCE(error_kind,''), COALESCE(fetched_at,'')
		FROM pages WHERE crawl_id = ? ORDER BY depth, url`, crawlID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*pageRecord
	for rows.Next() {
		p := &pageRecord{}
		var redirects, fetched string
		var resp, ttfb float64
		var trunc, wp, blocked int
		if err := rows.Scan(&p.URL, &p.FinalURL, &p.Status, &redirects, &p.Depth, &p.FoundOn, &p.Source, &p.ContentType,
			&resp, &ttfb, &p.Bytes, &trunc, &p.Attempts, &p.parsed, &p.Title, &p.TitleCount, &p.Description,
			&p.DescriptionCount, &p.Canonical, &p.MetaRobots, &p.XRobots, &p.H1, &p.H1Count, &p.WordCount, &p.Internal,
			&p.External, &p.Nofollow, &wp, &p.WordPressHint, &blocked, &p.RobotsRule, &p.Err, &p.ErrKind, &fetched); err != nil {
			return nil, err
		}
		p.Truncated, p.WordPress, p.Blocked = trunc == 1, wp == 1, blocked == 1
		p.Response, p.TTFB = msDuration(resp), msDuration(ttfb)
		p.FetchedAt = parseTime(fetched)
		if redirects != "" {
			_ = json.Unmarshal([]byte(redirects), &p.Redirects)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// msDuration turns a stored millisecond figure back into a Duration; -1 (NULL) stays -1 ns, "not measured".
func msDuration(ms float64) time.Duration {
	if ms < 0 {
		return -1
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// inlinks is how many distinct pages link to a URL (links to itself left out) and the first few of them.
type inlinks struct {
	N        int
	First    []string
	External bool // the target is on another site
}

// inlinksShown is how many referrers the report names next to a URL; the links table has them all.
const inlinksShown = 3

// loadInlinks counts, for every link target of the crawl, the distinct pages linking to it, and names the
// first few (in URL order). A 10,000-page crawl has some 200,000 links: one ordered scan by the links_from
// index, aggregated here, is several times faster than SQL's DISTINCT and window functions over them.
// Walking the sources in URL order makes the first sources met for a target its first ones by URL.
func loadInlinks(ctx context.Context, db *sql.DB, crawlID int64) (map[string]inlinks, error) {
	rows, err := db.QueryContext(ctx, `SELECT from_url, to_url, external FROM links INDEXED BY links_from
		WHERE crawl_id = ? ORDER BY from_url`, crawlID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]*inlinks{}
	var from, to, prev string
	var ext int
	seen := map[string]bool{} // targets of the current source page
	for rows.Next() {
		if err := rows.Scan(&from, &to, &ext); err != nil {
			return nil, err
		}
		if from != prev {
			clear(seen)
			prev = from
		}
		if from == to || seen[to] {
			continue
		}
		seen[to] = true
		in := out[to]
		if in == nil {
			in = &inlinks{External: ext == 1}
			out[to] = in
		}
		in.N++
		if len(in.First) < inlinksShown {
			in.First = append(in.First, from)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	res := make(map[string]inlinks, len(out))
	for k, v := range out {
		res[k] = *v
	}
	return res, nil
}

// loadFindings reads the crawl's findings in the order they were written.
func loadFindings(ctx context.Context, db *sql.DB, crawlID int64) ([]findingRecord, error) {
	rows, err := db.QueryContext(ctx, `SELECT url, kind, detail FROM findings WHERE crawl_id = ? ORDER BY id`, crawlID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []findingRecord
	for rows.Next() {
		var f findingRecord
		if err := rows.Scan(&f.URL, &f.Kind, &f.Detail); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// reportData is one crawl read back from the database, with the figures every output shares.
type reportData struct {
	Crawl     *crawlRow
	Pages     []*pageRecord
	byURL     map[string]*pageRecord
	Findings  []findingRecord
	Inlinks   map[string]inlinks
	Sitemaps  []sitemapRecord
	Listed    []listedURL // distinct sitemap URLs, first listing kept
	Requests  []requestRecord
	Generated time.Time
}

// listedURL is a URL a sitemap lists, with the first sitemap that listed it.
type listedURL struct{ URL, Sitemap string }

// What loadReport reads besides the crawls row: the exports need neither the pages nor the links read
// into memory (they stream the tables), JSON needs the pages for its summary, HTML everything.
type reportNeeds int

const (
	needCrawl   reportNeeds = iota // csv
	needSummary                    // json
	needAll                        // html
)

// loadReport reads crawl id (0 = the latest) of db, as much of it as need says.
func loadReport(ctx context.Context, db *sql.DB, id int64, need reportNeeds) (*reportData, error) {
	c, err := loadCrawl(ctx, db, id)
	if err != nil || need == needCrawl {
		return &reportData{Crawl: c}, err
	}
	d := &reportData{Crawl: c}
	if d.Pages, err = loadFullPages(ctx, db, c.ID); err != nil {
		return nil, fmt.Errorf("read pages: %w", err)
	}
	d.byURL = make(map[string]*pageRecord, len(d.Pages))
	for _, p := range d.Pages {
		d.byURL[p.URL] = p
	}
	if d.Findings, err = loadFindings(ctx, db, c.ID); err != nil {
		return nil, fmt.Errorf("read findings: %w", err)
	}
	if need == needAll {
		if d.Inlinks, err = loadInlinks(ctx, db, c.ID); err != nil {
			return nil, fmt.Errorf("read links: %w", err)
		}
	}
	st := &store{db: db, crawlID: c.ID}
	if d.Sitemaps, err = st.loadSitemaps(ctx); err != nil {
		return nil, fmt.Errorf("read sitemaps: %w", err)
	}
	smURLs, err := st.loadStrings(ctx, `SELECT sitemap, url FROM sitemap_urls WHERE crawl_id = ? ORDER BY rowid`)
	if err != nil {
		return nil, fmt.Errorf("read sitemap URLs: %w", err)
	}
	seen := make(map[string]bool, len(smURLs))
	for _, su := range smURLs {
		if !seen[su[1]] {
			seen[su[1]] = true
			d.Listed = append(d.Listed, listedURL{URL: su[1], Sitemap: su[0]})
		}
	}
	if d.Requests, err = st.loadRequests(ctx); err != nil {
		return nil, fmt.Errorf("read requests: %w", err)
	}
	return d, nil
}

// ownStatus is the status the URL itself answered: the first hop's for a redirect, 0 for none.
func ownStatus(p *pageRecord) int {
	if len(p.Redirects) > 0 {
		return p.Redirects[0].Status
	}
	return p.Status
}

// Status classes of the "pages by status class" chart, in its order. A URL that redirected is 3xx (what
// it answered itself), whatever its chain ended in; a URL robots.txt disallows was never requested.
const (
	classBlocked    = "blocked by robots.txt"
	classNoResponse = "no response"
)

var statusClasses = []string{"2xx", "3xx", "4xx", "5xx", classNoResponse, classBlocked}

func statusClass(p *pageRecord) string {
	if p.Blocked {
		return classBlocked
	}
	s := ownStatus(p)
	switch {
	case s >= 200 && s < 300:
		return "2xx"
	case s >= 300 && s < 400:
		return "3xx"
	case s >= 400 && s < 500:
		return "4xx"
	case s >= 500 && s < 600:
		return "5xx"
	case s == 0:
		return classNoResponse
	}
	return fmt.Sprintf("%d", s) // 1xx or nonsense: shown as itself
}

// Indexability classes, in chart order. Each URL is in exactly one: blocked, then not answering 200
// itself (errors, redirects, no response), then noindex, then a canonical naming another URL.
const (
	idxIndexable  = "indexable"
	idxNoindex    = "noindex"
	idxCanonical  = "canonicalised elsewhere"
	idxNon200     = "non-200"
	idxBlocked    = "blocked by robots.txt"
	idxNotCrawled = "not crawled"
)

var indexClasses = []string{idxIndexable, idxNoindex, idxCanonical, idxNon200, idxBlocked}

func indexability(p *pageRecord) string {
	switch {
	case p.Blocked:
		return idxBlocked
	case ownStatus(p) != http.StatusOK:
		return idxNon200
	case noindex(p) != "":
		return idxNoindex
	case canonicalElsewhere(p):
		return idxCanonical
	}
	return idxIndexable
}

// canonicalElsewhere applies analyze's rule: a canonical naming another URL than the page's own.
func canonicalElsewhere(p *pageRecord) bool {
	c := strings.TrimSpace(p.Canonical)
	if !p.parsed || c == "" {
		return false
	}
	self := p.FinalURL
	if self == "" {
		self = p.URL
	}
	return normalizeOrSelf(c) != normalizeOrSelf(self)
}

// Sitemap coverage classes: every distinct URL a sitemap lists is in exactly one.
const (
	smCrawled    = "crawled"
	smBlocked    = "blocked"
	smBroken     = "broken"
	smNotCrawled = "not crawled"
)

var sitemapClasses = []string{smCrawled, smBlocked, smBroken, smNotCrawled}

func (d *reportData) sitemapClass(u string) string {
	p, ok := d.byURL[u]
	switch {
	case !ok:
		return smNotCrawled
	case p.Blocked:
		return smBlocked
	}
	if broken, _ := isBroken(p); broken {
		return smBroken
	}
	return smCrawled
}

// Response time buckets (the server's time for the page, as stored in pages.response_ms).
var responseBuckets = []struct {
	Label string
	Upper time.Duration // exclusive; 0 = no upper bound
}{
	{"< 100 ms", 100 * time.Millisecond},
	{"100–250 ms", 250 * time.Millisecond},
	{"250–500 ms", 500 * time.Millisecond},
	{"0.5–1 s", time.Second},
	{"1–2 s", 2 * time.Second},
	{"2–5 s", 5 * time.Second},
	{"≥ 5 s", 0},
}

func responseBucket(d time.Duration) int {
	for i, b := range responseBuckets {
		if b.Upper == 0 || d < b.Upper {
			return i
		}
	}
	return len(responseBuckets) - 1
}

// count is one labelled figure of a chart.
type count struct {
	Label string `json:"label"`
	N     int    `json:"n"`
}

// kindCount is one finding kind's figure.
type kindCount struct {
	Kind     string `json:"kind"`
	Severity string `json:"severity"`
	N        int    `json:"n"`
}

// summary holds every figure the charts show; the JSON export carries it as is.
type summary struct {
	Pages        int         `json:"pages"`
	Fetched      int         `json:"fetched"`
	Blocked      int         `json:"blocked"`
	Errors       int         `json:"errors"` // answered 4xx/5xx or not at all itself (a redirect is 3xx, as in Status)
	Status       []count     `json:"status_classes"`
	Depth        []count     `json:"depth"`
	Response     []count     `json:"response_time"`
	ResponseP50  float64     `json:"response_ms_median"`
	ResponseP90  float64     `json:"response_ms_p90"`
	Kinds        []kindCount `json:"findings_by_kind"`
	Severity     []count     `json:"findings_by_severity"`
	SitemapTotal int         `json:"sitemap_listed"`
	Sitemap      []count     `json:"sitemap_coverage"`
	Index        []count     `json:"indexability"`
	Attempts     int         `json:"page_requests"` // requests sent for pages: hops and retries included
	Retries      int         `json:"retries"`
}

func countsOf(labels []string, m map[string]int) []count {
	out := make([]count, 0, len(labels))
	for _, l := range labels {
		out = append(out, count{l, m[l]})
	}
	return out
}

// summarize computes every chart's figures.
func (d *reportData) summarize() summary {
	var s summary
	status, depth, index := map[string]int{}, map[int]int{}, map[string]int{}
	resp := make([]int, len(responseBuckets))
	var times []time.Duration
	maxDepth := 0
	var extraClasses []string
	for _, p := range d.Pages {
		s.Pages++
		if p.Blocked {
			s.Blocked++
		} else {
			s.Fetched++
			s.Attempts += p.Attempts
			s.Retries += max(0, p.Attempts-1-len(p.Redirects))
		}
		cl := statusClass(p)
		if status[cl] == 0 && !contains(statusClasses, cl) {
			extraClasses = append(extraClasses, cl)
		}
		status[cl]++
		if cl == "4xx" || cl == "5xx" || cl == classNoResponse {
			// The card counts what the status chart counts: each URL's own answer, so a redirect to a
			// 404 is a 3xx here (the 404 is its target's, counted under that URL when it was crawled).
			s.Errors++
		}
		depth[p.Depth]++
		maxDepth = max(maxDepth, p.Depth)
		index[indexability(p)]++
		if !p.Blocked && p.Response >= 0 && p.Status != 0 {
			resp[responseBucket(p.Response)]++
			times = append(times, p.Response)
		}
	}
	sort.Strings(extraClasses)
	s.Status = countsOf(append(append([]string{}, statusClasses...), extraClasses...), status)
	if len(d.Pages) > 0 {
		for i := 0; i <= maxDepth; i++ {
			s.Depth = append(s.Depth, count{fmt.Sprint(i), depth[i]})
		}
	}
	for i, b := range responseBuckets {
		s.Response = append(s.Response, count{b.Label, resp[i]})
	}
	if len(times) > 0 {
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		s.ResponseP50 = durMS(times[(len(times)-1)/2])
		s.ResponseP90 = durMS(times[(len(times)-1)*9/10])
	}
	s.Index = countsOf(indexClasses, index)

	kinds, sev := map[string]int{}, map[string]int{}
	for _, f := range d.Findings {
		kinds[f.Kind]++
		sev[infoOf(f.Kind).Severity.String()]++
	}
	for _, k := range sortedKinds(kinds) {
		s.Kinds = append(s.Kinds, kindCount{k, infoOf(k).Severity.String(), kinds[k]})
	}
	s.Severity = countsOf([]string{"error", "warning", "notice"}, sev)

	cov := map[string]int{}
	for _, l := range d.Listed {
		cov[d.sitemapClass(l.URL)]++
	}
	s.SitemapTotal = len(d.Listed)
	s.Sitemap = countsOf(sitemapClasses, cov)
	return s
}

func durMS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// sortedKinds orders the kinds present: by severity and the kind table's order.
func sortedKinds(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		ri, rj := kindRank(ks[i]), kindRank(ks[j])
		if ri != rj {
			return ri < rj
		}
		return ks[i] < ks[j]
	})
	return ks
}

// topInlinks is the n internal URLs with the most distinct pages linking to them.
func (d *reportData) topInlinks(n int) []string {
	var urls []string
	for u, in := range d.Inlinks {
		if !in.External {
			urls = append(urls, u)
		}
	}
	sort.Slice(urls, func(i, j int) bool {
		a, b := d.Inlinks[urls[i]].N, d.Inlinks[urls[j]].N
		if a != b {
			return a > b
		}
		return urls[i] < urls[j]
	})
	if len(urls) > n {
		urls = urls[:n]
	}
	return urls
}

// orphans are the URLs a sitemap lists on the site that no crawled page links to (the start page
// excepted: it is where the crawl begins, linked or not).
func (d *reportData) orphans() []listedURL {
	scope, err := frontier.SameSite(d.Crawl.StartURL)
	var out []listedURL
	for _, l := range d.Listed {
		if d.Inlinks[l.URL].N > 0 || l.URL == d.Crawl.StartURL {
			continue
		}
		if p, ok := d.byURL[l.URL]; ok && p.Depth == 0 {
			continue
		}
		if err == nil {
			if u, perr := url.Parse(l.URL); perr != nil || !scope(u) {
				continue // another site's URL in the sitemap: not this site's orphan
			}
		}
		out = append(out, l)
	}
	return out
}

// redirects are the crawl's URLs that redirected, longest chains first.
func (d *reportData) redirects() []*pageRecord {
	var out []*pageRecord
	for _, p := range d.Pages {
		if len(p.Redirects) > 0 {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if len(out[i].Redirects) != len(out[j].Redirects) {
			return len(out[i].Redirects) > len(out[j].Redirects)
		}
		return out[i].URL < out[j].URL
	})
	return out
}

// blocked are the URLs robots.txt kept out of the crawl.
func (d *reportData) blocked() []*pageRecord {
	var out []*pageRecord
	for _, p := range d.Pages {
		if p.Blocked {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].URL < out[j].URL })
	return out
}
