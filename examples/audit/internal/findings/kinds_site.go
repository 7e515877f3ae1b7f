package findings

import "github.com/politecrawl/polite/examples/audit/internal/neardup"

// Finding kinds of the passes over the whole crawl (passes.go): the link graph, duplicates across pages,
// what canonicals and hreflang annotations point at, and the rendered pass's directives. Stable names.
const (
	KindLinkToRedirect    = "link_to_redirect"              // internal links point at a URL that redirects
	KindLinkNoResponse    = "link_no_response"              // internal links point at a URL that timed out or gave no response
	KindSoft404Copy       = "soft_404_copy"                 // a 200 page that is a near-copy of the site's real 404 page
	KindSingleInlink      = "single_inlink"                 // a page only one other page links to
	KindTooDeep           = "page_too_deep"                 // more than deepClicksMax clicks from the start page
	KindOrphan            = "orphan_page"                   // listed in a sitemap, linked from no crawled page
	KindH1Duplicate       = "h1_duplicate"                  // one row per group of pages sharing their first <h1>
	KindExactDuplicate    = "content_exact_duplicate"       // one row per group of pages with the same visible text
	KindNearDuplicate     = "content_near_duplicate"        // one row per group of pages at least 90 % alike
	KindCanonicalRedirect = "canonical_to_redirect"         // the canonical URL redirects
	KindCanonicalError    = "canonical_to_error"            // the canonical URL answers an error or nothing
	KindCanonicalBlocked  = "canonical_to_blocked"          // robots.txt disallows the canonical URL
	KindCanonicalNoindex  = "canonical_to_noindex"          // the canonical URL is noindex
	KindCanonicalChain    = "canonical_chain"               // the canonical URL names yet another canonical
	KindSitemapNoindex    = "sitemap_url_noindex"           // a sitemap lists a noindex page
	KindNoindexLinked     = "noindex_linked"                // other pages link to a noindex page
	KindHreflangNoReturn  = "hreflang_no_return"            // an hreflang target does not annotate the page back
	KindHreflangNot200    = "hreflang_target_not_200"       // an hreflang target redirects, errors or is blocked
	KindHreflangNonCanon  = "hreflang_target_not_canonical" // an hreflang target names another canonical
	KindHreflangNoindex   = "hreflang_target_noindex"       // an hreflang target is noindex
	KindRenderDescription = "render_description_changed"    // JavaScript changes (or sets) the meta description
	KindRenderNoindex     = "render_noindex_changed"        // noindex appears or disappears once JavaScript ran
	KindRenderNofollow    = "render_nofollow_changed"       // meta nofollow, or nofollow on links, differs after JavaScript
	KindRenderHreflang    = "render_hreflang_changed"       // the hreflang annotations differ after JavaScript
)

// Thresholds of the site passes.
const (
	// deepClicksMax is the most clicks from the start page a page may need: Semrush's Site Audit flags
	// pages that take more than 3 clicks to reach (Screaming Frog shows depth without a threshold).
	deepClicksMax = 3
	// nearDupThreshold is the similarity from which two pages are near-duplicates, Screaming Frog's
	// default of 90 %; soft404Threshold is the same for a 200 page against the site's real 404 page.
	nearDupThreshold = neardup.DefaultThreshold
	soft404Threshold = neardup.DefaultThreshold
	// nearDupMinWords leaves pages of fewer visible words out of the near-duplicate and soft 404
	// comparisons: their text is mostly the template's (Screaming Frog likewise compares only the content
	// area; thin content is its own finding).
	nearDupMinWords = 50
	// notFoundRefs is how many of the site's 404 pages (the first by depth and URL) a page is compared
	// with for soft_404_copy: sites often have one 404 template, sometimes a few.
	notFoundRefs = 8
)

// siteKinds are the kinds found by the passes over the whole crawl (link graph, duplicates, canonical and
// hreflang targets, link score), with their severity, category and advice. Their Kind* constants are
// declared in this file.
var siteKinds = []KindInfo{
	{KindLinkNoResponse, SevError, "Link to a URL with no response", "Internal links point at a URL that timed out or never answered: visitors wait and give up; fix the server or remove the links.", CatLinks},
	{KindCanonicalError, SevError, "Canonical to an error", "The canonical URL answers an error, so search engines may ignore the canonical or drop both: point it at a page that answers 200.", CatCanonicals},
	{KindLinkToRedirect, sevWarning, "Internal link to a redirect", "Internal links point at a URL that redirects: each click costs a hop; link straight to the final URL (Screaming Frog: internal redirection).", CatLinks},
	{KindSoft404Copy, sevWarning, "Soft 404 (copy of the 404 page)", "The page answers 200 but its text is at least 90 % that of the site's own 404 page: answer 404 or 410 for pages that do not exist.", CatResponseCodes},
	{KindOrphan, sevWarning, "Orphan page", "A sitemap lists the page but no crawled page links to it: visitors cannot reach it; link to it or drop it from the sitemap.", CatLinks},
	{KindH1Duplicate, sevWarning, "Duplicate H1", "Several indexable pages share their main heading, so neither says what sets it apart: give each page its own <h1>.", CatHeadings},
	{KindExactDuplicate, sevWarning, "Exact duplicate content", "Several indexable pages have the same visible text: search engines pick one; canonicalise the copies or make them distinct.", CatContent},
	{KindNearDuplicate, sevWarning, "Near-duplicate content", "Pages at least 90 % alike (MinHash over 3-word shingles, Screaming Frog's threshold): merge them, canonicalise or make them distinct.", CatContent},
	{KindCanonicalRedirect, sevWarning, "Canonical to a redirect", "The canonical URL redirects, so the signal points at a URL that is not the page: name the final URL as canonical.", CatCanonicals},
	{KindCanonicalBlocked, sevWarning, "Canonical to a blocked URL", "robots.txt disallows the canonical URL, so search engines cannot confirm it: allow it or name another canonical.", CatCanonicals},
	{KindCanonicalNoindex, sevWarning, "Canonical to a noindex page", "The canonical URL asks not to be indexed, contradicting the canonical: index it or name another canonical.", CatCanonicals},
	{KindCanonicalChain, sevWarning, "Canonical chain", "The canonical URL names another canonical again: search engines may not follow the chain; point every page at the final canonical.", CatCanonicals},
	{KindSitemapNoindex, sevWarning, "Noindex page in a sitemap", "The sitemap asks for the page to be indexed and the page asks not to be: remove it from the sitemap or drop the noindex.", CatDirectives},
	{KindHreflangNoReturn, sevWarning, "Hreflang without return link", "An hreflang target does not annotate this page back, so search engines ignore the pair: add the return annotation.", CatHreflang},
	{KindHreflangNot200, sevWarning, "Hreflang to a non-200 URL", "An hreflang target redirects, errors or is blocked: annotate only pages that answer 200.", CatHreflang},
	{KindHreflangNonCanon, sevWarning, "Hreflang to a non-canonical URL", "An hreflang target names another URL as canonical: annotate the canonical URLs only.", CatHreflang},
	{KindHreflangNoindex, sevWarning, "Hreflang to a noindex page", "An hreflang target asks not to be indexed, so it cannot be shown for its language: annotate indexable pages only.", CatHreflang},
	{KindRenderNoindex, sevWarning, "Noindex changed by JavaScript", "noindex is in the HTML and not after JavaScript, or the other way round: crawlers that do not render obey the other one; serve the intended directive in the HTML.", CatRendering},
	{KindRenderNofollow, sevWarning, "Nofollow changed by JavaScript", "meta nofollow, or rel=nofollow on internal links, differs between the HTML and the rendered page: put the intended nofollow in the HTML.", CatRendering},
	{KindRenderHreflang, sevWarning, "Hreflang changed by JavaScript", "The hreflang annotations in the HTML are not those after JavaScript: crawlers that do not render see another set; serve the final annotations in the HTML.", CatRendering},
	{KindRenderDescription, sevNotice, "Description changed by JavaScript", "The meta description in the HTML is not the one after JavaScript: search engines may show either; serve the final one in the HTML.", CatRendering},
	{KindSingleInlink, sevNotice, "Only one internal link", "Only one crawled page links here, so the page is easy to lose and gets little link score: link to it from related pages.", CatLinks},
	{KindTooDeep, sevNotice, "Page deep in the site", "The page takes more than 3 clicks from the start page (Semrush's threshold): link to it from higher up so visitors and crawlers find it.", CatLinks},
	{KindNoindexLinked, sevNotice, "Linked noindex page", "Other pages link to a page that asks not to be indexed: fine for a login or basket; otherwise drop the noindex or the links.", CatDirectives},
}

// IsSiteKind says whether kind is one of the passes' kinds over the whole crawl (siteKinds).
func IsSiteKind(kind string) bool {
	for _, k := range siteKinds {
		if k.Kind == kind {
			return true
		}
	}
	return false
}
