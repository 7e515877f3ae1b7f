package findings

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/politecrawl/polite/examples/audit/internal/store"
)

// Finding kinds of the rendered pass. Each compares the browser's view of a page with the crawler's, or
// reports what the page's JavaScript needed and did not get. Stable names, like the others.
const (
	KindRenderTitle      = "render_title_changed"              // JavaScript changes (or sets) the <title>
	KindRenderCanonical  = "render_canonical_changed"          // JavaScript changes (or adds) rel=canonical
	KindRenderRobotsMeta = "render_robots_meta_changed"        // JavaScript changes meta robots, e.g. adds noindex
	KindRenderH1         = "render_h1_changed"                 // JavaScript changes the first <h1>
	KindRenderLinksOnly  = "links_only_after_render"           // internal links present only in the rendered DOM
	KindRenderJSError    = "render_js_error"                   // uncaught exceptions while the page loaded
	KindRenderFailed     = "render_resource_failed"            // a request of the page failed: >= 400 or a network error
	KindRenderBlocked    = "render_resource_blocked_by_robots" // a script, stylesheet or XHR of the site that robots.txt forbids
	renderListedInHint   = 10                                  // items named in one finding's detail
)

// analyzeRender derives the rendered pass's findings from its rows. A page that could not be rendered
// (timeout, navigation error, a status other than 200 in the browser) is not compared: its DOM is not
// the page; what its requests and scripts did is still reported.
func analyzeRender(rendered []*store.RenderRecord) []store.FindingRecord {
	var out []store.FindingRecord
	add := func(url, kind, format string, args ...any) {
		out = append(out, store.FindingRecord{URL: url, Kind: kind, Detail: fmt.Sprintf(format, args...)})
	}
	for _, r := range rendered {
		u := r.FinalURL
		if u == "" {
			u = r.URL
		}
		if r.Err == "" && r.Parsed && r.Status == http.StatusOK {
			if a, b := textOrNone(r.Raw.Title, r.Raw.TitleCount), textOrNone(r.Title, r.TitleCount); a != b {
				add(u, KindRenderTitle, "title %s in the HTML, %s after JavaScript", a, b)
			}
			if a, b := store.NormalizeOrSelf(strings.TrimSpace(r.Raw.Canonical)), store.NormalizeOrSelf(strings.TrimSpace(r.Canonical)); a != b {
				add(u, KindRenderCanonical, "canonical %s in the HTML, %s after JavaScript (search engines may use either)", orNone(a), orNone(b))
			}
			if a, b := robotsTokenSet(r.Raw.MetaRobots), robotsTokenSet(r.MetaRobots); a != b {
				note := ""
				if !strings.Contains(a, "noindex") && strings.Contains(b, "noindex") {
					note = ": JavaScript makes the page noindex"
				}
				add(u, KindRenderRobotsMeta, "meta robots %s in the HTML, %s after JavaScript%s", orNone(r.Raw.MetaRobots), orNone(r.MetaRobots), note)
			}
			if a, b := textOrNone(r.Raw.H1, r.Raw.H1Count), textOrNone(r.H1, r.H1Count); a != b {
				add(u, KindRenderH1, "first <h1> %s in the HTML, %s after JavaScript", a, b)
			}
			renderDirectives(r, func(kind, format string, args ...any) { add(u, kind, format, args...) })
			var only []string
			seen := map[string]bool{}
			for _, l := range r.Links {
				if l.OnlyRendered && !l.External && !seen[l.To] {
					seen[l.To] = true
					only = append(only, l.To)
				}
			}
			if len(only) > 0 {
				sort.Strings(only)
				add(u, KindRenderLinksOnly, "%d internal link%s only in the rendered page (crawlers that do not run JavaScript never see %s): %s",
					len(only), store.Plural(len(only)), map[bool]string{true: "it", false: "them"}[len(only) == 1], listSome(only))
			}
		}
		var exc []string
		for _, e := range r.Console {
			if e.Kind == "exception" {
				s := e.Message
				if e.Source != "" {
					s += " (" + e.Source + ")"
				}
				exc = append(exc, s)
			}
		}
		if len(exc) > 0 {
			extra := ""
			if r.ConsoleErrors > 0 {
				extra = fmt.Sprintf("; and %d console error%s", r.ConsoleErrors, store.Plural(r.ConsoleErrors))
			}
			add(u, KindRenderJSError, "%d uncaught JavaScript exception%s: %s%s", len(exc), store.Plural(len(exc)), listSome(exc), extra)
		}
		var failed, blocked []string
		for _, q := range r.Requests {
			switch q.Outcome {
			case store.OutFailed:
				if q.Type == string("Ping") || q.Type == "CSPViolationReport" {
					continue // reports and beacons: nothing the page needs to render
				}
				why := q.Err
				if q.Status != 0 {
					why = fmt.Sprintf("HTTP %d", q.Status)
				}
				failed = append(failed, fmt.Sprintf("%s %s (%s)", why, q.URL, strings.ToLower(q.Type)))
			case store.OutBlocked:
				blocked = append(blocked, fmt.Sprintf("%s %s: %s", strings.ToLower(q.Type), q.URL, q.RobotsRule))
			}
		}
		if len(failed) > 0 {
			add(u, KindRenderFailed, "%d request%s of the page failed: %s", len(failed), store.Plural(len(failed)), listSome(failed))
		}
		if len(blocked) > 0 {
			add(u, KindRenderBlocked, "the page needs %d resource%s that robots.txt forbids, so search engines cannot load %s either (not requested): %s",
				len(blocked), store.Plural(len(blocked)), map[bool]string{true: "it", false: "them"}[len(blocked) == 1], listSome(blocked))
		}
	}
	return out
}

// textOrNone quotes a field for a finding, "none" when the element is absent.
func textOrNone(s string, count int) string {
	if count == 0 {
		return "none"
	}
	return fmt.Sprintf("%q", strings.Join(strings.Fields(s), " "))
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "none"
	}
	return s
}

// robotsTokenSet is a meta robots value as a sorted, de-duplicated, lower-case token list, so that
// "NOINDEX, follow" and "follow,noindex" compare equal.
func robotsTokenSet(v string) string {
	seen := map[string]bool{}
	var toks []string
	for _, f := range strings.FieldsFunc(strings.ToLower(v), func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		if !seen[f] {
			seen[f] = true
			toks = append(toks, f)
		}
	}
	sort.Strings(toks)
	return strings.Join(toks, ",")
}

// listSome joins the first few items of a finding's list.
func listSome(items []string) string {
	if len(items) <= renderListedInHint {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:renderListedInHint], "; ") + fmt.Sprintf("; and %d more", len(items)-renderListedInHint)
}

// renderDirectives compares the directives beyond title, canonical, robots meta and h1 between the
// crawler's HTML and the rendered DOM: the meta description, noindex, nofollow (meta robots and on the
// internal links both views have) and the hreflang set.
func renderDirectives(r *store.RenderRecord, add func(kind, format string, args ...any)) {
	if a, b := textOrNone(r.Raw.Description, r.Raw.DescriptionCount), textOrNone(r.Description, r.DescriptionCount); a != b {
		add(KindRenderDescription, "meta description %s in the HTML, %s after JavaScript", a, b)
	}
	onOff := func(on bool) string { return map[bool]string{true: "nofollow", false: "followed"}[on] }
	switch a, b := store.HasRobotsToken(r.Raw.MetaRobots, "noindex"), store.HasRobotsToken(r.MetaRobots, "noindex"); {
	case !a && b:
		add(KindRenderNoindex, "no noindex in the HTML; JavaScript adds it (meta robots %s): the rendered page asks not to be indexed", r.MetaRobots)
	case a && !b:
		add(KindRenderNoindex, "noindex in the HTML (meta robots %s); JavaScript removes it: crawlers that do not render drop the page", r.Raw.MetaRobots)
	}
	var changed []string
	if a, b := store.HasRobotsToken(r.Raw.MetaRobots, "nofollow"), store.HasRobotsToken(r.MetaRobots, "nofollow"); a != b {
		changed = append(changed, fmt.Sprintf("meta robots: links %s in the HTML, %s after JavaScript", onOff(a), onOff(b)))
	}
	rendered := map[string]bool{} // internal target -> every rendered link to it is nofollow
	for _, l := range r.Links {
		if l.External {
			continue
		}
		if nf, ok := rendered[l.To]; ok {
			rendered[l.To] = nf && l.Nofollow
		} else {
			rendered[l.To] = l.Nofollow
		}
	}
	var targets []string
	for to, b := range rendered {
		if a, ok := r.Raw.Nofollow[to]; ok && a != b {
			targets = append(targets, fmt.Sprintf("%s %s in the HTML, %s after JavaScript", to, onOff(a), onOff(b)))
		}
	}
	sort.Strings(targets)
	if changed = append(changed, targets...); len(changed) > 0 {
		add(KindRenderNofollow, "%s", listSome(changed))
	}
	if a, b := hreflangSet(r.Raw.Hreflang), hreflangSet(r.Hreflang); a != b {
		add(KindRenderHreflang, "hreflang %s in the HTML, %s after JavaScript", orNone(a), orNone(b))
	}
}

// hreflangSet is a page's hreflang annotations as a sorted list, "lang url" each.
func hreflangSet(hs []store.HreflangRecord) string {
	var s []string
	for _, h := range hs {
		s = append(s, strings.ToLower(strings.TrimSpace(h.Hreflang))+" "+store.NormalizeOrSelf(strings.TrimSpace(h.URL)))
	}
	sort.Strings(s)
	return strings.Join(slices.Compact(s), ", ")
}
