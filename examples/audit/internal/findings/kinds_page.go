package findings

// The kinds found in one page's own response (its URL, HTML, headers and timings), by package pagecheck
// while the page is fetched. Their thresholds are pagecheck's constants, which name the tool they follow.
const (
	// URL
	KindURLUppercase     = "url_uppercase"       // a capital letter in the path
	KindURLUnderscore    = "url_underscore"      // an underscore in the path
	KindURLSpace         = "url_space"           // a space, raw or encoded (%20, + in the query)
	KindURLRepeatedSlash = "url_repeated_slash"  // "//" in the path
	KindURLNonASCII      = "url_non_ascii"       // a byte outside ASCII, raw or %-encoded
	KindURLTooLong       = "url_too_long"        // over seocheck.MaxURLLength characters
	KindURLManyParams    = "url_many_params"     // more than seocheck.MaxQueryParams query parameters
	KindHTTPLinkOnHTTPS  = "http_link_on_https"  // an https page links to an http:// URL of its own site
	KindTooManyLinks     = "too_many_links"      // more than pagecheck.MaxLinks links on the page
	KindLinkNoAnchorText = "link_no_anchor_text" // <a href> links with no text (nor image alt)
	KindInternalNofollow = "internal_nofollow"   // rel=nofollow on links to the site itself
	KindDeadEnd          = "dead_end"            // a page with no internal outlinks
	KindSoft404Text      = "soft_404_text"       // a 200 page whose title or h1 says not found

	// Titles, descriptions, headings
	KindTitleTooShort  = "title_too_short"       // under pagecheck.TitleMin characters
	KindTitleSameAsH1  = "title_same_as_h1"      // the title repeats the h1
	KindDescTooShort   = "description_too_short" // under pagecheck.DescriptionMin characters
	KindDescTooLong    = "description_too_long"  // over pagecheck.DescriptionMax characters
	KindH1TooLong      = "h1_too_long"           // an h1 over pagecheck.H1Max characters
	KindH2Missing      = "h2_missing"            // no h2
	KindHeadingSkipped = "heading_level_skipped" // a heading more than one level below the previous one

	// Content
	KindThinContent  = "thin_content"   // under pagecheck.ThinWords words
	KindLoremIpsum   = "lorem_ipsum"    // placeholder text
	KindHTMLTooLarge = "html_too_large" // over pagecheck.MaxHTMLBytes of HTML
	KindDOMTooLarge  = "dom_too_large"  // over pagecheck.MaxDOMNodes elements
	KindLowTextRatio = "low_text_ratio" // visible text under pagecheck.MinTextRatio of the HTML

	// Images
	KindImageAltMissing = "image_alt_missing"  // <img> without an alt attribute
	KindImageAltTooLong = "image_alt_too_long" // alt over pagecheck.MaxAltLength characters
	KindImageNoSize     = "image_no_size"      // <img> without width or height

	// Canonicals
	KindCanonicalMissing    = "canonical_missing"         // no rel=canonical, in the HTML or the Link header
	KindCanonicalMultiple   = "canonical_multiple"        // more than one rel=canonical
	KindCanonicalRelative   = "canonical_relative"        // the canonical href is a relative URL
	KindCanonicalOutside    = "canonical_outside_head"    // rel=canonical after the head ended
	KindCanonicalHeaderDiff = "canonical_header_mismatch" // the HTML and the HTTP Link header name different canonicals

	// Directives
	KindRobotsNofollow     = "robots_nofollow"            // meta robots or X-Robots-Tag nofollow (or none)
	KindRobotsOther        = "robots_other_directive"     // noarchive, nosnippet, max-snippet and the like
	KindXRobotsTag         = "x_robots_tag"               // the response has an X-Robots-Tag header
	KindRobotsOutside      = "robots_meta_outside_head"   // <meta name=robots> after the head ended
	KindNoindexCanonical   = "noindex_with_canonical"     // noindex and a canonical naming another URL
	KindHreflangInvalid    = "hreflang_invalid"           // an hreflang value Google does not accept
	KindHreflangNoSelf     = "hreflang_no_self"           // hreflang annotations without one for the page itself
	KindHreflangNoXDefault = "hreflang_no_x_default"      // hreflang annotations without x-default
	KindHreflangLang       = "hreflang_html_lang_differs" // the page's own hreflang and its <html lang> name different languages

	// Security
	KindNoHSTS           = "hsts_missing"                 // an https page without Strict-Transport-Security
	KindMixedActive      = "mixed_content_active"         // an https page loads scripts, stylesheets or frames over http
	KindMixedPassive     = "mixed_content_passive"        // an https page loads images over http
	KindFormInsecure     = "form_insecure"                // an https page has a form that posts to http
	KindNoContentOptions = "content_type_options_missing" // no X-Content-Type-Options: nosniff

	// Structured data (the names of seocheck's ProblemKinds)
	KindJSONLDInvalid  = "jsonld_invalid"          // a JSON-LD script that does not parse
	KindJSONLDNoCtx    = "jsonld_no_context"       // JSON-LD without @context
	KindJSONLDNoType   = "jsonld_no_type"          // a JSON-LD node without @type
	KindJSONLDRequired = "jsonld_missing_required" // a property Google requires of the type is missing

	// Mobile and international
	KindViewportMissing = "viewport_missing"  // no <meta name=viewport>
	KindLangMissing     = "html_lang_missing" // no <html lang>
	KindLangInvalid     = "html_lang_invalid" // <html lang> is not a BCP 47 tag
	KindCharsetMissing  = "charset_missing"   // no charset in the Content-Type header or a <meta>

	// Performance
	KindSlowTTFB       = "slow_ttfb"           // time to first byte over pagecheck.SlowTTFB
	KindNotCompressed  = "html_not_compressed" // HTML over pagecheck.CompressMin bytes sent without Content-Encoding
	KindNoCacheHeaders = "no_cache_headers"    // no Cache-Control, Expires, ETag or Last-Modified

	// Social
	KindOGTitleMissing = "og_title_missing"       // no og:title
	KindOGDescMissing  = "og_description_missing" // no og:description
	KindOGImageMissing = "og_image_missing"       // no og:image
)

// pageKinds are the kinds found in one page's own response (its HTML, headers and timings) while it is
// fetched, with their severity, category and advice. The categories are the fixed list's: images,
// structured data, viewport, charset and Open Graph are Content; html lang is Hreflang (international);
// server time, compression and caching are Response codes.
var pageKinds = []KindInfo{
	{KindMixedActive, SevError, "Mixed content (scripts, styles, frames)", "An https page loads a script, stylesheet or frame over http: browsers block it, so the page breaks; serve it over https.", CatSecurity},
	{KindFormInsecure, SevError, "Form posts to http", "A form on an https page sends what visitors type over plain http: browsers warn; make the action https.", CatSecurity},
	{KindJSONLDInvalid, SevError, "Structured data does not parse", "Search engines ignore a JSON-LD script that is not valid JSON: fix its syntax (a validator names the line).", CatContent},
	{KindSoft404Text, SevError, "Soft 404", "The page answers 200 but its title or heading says it was not found: answer 404 (or 410) so search engines drop it, or fix the content.", CatResponseCodes},

	{KindURLSpace, sevWarning, "URL with spaces", "Spaces in URLs are encoded as %20 or + and break when copied or shared: use hyphens.", CatURL},
	{KindURLRepeatedSlash, sevWarning, "URL with repeated slashes", "A double slash in the path usually comes from a template bug and makes duplicate URLs: fix the links.", CatURL},
	{KindHTTPLinkOnHTTPS, sevWarning, "http link on an https page", "Links to the site's own http:// URLs cost a redirect and can leak visitors to plain http: link to https directly.", CatURL},
	{KindLinkNoAnchorText, sevWarning, "Link without anchor text", "Crawlers and screen readers learn nothing about the target of a link with no text: add text, or an alt on the linked image.", CatLinks},
	{KindInternalNofollow, sevWarning, "Internal nofollow link", "rel=nofollow on a link to your own page tells search engines not to follow it or pass it link value: remove it.", CatLinks},
	{KindDeadEnd, sevWarning, "Dead end page", "The page links to no other page of the site, so visitors and crawlers cannot go on: add navigation.", CatLinks},
	{KindThinContent, sevWarning, "Thin content", "Pages with little text rarely rank and may be seen as low quality: add useful content, or noindex the page.", CatContent},
	{KindLoremIpsum, sevWarning, "Placeholder text", "The page still has \"lorem ipsum\" placeholder text: replace it with real content.", CatContent},
	{KindHTMLTooLarge, sevWarning, "HTML too large", "Over 1 MB of HTML is slow to download and parse, and search engines may stop reading it: trim inline data and markup.", CatContent},
	{KindDOMTooLarge, sevWarning, "DOM too large", "A very large DOM slows rendering and interaction (Lighthouse): simplify the markup, paginate long lists.", CatContent},
	{KindImageAltMissing, sevWarning, "Image without alt", "Screen readers and image search rely on alt text: describe the image, or set alt=\"\" if it is decorative.", CatContent},
	{KindCanonicalMultiple, sevWarning, "Several canonicals", "With more than one rel=canonical, search engines may ignore them all: keep exactly one.", CatCanonicals},
	{KindCanonicalOutside, sevWarning, "Canonical outside <head>", "Search engines ignore a rel=canonical in the body: move it into the <head>.", CatCanonicals},
	{KindCanonicalHeaderDiff, sevWarning, "Canonical in HTML and header differ", "The HTML and the HTTP Link header name different canonicals, so search engines may ignore both: make them agree.", CatCanonicals},
	{KindRobotsOutside, sevWarning, "Robots meta outside <head>", "A robots meta tag in the body may be ignored: move it into the <head>.", CatDirectives},
	{KindNoindexCanonical, sevWarning, "Noindex with a canonical elsewhere", "noindex and a canonical to another page are conflicting signals: use one (usually the canonical).", CatDirectives},
	{KindHreflangInvalid, sevWarning, "Invalid hreflang code", "Search engines ignore an hreflang value that is not a valid language(-region) code: use ISO 639-1 and ISO 3166-1, e.g. en-GB.", CatHreflang},
	{KindHreflangNoSelf, sevWarning, "Hreflang without self-reference", "Each page's hreflang set should include the page itself: add an annotation for its own URL.", CatHreflang},
	{KindNoHSTS, sevWarning, "HSTS missing", "Without Strict-Transport-Security, a visitor's first request can be downgraded to http: send the header on https pages.", CatSecurity},
	{KindMixedPassive, sevWarning, "Mixed content (images)", "An https page loads images over http: browsers upgrade or warn and the padlock degrades; serve them over https.", CatSecurity},
	{KindJSONLDNoCtx, sevWarning, "Structured data without @context", "Without \"@context\": \"https://schema.org\" the types mean nothing to search engines: add it.", CatContent},
	{KindJSONLDNoType, sevWarning, "Structured data without @type", "A JSON-LD node without @type describes nothing search engines use: add its schema.org type.", CatContent},
	{KindJSONLDRequired, sevWarning, "Structured data missing a required property", "Google shows no rich result for this type without the property its documentation requires: add it.", CatContent},
	{KindViewportMissing, sevWarning, "Viewport missing", "Without <meta name=viewport> phones render the desktop layout zoomed out: add width=device-width, initial-scale=1.", CatContent},
	{KindLangInvalid, sevWarning, "Invalid html lang", "<html lang> is not a valid language tag, so browsers and screen readers cannot use it: use a BCP 47 tag such as en or en-GB.", CatHreflang},
	{KindCharsetMissing, sevWarning, "Charset not declared", "Without a charset browsers guess the encoding and may garble text: send charset=utf-8 in Content-Type or add <meta charset=\"utf-8\">.", CatContent},
	{KindSlowTTFB, sevWarning, "Slow server response", "The server took over 600 ms to start answering (web.dev's threshold): cache pages or speed up the backend.", CatResponseCodes},
	{KindNotCompressed, sevWarning, "HTML not compressed", "The HTML was sent without gzip or brotli although the crawler accepts gzip: turn on compression on the server.", CatResponseCodes},

	{KindURLUppercase, sevNotice, "URL with uppercase", "URLs are case-sensitive, so mixed case invites duplicates and broken links: use lower case.", CatURL},
	{KindURLUnderscore, sevNotice, "URL with underscores", "Search engines read hyphens as word separators, underscores less reliably: prefer hyphens.", CatURL},
	{KindURLNonASCII, sevNotice, "URL with non-ASCII characters", "Non-ASCII characters are percent-encoded in links and logs and are easy to mistype: check they are intended.", CatURL},
	{KindURLTooLong, sevNotice, "URL too long", "URLs over 115 characters are hard to read and share and are cut in results: shorten them.", CatURL},
	{KindURLManyParams, sevNotice, "URL with many parameters", "More than three query parameters usually comes from faceted navigation that multiplies URLs: keep such URLs out of links or canonicalise them.", CatURL},
	{KindTooManyLinks, sevNotice, "Too many links", "More than 100 links on a page dilutes the value each passes and buries the important ones: link what matters.", CatLinks},
	{KindTitleTooShort, sevNotice, "Title too short", "A title under 30 characters wastes the room search results give it: describe the page better.", CatTitles},
	{KindTitleSameAsH1, sevNotice, "Title same as H1", "The title and the main heading are identical: fine, but the title can target searchers and the h1 readers.", CatTitles},
	{KindDescTooShort, sevNotice, "Description too short", "A description under 70 characters says little in the search snippet: write one or two full sentences.", CatDescriptions},
	{KindDescTooLong, sevNotice, "Description too long", "Descriptions over 155 characters are cut in search results: put what matters first or shorten it.", CatDescriptions},
	{KindH1TooLong, sevNotice, "H1 too long", "A main heading over 70 characters is hard to scan: make it short and put the detail below.", CatHeadings},
	{KindH2Missing, sevNotice, "H2 missing", "Subheadings structure the page for readers and crawlers: add h2 headings to longer pages.", CatHeadings},
	{KindHeadingSkipped, sevNotice, "Heading level skipped", "Headings jump levels (an h3 after an h1), which confuses screen-reader navigation: use the levels in order.", CatHeadings},
	{KindLowTextRatio, sevNotice, "Low text to HTML ratio", "Under 10 % of the HTML is visible text: check for bloated markup, inline scripts or thin content.", CatContent},
	{KindImageAltTooLong, sevNotice, "Image alt too long", "Alt text over 100 characters is tiring for screen-reader users and little of it is used by search: keep it to a short description.", CatContent},
	{KindImageNoSize, sevNotice, "Image without width and height", "Without width and height the layout shifts as images load (CLS): set both attributes.", CatContent},
	{KindCanonicalMissing, sevNotice, "Canonical missing", "Without a canonical, search engines choose between URL variants themselves: add a self-referencing rel=canonical.", CatCanonicals},
	{KindCanonicalRelative, sevNotice, "Relative canonical", "A relative canonical is easy to get wrong on another host or protocol: use an absolute URL.", CatCanonicals},
	{KindRobotsNofollow, sevNotice, "Nofollow directive", "The page asks robots not to follow any of its links, so none pass link value: check that this is intended.", CatDirectives},
	{KindRobotsOther, sevNotice, "Other robots directives", "noarchive, nosnippet, max-snippet and the like limit how results show the page: check they are intended.", CatDirectives},
	{KindXRobotsTag, sevNotice, "X-Robots-Tag header", "The server sends robots directives in an HTTP header, invisible in the HTML: check they are intended.", CatDirectives},
	{KindHreflangNoXDefault, sevNotice, "Hreflang without x-default", "Without x-default, visitors whose language no version matches get the search engine's guess: add one.", CatHreflang},
	{KindHreflangLang, sevNotice, "Hreflang differs from html lang", "The page's own hreflang names another language than its <html lang>: one of them is wrong.", CatHreflang},
	{KindNoContentOptions, sevNotice, "X-Content-Type-Options missing", "Without X-Content-Type-Options: nosniff, browsers may guess a response's type and run it as script: send the header.", CatSecurity},
	{KindLangMissing, sevNotice, "html lang missing", "<html lang> tells browsers, screen readers and translators the page's language: add it.", CatHreflang},
	{KindNoCacheHeaders, sevNotice, "No caching headers", "Without Cache-Control, Expires, ETag or Last-Modified every visit downloads the page again: send validators or a cache policy.", CatResponseCodes},
	{KindOGTitleMissing, sevNotice, "og:title missing", "Social networks show the og:title when the page is shared: add <meta property=\"og:title\">.", CatContent},
	{KindOGDescMissing, sevNotice, "og:description missing", "Shared links show og:description under the title: add <meta property=\"og:description\">.", CatContent},
	{KindOGImageMissing, sevNotice, "og:image missing", "Shared links without og:image appear without a picture and get fewer clicks: add <meta property=\"og:image\">.", CatContent},
}

// IsPageKind reports whether kind is one of the kinds of one page's own response (pageKinds).
func IsPageKind(kind string) bool { return pageKindSet[kind] }

var pageKindSet = func() map[string]bool {
	m := make(map[string]bool, len(pageKinds))
	for _, k := range pageKinds {
		m[k.Kind] = true
	}
	return m
}()
