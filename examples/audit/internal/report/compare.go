package report

import (
	"context"
	"database/sql"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/politecrawl/polite/examples/internal/cmdline"
)

// siteKey is what makes two crawls "of the same site": the start host without a leading www. (the twin
// is part of the site) and its port; the scheme is ignored, so a move to https still compares.
func siteKey(start string) string {
	u, err := url.Parse(start)
	if err != nil {
		return start
	}
	return strings.TrimPrefix(strings.ToLower(u.Host), "www.")
}

// PickCrawls chooses the two crawls to compare from the ids given (none, one or two).
func PickCrawls(ctx context.Context, db *sql.DB, ids []int64) (a, b *store.CrawlRow, err error) {
	if len(ids) == 2 {
		if ids[0] == ids[1] {
			return nil, nil, store.Usagef("crawl %d cannot be compared with itself: give two different crawl ids (or one, to compare it with the crawl before it of the same site)", ids[0])
		}
		if a, err = store.LoadCrawl(ctx, db, ids[0]); err != nil {
			return nil, nil, err
		}
		if b, err = store.LoadCrawl(ctx, db, ids[1]); err != nil {
			return nil, nil, err
		}
		return a, b, nil
	}
	all, err := store.LoadCrawls(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	bi := len(all) - 1
	if len(ids) == 1 {
		bi = -1
		for i, c := range all {
			if c.ID == ids[0] {
				bi = i
			}
		}
		if bi < 0 {
			return nil, nil, fmt.Errorf("%w: crawl %d is not in the database", store.ErrBadCrawl, ids[0])
		}
	}
	if bi < 0 {
		return nil, nil, fmt.Errorf("%w: the database holds no crawl yet", store.ErrBadCrawl)
	}
	b = all[bi]
	for i := bi - 1; i >= 0; i-- {
		if siteKey(all[i].StartURL) == siteKey(b.StartURL) {
			return all[i], b, nil
		}
	}
	return nil, nil, fmt.Errorf("%w: crawl %d is the only crawl of %s in the database; give two crawl ids to compare",
		store.ErrBadCrawl, b.ID, siteKey(b.StartURL))
}

// pageState is what compare looks at for one URL of one crawl.
type pageState struct {
	Status  string
	Content bool // answered 200 itself and was read as HTML: the fields below compare
	Title   string
	Desc    string
	Canon   string
	Index   string
}

func stateOf(p *store.PageRecord) pageState {
	s := pageState{Status: statusText(p), Index: indexability(p)}
	if p.Parsed && ownStatus(p) == 200 {
		s.Content = true
		s.Title, s.Desc, s.Canon = strings.TrimSpace(p.Title), strings.TrimSpace(p.Description), strings.TrimSpace(p.Canonical)
	}
	return s
}

// DiffEntry is one difference: What changed for URL, from Before to After.
type DiffEntry struct {
	What   string // the field that changed (status, title...), "new", "removed", or a finding kind
	URL    string // the page it is about
	Before string // the value in the older crawl ("" when the URL is new)
	After  string // the value in the newer crawl ("" when the URL is gone)
}

// comparison is everything that differs between crawl A (before) and crawl B (after).
type comparison struct {
	A, B             *store.CrawlRow
	PagesA, PagesB   int
	New, Removed     []DiffEntry
	Changed          []DiffEntry // status, title, description, canonical, indexability
	Appeared, Fixed  []DiffEntry // What = finding kind
	AppearedByKind   map[string]int
	FixedByKind      map[string]int
	FindingsA, FindB int
}

// Change names, in the order the changed table lists them for one URL.
var changeOrder = []string{"status", "title", "description", "canonical", "indexability"}

// CompareCrawls reads crawls a (older) and b (newer) from db and lists what changed between them: URLs
// new and gone, fields changed on pages both crawls fetched, findings that appeared and were fixed. It
// reads only through store, so compare sees the same rows as the report.
func CompareCrawls(ctx context.Context, db *sql.DB, a, b *store.CrawlRow) (*comparison, error) {
	pa, err := store.LoadFullPages(ctx, db, a.ID)
	if err != nil {
		return nil, err
	}
	pb, err := store.LoadFullPages(ctx, db, b.ID)
	if err != nil {
		return nil, err
	}
	fa, err := store.LoadFindings(ctx, db, a.ID)
	if err != nil {
		return nil, err
	}
	fb, err := store.LoadFindings(ctx, db, b.ID)
	if err != nil {
		return nil, err
	}
	c := &comparison{A: a, B: b, PagesA: len(pa), PagesB: len(pb), FindingsA: len(fa), FindB: len(fb),
		AppearedByKind: map[string]int{}, FixedByKind: map[string]int{}}
	before := make(map[string]pageState, len(pa))
	for _, p := range pa {
		before[p.URL] = stateOf(p)
	}
	after := make(map[string]pageState, len(pb))
	for _, p := range pb {
		after[p.URL] = stateOf(p)
	}
	for _, p := range pb {
		s := after[p.URL]
		old, ok := before[p.URL]
		if !ok {
			c.New = append(c.New, DiffEntry{What: "new", URL: p.URL, After: s.Status})
			continue
		}
		if old.Status != s.Status {
			c.Changed = append(c.Changed, DiffEntry{"status", p.URL, old.Status, s.Status})
		}
		// Fields compare only where the URL was a page both times: a URL that now redirects has its
		// status change, not a "new title" borrowed from the page it redirects to.
		if old.Content && s.Content {
			if old.Title != s.Title {
				c.Changed = append(c.Changed, DiffEntry{"title", p.URL, old.Title, s.Title})
			}
			if old.Desc != s.Desc {
				c.Changed = append(c.Changed, DiffEntry{"description", p.URL, old.Desc, s.Desc})
			}
			if store.NormalizeOrSelf(old.Canon) != store.NormalizeOrSelf(s.Canon) {
				c.Changed = append(c.Changed, DiffEntry{"canonical", p.URL, old.Canon, s.Canon})
			}
			if old.Index != s.Index {
				c.Changed = append(c.Changed, DiffEntry{"indexability", p.URL, old.Index, s.Index})
			}
		}
	}
	for _, p := range pa {
		if _, ok := after[p.URL]; !ok {
			c.Removed = append(c.Removed, DiffEntry{What: "removed", URL: p.URL, Before: before[p.URL].Status})
		}
	}
	sortEntries(c.New, nil)
	sortEntries(c.Removed, nil)
	sortEntries(c.Changed, changeOrder)

	// Findings compare by (kind, URL): the detail of a finding that stays (a broken link now linked from
	// one more page) is not a new finding.
	key := func(f store.FindingRecord) [2]string { return [2]string{f.Kind, f.URL} }
	inA, inB := map[[2]string]string{}, map[[2]string]string{}
	for _, f := range fa {
		if _, ok := inA[key(f)]; !ok {
			inA[key(f)] = f.Detail
		}
	}
	for _, f := range fb {
		if _, ok := inB[key(f)]; !ok {
			inB[key(f)] = f.Detail
		}
	}
	for k, d := range inB {
		if _, ok := inA[k]; !ok {
			c.Appeared = append(c.Appeared, DiffEntry{What: k[0], URL: k[1], After: d})
			c.AppearedByKind[k[0]]++
		}
	}
	for k, d := range inA {
		if _, ok := inB[k]; !ok {
			c.Fixed = append(c.Fixed, DiffEntry{What: k[0], URL: k[1], Before: d})
			c.FixedByKind[k[0]]++
		}
	}
	sortFindingEntries(c.Appeared)
	sortFindingEntries(c.Fixed)
	return c, nil
}

func sortEntries(es []DiffEntry, order []string) {
	rank := map[string]int{}
	for i, w := range order {
		rank[w] = i
	}
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].URL != es[j].URL {
			return es[i].URL < es[j].URL
		}
		return rank[es[i].What] < rank[es[j].What]
	})
}

func sortFindingEntries(es []DiffEntry) {
	sort.Slice(es, func(i, j int) bool {
		ri, rj := findings.KindRank(es[i].What), findings.KindRank(es[j].What)
		if ri != rj {
			return ri < rj
		}
		if es[i].What != es[j].What {
			return es[i].What < es[j].What
		}
		return es[i].URL < es[j].URL
	})
}

// differences is how many things changed.
func (c *comparison) differences() int {
	return len(c.New) + len(c.Removed) + len(c.Changed) + len(c.Appeared) + len(c.Fixed)
}

// byKindLine is "broken_link -1, redirect +1": findings that appeared (+) and were fixed (-) per kind.
func (c *comparison) ByKind() []string {
	kinds := map[string]int{}
	for k := range c.AppearedByKind {
		kinds[k]++
	}
	for k := range c.FixedByKind {
		kinds[k]++
	}
	var out []string
	for _, k := range sortedKinds(kinds) {
		var parts []string
		if n := c.AppearedByKind[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("+%d", n))
		}
		if n := c.FixedByKind[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("-%d", n))
		}
		out = append(out, k+" "+strings.Join(parts, " "))
	}
	return out
}

func crawlLabel(c *store.CrawlRow) string {
	return fmt.Sprintf("crawl %d (%s, %s)", c.ID, c.Started.UTC().Format("2006-01-02 15:04"), c.Outcome)
}

// textCell cuts a value for the terminal table, where one row must stay one line.
func textCell(s string) string {
	s = cmdline.Safe(strings.Join(strings.Fields(s), " ")) // a site's text never drives the terminal
	if s == "" {
		return "-"
	}
	return TruncateRunes(s, 60)
}

// PrintText writes the comparison as a terminal table.
func (c *comparison) PrintText(w io.Writer) {
	sh := newShortener(c.B.StartURL)
	fmt.Fprintf(w, "Comparing %s with %s of %s\n", crawlLabel(c.A), crawlLabel(c.B), siteName(c.B.StartURL))
	fmt.Fprintf(w, "URLs %d -> %d, findings %d -> %d: %d new, %d removed, %d changed, %d findings appeared, %d fixed.\n",
		c.PagesA, c.PagesB, c.FindingsA, c.FindB, len(c.New), len(c.Removed), len(c.Changed), len(c.Appeared), len(c.Fixed))
	if bk := c.ByKind(); len(bk) > 0 {
		fmt.Fprintf(w, "Findings by kind: %s.\n", strings.Join(bk, ", "))
	}
	if c.differences() == 0 {
		fmt.Fprintln(w, "No differences.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nCHANGE\tURL\tBEFORE\tAFTER")
	for _, e := range c.New {
		fmt.Fprintf(tw, "new URL\t%s\t-\t%s\n", cmdline.Safe(sh.short(e.URL)), textCell(sh.all(e.After)))
	}
	for _, e := range c.Removed {
		fmt.Fprintf(tw, "removed URL\t%s\t%s\t-\n", cmdline.Safe(sh.short(e.URL)), textCell(sh.all(e.Before)))
	}
	for _, e := range c.Changed {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.What, cmdline.Safe(sh.short(e.URL)), textCell(sh.all(e.Before)), textCell(sh.all(e.After)))
	}
	for _, e := range c.Appeared {
		fmt.Fprintf(tw, "+ %s\t%s\t-\t%s\n", e.What, cmdline.Safe(sh.short(e.URL)), textCell(sh.all(e.After)))
	}
	for _, e := range c.Fixed {
		fmt.Fprintf(tw, "- %s\t%s\t%s\t-\n", e.What, cmdline.Safe(sh.short(e.URL)), textCell(sh.all(e.Before)))
	}
	tw.Flush()
}

// compareView is what the comparison template renders.
type compareView struct {
	A, B     *store.CrawlRow
	Site     string
	Tiles    []tile
	ByKind   string
	New      htmlTable
	Removed  htmlTable
	Changed  htmlTable
	Appeared htmlTable
	Fixed    htmlTable
}

var _ = template.Must(pageTemplate.New("comparebody").Parse(`<header class="top"><div class="in">
<h1>Crawl Cove: what changed on {{.Site}}</h1>
<p>Crawl {{.A.ID}} of <a href="{{.A.StartURL}}" rel="noreferrer">{{.A.StartURL}}</a> ({{.A.Started.UTC.Format "2006-01-02 15:04 UTC"}}, <span class="badge {{.A.Outcome}}">{{.A.Outcome}}</span>)
→ crawl {{.B.ID}} of <a href="{{.B.StartURL}}" rel="noreferrer">{{.B.StartURL}}</a> ({{.B.Started.UTC.Format "2006-01-02 15:04 UTC"}}, <span class="badge {{.B.Outcome}}">{{.B.Outcome}}</span>)</p>
<nav class="toc"><a href="#new">New URLs</a><a href="#removed">Removed URLs</a><a href="#changed">Changed</a><a href="#appeared">Findings that appeared</a><a href="#fixed">Findings fixed</a></nav>
</div></header>
<main id="compare">
<section id="compare-summary"><div class="tiles">{{range .Tiles}}<div class="tile {{.Class}}" data-tile="{{.Label}}"><span class="n">{{.N}}</span><span class="l">{{.Label}}</span></div>{{end}}</div>
{{if .ByKind}}<p class="note" id="by-kind">Findings by kind: {{.ByKind}}.</p>{{end}}</section>
<section id="new"><h2>New URLs</h2>{{template "table" .New}}</section>
<section id="removed"><h2>Removed URLs</h2>{{template "table" .Removed}}</section>
<section id="changed"><h2>Changed</h2><p class="note">Status as the URL itself answered; title, description, canonical and indexability where it was a page both times.</p>{{template "table" .Changed}}</section>
<section id="appeared"><h2>Findings that appeared</h2>{{template "table" .Appeared}}</section>
<section id="fixed"><h2>Findings fixed</h2>{{template "table" .Fixed}}</section>
</main>`))

func (c *comparison) view() *compareView {
	sh := newShortener(c.B.StartURL)
	v := &compareView{A: c.A, B: c.B, Site: siteName(c.B.StartURL), ByKind: strings.Join(c.ByKind(), ", ")}
	v.Tiles = []tile{
		{Thousands(len(c.New)), "new URLs", ""},
		{Thousands(len(c.Removed)), "removed URLs", ""},
		{Thousands(len(c.Changed)), "changes", ""},
		{Thousands(len(c.Appeared)), "findings appeared", "error"},
		{Thousands(len(c.Fixed)), "findings fixed", "notice"},
	}
	b := newBudget()
	v.New = b.table("new-table", cols("URL", "Status"), len(c.New), func(i int) row {
		return row{sh.urlCell(c.New[i].URL), {Text: sh.all(c.New[i].After)}}
	}, "No new URLs.")
	v.Removed = b.table("removed-table", cols("URL", "Status before"), len(c.Removed), func(i int) row {
		return row{sh.urlCell(c.Removed[i].URL), {Text: sh.all(c.Removed[i].Before)}}
	}, "No URL of the earlier crawl is missing.")
	v.Changed = b.table("changed-table", cols("URL", "Change", "Before", "After"), len(c.Changed), func(i int) row {
		e := c.Changed[i]
		return row{sh.urlCell(e.URL), {Text: e.What}, {Text: sh.all(e.Before), Class: "detail change-gone"}, {Text: sh.all(e.After), Class: "detail change-new"}}
	}, "No status, title, description, canonical or indexability changed.")
	finding := func(id string, es []DiffEntry, after bool, empty string) htmlTable {
		return b.table(id, cols("Severity", "Kind", "URL", "Detail"), len(es), func(i int) row {
			e := es[i]
			d := e.Before
			if after {
				d = e.After
			}
			sev := findings.InfoOf(e.What).Severity.String()
			return row{{Text: sev, Badge: sev}, {Text: e.What}, sh.urlCell(e.URL), {Text: sh.all(d), Class: "detail"}}
		}, empty)
	}
	v.Appeared = finding("appeared-table", c.Appeared, true, "No new findings.")
	v.Fixed = finding("fixed-table", c.Fixed, false, "No finding of the earlier crawl is gone.")
	return v
}

// WriteHTML writes the comparison as a self-contained page in the report's style.
func (c *comparison) WriteHTML(w io.Writer, now time.Time) error {
	p := newPage(fmt.Sprintf("Crawl Cove: crawl %d → %d of %s", c.A.ID, c.B.ID, siteName(c.B.StartURL)), now)
	p.Compare = c.view()
	return pageTemplate.Execute(w, p)
}
