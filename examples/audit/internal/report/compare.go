package report

import (
	"context"
	"database/sql"
	"fmt"
	"html/template"
	"io"
	"net/url"
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

// KindChange is one finding kind's count in the two crawls.
type KindChange struct {
	Kind, Category, Severity string
	Before, After            int // findings rows of the kind in crawl A and in crawl B
	Appeared, Fixed          int // its URLs found only in B, only in A
}

// Change says what happened to the kind: appeared, disappeared, changed (its count), or same.
func (k KindChange) Change() string {
	switch {
	case k.Before == 0 && k.After > 0:
		return "appeared"
	case k.After == 0 && k.Before > 0:
		return "disappeared"
	case k.Before != k.After:
		return "changed"
	}
	return "same"
}

// CompareRowsMax is the most entries comparison keeps of each list (new, removed, changed, appeared,
// fixed): the counts are of every one, the lists stop there, so that comparing two large crawls that
// differ everywhere stays in bounded memory. A variable only so that a test can lower it.
var CompareRowsMax = 2000

// diffList is the first CompareRowsMax entries of one list of differences, and how many there are.
type diffList struct {
	Entries []DiffEntry
	N       int
}

func (l *diffList) add(e DiffEntry) {
	l.N++
	if len(l.Entries) < CompareRowsMax {
		l.Entries = append(l.Entries, e)
	}
}

// comparison is everything that differs between crawl A (before) and crawl B (after).
type comparison struct {
	A, B             *store.CrawlRow
	PagesA, PagesB   int
	New, Removed     []DiffEntry // the first CompareRowsMax of each, by URL
	Changed          []DiffEntry // status, title, description, canonical, indexability
	Appeared, Fixed  []DiffEntry // What = finding kind
	AppearedByKind   map[string]int
	FixedByKind      map[string]int
	FindingsA, FindB int
	// Kinds are the finding kinds either crawl has, in the report's order, with their counts.
	Kinds []KindChange
	// NNew... count every entry of the lists, also those past CompareRowsMax.
	NNew, NRemoved, NChanged, NAppeared, NFixed int
}

// CompareCrawls reads crawls a (older) and b (newer) from db and lists what changed between them: URLs
// new and gone, fields changed on pages both crawls fetched, findings that appeared and were fixed, and
// the finding kinds that appeared, disappeared or changed count. It streams: one join of the two crawls'
// pages by URL, one ordered merge of each kind's findings, counters and capped lists only.
func CompareCrawls(ctx context.Context, db *sql.DB, a, b *store.CrawlRow) (*comparison, error) {
	cols, err := readColumns(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("read the schema: %w", err)
	}
	c := &comparison{A: a, B: b, AppearedByKind: map[string]int{}, FixedByKind: map[string]int{}}
	var newL, removedL, changedL, appearedL, fixedL diffList
	da, db2 := newPageDest(), newPageDest()
	var inB bool
	ptrs := append(append(da.ptrs(), &inB), db2.ptrs()...)
	err = eachRow(ctx, db, `SELECT `+cols.pageColumns("a")+`, b.url IS NOT NULL, `+cols.pageColumns("b")+` FROM pages a
		LEFT JOIN pages b ON b.crawl_id = ?2 AND b.url = a.url WHERE a.crawl_id = ?1 ORDER BY a.url`, []any{a.ID, b.ID},
		func(scan func(...any) error) error {
			if err := scan(ptrs...); err != nil {
				return err
			}
			c.PagesA++
			pa := da.finish().PageRecord
			old := stateOf(pa)
			if !inB {
				removedL.add(DiffEntry{What: "removed", URL: pa.URL, Before: old.Status})
				return nil
			}
			c.PagesB++
			s := stateOf(db2.finish().PageRecord)
			u := pa.URL
			if old.Status != s.Status {
				changedL.add(DiffEntry{"status", u, old.Status, s.Status})
			}
			// Fields compare only where the URL was a page both times: a URL that now redirects has its
			// status change, not a "new title" borrowed from the page it redirects to.
			if old.Content && s.Content {
				if old.Title != s.Title {
					changedL.add(DiffEntry{"title", u, old.Title, s.Title})
				}
				if old.Desc != s.Desc {
					changedL.add(DiffEntry{"description", u, old.Desc, s.Desc})
				}
				if store.NormalizeOrSelf(old.Canon) != store.NormalizeOrSelf(s.Canon) {
					changedL.add(DiffEntry{"canonical", u, old.Canon, s.Canon})
				}
				if old.Index != s.Index {
					changedL.add(DiffEntry{"indexability", u, old.Index, s.Index})
				}
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("compare pages: %w", err)
	}
	dn := newPageDest()
	err = eachRow(ctx, db, `SELECT `+cols.pageColumns("b")+` FROM pages b WHERE b.crawl_id = ?2
		AND NOT EXISTS (SELECT 1 FROM pages a WHERE a.crawl_id = ?1 AND a.url = b.url) ORDER BY b.url`, []any{a.ID, b.ID},
		func(scan func(...any) error) error {
			if err := scan(dn.ptrs()...); err != nil {
				return err
			}
			c.PagesB++
			p := dn.finish().PageRecord
			newL.add(DiffEntry{What: "new", URL: p.URL, After: statusText(p)})
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("compare pages: %w", err)
	}

	// Findings compare by (kind, URL): the detail of a finding that stays (a broken link now linked from
	// one more page) is not a new finding. Each kind's rows of both crawls are read in URL order and merged.
	before, after := map[string]int{}, map[string]int{}
	err = eachRow(ctx, db, `SELECT kind, crawl_id, COUNT(*) FROM findings WHERE crawl_id IN (?1, ?2) GROUP BY kind, crawl_id`,
		[]any{a.ID, b.ID}, func(scan func(...any) error) error {
			var kind string
			var id int64
			var n int
			if err := scan(&kind, &id, &n); err != nil {
				return err
			}
			if id == a.ID {
				before[kind] = n
			} else {
				after[kind] = n
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("compare findings: %w", err)
	}
	all := map[string]int{}
	for k, n := range before {
		all[k] += n
		c.FindingsA += n
	}
	for k, n := range after {
		all[k] += n
		c.FindB += n
	}
	for _, kind := range sortedKinds(all) {
		info := findings.InfoOf(kind)
		kc := KindChange{Kind: kind, Category: info.Category, Severity: info.Severity.String(), Before: before[kind], After: after[kind]}
		var cur, detA, detB string
		var seenA, seenB, started bool
		emit := func() {
			switch {
			case !started:
			case seenB && !seenA:
				kc.Appeared++
				appearedL.add(DiffEntry{What: kind, URL: cur, After: detB})
			case seenA && !seenB:
				kc.Fixed++
				fixedL.add(DiffEntry{What: kind, URL: cur, Before: detA})
			}
		}
		err := eachRow(ctx, db, `SELECT url, crawl_id, detail FROM findings WHERE crawl_id IN (?1, ?2) AND kind = ?3 ORDER BY url, id`,
			[]any{a.ID, b.ID, kind}, func(scan func(...any) error) error {
				var u, det string
				var id int64
				if err := scan(&u, &id, &det); err != nil {
					return err
				}
				if !started || u != cur {
					emit()
					cur, seenA, seenB, started = u, false, false, true
				}
				if id == a.ID && !seenA {
					seenA, detA = true, det
				} else if id == b.ID && !seenB {
					seenB, detB = true, det
				}
				return nil
			})
		if err != nil {
			return nil, fmt.Errorf("compare findings of %s: %w", kind, err)
		}
		emit()
		if kc.Appeared > 0 {
			c.AppearedByKind[kind] = kc.Appeared
		}
		if kc.Fixed > 0 {
			c.FixedByKind[kind] = kc.Fixed
		}
		c.Kinds = append(c.Kinds, kc)
	}
	c.New, c.NNew = newL.Entries, newL.N
	c.Removed, c.NRemoved = removedL.Entries, removedL.N
	c.Changed, c.NChanged = changedL.Entries, changedL.N
	c.Appeared, c.NAppeared = appearedL.Entries, appearedL.N
	c.Fixed, c.NFixed = fixedL.Entries, fixedL.N
	return c, nil
}

// KindChanges are the kinds that appeared, disappeared or changed count, in the report's order.
func (c *comparison) KindChanges() []KindChange {
	var out []KindChange
	for _, k := range c.Kinds {
		if k.Change() != "same" {
			out = append(out, k)
		}
	}
	return out
}

// kindTally is "2 appeared, 1 disappeared, 3 changed count".
func (c *comparison) kindTally() string {
	n := map[string]int{}
	for _, k := range c.Kinds {
		n[k.Change()]++
	}
	return fmt.Sprintf("%d appeared, %d disappeared, %d changed count", n["appeared"], n["disappeared"], n["changed"])
}

// differences is how many things changed.
func (c *comparison) differences() int {
	return c.NNew + c.NRemoved + c.NChanged + c.NAppeared + c.NFixed + len(c.KindChanges())
}

// ByKind is "broken_link -1, redirect +1": findings that appeared (+) and were fixed (-) per kind.
func (c *comparison) ByKind() []string {
	var out []string
	for _, k := range c.Kinds {
		var parts []string
		if k.Appeared > 0 {
			parts = append(parts, fmt.Sprintf("+%d", k.Appeared))
		}
		if k.Fixed > 0 {
			parts = append(parts, fmt.Sprintf("-%d", k.Fixed))
		}
		if len(parts) > 0 {
			out = append(out, k.Kind+" "+strings.Join(parts, " "))
		}
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

// PrintText writes the comparison as terminal tables: the kinds that appeared, disappeared or changed
// count, then every difference kept (CompareRowsMax per list; a line says how many more there are).
func (c *comparison) PrintText(w io.Writer) {
	sh := newShortener(c.B.StartURL)
	fmt.Fprintf(w, "Comparing %s with %s of %s\n", crawlLabel(c.A), crawlLabel(c.B), siteName(c.B.StartURL))
	fmt.Fprintf(w, "URLs %d -> %d, findings %d -> %d: %d new, %d removed, %d changed, %d findings appeared, %d fixed.\n",
		c.PagesA, c.PagesB, c.FindingsA, c.FindB, c.NNew, c.NRemoved, c.NChanged, c.NAppeared, c.NFixed)
	if bk := c.ByKind(); len(bk) > 0 {
		fmt.Fprintf(w, "Findings by kind: %s.\n", strings.Join(bk, ", "))
	}
	if c.differences() == 0 {
		fmt.Fprintln(w, "No differences.")
		return
	}
	if kc := c.KindChanges(); len(kc) > 0 {
		fmt.Fprintf(w, "Kinds: %s.\n", c.kindTally())
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "\nKIND\tCATEGORY\tSEVERITY\tBEFORE\tAFTER\tCHANGE")
		for _, k := range kc {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", k.Kind, k.Category, k.Severity, k.Before, k.After, k.Change())
		}
		tw.Flush()
	}
	if c.NNew+c.NRemoved+c.NChanged+c.NAppeared+c.NFixed == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nCHANGE\tURL\tBEFORE\tAFTER")
	more := func(shown []DiffEntry, n int, what string) {
		if n > len(shown) {
			fmt.Fprintf(tw, "… %d more %s\t\t\t\n", n-len(shown), what)
		}
	}
	for _, e := range c.New {
		fmt.Fprintf(tw, "new URL\t%s\t-\t%s\n", cmdline.Safe(sh.short(e.URL)), textCell(sh.all(e.After)))
	}
	more(c.New, c.NNew, "new URLs")
	for _, e := range c.Removed {
		fmt.Fprintf(tw, "removed URL\t%s\t%s\t-\n", cmdline.Safe(sh.short(e.URL)), textCell(sh.all(e.Before)))
	}
	more(c.Removed, c.NRemoved, "removed URLs")
	for _, e := range c.Changed {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.What, cmdline.Safe(sh.short(e.URL)), textCell(sh.all(e.Before)), textCell(sh.all(e.After)))
	}
	more(c.Changed, c.NChanged, "changes")
	for _, e := range c.Appeared {
		fmt.Fprintf(tw, "+ %s\t%s\t-\t%s\n", e.What, cmdline.Safe(sh.short(e.URL)), textCell(sh.all(e.After)))
	}
	more(c.Appeared, c.NAppeared, "findings that appeared")
	for _, e := range c.Fixed {
		fmt.Fprintf(tw, "- %s\t%s\t%s\t-\n", e.What, cmdline.Safe(sh.short(e.URL)), textCell(sh.all(e.Before)))
	}
	more(c.Fixed, c.NFixed, "findings fixed")
	tw.Flush()
}

// compareView is what the comparison template renders.
type compareView struct {
	A, B      *store.CrawlRow
	Site      string
	Tiles     []tile
	ByKind    string
	KindTally string
	Kinds     htmlTable
	New       htmlTable
	Removed   htmlTable
	Changed   htmlTable
	Appeared  htmlTable
	Fixed     htmlTable
}

var _ = template.Must(pageTemplate.New("comparebody").Parse(`<header class="top"><div class="in">
<h1>Crawl Cove: what changed on {{.Site}}</h1>
<p>Crawl {{.A.ID}} of <a href="{{.A.StartURL}}" rel="noreferrer">{{.A.StartURL}}</a> ({{.A.Started.UTC.Format "2006-01-02 15:04 UTC"}}, <span class="badge {{.A.Outcome}}">{{.A.Outcome}}</span>)
→ crawl {{.B.ID}} of <a href="{{.B.StartURL}}" rel="noreferrer">{{.B.StartURL}}</a> ({{.B.Started.UTC.Format "2006-01-02 15:04 UTC"}}, <span class="badge {{.B.Outcome}}">{{.B.Outcome}}</span>)</p>
<nav class="toc"><a href="#kinds">Finding kinds</a><a href="#new">New URLs</a><a href="#removed">Removed URLs</a><a href="#changed">Changed</a><a href="#appeared">Findings that appeared</a><a href="#fixed">Findings fixed</a></nav>
</div></header>
<main id="compare">
<section id="compare-summary"><div class="tiles">{{range .Tiles}}<div class="tile {{.Class}}" data-tile="{{.Label}}"><span class="n">{{.N}}</span><span class="l">{{.Label}}</span></div>{{end}}</div>
{{if .ByKind}}<p class="note" id="by-kind">Findings by kind: {{.ByKind}}.</p>{{end}}</section>
<section id="kinds"><h2>Finding kinds</h2><p class="note">Kinds: {{.KindTally}}.</p>{{template "table" .Kinds}}</section>
<section id="new"><h2>New URLs</h2>{{template "table" .New}}</section>
<section id="removed"><h2>Removed URLs</h2>{{template "table" .Removed}}</section>
<section id="changed"><h2>Changed</h2><p class="note">Status as the URL itself answered; title, description, canonical and indexability where it was a page both times.</p>{{template "table" .Changed}}</section>
<section id="appeared"><h2>Findings that appeared</h2>{{template "table" .Appeared}}</section>
<section id="fixed"><h2>Findings fixed</h2>{{template "table" .Fixed}}</section>
</main>`))

func (c *comparison) view() *compareView {
	sh := newShortener(c.B.StartURL)
	v := &compareView{A: c.A, B: c.B, Site: siteName(c.B.StartURL), ByKind: strings.Join(c.ByKind(), ", "), KindTally: c.kindTally()}
	v.Tiles = []tile{
		{Thousands(c.NNew), "new URLs", ""},
		{Thousands(c.NRemoved), "removed URLs", ""},
		{Thousands(c.NChanged), "changes", ""},
		{Thousands(c.NAppeared), "findings appeared", "error"},
		{Thousands(c.NFixed), "findings fixed", "notice"},
	}
	b := newBudget()
	kc := c.KindChanges()
	v.Kinds = b.table("kinds-table", cols("Severity", "Kind", "Category", "#Before", "#After", "Change"), len(kc), len(kc), func(i int) row {
		k := kc[i]
		return row{{Text: k.Severity, Badge: k.Severity}, {Text: k.Kind}, {Text: k.Category}, num(k.Before), num(k.After), {Text: k.Change()}}
	}, "No kind appeared, disappeared or changed count.")
	v.New = b.table("new-table", cols("URL", "Status"), c.NNew, len(c.New), func(i int) row {
		return row{sh.urlCell(c.New[i].URL), {Text: sh.all(c.New[i].After)}}
	}, "No new URLs.")
	v.Removed = b.table("removed-table", cols("URL", "Status before"), c.NRemoved, len(c.Removed), func(i int) row {
		return row{sh.urlCell(c.Removed[i].URL), {Text: sh.all(c.Removed[i].Before)}}
	}, "No URL of the earlier crawl is missing.")
	v.Changed = b.table("changed-table", cols("URL", "Change", "Before", "After"), c.NChanged, len(c.Changed), func(i int) row {
		e := c.Changed[i]
		return row{sh.urlCell(e.URL), {Text: e.What}, {Text: sh.all(e.Before), Class: "detail change-gone"}, {Text: sh.all(e.After), Class: "detail change-new"}}
	}, "No status, title, description, canonical or indexability changed.")
	finding := func(id string, es []DiffEntry, n int, after bool, empty string) htmlTable {
		return b.table(id, cols("Severity", "Kind", "URL", "Detail"), n, len(es), func(i int) row {
			e := es[i]
			d := e.Before
			if after {
				d = e.After
			}
			sev := findings.InfoOf(e.What).Severity.String()
			return row{{Text: sev, Badge: sev}, {Text: e.What}, sh.urlCell(e.URL), {Text: sh.all(d), Class: "detail"}}
		}, empty)
	}
	v.Appeared = finding("appeared-table", c.Appeared, c.NAppeared, true, "No new findings.")
	v.Fixed = finding("fixed-table", c.Fixed, c.NFixed, false, "No finding of the earlier crawl is gone.")
	return v
}

// WriteHTML writes the comparison as a self-contained page in the report's style.
func (c *comparison) WriteHTML(w io.Writer, now time.Time) error {
	p := newPage(fmt.Sprintf("Crawl Cove: crawl %d → %d of %s", c.A.ID, c.B.ID, siteName(c.B.StartURL)), now)
	for _, part := range []struct {
		name string
		v    any
	}{{"head", p}, {"comparebody", c.view()}, {"foot", p}} {
		if err := pageTemplate.ExecuteTemplate(w, part.name, part.v); err != nil {
			return err
		}
	}
	return nil
}
