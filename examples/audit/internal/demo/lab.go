package demo

import (
	"fmt"
	"html"
	"io"
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
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, labIndex())
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
	b.WriteString("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Check pages | Cove Outfitters</title>\n" +
		"<meta name=\"description\" content=\"Pages of the demo shop that each show one thing an audit finds.\"></head><body><main><h1>Check pages</h1><ul>")
	for _, p := range paths {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>", html.EscapeString(p), html.EscapeString(labPages[p].title))
	}
	b.WriteString("</ul></main></body></html>\n")
	return b.String()
}
