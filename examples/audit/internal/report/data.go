package report

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/politecrawl/polite/frontier"
)

// reportData is one crawl of an open database, read section by section as the outputs are written:
// it holds the crawls row and what the file's schema has, never the crawl's rows. Every figure and table
// is a query over the logical tables and columns of store.Schema, streamed into counters or into lists
// capped by the report's limits, so memory stays flat in the number of pages.
type reportData struct {
	Crawl     *store.CrawlRow
	ctx       context.Context
	db        *sql.DB
	cols      columns
	Generated time.Time
	// inlinks are the inlinks of the much-linked URLs the report's tables showed so far (inlinksOf): such
	// a URL is in many kinds' lists (the home page in every page check's), and reading it costs in
	// proportion to its referrers, so it is read once. At most one URL per inlinksCacheMin links.
	inlinks map[string]store.Inlinks
	urlsMax int64 // the highest urls.id, read once (0: not yet)
}

// columns says which columns added by later versions the database has: a read-only open of a database
// written by an earlier version lacks them, and the report says so instead of failing.
type columns struct {
	LinkScore  bool   // pages.link_score
	LinksTable bool   // links is a table (not a view over another layout)
	ByTarget   string // how link_rows is read by to_id (store.ByTarget: no index while a crawl of the file writes)
}

// readColumns checks the pages table's columns.
func readColumns(ctx context.Context, db *sql.DB) (columns, error) {
	var c columns
	err := eachRow(ctx, db, `SELECT name FROM pragma_table_info('pages')`, nil, func(scan func(...any) error) error {
		var name string
		if err := scan(&name); err != nil {
			return err
		}
		if name == "link_score" {
			c.LinkScore = true
		}
		return nil
	})
	if err != nil {
		return c, err
	}
	if err = db.QueryRowContext(ctx, `SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'links'`).Scan(&c.LinksTable); err != nil {
		return c, err
	}
	c.ByTarget, err = store.ByTarget(ctx, db)
	return c, err
}

// ReportNeeds is kept for the callers that say what they write; the report now reads every section as it
// writes it, so all needs read the same: the crawls row and the schema.
type ReportNeeds int

// The outputs, for LoadReport.
const (
	NeedCrawl   ReportNeeds = iota // csv
	NeedSummary                    // json
	NeedAll                        // html
)

// LoadReport opens crawl id (0 = the latest) of db for the outputs. It reads the crawls row and the
// schema only; the sections are read while they are written, within ctx.
func LoadReport(ctx context.Context, db *sql.DB, id int64, _ ReportNeeds) (*reportData, error) {
	c, err := store.LoadCrawl(ctx, db, id)
	if err != nil {
		return &reportData{Crawl: c}, err
	}
	cols, err := readColumns(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("read the schema: %w", err)
	}
	return &reportData{Crawl: c, ctx: ctx, db: db, cols: cols}, nil
}

// eachRow runs query and hands each row to fn, one at a time: the database has one connection for
// readers, so fn must not query.
func eachRow(ctx context.Context, db *sql.DB, query string, args []any, fn func(scan func(...any) error) error) error {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

// pageRow is one pages row as the report reads it: the fields its figures and tables use, and the link
// score when the database has one.
type pageRow struct {
	*store.PageRecord
	Score sql.NullInt64
}

// pageColumns is the select list of a pageRow, from the pages table under alias a. Every column is
// COALESCEd, so a row missing from a LEFT JOIN scans as zero values.
func (c columns) pageColumns(a string) string {
	score := "NULL"
	if c.LinkScore {
		score = a + ".link_score"
	}
	return strings.NewReplacer("p.", a+".").Replace(`COALESCE(p.url,''), COALESCE(p.final_url,''), COALESCE(p.status,0), COALESCE(p.redirects,''),
		COALESCE(p.depth,0), COALESCE(p.found_on,''), COALESCE(p.source,''), COALESCE(p.response_ms,-1), COALESCE(p.attempts,0), (p.title IS NOT NULL),
		COALESCE(p.title,''), COALESCE(p.meta_description,''), COALESCE(p.canonical,''), COALESCE(p.meta_robots,''),
		COALESCE(p.x_robots_tag,''), COALESCE(p.blocked_by_robots,0), COALESCE(p.robots_rule,''), COALESCE(p.error,''),
		COALESCE(p.error_kind,''), `) + score
}

// pageDest is where scanPage puts one row's columns.
type pageDest struct {
	p         pageRow
	redirects string
	resp      float64
	blocked   int
}

func (d *pageDest) ptrs() []any {
	p := d.p.PageRecord
	return []any{&p.URL, &p.FinalURL, &p.Status, &d.redirects, &p.Depth, &p.FoundOn, &p.Source, &d.resp, &p.Attempts,
		&p.Parsed, &p.Title, &p.Description, &p.Canonical, &p.MetaRobots, &p.XRobots, &d.blocked, &p.RobotsRule, &p.Err,
		&p.ErrKind, &d.p.Score}
}

func newPageDest() *pageDest { return &pageDest{p: pageRow{PageRecord: &store.PageRecord{}}} }

// finish turns the scanned columns into the record.
func (d *pageDest) finish() pageRow {
	p := d.p.PageRecord
	p.Blocked = d.blocked == 1
	p.Response = time.Duration(-1)
	if d.resp >= 0 {
		p.Response = time.Duration(d.resp * float64(time.Millisecond))
	}
	p.Redirects = nil
	if d.redirects != "" {
		_ = json.Unmarshal([]byte(d.redirects), &p.Redirects)
	}
	return d.p
}

// eachPage streams the pages rows that where selects (a clause over alias p, with args), one record
// reused for every row: fn must copy what it keeps.
func (d *reportData) eachPage(where string, args []any, fn func(pageRow) error) error {
	dest := newPageDest()
	ptrs := dest.ptrs()
	return eachRow(d.ctx, d.db, `SELECT `+d.cols.pageColumns("p")+` FROM pages p `+where, args, func(scan func(...any) error) error {
		if err := scan(ptrs...); err != nil {
			return err
		}
		return fn(dest.finish())
	})
}

// pageList reads at most limit pages rows (copies) and how many where selects in all.
func (d *reportData) pageList(where, order string, limit int, args ...any) ([]pageRow, int, error) {
	var out []pageRow
	err := d.eachPage(where+" "+order+" LIMIT ?", append(append([]any{}, args...), limit), func(p pageRow) error {
		rec := *p.PageRecord
		out = append(out, pageRow{PageRecord: &rec, Score: p.Score})
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	var n int
	err = d.db.QueryRowContext(d.ctx, `SELECT COUNT(*) FROM pages p `+where, args...).Scan(&n)
	return out, n, err
}

// ownStatus is the status the URL itself answered: the first hop's for a redirect, 0 for none.
func ownStatus(p *store.PageRecord) int {
	if len(p.Redirects) > 0 {
		return p.Redirects[0].Status
	}
	return p.Status
}

// Status classes of the "pages by status class" chart, in its order. A URL that redirected is 3xx (what
// it answered itself), whatever its chain ended in; a URL robots.txt disallows was never requested.
const (
	classBlocked       = "blocked by robots.txt"
	classNoResponse    = "no response"
	classBotProtection = "bot protection"      // a challenge or block instead of the page: not an error of the site; shown when there is one
	classRefused       = "refuses the crawler" // 401/403 to robots.txt and the start page; shown when there is one
)

var statusClasses = []string{"2xx", "3xx", "4xx", "5xx", classNoResponse, classBlocked}

func statusClass(p *store.PageRecord) string {
	if p.Blocked {
		return classBlocked
	}
	if p.ErrKind == findings.ErrKindBotProtection && len(p.Redirects) == 0 {
		return classBotProtection
	}
	if p.ErrKind == findings.ErrKindRefused && len(p.Redirects) == 0 {
		return classRefused
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
	idxIndexable = "indexable"
	idxNoindex   = "noindex"
	idxCanonical = "canonicalised elsewhere"
	idxNon200    = "non-200"
	idxBlocked   = "blocked by robots.txt"
)

var indexClasses = []string{idxIndexable, idxNoindex, idxCanonical, idxNon200, idxBlocked}

func indexability(p *store.PageRecord) string {
	switch {
	case p.Blocked:
		return idxBlocked
	case ownStatus(p) != http.StatusOK:
		return idxNon200
	case findings.Noindex(p) != "":
		return idxNoindex
	case canonicalElsewhere(p):
		return idxCanonical
	}
	return idxIndexable
}

// canonicalElsewhere applies analyze's rule: a canonical naming another URL than the page's own.
func canonicalElsewhere(p *store.PageRecord) bool {
	c := strings.TrimSpace(p.Canonical)
	if !p.Parsed || c == "" {
		return false
	}
	self := p.FinalURL
	if self == "" {
		self = p.URL
	}
	return store.NormalizeOrSelf(c) != store.NormalizeOrSelf(self)
}

// Sitemap coverage classes: every distinct URL a sitemap lists is in exactly one.
const (
	smCrawled    = "crawled"
	smBlocked    = "blocked"
	smBroken     = "broken"
	smNotCrawled = "not crawled"
)

var sitemapClasses = []string{smCrawled, smBlocked, smBroken, smNotCrawled}

// sitemapClass is how a listed URL fared; p is nil when the crawl has no row for it.
func sitemapClass(p *store.PageRecord) string {
	switch {
	case p == nil:
		return smNotCrawled
	case p.Blocked:
		return smBlocked
	}
	if broken, _ := findings.IsBroken(p); broken {
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

// Count is one labelled figure of a chart.
type Count struct {
	Label string `json:"label"` // the bar's name: a status class, a depth, a time bucket
	N     int    `json:"n"`     // its figure
}

// kindCount is one finding kind's figure.
type kindCount struct {
	Kind     string `json:"kind"`
	Category string `json:"category"`
	Severity string `json:"severity"`
	N        int    `json:"n"`
}

// CategoryCount is one category's findings by severity.
type CategoryCount struct {
	Category string `json:"category"`
	Errors   int    `json:"errors"`
	Warnings int    `json:"warnings"`
	Notices  int    `json:"notices"`
	Kinds    int    `json:"kinds"` // kinds of the category found
}

// Total is the category's findings.
func (c CategoryCount) Total() int { return c.Errors + c.Warnings + c.Notices }

// Summary holds every figure the charts show; the JSON export carries it as is.
type Summary struct {
	Pages        int             `json:"pages"`                // page rows: fetched plus blocked
	Fetched      int             `json:"fetched"`              // pages answered at all
	Blocked      int             `json:"blocked"`              // pages robots.txt kept the crawl from
	Errors       int             `json:"errors"`               // answered 4xx/5xx or not at all itself (a redirect is 3xx, as in Status)
	Status       []Count         `json:"status_classes"`       // pages by status class (2xx, 3xx...)
	Depth        []Count         `json:"depth"`                // pages by clicks from the start page
	Response     []Count         `json:"response_time"`        // pages by server response time bucket
	ResponseP50  float64         `json:"response_ms_median"`   // the median server response time, in ms
	ResponseP90  float64         `json:"response_ms_p90"`      // the 90th percentile
	Kinds        []kindCount     `json:"findings_by_kind"`     // findings by kind, with the kind's category and severity
	Severity     []Count         `json:"findings_by_severity"` // findings by severity
	Categories   []CategoryCount `json:"findings_by_category"` // findings by category (findings.Categories order), by severity
	SitemapTotal int             `json:"sitemap_listed"`       // distinct URLs the sitemaps list
	Sitemap      []Count         `json:"sitemap_coverage"`     // how the listed URLs fared in the crawl
	Index        []Count         `json:"indexability"`         // pages by indexability
	Attempts     int             `json:"page_requests"`        // requests sent for pages: hops and retries included
	Retries      int             `json:"retries"`              // page requests repeated after a 429, 5xx or network error
	LinkScore    bool            `json:"link_score"`           // the database has the link score (written since the checks issue)
}

func countsOf(labels []string, m map[string]int) []Count {
	out := make([]Count, 0, len(labels))
	for _, l := range labels {
		out = append(out, Count{l, m[l]})
	}
	return out
}

// summarize computes every chart's figures in one pass over the pages, one over the distinct sitemap
// URLs and a few aggregate queries: counters only.
func (d *reportData) summarize() (Summary, error) {
	s := Summary{LinkScore: d.cols.LinkScore}
	status, depth, index := map[string]int{}, map[int]int{}, map[string]int{}
	resp := make([]int, len(responseBuckets))
	maxDepth := 0
	var extraClasses []string
	err := d.eachPage(`WHERE p.crawl_id = ?`, []any{d.Crawl.ID}, func(r pageRow) error {
		p := r.PageRecord
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
		}
		return nil
	})
	if err != nil {
		return s, fmt.Errorf("read pages: %w", err)
	}
	sort.Strings(extraClasses)
	s.Status = countsOf(append(append([]string{}, statusClasses...), extraClasses...), status)
	if s.Pages > 0 {
		for i := 0; i <= maxDepth; i++ {
			s.Depth = append(s.Depth, Count{fmt.Sprint(i), depth[i]})
		}
	}
	timed := 0
	for i, b := range responseBuckets {
		s.Response = append(s.Response, Count{b.Label, resp[i]})
		timed += resp[i]
	}
	if timed > 0 {
		if s.ResponseP50, err = d.responseAt((timed - 1) / 2); err == nil {
			s.ResponseP90, err = d.responseAt((timed - 1) * 9 / 10)
		}
		if err != nil {
			return s, fmt.Errorf("read response times: %w", err)
		}
	}
	s.Index = countsOf(indexClasses, index)

	counts, err := store.FindingCounts(d.ctx, d.db, d.Crawl.ID)
	if err != nil {
		return s, fmt.Errorf("read findings: %w", err)
	}
	sev := map[string]int{}
	byCat := map[string]*CategoryCount{}
	for _, k := range sortedKinds(counts) {
		info := findings.InfoOf(k)
		n := counts[k]
		s.Kinds = append(s.Kinds, kindCount{k, info.Category, info.Severity.String(), n})
		sev[info.Severity.String()] += n
		c := byCat[info.Category]
		if c == nil {
			c = &CategoryCount{Category: info.Category}
			byCat[info.Category] = c
		}
		c.Kinds++
		switch info.Severity.String() {
		case "error":
			c.Errors += n
		case "warning":
			c.Warnings += n
		default:
			c.Notices += n
		}
	}
	s.Severity = countsOf([]string{"error", "warning", "notice"}, sev)
	for _, cat := range categoryOrder(byCat) {
		s.Categories = append(s.Categories, *byCat[cat])
	}

	cov := map[string]int{}
	err = d.eachListed(func(l listedURL, p *store.PageRecord) error {
		s.SitemapTotal++
		cov[sitemapClass(p)]++
		return nil
	})
	if err != nil {
		return s, fmt.Errorf("read sitemap URLs: %w", err)
	}
	s.Sitemap = countsOf(sitemapClasses, cov)
	return s, nil
}

// categoryOrder is findings.Categories, then any other category a kind names (none, a test of findings
// makes sure), each only when present in m.
func categoryOrder[T any](m map[string]T) []string {
	var out []string
	known := map[string]bool{}
	for _, c := range findings.Categories {
		known[c] = true
		if _, ok := m[c]; ok {
			out = append(out, c)
		}
	}
	var rest []string
	for c := range m {
		if !known[c] {
			rest = append(rest, c)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// responseAt is the i-th smallest server response time in ms of the pages the response chart counts.
func (d *reportData) responseAt(i int) (float64, error) {
	var ms float64
	err := d.db.QueryRowContext(d.ctx, `SELECT response_ms FROM pages WHERE crawl_id = ? AND blocked_by_robots = 0
		AND response_ms IS NOT NULL AND response_ms >= 0 AND COALESCE(status,0) != 0 ORDER BY response_ms LIMIT 1 OFFSET ?`,
		d.Crawl.ID, i).Scan(&ms)
	return float64(time.Duration(ms*float64(time.Millisecond)).Microseconds()) / 1000, err
}

// listedURL is a URL a sitemap lists, with the first sitemap that listed it.
type listedURL struct{ URL, Sitemap string }

// eachListed streams the distinct URLs the sitemaps list, in the order of their first listing, with
// the page row of the URL (nil when the crawl has none).
func (d *reportData) eachListed(fn func(listedURL, *store.PageRecord) error) error {
	dest := newPageDest()
	var l listedURL
	var has bool
	ptrs := append([]any{&l.URL, &l.Sitemap, &has}, dest.ptrs()...)
	q := `SELECT su.url, su.sitemap, p.url IS NOT NULL, ` + d.cols.pageColumns("p") + ` FROM sitemap_urls su
		LEFT JOIN pages p ON p.crawl_id = ?1 AND p.url = su.url WHERE ` + firstListing + ` ORDER BY su.rowid`
	return eachRow(d.ctx, d.db, q, []any{d.Crawl.ID}, func(scan func(...any) error) error {
		if err := scan(ptrs...); err != nil {
			return err
		}
		if !has {
			return fn(l, nil)
		}
		return fn(l, dest.finish().PageRecord)
	})
}

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
		ri, rj := findings.KindRank(ks[i]), findings.KindRank(ks[j])
		if ri != rj {
			return ri < rj
		}
		return ks[i] < ks[j]
	})
	return ks
}

// inlinked is a link target with the distinct pages linking to it.
type inlinked struct {
	URL string
	N   int
}

// topInlinks is the n internal URLs with the most distinct pages linking to them (links to themselves
// left out), by SQL's grouping: no map of every target in memory. Over a links table, one scan of the
// table into SQLite's sorter is 2-3 times faster than walking the (crawl_id, to_url) index, which reads
// the table's row of every link in the index's order (measured at 20,000 pages). On the interned layout,
// one reading of the crawl's entries of link_rows_to (to_id, crawl_id, then the key's from_id), which
// hold every column the count needs, grouped as read: no sort, no link row read, except the first of
// each target, whose flag says whether the target is external (a target's links are all external or all
// internal: external is whether the crawl's scope holds the URL); each counted target's URL is looked up
// once.
func (d *reportData) topInlinks(n int) ([]inlinked, error) {
	var out []inlinked
	q := `SELECT u.url, r.n FROM (SELECT to_id, COUNT(DISTINCT from_id) AS n FROM link_rows INDEXED BY link_rows_to
		WHERE crawl_id = ?1 AND from_id <> to_id GROUP BY to_id) r JOIN urls u ON u.id = r.to_id
		WHERE (SELECT flags & 1 FROM link_rows INDEXED BY link_rows_to WHERE to_id = r.to_id AND crawl_id = ?1 LIMIT 1) = 0
		ORDER BY r.n DESC, u.url LIMIT ?2`
	q = d.byTarget(q)
	if d.cols.LinksTable {
		q = `SELECT to_url, COUNT(DISTINCT from_url) AS n FROM links NOT INDEXED
		WHERE crawl_id = ?1 AND external = 0 AND from_url <> to_url GROUP BY to_url ORDER BY n DESC, to_url LIMIT ?2`
	}
	err := eachRow(d.ctx, d.db, q,
		[]any{d.Crawl.ID, n}, func(scan func(...any) error) error {
			var in inlinked
			if err := scan(&in.URL, &in.N); err != nil {
				return err
			}
			out = append(out, in)
			return nil
		})
	return out, err
}

// inlinksShown is how many referrers the report names next to a URL; the links table has them all.
const inlinksShown = 3

// inlinksCacheMin is the referrers from which a URL's inlinks are kept for the rest of the report.
const inlinksCacheMin = 1000

// inlinksOf is how many distinct pages link to each of urls (itself left out) and the first few by URL,
// for the URLs one table shows. On the interned layout each URL is read by its id, through
// link_rows_to (inlinksOfURL), a much-linked one once per report (d.inlinks).
func (d *reportData) inlinksOf(urls []string) (map[string]store.Inlinks, error) {
	if d.cols.LinksTable {
		return d.inlinksOfTable(urls)
	}
	if d.inlinks == nil {
		d.inlinks = map[string]store.Inlinks{}
	}
	out := make(map[string]store.Inlinks, len(urls))
	for _, u := range urls {
		in, ok := d.inlinks[u]
		if !ok {
			var err error
			if in, err = d.inlinksOfURL(u); err != nil {
				return nil, err
			}
			if in.N >= inlinksCacheMin {
				d.inlinks[u] = in
			}
		}
		if in.N > 0 {
			out[u] = in
		}
	}
	return out, nil
}

// The queries of inlinksOfURL, by the target's urls.id (?1) and the crawl (?2), all through link_rows_to
// (to_id, crawl_id, then the key's from_id, seq): the count reads the target's index entries only
// (grouped by from_id in the index's order), never the link rows.
const (
	inlinksCountQuery = `SELECT COUNT(*) FROM (SELECT from_id FROM link_rows INDEXED BY link_rows_to
		WHERE to_id = ?1 AND crawl_id = ?2 AND from_id <> ?1 GROUP BY from_id)`
	// inlinksFirstSorted names the first referrers by URL among all of them: for a target with few.
	inlinksFirstSorted = `SELECT f.url FROM urls f WHERE f.id IN (
		SELECT from_id FROM link_rows INDEXED BY link_rows_to WHERE to_id = ?1 AND crawl_id = ?2 AND from_id <> ?1
	) ORDER BY f.url LIMIT ?3`
	// inlinksFirstWalk walks the file's URLs in order and stops at the first ?3 that link to the target:
	// for a target most pages link to (the home page, a menu's), found after a few probes of the index
	// where sorting every referrer's URL would read them all.
	inlinksFirstWalk = `SELECT f.url FROM urls f INDEXED BY sqlite_autoindex_urls_1 WHERE f.id <> ?1 AND EXISTS (
		SELECT 1 FROM link_rows INDEXED BY link_rows_to WHERE to_id = ?1 AND crawl_id = ?2 AND from_id = f.id
	) ORDER BY f.url LIMIT ?3`
)

// inlinksWalkRatio decides how inlinksOfURL finds a URL's first referrers: by a walk of the URLs in order
// when its referrers are at least one in inlinksWalkRatio of the file's URLs (so the walk finds them
// within about inlinksShown × inlinksWalkRatio probes), else by sorting its referrers' URLs. A variable
// so that a test can take either way.
var inlinksWalkRatio int64 = 1000

// byTarget is q, written for a file with link_rows_to, as the file at hand reads it (cols.ByTarget): the
// index named while it exists, no INDEXED BY clause while a crawl of the file writes without it (naming a
// missing index is an error, where reading the crawl's links by the primary key is only slower).
func (d *reportData) byTarget(q string) string {
	return strings.ReplaceAll(q, "INDEXED BY link_rows_to", d.cols.ByTarget)
}

// inlinksOfURL reads one URL's inlinks.
func (d *reportData) inlinksOfURL(u string) (store.Inlinks, error) {
	var in store.Inlinks
	var id int64
	err := d.db.QueryRowContext(d.ctx, `SELECT id FROM urls WHERE url = ?`, u).Scan(&id)
	if err == sql.ErrNoRows {
		return in, nil
	}
	if err == nil {
		err = d.db.QueryRowContext(d.ctx, d.byTarget(inlinksCountQuery), id, d.Crawl.ID).Scan(&in.N)
	}
	if err == nil && in.N > 0 && d.urlsMax == 0 {
		err = d.db.QueryRowContext(d.ctx, `SELECT COALESCE(MAX(id), 0) FROM urls`).Scan(&d.urlsMax)
	}
	if err != nil || in.N == 0 {
		return in, err
	}
	q := inlinksFirstSorted
	if int64(in.N)*inlinksWalkRatio >= d.urlsMax {
		q = inlinksFirstWalk
	}
	q = d.byTarget(q)
	err = eachRow(d.ctx, d.db, q, []any{id, d.Crawl.ID, inlinksShown}, func(scan func(...any) error) error {
		var from string
		if err := scan(&from); err != nil {
			return err
		}
		in.First = append(in.First, from)
		return nil
	})
	return in, err
}

// inlinksOfTable is inlinksOf on a links table (a database of an earlier version, read-only): one
// query per batch of URLs, whose window functions keep only the first few referrers of each.
func (d *reportData) inlinksOfTable(urls []string) (map[string]store.Inlinks, error) {
	out := make(map[string]store.Inlinks, len(urls))
	err := inBatches(urls, func(list string, args []any) error {
		return eachRow(d.ctx, d.db, `SELECT to_url, from_url, n FROM (
			SELECT to_url, from_url, ROW_NUMBER() OVER (PARTITION BY to_url ORDER BY from_url) AS rn,
				COUNT(*) OVER (PARTITION BY to_url) AS n
			FROM (SELECT DISTINCT to_url, from_url FROM links WHERE crawl_id = ? AND to_url IN (`+list+`) AND from_url <> to_url))
			WHERE rn <= ? ORDER BY to_url, rn`, append(append([]any{d.Crawl.ID}, args...), inlinksShown),
			func(scan func(...any) error) error {
				var to, from string
				var n int
				if err := scan(&to, &from, &n); err != nil {
					return err
				}
				in := out[to]
				in.N = n
				in.First = append(in.First, from)
				out[to] = in
				return nil
			})
	})
	return out, err
}

// inBatches calls fn with an SQL list of placeholders and its arguments for each batch of urls
// (distinct), small enough for SQLite's limit on parameters.
func inBatches(urls []string, fn func(list string, args []any) error) error {
	const batch = 200
	seen := make(map[string]bool, len(urls))
	var args []any
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		err := fn(strings.TrimSuffix(strings.Repeat("?,", len(args)), ","), args)
		args = args[:0]
		return err
	}
	for _, u := range urls {
		if seen[u] {
			continue
		}
		seen[u] = true
		if args = append(args, u); len(args) == batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// pagesOf reads the pages rows of urls (those the crawl has), for the columns of a table that lists them.
func (d *reportData) pagesOf(urls []string) (map[string]pageRow, error) {
	out := make(map[string]pageRow, len(urls))
	err := inBatches(urls, func(list string, args []any) error {
		return d.eachPage(`WHERE p.crawl_id = ? AND p.url IN (`+list+`)`, append([]any{d.Crawl.ID}, args...), func(p pageRow) error {
			rec := *p.PageRecord
			out[rec.URL] = pageRow{PageRecord: &rec, Score: p.Score}
			return nil
		})
	})
	return out, err
}

// firstListing keeps, of the rows su of sitemap_urls, each distinct URL's first listing: found through
// the (crawl_id, url) index rather than a grouping of every listing.
const firstListing = `su.crawl_id = ?1 AND NOT EXISTS (SELECT 1 FROM sitemap_urls s2
	WHERE s2.crawl_id = ?1 AND s2.url = su.url AND s2.rowid < su.rowid)`

// orphans are the URLs a sitemap lists on the site that no crawled page links to (the start page
// excepted: it is where the crawl begins, linked or not): at most limit of them, and how many in all.
func (d *reportData) orphans(limit int) ([]listedURL, int, error) {
	scope, scopeErr := frontier.SameSite(d.Crawl.StartURL)
	var out []listedURL
	total := 0
	err := eachRow(d.ctx, d.db, `SELECT su.url, su.sitemap, COALESCE(p.depth, -1) FROM sitemap_urls su
		LEFT JOIN pages p ON p.crawl_id = ?1 AND p.url = su.url WHERE `+firstListing+`
		AND NOT EXISTS (SELECT 1 FROM links l WHERE l.crawl_id = ?1 AND l.to_url = su.url AND l.from_url <> l.to_url)
		ORDER BY su.rowid`,
		[]any{d.Crawl.ID}, func(scan func(...any) error) error {
			var l listedURL
			var depth int
			if err := scan(&l.URL, &l.Sitemap, &depth); err != nil {
				return err
			}
			if l.URL == d.Crawl.StartURL || depth == 0 {
				return nil
			}
			if scopeErr == nil {
				if u, perr := url.Parse(l.URL); perr != nil || !scope(u) {
					return nil // another site's URL in the sitemap: not this site's orphan
				}
			}
			total++
			if len(out) < limit {
				out = append(out, l)
			}
			return nil
		})
	return out, total, err
}
