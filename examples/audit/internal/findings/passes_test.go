package findings

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/politecrawl/polite/examples/audit/internal/neardup"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// only keeps the findings of the given kinds, as "kind url".
func only(fs []store.FindingRecord, kinds ...string) []string {
	want := map[string]bool{}
	for _, k := range kinds {
		want[k] = true
	}
	var out []store.FindingRecord
	for _, f := range fs {
		if want[f.Kind] {
			out = append(out, f)
		}
	}
	return got(out)
}

func details(fs []store.FindingRecord) map[string]string {
	m := map[string]string{}
	for _, f := range fs {
		m[f.Kind+" "+f.URL] = f.Detail
	}
	return m
}

func links(from string, to ...string) []store.LinkRecord {
	var ls []store.LinkRecord
	for _, t := range to {
		ls = append(ls, store.LinkRecord{From: from, To: t, Tag: "a"})
	}
	return ls
}

func at(p *store.PageRecord, depth int) *store.PageRecord { p.Depth = depth; return p }

// The link graph's kinds: a link to a redirect, to a URL that never answered, a page with one
// referrer, one too deep, an orphan listed in the sitemap, and a linked noindex page (listed in the
// sitemap too). The clean pages /a and /b, linked from two pages each at depth 1, have none.
func TestSiteLinkGraphKinds(t *testing.T) {
	home := at(ok("/", "Home", "home", 1), 0)
	home.Source = "start"
	hidden := at(ok("/hidden", "Hidden", "hidden", 1), 1)
	hidden.MetaRobots = "noindex"
	orphan := at(ok("/orphan", "Orphan", "orphan", 1), 1)
	orphan.Source = "sitemap"
	in := crawlRows{
		Pages: []*store.PageRecord{
			home, hidden, orphan,
			at(ok("/a", "A", "a", 1), 1), at(ok("/b", "B", "b", 1), 1),
			at(ok("/only", "Only", "only", 1), 2),
			at(ok("/deep", "Deep", "deep", 1), 4),
			{URL: "/moved", FinalURL: "/a", Status: 200, Depth: 1, Redirects: []store.HopRecord{{URL: "/moved", Status: 301, Location: "/a"}}},
			{URL: "/slow", Depth: 1, ErrKind: "timeout", Err: "no answer in 10s"},
		},
		Links: append(append(append(links("/", "/a", "/b", "/hidden", "/moved", "/slow", "/deep"),
			links("/a", "/b", "/hidden", "/deep", "/a")...), // a self link does not count
			links("/b", "/a", "/only")...), links("/only", "/b")...),
		SitemapURLs: [][2]string{{"/sitemap.xml", "/orphan"}, {"/sitemap.xml", "/hidden"}, {"/sitemap.xml", "/a"}},
	}
	fs := analyze(t, in)
	assert.Equal(t, []string{
		"link_no_response /slow",
		"link_to_redirect /moved",
		"noindex_linked /hidden",
		"orphan_page /orphan",
		"page_too_deep /deep",
		"single_inlink /only",
		"sitemap_url_noindex /hidden",
	}, only(fs, KindLinkToRedirect, KindLinkNoResponse, KindSingleInlink, KindTooDeep, KindOrphan, KindNoindexLinked, KindSitemapNoindex))
	d := details(fs)
	assert.Equal(t, "/moved -301-> /a (200); linked from 1 page: /", d["link_to_redirect /moved"])
	assert.Equal(t, "timed out: no answer in 10s; linked from 1 page: /", d["link_no_response /slow"])
	assert.Equal(t, "linked from 1 page: /b", d["single_inlink /only"])
	assert.Equal(t, "4 clicks from the start page (more than 3)", d["page_too_deep /deep"])
	assert.Equal(t, "meta robots: noindex; linked from 2 pages: /, /a", d["noindex_linked /hidden"])
	assert.Equal(t, "listed in /sitemap.xml; meta robots: noindex", d["sitemap_url_noindex /hidden"])
}

// fingerprint is a page's text as the crawl stores it in pages.fingerprint.
func fingerprint(text string) []byte {
	fp := neardup.Of(text)
	b := make([]byte, 0, 2*len(fp))
	for _, v := range fp {
		b = binary.LittleEndian.AppendUint16(b, v)
	}
	return b
}

// words makes a text of n distinct words from seed, so two seeds share no shingle.
func words(seed string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s%d ", seed, i)
	}
	return b.String()
}

func withText(p *store.PageRecord, text, hash string) *store.PageRecord {
	p.Fingerprint, p.TextHash, p.WordCount = fingerprint(text), hash, len(strings.Fields(text))
	return p
}

// Duplicates across pages are one finding per group, on its first URL, with the members listed (at most
// ten, and how many more): shared first headings, the same text (hash), near-copies (MinHash at 90 %,
// exact copies counted once), and a 200 page that copies the site's 404 page.
func TestSiteDuplicateKinds(t *testing.T) {
	base := words("tent", 200)
	notFound := words("sorry", 120)
	var pages []*store.PageRecord
	for i := range 12 { // twelve pages share one <h1>
		p := ok(fmt.Sprintf("/h%02d", i), fmt.Sprintf("H %d", i), fmt.Sprintf("h %d", i), 1)
		p.H1 = "  Our   Tents "
		pages = append(pages, withText(p, words(fmt.Sprintf("h%d-", i), 80), fmt.Sprintf("h%d", i)))
	}
	pages = append(pages,
		withText(ok("/exact1", "E1", "e1", 1), base, "same"),
		withText(ok("/exact2", "E2", "e2", 1), base, "same"),
		withText(ok("/near", "N", "n", 1), strings.Replace(base, "tent7 ", "tarp7 ", 1), "near"),
		withText(ok("/soft", "S", "s", 1), strings.Replace(notFound, "sorry3 ", "oops3 ", 1), "soft"),
		withText(ok("/unique", "U", "u", 1), words("lantern", 200), "unique"),
		withText(&store.PageRecord{URL: "/missing", Status: 404, Depth: 1}, notFound, "404"),
	)
	for _, p := range pages {
		if p.H1 == "" && p.H1Count > 0 {
			p.H1 = p.Title
		}
	}
	fs := analyze(t, crawlRows{Pages: pages})
	assert.Equal(t, []string{
		"content_exact_duplicate /exact1",
		"content_near_duplicate /exact1",
		"h1_duplicate /h00",
		"soft_404_copy /soft",
	}, only(fs, KindH1Duplicate, KindExactDuplicate, KindNearDuplicate, KindSoft404Copy))
	d := details(fs)
	assert.Equal(t, `12 pages share the first <h1> "our tents": /h00, /h01, /h02, /h03, /h04, /h05, /h06, /h07, /h08, /h09 and 2 more`, d["h1_duplicate /h00"])
	assert.Equal(t, "2 pages share the visible text: /exact1, /exact2", d["content_exact_duplicate /exact1"])
	assert.Contains(t, d["content_near_duplicate /exact1"], "2 pages share the same text, near enough: /exact1, /near (each at least")
	assert.Equal(t, "answers 200, but its text is at least 90 % that of the site's 404 page /missing", d["soft_404_copy /soft"])
}

// A canonical that names another URL is checked against what the crawl found there.
func TestSiteCanonicalTargets(t *testing.T) {
	canon := func(u, c string) *store.PageRecord {
		p := ok(u, "T"+u, "d"+u, 1)
		p.Canonical = c
		return p
	}
	noindex := ok("/ni", "NI", "ni", 1)
	noindex.MetaRobots = "noindex"
	fs := analyze(t, crawlRows{Pages: []*store.PageRecord{
		canon("/c-redirect", "/moved"), canon("/c-error", "/gone"), canon("/c-blocked", "/blocked"), canon("/c-noindex", "/ni"),
		canon("/c-chain", "/mid"), canon("/mid", "/final"), canon("/c-ok", "/final"), canon("/c-unknown", "/not-crawled"),
		ok("/final", "F", "f", 1), noindex,
		{URL: "/moved", FinalURL: "/final", Status: 200, Redirects: []store.HopRecord{{URL: "/moved", Status: 301, Location: "/final"}}},
		{URL: "/gone", Status: 404},
		{URL: "/blocked", Blocked: true, RobotsRule: `disallowed by "Disallow: /blocked"`},
	}})
	assert.Equal(t, []string{
		"canonical_chain /c-chain",
		"canonical_to_blocked /c-blocked",
		"canonical_to_error /c-error",
		"canonical_to_noindex /c-noindex",
		"canonical_to_redirect /c-redirect",
	}, only(fs, KindCanonicalRedirect, KindCanonicalError, KindCanonicalBlocked, KindCanonicalNoindex, KindCanonicalChain))
	d := details(fs)
	assert.Equal(t, "canonical /mid names /final as its canonical", d["canonical_chain /c-chain"])
	assert.Equal(t, "canonical /gone: HTTP 404", d["canonical_to_error /c-error"])
}

// Hreflang targets the crawl has: a return link missing, a target that redirects, one canonicalised
// elsewhere, one noindex. The pair /en and /de annotate each other and are clean; a page's annotation
// of itself is not a target.
func TestSiteHreflang(t *testing.T) {
	alt := func(p *store.PageRecord, pairs ...string) *store.PageRecord {
		for i := 0; i < len(pairs); i += 2 {
			p.Hreflang = append(p.Hreflang, store.HreflangRecord{Hreflang: pairs[i], URL: pairs[i+1]})
		}
		return p
	}
	nonCanon := alt(ok("/it", "IT", "it", 1), "en", "/en")
	nonCanon.Canonical = "/it-main"
	noindex := alt(ok("/pt", "PT", "pt", 1), "en", "/en")
	noindex.MetaRobots = "noindex"
	fs := analyze(t, crawlRows{Pages: []*store.PageRecord{
		alt(ok("/en", "EN", "en", 1), "en", "/en", "de", "/de", "fr", "/fr", "es", "/es", "it", "/it", "pt", "/pt", "ja", "/not-crawled"),
		alt(ok("/de", "DE", "de", 1), "en", "/en", "de", "/de"),
		ok("/fr", "FR", "fr", 1), nonCanon, noindex,
		{URL: "/es", FinalURL: "/es/", Status: 200, Redirects: []store.HopRecord{{URL: "/es", Status: 301, Location: "/es/"}}},
	}})
	assert.Equal(t, []string{
		"hreflang_no_return /en",
		"hreflang_target_noindex /en",
		"hreflang_target_not_200 /en",
		"hreflang_target_not_canonical /en",
	}, only(fs, KindHreflangNoReturn, KindHreflangNot200, KindHreflangNonCanon, KindHreflangNoindex))
	d := details(fs)
	assert.Equal(t, "1 target: /fr (fr)", d["hreflang_no_return /en"])
	assert.Equal(t, "1 target: /es (es): redirects to /es/", d["hreflang_target_not_200 /en"])
	assert.Equal(t, "1 target: /it (it): canonical is /it-main", d["hreflang_target_not_canonical /en"])
	assert.Equal(t, "1 target: /pt (pt): meta robots: noindex", d["hreflang_target_noindex /en"])
}

// The link score pass writes 0–100 into every page row: the page everyone links to scores 100, a
// nofollow link passes nothing, a redirect passes its links to its target and scores 0 itself.
func TestSiteLinkScore(t *testing.T) {
	in := crawlRows{
		Pages: []*store.PageRecord{
			at(ok("/", "Home", "h", 1), 0), ok("/a", "A", "a", 1), ok("/b", "B", "b", 1), ok("/c", "C", "c", 1), ok("/nf", "NF", "nf", 1),
			{URL: "/old", FinalURL: "/c", Status: 200, Redirects: []store.HopRecord{{URL: "/old", Status: 301, Location: "/c"}}},
		},
		Links: slices.Concat(links("/", "/a", "/b", "/old"), links("/a", "/"), links("/b", "/", "/a"), links("/c", "/"),
			[]store.LinkRecord{{From: "/a", To: "/nf", Nofollow: true}}),
	}
	st := newCrawl(t)
	in.write(t, st)
	_, err := Run(t.Context(), st, Extra{})
	require.NoError(t, err)
	rows, err := st.Reader().QueryContext(t.Context(), `SELECT url, COALESCE(link_score, -1) FROM pages WHERE crawl_id = ? ORDER BY url`, st.CrawlID)
	require.NoError(t, err)
	defer rows.Close()
	score := map[string]int{}
	for rows.Next() {
		var u string
		var s int
		require.NoError(t, rows.Scan(&u, &s))
		score[u] = s
	}
	assert.Equal(t, 100, score["/"])
	assert.Equal(t, 0, score["/old"], "a redirect is not ranked")
	assert.Less(t, score["/nf"], score["/c"], "a nofollow link passes nothing; the redirect passes /old's links to /c")
	assert.Greater(t, score["/a"], score["/b"], "/a has two referrers, /b one")
	for u, s := range score {
		assert.True(t, s >= 0 && s <= 100, "%s scored %d", u, s)
	}
}
