package findings

import (
	"sort"
	"strings"
	"testing"

	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ok(url, title, desc string, h1 int) *store.PageRecord {
	return &store.PageRecord{URL: url, FinalURL: url, Status: 200, Parsed: true, Title: title, TitleCount: 1,
		Description: desc, DescriptionCount: 1, H1Count: h1}
}

func got(fs []store.FindingRecord) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Kind+" "+f.URL)
	}
	sort.Strings(out)
	return out
}

func TestAnalyzeContent(t *testing.T) {
	long := strings.Repeat("x", 61)
	noTitle := ok("/no-title", "", "d1", 1)
	noTitle.TitleCount = 0
	emptyTitle := ok("/empty-title", "  ", "d2", 1)
	noDesc := ok("/no-desc", "T3", "", 1)
	noDesc.DescriptionCount = 0
	emptyDesc := ok("/empty-desc", "T4", " ", 1)
	meta := ok("/noindex", "T5", "d5", 1)
	meta.MetaRobots = "NoIndex, follow"
	header := ok("/xrobots", "T6", "d6", 1)
	header.XRobots = "none"
	canon := ok("/canon", "T7", "d7", 1)
	canon.Canonical = "/elsewhere"
	selfCanon := ok("/self", "T8", "d8", 1)
	selfCanon.Canonical = "/self"
	redirected := ok("/old", "Dup", "dup", 1) // redirects to /dup1, crawled itself: counted once
	redirected.FinalURL = "/dup1"
	redirected.Redirects = []store.HopRecord{{URL: "/old", Status: 301, Location: "/dup1"}}
	in := crawlRows{Pages: []*store.PageRecord{
		noTitle, emptyTitle, noDesc, emptyDesc, meta, header, canon, selfCanon, redirected,
		ok("/long", long, "d9", 1),
		ok("/no-h1", "T10", "d10", 0),
		ok("/two-h1", "T11", "d11", 2),
		ok("/dup1", "Dup", "dup", 1),
		ok("/dup2", " dup ", "DUP", 1),
		{URL: "/error", Status: 500},
	}}
	fs := analyze(t, in)
	assert.Equal(t, []string{
		"broken_page /error",
		"canonical_elsewhere /canon",
		"description_duplicate /dup1",
		"description_missing /empty-desc",
		"description_missing /no-desc",
		"h1_missing /no-h1",
		"h1_multiple /two-h1",
		"noindex /noindex",
		"noindex /xrobots",
		"redirect /old",
		"title_duplicate /dup1",
		"title_empty /empty-title",
		"title_missing /no-title",
		"title_too_long /long",
	}, got(fs))
	// One row per duplicate group, on its first page, naming every member.
	detail := map[string]string{}
	for _, f := range fs {
		detail[f.Kind+" "+f.URL] = f.Detail
	}
	assert.Equal(t, `2 pages share the title "dup": /dup1, /dup2`, detail["title_duplicate /dup1"])
	assert.Equal(t, `2 pages share the meta description "dup": /dup1, /dup2`, detail["description_duplicate /dup1"])
}

func TestAnalyzeLinksAndSitemaps(t *testing.T) {
	in := crawlRows{
		Pages: []*store.PageRecord{
			ok("/", "Home", "home", 1),
			ok("/a", "A", "a", 1),
			{URL: "/gone", Status: 404},
			{URL: "/slow", ErrKind: "timeout", Err: "request timed out"},
			{URL: "/basket/", Blocked: true, RobotsRule: `disallowed by "Disallow: /basket/"`},
			{URL: "/moved", FinalURL: "/a", Status: 200, Redirects: []store.HopRecord{{URL: "/moved", Status: 301, Location: "/a"}}},
			{URL: "/loop", ErrKind: "redirect_loop", Err: "loop", Redirects: []store.HopRecord{{URL: "/loop", Status: 302, Location: "/loop2"}, {URL: "/loop2", Status: 302, Location: "/loop"}}},
			func() *store.PageRecord { p := ok("/canon", "C", "c", 1); p.Canonical = "/a"; return p }(),
		},
		Links: []store.LinkRecord{
			{From: "/", To: "/gone"}, {From: "/a", To: "/gone"}, {From: "/a", To: "/gone"}, // a duplicate link counts once
			{From: "/", To: "/slow"}, {From: "/", To: "/basket/"},
			{From: "/", To: "https://other.test/", External: true}, {From: "/a", To: "https://other.test/", External: true},
		},
		SitemapURLs: [][2]string{{"/sm.xml", "/moved"}, {"/sm.xml", "/gone"}, {"/sm.xml", "/basket/"}, {"/sm.xml", "/canon"}, {"/sm.xml", "/not-crawled"}},
		Sitemaps:    []store.SitemapRecord{{URL: "/sm.xml", Status: 200, Entries: 5}, {URL: "/broken.xml", Level: 1, Status: 404}},
		Requests: []store.RequestRecord{{URL: "/llms.txt", Purpose: "llms", Status: 404},
			{URL: "/wp-json/", Purpose: "wordpress", Status: 200, ContentType: "application/json", Bytes: 10}},
		Extra: Extra{SlowedBy: "/a"},
	}
	fs := analyze(t, in)
	assert.Equal(t, []string{
		"broken_link /gone",
		"broken_link /slow",
		"broken_page /loop", // a loop never reaches a page
		"canonical_elsewhere /canon",
		"external_link https://other.test/",
		"link_no_response /slow",
		"link_to_blocked /basket/",
		"llms_txt /llms.txt",
		"redirect /moved",
		"redirect_loop /loop",
		"sitemap_error /broken.xml",
		"sitemap_url_blocked /basket/",
		"sitemap_url_broken /gone",
		"sitemap_url_non_canonical /canon",
		"sitemap_url_redirected /moved",
		"slowed_down /a",
		"wordpress_probe /wp-json/",
	}, got(fs))
	detail := map[string]string{}
	for _, f := range fs {
		detail[f.Kind+" "+f.URL] = f.Detail
	}
	assert.Equal(t, "HTTP 404; linked from 2 pages: /, /a", detail["broken_link /gone"])
	assert.Equal(t, "timed out: request timed out; linked from 1 page: /", detail["broken_link /slow"])
	assert.Equal(t, `blocked by robots.txt: disallowed by "Disallow: /basket/"; linked from 1 page: /`, detail["link_to_blocked /basket/"])
	assert.Equal(t, "other site, not requested; linked from /, /a", detail["external_link https://other.test/"])
	assert.Equal(t, "/loop -302-> /loop2 -302-> /loop", detail["redirect_loop /loop"])
	assert.Equal(t, "not published (HTTP 404)", detail["llms_txt /llms.txt"])
}

// A sort/filter variant that names the main page as canonical shares its title and description on
// purpose: reporting it as a duplicate was false. Content findings name the page where a redirect ended.
func TestAnalyzeCanonicalVariantsAndRedirectTargets(t *testing.T) {
	variant := ok("/products/?sort=price", "Products", "All products", 1)
	variant.Canonical = "/products/"
	hidden := ok("/print", "Products", "All products", 1)
	hidden.MetaRobots = "noindex"
	moved := ok("/sale", "", "Offers", 1) // /sale -> /offers/, and /offers/ has no title
	moved.TitleCount, moved.FinalURL = 0, "/offers/"
	moved.Redirects = []store.HopRecord{{URL: "/sale", Status: 301, Location: "/offers/"}}
	in := crawlRows{Pages: []*store.PageRecord{
		ok("/products/", "Products", "All products", 1), variant, hidden, moved,
		ok("/tent", "Tent", "Same", 1), ok("/lantern", "Lantern", "same", 1),
	}}
	assert.Equal(t, []string{
		"canonical_elsewhere /products/?sort=price",
		"description_duplicate /lantern",
		"noindex /print",
		"redirect /sale",
		"title_missing /offers/",
	}, got(analyze(t, in)))
}

// A site answering every path with its HTML page (a soft 404) does not publish an llms.txt; and a 429 page
// is rate limited, not shown as plainly broken.
func TestAnalyzeSoft404LLMSAnd429(t *testing.T) {
	fs := analyze(t, crawlRows{
		Pages: []*store.PageRecord{{URL: "/busy", Status: 429}},
		Requests: []store.RequestRecord{
			{URL: "/llms.txt", Purpose: "llms", Status: 200, ContentType: "text/html; charset=utf-8", Bytes: 900},
			{URL: "http://www.shop.test/llms.txt", Purpose: "llms", Status: 200, ContentType: "text/markdown", Bytes: 90},
		},
	})
	require.Len(t, fs, 3)
	assert.Equal(t, "HTTP 429 Too Many Requests, still after 2 retries (rate limited: the page itself may be fine); not linked from any crawled page", fs[0].Detail)
	assert.Equal(t, "probably not published: HTTP 200 but text/html; charset=utf-8, 900 bytes (a page served for any path?)", fs[1].Detail)
	assert.Equal(t, "published (HTTP 200, text/markdown, 90 bytes)", fs[2].Detail)
}
