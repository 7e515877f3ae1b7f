package findings

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/politecrawl/polite/examples/audit/internal/linkscore"
	"github.com/politecrawl/polite/examples/audit/internal/neardup"
	"github.com/politecrawl/polite/examples/audit/internal/store"
)

// Extra is what the passes need that has no row: the sitemap URLs the crawl left out and the URL whose
// 429 slowed the run. Only the crawl knows them.
type Extra struct {
	SlowedBy string // the URL whose 429 slowed the run ("" if none)
	// NotCrawled lists (sitemap, URL) pairs the page limit left out; OverHold counts sitemap entries past
	// SitemapHoldMax, the first of them being FirstOverHold.
	NotCrawled    [][2]string
	OverHold      int
	FirstOverHold string
}

// Summary is what the passes wrote, for the closing table: the count of each kind and its first finding.
type Summary struct {
	Counts   map[string]int
	Examples map[string]store.FindingRecord
	// Took is the time each pass took, by name ("prepare", "pages", "near-duplicates", "link score"...), and
	// "link score: load+rank" the part of the link score pass that builds and ranks the graph.
	Took map[string]time.Duration
	// Steps are Took's names in the order the steps ended ("link score: load+rank" before "link score").
	Steps []string
}

// Total is the number of findings written.
func (s Summary) Total() int {
	n := 0
	for _, c := range s.Counts {
		n += c
	}
	return n
}

// Add counts n findings of a kind written elsewhere (the pages' own, during the crawl), first being
// the first of them.
func (s Summary) Add(kind string, n int, first store.FindingRecord) {
	if _, ok := s.Examples[kind]; !ok {
		s.Examples[kind] = first
	}
	s.Counts[kind] += n
}

// took records that the step name, begun at start, is over.
func (s *Summary) took(name string, start time.Time) {
	s.Took[name] = time.Since(start)
	s.Steps = append(s.Steps, name)
}

// Run runs every pass over crawl st and replaces its post-crawl findings with theirs, in one transaction,
// and writes each page's link score. It runs the same after a finished crawl and after an interrupted one.
func Run(ctx context.Context, st *store.Store, x Extra) (Summary, error) {
	sum := Summary{Counts: map[string]int{}, Examples: map[string]store.FindingRecord{}, Took: map[string]time.Duration{}}
	// The rendered pass is a sample of bounded size (render.go); it is read before the passes'
	// transaction, which holds the database's one connection.
	rendered, err := st.LoadRendered(ctx)
	if err != nil {
		return sum, err
	}
	begun := time.Now()
	err = st.ReplaceFindings(ctx, func(p *store.Pass) error {
		sum.took("prepare", begun) // the documents and referrer counts, materialised once
		r := &run{p: p, sum: &sum}
		for _, pass := range []struct {
			name string
			run  func() error
		}{
			{"pages", r.pages}, {"documents", r.docs}, {"duplicates", r.duplicates}, {"near-duplicates", r.nearDuplicates},
			{"canonicals", r.canonicals}, {"hreflang", r.hreflang}, {"sitemaps", r.sitemaps}, {"external links", r.external},
			{"site", func() error { return r.site(x) }}, {"rendered", func() error { return r.render(rendered) }},
			{"link score", r.linkScore},
		} {
			start := time.Now()
			if err := pass.run(); err != nil {
				return fmt.Errorf("%s pass: %w", pass.name, err)
			}
			sum.took(pass.name, start)
		}
		return nil
	})
	return sum, err
}

// run is one Run: the transaction and the counts.
type run struct {
	p   *store.Pass
	sum *Summary
}

func (r *run) add(url, kind, format string, args ...any) error {
	f := store.FindingRecord{URL: url, Kind: kind, Detail: fmt.Sprintf(format, args...)}
	if _, ok := r.sum.Examples[kind]; !ok {
		r.sum.Examples[kind] = f
	}
	r.sum.Counts[kind]++
	return r.p.Emit(f)
}

// linkedFrom says how many pages link to URL u and names the first of them.
func (r *run) linkedFrom(u string, total int) (string, error) {
	if total == 0 {
		return "not linked from any crawled page", nil
	}
	var refs []string
	if err := r.p.Each(store.QueryReferrers, func(scan func(...any) error) error {
		var from string
		if err := scan(&from); err != nil {
			return err
		}
		refs = append(refs, from)
		return nil
	}, u); err != nil {
		return "", err
	}
	s := fmt.Sprintf("linked from %d page%s: %s", total, store.Plural(total), strings.Join(refs, ", "))
	if total > len(refs) {
		s += ", ..."
	}
	return s, nil
}

// pages is the pass over every page row: response codes, redirects, blocked URLs, and what the link
// graph says of each page (referrers, depth, orphans).
func (r *run) pages() error {
	wordpress := false
	return r.p.Each(store.QueryPages, func(scan func(...any) error) error {
		var refs int
		var inSitemap bool
		p, err := store.ScanPage(scan, &refs, &inSitemap)
		if err != nil {
			return err
		}
		if p.WordPress && !wordpress {
			wordpress = true
			if err := r.add(p.URL, KindWordPress, "looks like WordPress: %s", OrDash(p.WordPressHint)); err != nil {
				return err
			}
		}
		return r.page(p, refs, inSitemap)
	})
}

func (r *run) page(p *store.PageRecord, refs int, inSitemap bool) error {
	var err error
	add := func(kind, format string, args ...any) {
		if err == nil {
			err = r.add(p.URL, kind, format, args...)
		}
	}
	var from string // the referrers, read only for the pages whose findings name them
	linked := func() string {
		if from == "" && err == nil {
			from, err = r.linkedFrom(p.URL, refs)
		}
		return from
	}
	if p.Blocked {
		if refs > 0 {
			add(KindLinkToBlocked, "%s; %s", blockedReason(p), linked())
		}
		return err
	}
	switch p.ErrKind {
	case "too_many_redirects":
		add(KindTooManyRedirects, "%d hops, gave up: %s", len(p.Redirects), Chain(p))
	case "redirect_loop":
		add(KindRedirectLoop, "%s", Chain(p))
	case "disallowed_redirect":
		add(KindRedirectBlocked, "%s; %s (not requested)", Chain(p), p.Err)
	case "off_limits":
		// The host's robots.txt was unreachable or 5xx, a complete disallow. For a redirect hop that is a
		// blocked redirect; for the page's own host the crawl stopped there and said so.
		if len(p.Redirects) > 0 {
			add(KindRedirectBlocked, "%s; %s (not requested)", Chain(p), p.Err)
		}
	case "offsite_redirect":
		add(KindRedirectOffsite, "%s (other site, not requested)", Chain(p))
	case "bad_redirect":
		add(KindBadRedirect, "%s: %s", Chain(p), p.Err)
	default:
		switch {
		case len(p.Redirects) == 1:
			add(KindRedirect, "%s", Chain(p))
		case len(p.Redirects) > 1:
			add(KindRedirectChain, "%d hops: %s", len(p.Redirects), Chain(p))
		}
	}
	if p.ErrKind == ErrKindRefused {
		add(KindRefusesCrawler, "%s", p.Err)
	}
	if p.ErrKind == ErrKindBotProtection {
		add(KindBotProtection, "%s; HTTP %d; %s", p.Err, p.Status, linked())
	}
	broken, why := IsBroken(p)
	if broken {
		kind := KindBrokenLink
		if refs == 0 {
			kind = KindBrokenPage
		}
		add(kind, "%s; %s", why, linked())
	}
	if refs > 0 && len(p.Redirects) > 0 {
		add(KindLinkToRedirect, "%s; %s", Chain(p), linked())
	}
	if refs > 0 && p.Status == 0 && (p.ErrKind == "timeout" || p.ErrKind == "network" || p.ErrKind == "other" || (p.ErrKind == "" && p.Err != "")) {
		add(KindLinkNoResponse, "%s; %s", why, linked())
	}
	// What the link graph says of a page that answered 200 itself (a redirect's target is judged under its
	// own URL).
	if p.Status != http.StatusOK || len(p.Redirects) > 0 || broken {
		return err
	}
	if refs > 0 && p.Parsed && Noindex(p) != "" {
		add(KindNoindexLinked, "%s; %s", Noindex(p), linked())
	}
	// Reachability matters for the pages meant to be found: not the start page, not a page that defers to
	// another (canonical elsewhere) or asks not to be indexed.
	if p.Depth == 0 || p.Source == "start" || Noindex(p) != "" || (p.Parsed && store.CanonicalElsewhere(p.Canonical, p.URL)) {
		return err
	}
	switch {
	case refs == 0 && inSitemap:
		add(KindOrphan, "listed in a sitemap, not linked from any crawled page")
	case refs == 1:
		add(KindSingleInlink, "%s", linked())
	}
	if p.Depth > deepClicksMax {
		add(KindTooDeep, "%d clicks from the start page (more than %d)", p.Depth, deepClicksMax)
	}
	return err
}

// docs is the pass over the crawl's documents, once each under their own URL: titles, descriptions,
// headings, directives.
func (r *run) docs() error {
	return r.p.Each(store.QueryDocs, func(scan func(...any) error) error {
		var u string
		p, err := store.ScanPage(scan, &u)
		if err != nil {
			return err
		}
		return r.doc(u, p)
	})
}

func (r *run) doc(u string, p *store.PageRecord) error {
	var err error
	add := func(kind, format string, args ...any) {
		if err == nil {
			err = r.add(u, kind, format, args...)
		}
	}
	t := strings.TrimSpace(p.Title)
	switch {
	case p.TitleCount == 0:
		add(KindTitleMissing, "no <title> element")
	case t == "":
		add(KindTitleEmpty, "<title> is empty")
	default:
		if n := utf8.RuneCountInString(t); n > titleMax {
			add(KindTitleTooLong, "%d characters (over %d): %q", n, titleMax, t)
		}
	}
	if p.TitleCount > 1 {
		add(KindTitleMultiple, "%d <title> elements", p.TitleCount)
	}
	d := strings.TrimSpace(p.Description)
	switch {
	case p.DescriptionCount == 0:
		add(KindDescMissing, "no meta description")
	case d == "":
		add(KindDescMissing, "meta description is empty")
	}
	if p.DescriptionCount > 1 {
		add(KindDescMultiple, "%d meta descriptions", p.DescriptionCount)
	}
	switch {
	case p.H1Count == 0:
		add(KindH1Missing, "no <h1>")
	case p.H1Count > 1:
		add(KindH1Multiple, "%d <h1> elements", p.H1Count)
	}
	if src := Noindex(p); src != "" {
		add(KindNoindex, "%s", src)
	}
	if store.CanonicalElsewhere(p.Canonical, u) {
		add(KindCanonicalElsewhere, "canonical is %s", strings.TrimSpace(p.Canonical))
	}
	return err
}

// duplicates writes one finding per group of indexable documents sharing a title, a description, a first
// heading or their whole visible text, on the group's first URL with the members listed. A page that
// names another URL as canonical, or asks not to be indexed, is expected to share them with the page it
// defers to (?sort=price variants): it is left out.
func (r *run) duplicates() error {
	for _, d := range []struct {
		q          store.PassQuery
		kind, what string
		quote      bool
	}{
		{store.QueryDupTitles, KindTitleDuplicate, "title", true},
		{store.QueryDupDescriptions, KindDescDuplicate, "meta description", true},
		{store.QueryDupH1s, KindH1Duplicate, "first <h1>", true},
		{store.QueryDupText, KindExactDuplicate, "visible text", false},
	} {
		if err := r.p.Each(d.q, func(scan func(...any) error) error {
			var key, members string
			var size int
			if err := scan(&key, &size, &members); err != nil {
				return err
			}
			urls := strings.Split(members, "\n")
			what := d.what
			if d.quote {
				what += " " + quoteShort(key)
			}
			return r.add(urls[0], d.kind, "%s", groupDetail(size, what, urls))
		}); err != nil {
			return err
		}
	}
	return nil
}

// groupDetail is the detail of a duplicate group: its size, what its pages share, and its first members.
func groupDetail(size int, what string, urls []string) string {
	s := fmt.Sprintf("%d pages share the %s: %s", size, what, strings.Join(urls, ", "))
	if more := size - len(urls); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// quoteShort quotes a shared text for a detail, cut at 80 characters.
func quoteShort(s string) string {
	const max = 80
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max]) + "..."
	}
	return fmt.Sprintf("%q", s)
}

// nearDuplicates groups the indexable documents whose text is at least nearDupThreshold alike (one
// finding per group, exact copies counted once: they are exact duplicates already), and flags each one
// that is a near-copy of the site's real 404 page. Memory: the neardup index's 140 bytes a page (the
// fingerprints read streaming), nothing else per page.
func (r *run) nearDuplicates() error {
	type notFound struct {
		url string
		fp  neardup.Fingerprint
	}
	var refs []notFound // the site's real 404 pages, a few
	if err := r.p.Each(store.QueryNotFound, func(scan func(...any) error) error {
		var nf notFound
		var b []byte
		if err := scan(&nf.url, &b); err != nil {
			return err
		}
		if decodeFingerprint(b, &nf.fp) {
			refs = append(refs, nf)
		}
		return nil
	}, notFoundRefs); err != nil {
		return err
	}
	var n int
	if _, err := r.p.One(store.QueryCountFingerprints, []any{&n}, nearDupMinWords); err != nil {
		return err
	}
	x := neardup.Index{Threshold: nearDupThreshold}
	x.Grow(n)
	var prevHash string
	var fp neardup.Fingerprint
	var raw []byte
	var soft [][2]int64 // (rowid, refs index)
	if err := r.p.Each(store.QueryFingerprints, func(scan func(...any) error) error {
		var rid int64
		var hash string
		if err := scan(&rid, &hash, &raw); err != nil {
			return err
		}
		if !decodeFingerprint(raw, &fp) {
			return nil
		}
		for i, nf := range refs {
			if neardup.Similarity(fp, nf.fp) >= soft404Threshold {
				soft = append(soft, [2]int64{rid, int64(i)}) // pages like the 404 page are few, or the site answers 200 for everything
				break
			}
		}
		if hash != "" && hash == prevHash {
			return nil
		}
		prevHash = hash
		x.Add(uint32(rid), fp)
		return nil
	}, nearDupMinWords); err != nil {
		return err
	}
	for _, s := range soft {
		u, err := r.docURL(s[0])
		if err != nil {
			return err
		}
		if err := r.add(u, KindSoft404Copy, "answers 200, but its text is at least %.0f %% that of the site's 404 page %s", 100*soft404Threshold, refs[s[1]].url); err != nil {
			return err
		}
	}
	for g := range x.Groups() {
		urls := make([]string, 0, len(g.Members))
		least := 1.0
		for _, m := range g.Members {
			u, err := r.docURL(int64(m.ID))
			if err != nil {
				return err
			}
			urls = append(urls, u)
			least = min(least, m.Closest)
		}
		slices.Sort(urls)
		shown := urls[:min(len(urls), store.RefsListed)]
		if err := r.add(urls[0], KindNearDuplicate, "%s (each at least %.0f %% like another)",
			groupDetail(len(urls), "same text, near enough", shown), 100*least); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) docURL(rid int64) (string, error) {
	var u string
	_, err := r.p.One(store.QueryDocURL, []any{&u}, rid)
	return u, err
}

// decodeFingerprint reads pages.fingerprint (neardup.Fingerprint, little-endian) into fp; false for a
// blob of another size.
func decodeFingerprint(b []byte, fp *neardup.Fingerprint) bool {
	if len(b) != 2*neardup.Hashes {
		return false
	}
	for i := range fp {
		fp[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return true
}

// canonicals checks where the canonicals that name another URL lead, when the crawl has that URL.
func (r *run) canonicals() error {
	return r.p.Each(store.QueryCanonicalTargets, func(scan func(...any) error) error {
		var u, canonical string
		t, err := store.ScanPage(scan, &u, &canonical)
		if err != nil {
			return err
		}
		tu := t.FinalURL
		if tu == "" {
			tu = t.URL
		}
		broken, why := IsBroken(t)
		switch {
		case t.Blocked:
			return r.add(u, KindCanonicalBlocked, "canonical %s: %s", canonical, blockedReason(t))
		case len(t.Redirects) > 0:
			return r.add(u, KindCanonicalRedirect, "canonical %s redirects: %s", canonical, Chain(t))
		case broken:
			return r.add(u, KindCanonicalError, "canonical %s: %s", canonical, why)
		case !t.Parsed || t.Status != http.StatusOK:
			return nil
		case Noindex(t) != "":
			return r.add(u, KindCanonicalNoindex, "canonical %s is noindex (%s)", canonical, Noindex(t))
		case store.CanonicalElsewhere(t.Canonical, tu):
			return r.add(u, KindCanonicalChain, "canonical %s names %s as its canonical", canonical, strings.TrimSpace(t.Canonical))
		}
		return nil
	})
}

// hreflang checks each document's hreflang targets that the crawl has: return link, status, canonical,
// noindex. One finding per page and kind, naming its targets. Targets the crawl did not reach are not
// judged; a page's annotation of itself is its self-reference, not a target.
func (r *run) hreflang() error {
	var cur string
	lists := map[string][]string{} // this page's targets per kind; a page's annotations are few
	order := []string{KindHreflangNoReturn, KindHreflangNot200, KindHreflangNonCanon, KindHreflangNoindex}
	flush := func() error {
		for _, k := range order {
			if ts := lists[k]; len(ts) > 0 {
				if err := r.add(cur, k, "%d target%s: %s", len(ts), store.Plural(len(ts)), listSome(ts)); err != nil {
					return err
				}
			}
		}
		clear(lists)
		return nil
	}
	if err := r.p.Each(store.QueryHreflang, func(scan func(...any) error) error {
		var u, url, lang, target string
		var crawled, returns bool
		t, err := store.ScanPage(scan, &u, &url, &lang, &target, &crawled, &returns)
		if err != nil {
			return err
		}
		if u != cur {
			if err := flush(); err != nil {
				return err
			}
			cur = u
		}
		tn := store.NormalizeOrSelf(strings.TrimSpace(target))
		if !crawled || tn == url || tn == u {
			return nil
		}
		item := fmt.Sprintf("%s (%s)", target, lang)
		tu := t.FinalURL
		if tu == "" {
			tu = t.URL
		}
		switch broken, why := IsBroken(t); {
		case t.Blocked:
			lists[KindHreflangNot200] = append(lists[KindHreflangNot200], item+": blocked by robots.txt")
		case len(t.Redirects) > 0:
			lists[KindHreflangNot200] = append(lists[KindHreflangNot200], item+": redirects to "+tu)
		case broken:
			lists[KindHreflangNot200] = append(lists[KindHreflangNot200], item+": "+why)
		case t.Status != http.StatusOK:
			lists[KindHreflangNot200] = append(lists[KindHreflangNot200], fmt.Sprintf("%s: HTTP %d", item, t.Status))
		default:
			if !returns {
				lists[KindHreflangNoReturn] = append(lists[KindHreflangNoReturn], item)
			}
			if store.CanonicalElsewhere(t.Canonical, tu) {
				lists[KindHreflangNonCanon] = append(lists[KindHreflangNonCanon], item+": canonical is "+strings.TrimSpace(t.Canonical))
			}
			if Noindex(t) != "" {
				lists[KindHreflangNoindex] = append(lists[KindHreflangNoindex], item+": "+Noindex(t))
			}
		}
		return nil
	}); err != nil {
		return err
	}
	return flush()
}

// sitemaps checks the URLs the sitemaps list against what the crawl found, and the sitemaps themselves.
func (r *run) sitemaps() error {
	if err := r.p.Each(store.QuerySitemapPages, func(scan func(...any) error) error {
		var sm string
		p, err := store.ScanPage(scan, &sm)
		if err != nil {
			return err
		}
		u := p.URL
		switch {
		case p.Blocked:
			return r.add(u, KindSitemapBlocked, "listed in %s; %s", sm, blockedReason(p))
		case len(p.Redirects) > 0:
			if err := r.add(u, KindSitemapRedirected, "listed in %s; %s", sm, Chain(p)); err != nil {
				return err
			}
		}
		if broken, why := IsBroken(p); broken {
			return r.add(u, KindSitemapBroken, "listed in %s; %s", sm, why)
		}
		if c := strings.TrimSpace(p.Canonical); p.Parsed && store.CanonicalElsewhere(c, u) {
			if err := r.add(u, KindSitemapNonCanon, "listed in %s; canonical is %s", sm, c); err != nil {
				return err
			}
		}
		if p.Parsed && p.Status == http.StatusOK && Noindex(p) != "" {
			return r.add(u, KindSitemapNoindex, "listed in %s; %s", sm, Noindex(p))
		}
		return nil
	}); err != nil {
		return err
	}
	return r.p.Each(store.QuerySitemaps, func(scan func(...any) error) error {
		var sm store.SitemapRecord
		if err := scan(&sm.URL, &sm.Parent, &sm.Level, &sm.Status, &sm.Kind, &sm.Entries, &sm.Skipped, &sm.Err); err != nil {
			return err
		}
		if sm.Err != "" || (sm.Status != 0 && sm.Status != http.StatusOK) {
			why := sm.Err
			if why == "" {
				why = fmt.Sprintf("HTTP %d", sm.Status)
			}
			if err := r.add(sm.URL, KindSitemapError, "level %d sitemap: %s", sm.Level, why); err != nil {
				return err
			}
		}
		if sm.Skipped > 0 {
			return r.add(sm.URL, KindSitemapSkipped, "%d of %d entries skipped (invalid, duplicate or outside the sitemap's scope)", sm.Skipped, sm.Skipped+sm.Entries)
		}
		return nil
	})
}

// external lists the links to other sites: recorded, never requested.
func (r *run) external() error {
	return r.p.Each(store.QueryExternal, func(scan func(...any) error) error {
		var u, refs string
		var n int
		if err := scan(&u, &n, &refs); err != nil {
			return err
		}
		if n > store.RefsListed {
			refs += ", ..."
		}
		return r.add(u, KindExternalLink, "other site, not requested; linked from %s", refs)
	})
}

// site writes what the crawl knew beyond the rows (sitemap URLs left out, the slowdown) and the answers of
// llms.txt and the WordPress probes.
func (r *run) site(x Extra) error {
	for _, nc := range x.NotCrawled {
		var n int
		if _, err := r.p.One(store.QueryPageExists, []any{&n}, nc[1]); err != nil {
			return err
		}
		if n == 0 {
			if err := r.add(nc[1], KindSitemapNotCrawled, "listed in %s; not crawled: page limit", nc[0]); err != nil {
				return err
			}
		}
	}
	if x.OverHold > 0 {
		if err := r.add(x.FirstOverHold, KindSitemapOverHold, "%d sitemap entries (this one the first) past the %d sitemap URLs held for crawling: not crawled unless a link led there",
			x.OverHold, SitemapHoldMax); err != nil {
			return err
		}
	}
	if err := r.p.Each(store.QueryRequests, func(scan func(...any) error) error {
		var q store.RequestRecord
		if err := scan(&q.URL, &q.Purpose, &q.Status, &q.ContentType, &q.Location, &q.Bytes, &q.Err); err != nil {
			return err
		}
		switch q.Purpose {
		case "llms":
			return r.add(q.URL, KindLLMSTxt, "%s", llmsDetail(q))
		case "wordpress":
			return r.add(q.URL, KindWordPressProbe, "%s", probeDetail(q))
		}
		return nil
	}); err != nil {
		return err
	}
	if x.SlowedBy != "" {
		return r.add(x.SlowedBy, KindSlowedDown, "429 Too Many Requests: the rest of the run went one request at a time with a 3 s gap")
	}
	return nil
}

func (r *run) render(rendered []*store.RenderRecord) error {
	for _, f := range analyzeRender(rendered) {
		if err := r.add(f.URL, f.Kind, "%s", f.Detail); err != nil {
			return err
		}
	}
	return nil
}

// linkScore ranks the crawl's pages by internal PageRank (linkscore: damping 0.85, nofollow links left
// out, a redirect passing its links to its target) and writes each page's 0–100 score. Memory: the graph's
// 3 bytes a link and 32 a page, and the map of the pages' urls ids to their numbers (pageNumbers); the
// links are read from the database twice, streaming, as integers.
func (r *run) linkScore() error {
	n, drop, err := r.p.LinkIDs()
	if err != nil {
		return err
	}
	g := linkscore.New(n)
	if err := r.p.Each(store.QueryGraphRedirects, func(scan func(...any) error) error {
		var from, to uint32
		if err := scan(&from, &to); err != nil {
			return err
		}
		return g.Redirect(from, to)
	}); err != nil {
		return err
	}
	num, err := r.pageNumbers(n)
	if err != nil {
		return err
	}
	links := func(yield func(linkscore.Link) bool) error {
		stop := errors.New("stop")
		var ds []byte
		err := r.p.Each(store.QueryGraphLinks, func(scan func(...any) error) error {
			var fromUID int64
			if err := scan(&fromUID, &ds); err != nil {
				return err
			}
			from, ok := num.of(fromUID)
			if !ok {
				return nil // links of a document without a page row of its own
			}
			for len(ds) > 0 {
				var uid int64
				var err error
				if uid, ds, err = nextID(ds); err != nil {
					return fmt.Errorf("link score: the links of urls id %d: %w", fromUID, err)
				}
				if to, ok := num.of(uid); ok && !yield(linkscore.Link{From: from, To: to}) {
					return stop
				}
			}
			return nil
		})
		if err == stop {
			return nil
		}
		return err
	}
	// While it loads, the graph is most of the heap (190 MB at a million pages × 60 links), and the
	// garbage of the reading (each row's list of ids) would let the heap grow to twice it before a
	// collection: collect at a quarter more instead. The graph's arrays hold no pointers, so a
	// collection costs little.
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	start := time.Now()
	if err := g.Load(links); err != nil {
		return fmt.Errorf("link score: %w", err)
	}
	ranks, err := g.Rank(r.p.Context(), linkscore.Options{})
	if err != nil {
		return fmt.Errorf("link score: %w", err)
	}
	r.sum.took("link score: load+rank", start)
	if err := r.p.WriteLinkScores(n, func(id uint32) int { return int(ranks.Score(id) + 0.5) }); err != nil {
		return err
	}
	return drop()
}

// pageNumbers maps the urls ids of the crawl's pages to their numbers 0..n-1: a slice indexed by id when
// the ids are dense enough (at most 4 times the pages; 4 bytes an id), else a map.
type pageNumbers struct {
	dense []uint32 // dense[uid] is the number + 1; 0: not a page
	m     map[int64]uint32
}

func (p pageNumbers) of(uid int64) (uint32, bool) {
	if p.dense != nil {
		if uid < 0 || uid >= int64(len(p.dense)) || p.dense[uid] == 0 {
			return 0, false
		}
		return p.dense[uid] - 1, true
	}
	id, ok := p.m[uid]
	return id, ok
}

// pageNumbers reads the map of the n pages' urls ids to their numbers (store.QueryLinkUIDs).
func (r *run) pageNumbers(n int) (pageNumbers, error) {
	var maxUID int64
	type pair struct {
		uid int64
		id  uint32
	}
	var pairs []pair
	if err := r.p.Each(store.QueryLinkUIDs, func(scan func(...any) error) error {
		var p pair
		if err := scan(&p.uid, &p.id); err != nil {
			return err
		}
		maxUID = max(maxUID, p.uid)
		pairs = append(pairs, p)
		return nil
	}); err != nil {
		return pageNumbers{}, err
	}
	var num pageNumbers
	if maxUID < 4*int64(n)+1024 {
		num.dense = make([]uint32, maxUID+1)
		for _, p := range pairs {
			num.dense[p.uid] = p.id + 1
		}
	} else {
		num.m = make(map[int64]uint32, len(pairs))
		for _, p := range pairs {
			num.m[p.uid] = p.id
		}
	}
	return num, nil
}

// nextID reads the first integer of a comma-separated list of urls ids and returns the rest.
func nextID(b []byte) (int64, []byte, error) {
	var v int64
	i := 0
	for ; i < len(b) && b[i] != ','; i++ {
		c := b[i]
		if c < '0' || c > '9' || v > (1<<62)/10 {
			return 0, nil, fmt.Errorf("bad id list %q", b)
		}
		v = v*10 + int64(c-'0')
	}
	if i == 0 {
		return 0, nil, fmt.Errorf("bad id list %q", b)
	}
	if i < len(b) {
		i++
	}
	return v, b[i:], nil
}
