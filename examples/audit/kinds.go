package main

// severity ranks a finding kind: what to fix first. The report, the CSV and JSON exports and compare
// all read it from kindTable.
type severity int

const (
	sevError   severity = iota // something is broken for visitors or search engines: fix it
	sevWarning                 // likely to cost traffic or crawl budget: fix when you can
	sevNotice                  // information, often intended: check it is what you want
)

func (s severity) String() string {
	switch s {
	case sevError:
		return "error"
	case sevWarning:
		return "warning"
	}
	return "notice"
}

// kindInfo is what the report says about one finding kind.
type kindInfo struct {
	Kind     string
	Severity severity
	Title    string // a short human name
	Advice   string // one line: why it matters and how to fix it
}

// kindTable is the one place where every finding kind gets its severity and advice. A test checks that
// every kind analyze can emit (every k* constant) has a row, so a new kind cannot reach the report
// without one.
var kindTable = []kindInfo{
	{kBrokenLink, sevError, "Broken internal link", "Visitors and crawlers following these links reach an error page: restore the page, redirect it, or change the links to it."},
	{kBrokenPage, sevError, "Broken page", "The start page or a sitemap URL answers an error and no crawled page links to it: restore it or remove it from the sitemap."},
	{kRedirectLoop, sevError, "Redirect loop", "The redirects lead back to a URL already visited, so the page can never be reached: make the chain end at a page that answers 200."},
	{kTooManyRedirects, sevError, "Too many redirects", "More than ten hops: browsers and crawlers give up before the end; redirect straight to the final URL."},
	{kBadRedirect, sevError, "Bad redirect", "A redirect without a usable Location header leads nowhere: send a valid absolute or relative Location."},
	{kTitleMissing, sevError, "Title missing", "The title is the headline of a search result; without one, search engines invent it: add a unique <title>."},
	{kTitleEmpty, sevError, "Title empty", "An empty <title> is as bad as none: write a short, unique title for the page."},
	{kSitemapBroken, sevError, "Sitemap URL broken", "A sitemap should list only pages that work: fix the page or remove it from the sitemap."},
	{kSitemapError, sevError, "Sitemap unreadable", "A sitemap that cannot be fetched or parsed tells search engines nothing: fix its URL, status or format."},
	{kRedirectChain, sevWarning, "Redirect chain", "Each extra hop costs time and crawl budget and may lose link value: point links and the first redirect at the final URL."},
	{kRedirectBlocked, sevWarning, "Redirect to a blocked URL", "The redirect target is off limits by robots.txt, so crawlers stop there: redirect elsewhere or allow the target."},
	{kLinkToBlocked, sevWarning, "Link to a blocked URL", "Internal links point at URLs robots.txt disallows: crawlers cannot follow them; unlink them or allow them if they should be found."},
	{kTitleDuplicate, sevWarning, "Duplicate title", "Pages sharing a title compete with each other in search results: give each page its own title."},
	{kTitleMultiple, sevWarning, "Several titles", "Only one <title> counts and which one is up to the reader: keep exactly one."},
	{kDescMissing, sevWarning, "Description missing", "Without a meta description search engines pick a snippet themselves: write one that sums up the page."},
	{kDescDuplicate, sevWarning, "Duplicate description", "The same snippet on several pages does not tell searchers which to choose: write one per page."},
	{kH1Missing, sevWarning, "H1 missing", "The main heading tells readers and crawlers what the page is about: add one <h1>."},
	{kSitemapRedirected, sevWarning, "Sitemap URL redirects", "Sitemaps should list final URLs: replace the listed URL with where it redirects to."},
	{kSitemapBlocked, sevWarning, "Sitemap URL blocked", "The sitemap lists a URL robots.txt disallows, a contradiction: remove it from the sitemap or allow it."},
	{kSitemapNonCanon, sevWarning, "Sitemap URL not canonical", "The listed page names another URL as canonical: list the canonical URL instead."},
	{kSitemapSkipped, sevWarning, "Sitemap entries skipped", "Entries that are invalid, repeated or outside the sitemap's own scope are ignored by search engines: fix or remove them."},
	{kRenderRobotsMeta, sevWarning, "Robots meta changed by JavaScript", "The page's script changes its meta robots (adds noindex, say): crawlers that read the HTML alone obey another rule than the browser; put the intended rule in the HTML."},
	{kRenderCanonical, sevWarning, "Canonical changed by JavaScript", "The canonical in the HTML is not the one the script ends with: search engines may use either; serve the intended canonical in the HTML."},
	{kRenderTitle, sevWarning, "Title changed by JavaScript", "Crawlers that do not run JavaScript see another title than visitors: serve the final title in the HTML."},
	{kRenderLinksOnly, sevWarning, "Links only after JavaScript", "These internal links exist only once the script has run: crawlers that read the HTML cannot follow them; put them in the HTML."},
	{kRenderBlocked, sevWarning, "Page resource blocked by robots.txt", "robots.txt forbids a script, stylesheet or request the page needs, so search engines cannot render it as visitors see it: allow it."},
	{kRenderFailed, sevWarning, "Page resource failed", "A script, stylesheet, image or request of the page answered an error or did not answer: fix or remove it."},
	{kRenderJSError, sevWarning, "JavaScript error", "The page's script threw an error while loading, so part of the page may not appear: fix the script."},
	{kSlowedDown, sevWarning, "Crawl slowed down", "The server answered 429 Too Many Requests, so the rest of the crawl ran one request at a time: check rate limits if the audit was wanted."},
	{kRedirect, sevNotice, "Redirect", "One hop is fine for moved pages, but internal links should point straight at the final URL."},
	{kRedirectOffsite, sevNotice, "Redirect to another site", "The redirect leaves the site, so the audit does not follow it: check that it is intended."},
	{kTitleTooLong, sevNotice, "Title too long", "Titles over 60 characters are cut in search results: put what matters first or shorten it."},
	{kDescMultiple, sevNotice, "Several descriptions", "Only one meta description is used: keep exactly one."},
	{kRenderH1, sevNotice, "H1 changed by JavaScript", "The main heading in the HTML is not the one the script ends with: check that crawlers reading the HTML see a fitting one."},
	{kH1Multiple, sevNotice, "Several H1", "Several main headings blur what the page is about: usually one <h1> is clearer."},
	{kNoindex, sevNotice, "Noindex", "The page asks not to be indexed and will not appear in search results: check that this is intended."},
	{kCanonicalElsewhere, sevNotice, "Canonicalised elsewhere", "The page names another URL as canonical, so that URL is indexed instead: check that it is intended."},
	{kSitemapNotCrawled, sevNotice, "Sitemap URL not crawled", "The page limit was used up by linked pages first: raise -max-pages to audit these too."},
	{kSitemapOverHold, sevNotice, "Sitemap URLs over the limit", "Past the 50,000 sitemap URLs held for crawling: split the audit or raise the limit to audit them."},
	{kExternalLink, sevNotice, "External link", "Links to other sites are recorded, never requested: check them with a link checker if they matter."},
	{kLLMSTxt, sevNotice, "llms.txt", "Whether the site publishes /llms.txt, a Markdown summary for language-model tools; optional."},
	{kWordPress, sevNotice, "WordPress", "The site looks like WordPress, so the four WordPress requests were made; their answers are listed as wordpress_probe."},
	{kWordPressProbe, sevNotice, "WordPress endpoint", "What a public WordPress endpoint answers: close /xmlrpc.php and restrict /wp-json/ if you do not use them."},
}

// kindIndex finds a kind's row; kinds not in the table (none, a test makes sure) read as notices.
var kindIndex = func() map[string]int {
	m := make(map[string]int, len(kindTable))
	for i, k := range kindTable {
		m[k.Kind] = i
	}
	return m
}()

// infoOf returns the table row of a kind.
func infoOf(kind string) kindInfo {
	if i, ok := kindIndex[kind]; ok {
		return kindTable[i]
	}
	return kindInfo{Kind: kind, Severity: sevNotice, Title: kind}
}

// kindRank orders kinds for the report: by severity, then by the table's order.
func kindRank(kind string) int {
	if i, ok := kindIndex[kind]; ok {
		return i
	}
	return len(kindTable)
}
