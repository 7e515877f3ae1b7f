package findings

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/politecrawl/polite/examples/audit/internal/store"
)

// Finding kinds, as stored in findings.kind. The names are stable: queries and scripts rely on them.
const (
	KindBrokenLink         = "broken_link"          // internal URL answered 4xx/5xx or failed, with the pages linking to it
	KindBrokenPage         = "broken_page"          // same, for a URL nothing linked to (start page, sitemap-only URL)
	KindRedirect           = "redirect"             // one redirect hop
	KindRedirectChain      = "redirect_chain"       // two or more hops
	KindRedirectLoop       = "redirect_loop"        // a URL came back within one chain
	KindTooManyRedirects   = "too_many_redirects"   // more than ten hops
	KindRedirectBlocked    = "redirect_to_blocked"  // a hop pointed at a URL robots.txt disallows, or at an off-limits host (not requested)
	KindRedirectOffsite    = "redirect_offsite"     // a hop left the site (not requested)
	KindBadRedirect        = "bad_redirect"         // missing or unusable Location
	KindTitleMissing       = "title_missing"        // no <title> at all
	KindTitleEmpty         = "title_empty"          // a <title> with no text
	KindTitleTooLong       = "title_too_long"       // over titleMax characters
	KindTitleMultiple      = "title_multiple"       // more than one <title>
	KindTitleDuplicate     = "title_duplicate"      // same title as another page
	KindDescMissing        = "description_missing"  // no or empty meta description
	KindDescMultiple       = "description_multiple" // more than one meta description
	KindDescDuplicate      = "description_duplicate"
	KindH1Missing          = "h1_missing"
	KindH1Multiple         = "h1_multiple"
	KindNoindex            = "noindex"             // meta robots or X-Robots-Tag noindex
	KindCanonicalElsewhere = "canonical_elsewhere" // rel=canonical names another URL
	KindLinkToBlocked      = "link_to_blocked"     // internal links to a URL robots.txt disallows
	KindSitemapRedirected  = "sitemap_url_redirected"
	KindSitemapBroken      = "sitemap_url_broken"
	KindSitemapBlocked     = "sitemap_url_blocked"
	KindSitemapNonCanon    = "sitemap_url_non_canonical"
	KindSitemapNotCrawled  = "sitemap_url_not_crawled" // left out by the page limit: the links used up -max-pages first
	KindSitemapOverHold    = "sitemap_urls_over_limit" // entries past the 50,000 sitemap URLs held for crawling
	KindSitemapError       = "sitemap_error"           // a sitemap that could not be fetched or read
	KindSitemapSkipped     = "sitemap_skipped"         // entries a sitemap lists but the protocol rules out (invalid, out of its scope)
	KindExternalLink       = "external_link"           // recorded, never requested
	KindLLMSTxt            = "llms_txt"                // present or not
	KindWordPress          = "wordpress"               // detected, with the reason
	KindWordPressProbe     = "wordpress_probe"
	KindSlowedDown         = "slowed_down"     // a 429 slowed the rest of the run
	KindBotProtection      = "bot_protection"  // bot protection (Cloudflare, Akamai, DataDome...) answered with a challenge or block, not the page
	KindRefusesCrawler     = "refuses_crawler" // 401/403 to robots.txt and the start page: the site refuses this crawler, the crawl stopped
)

// ErrKindRefused is pages.error_kind of the start page of a site that refuses the crawler (401/403 to
// robots.txt and to the page, a user-agent rule); its error is the message naming the user agent and the
// statuses. Not a broken page: the site said no.
const ErrKindRefused = "refused"

// ErrKindBotProtection is pages.error_kind of a URL bot protection answered for (the status is kept):
// the site did not show the page, so it is not a broken page.
const ErrKindBotProtection = "bot_protection"

const (
	titleMax     = 60 // characters; longer titles are cut in search results
	referrersMax = 10 // referrers listed in a finding's detail; the links table has all of them
)

func blockedReason(p *store.PageRecord) string {
	if p.RobotsRule != "" {
		return "blocked by robots.txt: " + p.RobotsRule
	}
	return "blocked by robots.txt"
}

// IsBroken says whether an internal URL failed: 4xx/5xx, no response, or a redirect chain that led nowhere.
func IsBroken(p *store.PageRecord) (bool, string) {
	switch {
	case p.Blocked, p.ErrKind == ErrKindBotProtection, p.ErrKind == ErrKindRefused:
		return false, "" // bot protection and a refusal are reported as such: the page itself was not seen
	case p.Status == http.StatusTooManyRequests:
		return true, "HTTP 429 Too Many Requests, still after 2 retries (rate limited: the page itself may be fine)"
	case p.Status >= 400:
		return true, fmt.Sprintf("HTTP %d", p.Status)
	case p.Status == 0 && p.Err != "":
		switch p.ErrKind {
		case "disallowed_redirect", "offsite_redirect", "off_limits":
			return false, "" // not requested on purpose; reported as a redirect finding
		case "timeout":
			return true, "timed out: " + p.Err
		}
		return true, p.Err
	}
	return false, ""
}

// Chain is a page's redirect chain in one line (url -301-> next ... (200)), the detail of the redirect
// findings and the report's redirect column.
func Chain(p *store.PageRecord) string {
	var b strings.Builder
	b.WriteString(p.URL)
	for _, h := range p.Redirects {
		fmt.Fprintf(&b, " -%d-> %s", h.Status, h.Location)
	}
	if p.Status != 0 && len(p.Redirects) > 0 {
		fmt.Fprintf(&b, " (%d)", p.Status)
	}
	return b.String()
}

// Noindex says where a page asks not to be indexed (meta robots or X-Robots-Tag, with the value), or ""
// when it does not: the noindex finding's detail and the report's indexability.
func Noindex(p *store.PageRecord) string {
	switch {
	case store.HasRobotsToken(p.MetaRobots, "noindex"):
		return "meta robots: " + p.MetaRobots
	case store.HasRobotsToken(p.XRobots, "noindex"):
		return "X-Robots-Tag: " + p.XRobots
	}
	return ""
}

func llmsDetail(r store.RequestRecord) string {
	switch {
	case r.Err != "":
		return "not published or not readable: " + r.Err
	case r.Status == http.StatusOK && store.IsHTML(r.ContentType):
		// llms.txt is Markdown; an HTML page here is a site answering every path with a page (a soft 404).
		return fmt.Sprintf("probably not published: HTTP 200 but %s, %d bytes (a page served for any path?)", r.ContentType, r.Bytes)
	case r.Status == http.StatusOK:
		return fmt.Sprintf("published (HTTP 200, %s, %d bytes)", OrDash(r.ContentType), r.Bytes)
	case r.Status >= 300 && r.Status < 400:
		return fmt.Sprintf("not published (HTTP %d redirect to %s)", r.Status, OrDash(r.Location))
	default:
		return fmt.Sprintf("not published (HTTP %d)", r.Status)
	}
}

func probeDetail(r store.RequestRecord) string {
	switch {
	case r.Err != "":
		return r.Err
	case r.Location != "":
		return fmt.Sprintf("HTTP %d, Location %s", r.Status, r.Location)
	default:
		return fmt.Sprintf("HTTP %d, %s, %d bytes", r.Status, OrDash(r.ContentType), r.Bytes)
	}
}

// OrDash shows an empty value as "-", so a detail or a table cell never reads as a missing word.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
