package findings

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"

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

// AnalysisInput is everything the analysis reads: rows of one crawl from the database.
type AnalysisInput struct {
	Pages       []*store.PageRecord   // every page row, fetched or blocked
	Links       []store.LinkRecord    // every link row
	SitemapURLs [][2]string           // (sitemap, normalized page URL)
	Sitemaps    []store.SitemapRecord // the sitemaps fetched
	Requests    []store.RequestRecord // llms.txt and the WordPress probes
	SlowedBy    string                // the URL whose 429 slowed the run ("" if none)
	// NotCrawled lists (sitemap, URL) pairs the page limit left out; OverHold counts sitemap entries past
	// sitemapHoldMax, the first of them being FirstOverHold. Both are known only to the crawl, not the rows.
	NotCrawled    [][2]string
	OverHold      int
	FirstOverHold string
	Normalize     func(string) string   // canonical comparison; identity when nil
	Rendered      []*store.RenderRecord // the rendered pass's pages, with the crawler's fields of each
}

// Analyze derives the findings from the stored pages. It is a pure function of the crawl's rows (plus the
// sitemap URLs the crawl left out, which have no row), so it runs the same after a finished crawl and after
// an interrupted one.
func Analyze(in AnalysisInput) []store.FindingRecord {
	norm := in.Normalize
	if norm == nil {
		norm = func(s string) string { return s }
	}
	var out []store.FindingRecord
	add := func(url, kind, format string, args ...any) {
		out = append(out, store.FindingRecord{URL: url, Kind: kind, Detail: fmt.Sprintf(format, args...)})
	}

	byURL := make(map[string]*store.PageRecord, len(in.Pages))
	for _, p := range in.Pages {
		byURL[p.URL] = p
	}
	referrers := map[string][]string{} // internal target -> distinct pages linking to it
	seenRef := map[[2]string]bool{}
	external := map[string][]string{}
	seenExt := map[[2]string]bool{}
	for _, l := range in.Links {
		k := [2]string{l.From, l.To}
		if l.External {
			if !seenExt[k] {
				seenExt[k] = true
				external[l.To] = append(external[l.To], l.From)
			}
			continue
		}
		if l.From == l.To || seenRef[k] {
			continue
		}
		seenRef[k] = true
		referrers[l.To] = append(referrers[l.To], l.From)
	}
	linkedFrom := func(u string) string {
		refs := referrers[u]
		if len(refs) == 0 {
			return "not linked from any crawled page"
		}
		sort.Strings(refs)
		shown := refs
		if len(shown) > referrersMax {
			shown = shown[:referrersMax]
		}
		s := fmt.Sprintf("linked from %d page%s: %s", len(refs), store.Plural(len(refs)), strings.Join(shown, ", "))
		if len(refs) > len(shown) {
			s += ", ..."
		}
		return s
	}

	// Broken URLs, redirects, blocked URLs.
	for _, p := range in.Pages {
		if p.Blocked {
			if len(referrers[p.URL]) > 0 {
				add(p.URL, KindLinkToBlocked, "%s; %s", blockedReason(p), linkedFrom(p.URL))
			}
			continue
		}
		switch p.ErrKind {
		case "too_many_redirects":
			add(p.URL, KindTooManyRedirects, "%d hops, gave up: %s", len(p.Redirects), Chain(p))
		case "redirect_loop":
			add(p.URL, KindRedirectLoop, "%s", Chain(p))
		case "disallowed_redirect":
			add(p.URL, KindRedirectBlocked, "%s; %s (not requested)", Chain(p), p.Err)
		case "off_limits":
			// The host's robots.txt was unreachable or 5xx, a complete disallow. For a redirect hop that is a
			// blocked redirect; for the page's own host the crawl stopped there and said so.
			if len(p.Redirects) > 0 {
				add(p.URL, KindRedirectBlocked, "%s; %s (not requested)", Chain(p), p.Err)
			}
		case "offsite_redirect":
			add(p.URL, KindRedirectOffsite, "%s (other site, not requested)", Chain(p))
		case "bad_redirect":
			add(p.URL, KindBadRedirect, "%s: %s", Chain(p), p.Err)
		default:
			switch {
			case len(p.Redirects) == 1:
				add(p.URL, KindRedirect, "%s", Chain(p))
			case len(p.Redirects) > 1:
				add(p.URL, KindRedirectChain, "%d hops: %s", len(p.Redirects), Chain(p))
			}
		}
		if p.ErrKind == ErrKindRefused {
			add(p.URL, KindRefusesCrawler, "%s", p.Err)
		}
		if p.ErrKind == ErrKindBotProtection {
			add(p.URL, KindBotProtection, "%s; HTTP %d; %s", p.Err, p.Status, linkedFrom(p.URL))
		}
		if broken, why := IsBroken(p); broken {
			kind := KindBrokenLink
			if len(referrers[p.URL]) == 0 {
				kind = KindBrokenPage
			}
			add(p.URL, kind, "%s; %s", why, linkedFrom(p.URL))
		}
	}

	// Content findings, once per document and named by the document's own URL (where a redirect ended):
	// a URL that redirected to a page crawled in its own right is skipped.
	var content []*store.PageRecord
	seenFinal := map[string]bool{}
	for _, p := range in.Pages {
		if !p.Parsed || p.Status != http.StatusOK {
			continue
		}
		final := p.FinalURL
		if final == "" {
			final = p.URL
		}
		if final != p.URL {
			if q, ok := byURL[final]; ok && q.Parsed {
				continue
			}
		}
		if seenFinal[final] {
			continue
		}
		seenFinal[final] = true
		content = append(content, p)
	}
	titles := map[string][]string{}
	descs := map[string][]string{}
	for _, p := range content {
		u := p.FinalURL
		if u == "" {
			u = p.URL
		}
		// A page that names another URL as canonical, or asks not to be indexed, is expected to share its
		// title and description with the page it defers to (?sort=price variants): it is not a duplicate.
		canonElsewhere := false
		if c := strings.TrimSpace(p.Canonical); c != "" && norm(c) != norm(u) {
			canonElsewhere = true
		}
		indexable := !canonElsewhere && Noindex(p) == ""
		t := strings.TrimSpace(p.Title)
		switch {
		case p.TitleCount == 0:
			add(u, KindTitleMissing, "no <title> element")
		case t == "":
			add(u, KindTitleEmpty, "<title> is empty")
		default:
			if n := utf8.RuneCountInString(t); n > titleMax {
				add(u, KindTitleTooLong, "%d characters (over %d): %q", n, titleMax, t)
			}
			if indexable {
				key := strings.ToLower(strings.Join(strings.Fields(t), " "))
				titles[key] = append(titles[key], u)
			}
		}
		if p.TitleCount > 1 {
			add(u, KindTitleMultiple, "%d <title> elements", p.TitleCount)
		}
		d := strings.TrimSpace(p.Description)
		switch {
		case p.DescriptionCount == 0:
			add(u, KindDescMissing, "no meta description")
		case d == "":
			add(u, KindDescMissing, "meta description is empty")
		case indexable:
			key := strings.ToLower(strings.Join(strings.Fields(d), " "))
			descs[key] = append(descs[key], u)
		}
		if p.DescriptionCount > 1 {
			add(u, KindDescMultiple, "%d meta descriptions", p.DescriptionCount)
		}
		switch {
		case p.H1Count == 0:
			add(u, KindH1Missing, "no <h1>")
		case p.H1Count > 1:
			add(u, KindH1Multiple, "%d <h1> elements", p.H1Count)
		}
		if src := Noindex(p); src != "" {
			add(u, KindNoindex, "%s", src)
		}
		if canonElsewhere {
			add(u, KindCanonicalElsewhere, "canonical is %s", strings.TrimSpace(p.Canonical))
		}
	}
	dup := func(groups map[string][]string, kind, what string) {
		for _, urls := range groups {
			if len(urls) < 2 {
				continue
			}
			sort.Strings(urls)
			for _, u := range urls {
				var others []string
				for _, o := range urls {
					if o != u {
						others = append(others, o)
					}
				}
				if len(others) > referrersMax {
					others = append(others[:referrersMax], "...")
				}
				add(u, kind, "same %s as %d other page%s: %s", what, len(urls)-1, store.Plural(len(urls)-1), strings.Join(others, ", "))
			}
		}
	}
	dup(titles, KindTitleDuplicate, "title")
	dup(descs, KindDescDuplicate, "meta description")

	// Sitemap URLs.
	seenSM := map[string]bool{}
	for _, su := range in.SitemapURLs {
		u := su[1]
		if seenSM[u] {
			continue
		}
		seenSM[u] = true
		p, ok := byURL[u]
		if !ok {
			continue // not crawled (page or depth limit)
		}
		switch {
		case p.Blocked:
			add(u, KindSitemapBlocked, "listed in %s; %s", su[0], blockedReason(p))
			continue
		case len(p.Redirects) > 0:
			add(u, KindSitemapRedirected, "listed in %s; %s", su[0], Chain(p))
		}
		if broken, why := IsBroken(p); broken {
			add(u, KindSitemapBroken, "listed in %s; %s", su[0], why)
			continue
		}
		if c := strings.TrimSpace(p.Canonical); p.Parsed && c != "" && norm(c) != norm(u) {
			add(u, KindSitemapNonCanon, "listed in %s; canonical is %s", su[0], c)
		}
	}
	for _, nc := range in.NotCrawled {
		if _, ok := byURL[nc[1]]; !ok {
			add(nc[1], KindSitemapNotCrawled, "listed in %s; not crawled: page limit", nc[0])
		}
	}
	if in.OverHold > 0 {
		add(in.FirstOverHold, KindSitemapOverHold, "%d sitemap entries (this one the first) past the %d sitemap URLs held for crawling: not crawled unless a link led there",
			in.OverHold, SitemapHoldMax)
	}
	for _, sm := range in.Sitemaps {
		if sm.Err != "" || (sm.Status != 0 && sm.Status != http.StatusOK) {
			why := sm.Err
			if why == "" {
				why = fmt.Sprintf("HTTP %d", sm.Status)
			}
			add(sm.URL, KindSitemapError, "level %d sitemap: %s", sm.Level, why)
		}
		if sm.Skipped > 0 {
			add(sm.URL, KindSitemapSkipped, "%d of %d entries skipped (invalid, duplicate or outside the sitemap's scope)", sm.Skipped, sm.Skipped+sm.Entries)
		}
	}

	// External links: recorded, never requested.
	extURLs := make([]string, 0, len(external))
	for u := range external {
		extURLs = append(extURLs, u)
	}
	sort.Strings(extURLs)
	for _, u := range extURLs {
		refs := external[u]
		sort.Strings(refs)
		if len(refs) > referrersMax {
			refs = append(refs[:referrersMax:referrersMax], "...")
		}
		add(u, KindExternalLink, "other site, not requested; linked from %s", strings.Join(refs, ", "))
	}

	// llms.txt and WordPress.
	for _, r := range in.Requests {
		switch r.Purpose {
		case "llms":
			add(r.URL, KindLLMSTxt, "%s", llmsDetail(r))
		case "wordpress":
			add(r.URL, KindWordPressProbe, "%s", probeDetail(r))
		}
	}
	for _, p := range in.Pages {
		if p.WordPress {
			add(p.URL, KindWordPress, "looks like WordPress: %s", OrDash(p.WordPressHint))
			break
		}
	}
	if in.SlowedBy != "" {
		add(in.SlowedBy, KindSlowedDown, "429 Too Many Requests: the rest of the run went one request at a time with a 3 s gap")
	}
	return append(out, analyzeRender(in.Rendered)...)
}

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
	has := func(v string) bool {
		for _, f := range strings.FieldsFunc(strings.ToLower(v), func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
			if f == "noindex" || f == "none" {
				return true
			}
		}
		return false
	}
	switch {
	case has(p.MetaRobots):
		return "meta robots: " + p.MetaRobots
	case has(p.XRobots):
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
