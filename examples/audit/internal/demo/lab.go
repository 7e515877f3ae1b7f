package demo

import (
	"fmt"
	"html"
	"net/http"
	"slices"
	"strings"
)

// labPages are the shop's check pages: each produces one finding kind (or, for a clean page, none of a
// category's), so every kind the audit reports has a page that shows it. Files register their pages with
// labPage in an init function; the index at /lab/ links every one, and the home page links the index.
var labPages = map[string]labEntry{}

type labEntry struct {
	title   string           // the index's anchor text: what the page shows
	handler http.HandlerFunc // serves the page
	linked  bool             // listed on /lab/; false for pages that must be reached another way (orphans, redirect targets)
}

// labPage registers a check page at path (under /lab/), linked from the index when linked is true.
func labPage(path, title string, linked bool, h http.HandlerFunc) {
	if !strings.HasPrefix(path, "/lab/") || path == "/lab/" {
		panic("demo: a lab page lives under /lab/: " + path)
	}
	if _, dup := labPages[path]; dup {
		panic("demo: lab page registered twice: " + path)
	}
	labPages[path] = labEntry{title: title, handler: h, linked: linked}
}

// serveLab serves /lab/ and the registered check pages; false if p is not one of them.
func serveLab(w http.ResponseWriter, r *http.Request, p string) bool {
	if p == "/lab/" && len(labPages) > 0 {
		writeHTML(w, r, labIndex())
		return true
	}
	e, ok := labPages[p]
	if !ok {
		return false
	}
	e.handler(w, r)
	return true
}

// labIndex is the /lab/ page: a link to every linked check page, in path order.
func labIndex() string {
	var paths []string
	for p, e := range labPages {
		if e.linked {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	var b strings.Builder
	// A clean page itself: the checks of a page's own response find nothing on it.
	b.WriteString("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>Check pages of the demo shop | Cove Outfitters</title>\n" +
		"<meta name=\"description\" content=\"Pages of the demo shop that each show one thing an audit finds, one page per kind of finding.\">" +
		"<link rel=\"canonical\" href=\"http://" + demoHost + "/lab/\"><meta property=\"og:title\" content=\"Check pages of the demo shop\">" +
		"<meta property=\"og:description\" content=\"One page per kind of finding.\"><meta property=\"og:image\" content=\"http://" + demoHost + shopOGImage + "\">" +
		"</head><body><nav><a href=\"/\">Home</a></nav><main><h1>Check pages</h1>\n<h2>What these pages are for</h2><p>" + labIntro + "</p><ul>")
	for _, p := range paths {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>", html.EscapeString(p), html.EscapeString(labPages[p].title))
	}
	b.WriteString("</ul></main></body></html>\n")
	return b.String()
}

// labIntro is the index's own text.
const labIntro = `Every page below shows one kind of finding of the audit, and nothing else of its own, so that each
kind in the report has a page that produces it and a test that checks it does. The pages are part of the demo shop, and the
crawl of the demo finds them through this index, which the About page links. Most of them are the same short page with one
change: a missing alt text on its picture, a title that is too short, a canonical in the wrong place, a header the server
forgot, or a URL of an awkward shape. The clean page is that short page with nothing changed, the baseline the others are
compared with, and the audit finds nothing on it. A few kinds can only appear on pages served over https, such as mixed
content or a missing HSTS header; the demo shop is served over plain http, so those pages look clean here, and the tests
serve the same pages over TLS to show them. Other pages show what only the passes over the whole crawl find: duplicates,
orphans, redirects and links between pages. Open any of them and compare it with the clean page to see what changed.`
