package report

import (
	"context"
	"database/sql"
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

// reportData is one crawl read back from the database, with the figures every output shares.
type reportData struct {
	Crawl     *store.CrawlRow
	Pages     []*store.PageRecord
	byURL     map[string]*store.PageRecord
	Findings  []store.FindingRecord
	Inlinks   map[string]store.Inlinks
	Sitemaps  []store.SitemapRecord
	Listed    []listedURL // distinct sitemap URLs, first listing kept
	Requests  []store.RequestRecord
	Generated time.Time
}

// listedURL is a URL a sitemap lists, with the first sitemap that listed it.
type listedURL struct{ URL, Sitemap string }

// What loadReport reads besides the crawls row: the exports need neither the pages nor the links read
// into memory (they stream the tables), JSON needs the pages for its summary, HTML everything.
type ReportNeeds int

const (
	NeedCrawl   ReportNeeds = iota // csv
	NeedSummary                    // json
	NeedAll                        // html
)

// LoadReport reads crawl id (0 = the latest) of db, as much of it as need says.
func LoadReport(ctx context.Context, db *sql.DB, id int64, need ReportNeeds) (*reportData, error) {
	c, err := store.LoadCrawl(ctx, db, id)
	if err != nil || need == NeedCrawl {
		return &reportData{Crawl: c}, err
	}
	d := &reportData{Crawl: c}
	if d.Pages, err = store.LoadFullPages(ctx, db, c.ID); err != nil {
		return nil, fmt.Errorf("read pages: %w", err)
	}
	d.byURL = make(map[string]*store.PageRecord, len(d.Pages))
	for _, p := range d.Pages {
		d.byURL[p.URL] = p
	}
	if d.Findings, err = store.LoadFindings(ctx, db, c.ID); err != nil {
		return nil, fmt.Errorf("read findings: %w", err)
	}
	if need == NeedAll {
		if d.Inlinks, err = store.LoadInlinks(ctx, db, c.ID); err != nil {
			return nil, fmt.Errorf("read links: %w", err)
		}
	}
	st := store.ForCrawl(db, c.ID)
	if d.Sitemaps, err = st.LoadSitemaps(ctx); err != nil {
		return nil, fmt.Errorf("read sitemaps: %w", err)
	}
	smURLs, err := st.LoadSitemapURLsInOrder(ctx)
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
	if d.Requests, err = st.LoadRequests(ctx); err != nil {
		return nil, fmt.Errorf("read requests: %w", err)
	}
	return d, nil
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
	idxIndexable  = "indexable"
	idxNoindex    = "noindex"
	idxCanonical  = "canonicalised elsewhere"
	idxNon200     = "non-200"
	idxBlocked    = "blocked by robots.txt"
	idxNotCrawled = "not crawled"
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

func (d *reportData) sitemapClass(u string) string {
	p, ok := d.byURL[u]
	switch {
	case !ok:
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
	Severity string `json:"severity"`
	N        int    `json:"n"`
}

// Summary holds every figure the charts show; the JSON export carries it as is.
type Summary struct {
	Pages        int         `json:"pages"`                // page rows: fetched plus blocked
	Fetched      int         `json:"fetched"`              // pages answered at all
	Blocked      int         `json:"blocked"`              // pages robots.txt kept the crawl from
	Errors       int         `json:"errors"`               // answered 4xx/5xx or not at all itself (a redirect is 3xx, as in Status)
	Status       []Count     `json:"status_classes"`       // pages by status class (2xx, 3xx...)
	Depth        []Count     `json:"depth"`                // pages by clicks from the start page
	Response     []Count     `json:"response_time"`        // pages by server response time bucket
	ResponseP50  float64     `json:"response_ms_median"`   // the median server response time, in ms
	ResponseP90  float64     `json:"response_ms_p90"`      // the 90th percentile
	Kinds        []kindCount `json:"findings_by_kind"`     // findings by kind, with the kind's severity
	Severity     []Count     `json:"findings_by_severity"` // findings by severity
	SitemapTotal int         `json:"sitemap_listed"`       // distinct URLs the sitemaps list
	Sitemap      []Count     `json:"sitemap_coverage"`     // how the listed URLs fared in the crawl
	Index        []Count     `json:"indexability"`         // pages by indexability
	Attempts     int         `json:"page_requests"`        // requests sent for pages: hops and retries included
	Retries      int         `json:"retries"`              // page requests repeated after a 429, 5xx or network error
}

func countsOf(labels []string, m map[string]int) []Count {
	out := make([]Count, 0, len(labels))
	for _, l := range labels {
		out = append(out, Count{l, m[l]})
	}
	return out
}

// summarize computes every chart's figures.
func (d *reportData) summarize() Summary {
	var s Summary
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
			s.Depth = append(s.Depth, Count{fmt.Sprint(i), depth[i]})
		}
	}
	for i, b := range responseBuckets {
		s.Response = append(s.Response, Count{b.Label, resp[i]})
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
		sev[findings.InfoOf(f.Kind).Severity.String()]++
	}
	for _, k := range sortedKinds(kinds) {
		s.Kinds = append(s.Kinds, kindCount{k, findings.InfoOf(k).Severity.String(), kinds[k]})
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
		ri, rj := findings.KindRank(ks[i]), findings.KindRank(ks[j])
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
func (d *reportData) redirects() []*store.PageRecord {
	var out []*store.PageRecord
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
func (d *reportData) blocked() []*store.PageRecord {
	var out []*store.PageRecord
	for _, p := range d.Pages {
		if p.Blocked {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].URL < out[j].URL })
	return out
}
