package findings

import (
	"slices"
	"sort"
)

// severity ranks a finding kind: what to fix first. The report, the CSV and JSON exports and compare
// all read it from kindTable.
type severity int

const (
	SevError   severity = iota // something is broken for visitors or search engines: fix it
	sevWarning                 // likely to cost traffic or crawl budget: fix when you can
	sevNotice                  // information, often intended: check it is what you want
)

func (s severity) String() string {
	switch s {
	case SevError:
		return "error"
	case sevWarning:
		return "warning"
	}
	return "notice"
}

// KindInfo is what the report says about one finding kind.
type KindInfo struct {
	Kind     string   // one of the Kind* values
	Severity severity // error, warning or notice: the report\'s colour and order
	Title    string   // a short human name
	Advice   string   // one line: why it matters and how to fix it
	Category string   // one of Categories: the app's tab of the kind
}

// The categories of the kinds, as SEO crawlers (Screaming Frog's tabs) group them.
const (
	CatResponseCodes = "Response codes"
	CatLinks         = "Links"
	CatURL           = "URL"
	CatTitles        = "Titles"
	CatDescriptions  = "Descriptions"
	CatHeadings      = "Headings"
	CatContent       = "Content"
	CatCanonicals    = "Canonicals"
	CatDirectives    = "Directives"
	CatHreflang      = "Hreflang"
	CatSitemaps      = "Sitemaps"
	CatSecurity      = "Security"
	CatRendering     = "Rendering"
	CatSite          = "Site"
)

// Categories are every category a kind may have, in the order of the app's tabs. Some have no kind yet
// (URL, Content, Hreflang): they name where such checks belong.
var Categories = []string{CatResponseCodes, CatLinks, CatURL, CatTitles, CatDescriptions, CatHeadings, CatContent, CatCanonicals,
	CatDirectives, CatHreflang, CatSitemaps, CatSecurity, CatRendering, CatSite}

// kindTable is the one table of finding kinds, where every kind gets its severity, category and advice:
// the core kinds below, the kinds of one page's own response (pageKinds, kinds_page.go) and those of the
// passes over the whole crawl (siteKinds, kinds_site.go), ordered by severity. A test checks that every
// kind declared (every Kind* constant) has a row, so a new kind cannot reach the report without one.
var kindTable = bySeverity(coreKinds, pageKinds, siteKinds)

// bySeverity joins the tables in order and sorts them by severity, keeping each table's order within one.
func bySeverity(tables ...[]KindInfo) []KindInfo {
	all := slices.Concat(tables...)
	slices.SortStableFunc(all, func(a, b KindInfo) int { return int(a.Severity) - int(b.Severity) })
	return all
}

// coreKinds are the kinds of the first versions: response codes, titles, sitemaps, rendering, the site.
var coreKinds = []KindInfo{
	{KindBrokenLink, SevError, "Broken internal link", "Visitors and crawlers following these links reach an error page: restore the page, redirect it, or change the links to it.", CatLinks},
	{KindBrokenPage, SevError, "Broken page", "The start page or a sitemap URL answers an error and no crawled page links to it: restore it or remove it from the sitemap.", CatResponseCodes},
	{KindRedirectLoop, SevError, "Redirect loop", "The redirects lead back to a URL already visited, so the page can never be reached: make the chain end at a page that answers 200.", CatResponseCodes},
	{KindTooManyRedirects, SevError, "Too many redirects", "More than ten hops: browsers and crawlers give up before the end; redirect straight to the final URL.", CatResponseCodes},
	{KindBadRedirect, SevError, "Bad redirect", "A redirect without a usable Location header leads nowhere: send a valid absolute or relative Location.", CatResponseCodes},
	{KindTitleMissing, SevError, "Title missing", "The title is the headline of a search result; without one, search engines invent it: add a unique <title>.", CatTitles},
	{KindTitleEmpty, SevError, "Title empty", "An empty <title> is as bad as none: write a short, unique title for the page.", CatTitles},
	{KindSitemapBroken, SevError, "Sitemap URL broken", "A sitemap should list only pages that work: fix the page or remove it from the sitemap.", CatSitemaps},
	{KindSitemapError, SevError, "Sitemap unreadable", "A sitemap that cannot be fetched or parsed tells search engines nothing: fix its URL, status or format.", CatSitemaps},
	{KindRedirectChain, sevWarning, "Redirect chain", "Each extra hop costs time and crawl budget and may lose link value: point links and the first redirect at the final URL.", CatResponseCodes},
	{KindRedirectBlocked, sevWarning, "Redirect to a blocked URL", "The redirect target is off limits by robots.txt, so crawlers stop there: redirect elsewhere or allow the target.", CatResponseCodes},
	{KindLinkToBlocked, sevWarning, "Link to a blocked URL", "Internal links point at URLs robots.txt disallows: crawlers cannot follow them; unlink them or allow them if they should be found.", CatLinks},
	{KindTitleDuplicate, sevWarning, "Duplicate title", "Pages sharing a title compete with each other in search results: give each page its own title.", CatTitles},
	{KindTitleMultiple, sevWarning, "Several titles", "Only one <title> counts and which one is up to the reader: keep exactly one.", CatTitles},
	{KindDescMissing, sevWarning, "Description missing", "Without a meta description search engines pick a snippet themselves: write one that sums up the page.", CatDescriptions},
	{KindDescDuplicate, sevWarning, "Duplicate description", "The same snippet on several pages does not tell searchers which to choose: write one per page.", CatDescriptions},
	{KindH1Missing, sevWarning, "H1 missing", "The main heading tells readers and crawlers what the page is about: add one <h1>.", CatHeadings},
	{KindSitemapRedirected, sevWarning, "Sitemap URL redirects", "Sitemaps should list final URLs: replace the listed URL with where it redirects to.", CatSitemaps},
	{KindSitemapBlocked, sevWarning, "Sitemap URL blocked", "The sitemap lists a URL robots.txt disallows, a contradiction: remove it from the sitemap or allow it.", CatSitemaps},
	{KindSitemapNonCanon, sevWarning, "Sitemap URL not canonical", "The listed page names another URL as canonical: list the canonical URL instead.", CatSitemaps},
	{KindSitemapSkipped, sevWarning, "Sitemap entries skipped", "Entries that are invalid, repeated or outside the sitemap's own scope are ignored by search engines: fix or remove them.", CatSitemaps},
	{KindRenderRobotsMeta, sevWarning, "Robots meta changed by JavaScript", "The page's script changes its meta robots (adds noindex, say): crawlers that read the HTML alone obey another rule than the browser; put the intended rule in the HTML.", CatRendering},
	{KindRenderCanonical, sevWarning, "Canonical changed by JavaScript", "The canonical in the HTML is not the one the script ends with: search engines may use either; serve the intended canonical in the HTML.", CatRendering},
	{KindRenderTitle, sevWarning, "Title changed by JavaScript", "Crawlers that do not run JavaScript see another title than visitors: serve the final title in the HTML.", CatRendering},
	{KindRenderLinksOnly, sevWarning, "Links only after JavaScript", "These internal links exist only once the script has run: crawlers that read the HTML cannot follow them; put them in the HTML.", CatRendering},
	{KindRenderBlocked, sevWarning, "Page resource blocked by robots.txt", "robots.txt forbids a script, stylesheet or request the page needs, so search engines cannot render it as visitors see it: allow it.", CatRendering},
	{KindRenderFailed, sevWarning, "Page resource failed", "A script, stylesheet, image or request of the page answered an error or did not answer: fix or remove it.", CatRendering},
	{KindRenderJSError, sevWarning, "JavaScript error", "The page's script threw an error while loading, so part of the page may not appear: fix the script.", CatRendering},
	{KindRefusesCrawler, sevWarning, "Site refuses the crawler", "The site answers 401/403 to this user agent for robots.txt and the start page, a block by user agent, so nothing was audited: if the audit is wanted, lift the rule for the crawler or run it with a user agent the site allows.", CatSite},
	{KindBotProtection, sevWarning, "Blocked by bot protection", "Bot protection (Cloudflare, Akamai, DataDome...) answered the crawler with a challenge or block instead of the page, so it was not audited: allow the crawler's user agent in the protection's rules, or audit from an allowed address.", CatResponseCodes},
	{KindSlowedDown, sevWarning, "Crawl slowed down", "The server answered 429 Too Many Requests, so the rest of the crawl ran one request at a time: check rate limits if the audit was wanted.", CatSite},
	{KindRedirect, sevNotice, "Redirect", "One hop is fine for moved pages, but internal links should point straight at the final URL.", CatResponseCodes},
	{KindRedirectOffsite, sevNotice, "Redirect to another site", "The redirect leaves the site, so the audit does not follow it: check that it is intended.", CatResponseCodes},
	{KindTitleTooLong, sevNotice, "Title too long", "Titles over 60 characters are cut in search results: put what matters first or shorten it.", CatTitles},
	{KindDescMultiple, sevNotice, "Several descriptions", "Only one meta description is used: keep exactly one.", CatDescriptions},
	{KindRenderH1, sevNotice, "H1 changed by JavaScript", "The main heading in the HTML is not the one the script ends with: check that crawlers reading the HTML see a fitting one.", CatRendering},
	{KindH1Multiple, sevNotice, "Several H1", "Several main headings blur what the page is about: usually one <h1> is clearer.", CatHeadings},
	{KindNoindex, sevNotice, "Noindex", "The page asks not to be indexed and will not appear in search results: check that this is intended.", CatDirectives},
	{KindCanonicalElsewhere, sevNotice, "Canonicalised elsewhere", "The page names another URL as canonical, so that URL is indexed instead: check that it is intended.", CatCanonicals},
	{KindSitemapNotCrawled, sevNotice, "Sitemap URL not crawled", "The page limit was used up by linked pages first: raise -max-pages to audit these too.", CatSitemaps},
	{KindSitemapOverHold, sevNotice, "Sitemap URLs over the limit", "Past the 50,000 sitemap URLs held for crawling: split the audit or raise the limit to audit them.", CatSitemaps},
	{KindExternalLink, sevNotice, "External link", "Links to other sites are recorded, never requested: check them with a link checker if they matter.", CatLinks},
	{KindLLMSTxt, sevNotice, "llms.txt", "Whether the site publishes /llms.txt, a Markdown summary for language-model tools; optional.", CatSite},
	{KindWordPress, sevNotice, "WordPress", "The site looks like WordPress, so the four WordPress requests were made; their answers are listed as wordpress_probe.", CatSite},
	{KindWordPressProbe, sevNotice, "WordPress endpoint", "What a public WordPress endpoint answers: close /xmlrpc.php and restrict /wp-json/ if you do not use them.", CatSecurity},
}

// kindIndex finds a kind's row; kinds not in the table (none, a test makes sure) read as notices.
var kindIndex = func() map[string]int {
	m := make(map[string]int, len(kindTable))
	for i, k := range kindTable {
		m[k.Kind] = i
	}
	return m
}()

// InfoOf returns the table row of a kind.
func InfoOf(kind string) KindInfo {
	if i, ok := kindIndex[kind]; ok {
		return kindTable[i]
	}
	return KindInfo{Kind: kind, Severity: sevNotice, Title: kind, Category: CatSite}
}

// KindsOf lists the kinds of a category in the report's order.
func KindsOf(category string) []string {
	var ks []string
	for _, k := range kindOrder {
		if InfoOf(k).Category == category {
			ks = append(ks, k)
		}
	}
	return ks
}

// KindRank orders kinds for the report: by severity, then by the table's order.
func KindRank(kind string) int {
	if i, ok := kindIndex[kind]; ok {
		return i
	}
	return len(kindTable)
}

// kindOrder is the order of the summary table: problems first, information last. The core kinds have a
// hand-made order; the kinds of the other tables follow in the table's (severity) order.
var kindOrder = append(coreOrder, func() []string {
	core := map[string]bool{}
	for _, k := range coreOrder {
		core[k] = true
	}
	var ks []string
	for _, row := range kindTable {
		if !core[row.Kind] {
			ks = append(ks, row.Kind)
		}
	}
	return ks
}()...)

// coreOrder is the summary's order of the core kinds.
var coreOrder = []string{
	KindRefusesCrawler, KindBrokenLink, KindBrokenPage, KindBotProtection, KindRedirectLoop, KindTooManyRedirects, KindBadRedirect, KindRedirectChain, KindRedirect,
	KindRedirectBlocked, KindRedirectOffsite, KindLinkToBlocked, KindTitleMissing, KindTitleEmpty, KindTitleDuplicate,
	KindTitleTooLong, KindTitleMultiple, KindDescMissing, KindDescDuplicate, KindDescMultiple, KindH1Missing, KindH1Multiple,
	KindNoindex, KindCanonicalElsewhere, KindRenderRobotsMeta, KindRenderCanonical, KindRenderTitle, KindRenderH1, KindRenderLinksOnly,
	KindRenderBlocked, KindRenderJSError, KindRenderFailed, KindSitemapBroken, KindSitemapRedirected, KindSitemapBlocked, KindSitemapNonCanon,
	KindSitemapNotCrawled, KindSitemapOverHold, KindSitemapError, KindSitemapSkipped, KindExternalLink, KindLLMSTxt, KindWordPress,
	KindWordPressProbe, KindSlowedDown,
}

// OrderedKinds lists the kinds of counts in the report's order (the table's order, unknown kinds last),
// so every report and export lists findings the same way.
func OrderedKinds(counts map[string]int) []string {
	rank := map[string]int{}
	for i, k := range kindOrder {
		rank[k] = i
	}
	var ks []string
	for k := range counts {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		ri, iok := rank[ks[i]]
		rj, jok := rank[ks[j]]
		if iok != jok {
			return iok
		}
		if ri != rj {
			return ri < rj
		}
		return ks[i] < ks[j]
	})
	return ks
}

// SitemapHoldMax bounds the sitemap page URLs held back until the link crawl is complete (memory: a
// few MB). URLs beyond it are stored in sitemap_urls but not crawled, and the findings say so. A variable
// only so that a test can lower it.
var SitemapHoldMax = 50_000
