package demo

import (
	"net/http"
	"strconv"
)

// The check pages of the kinds that the shop's own pages do not show (the titles, descriptions and
// headings a page can lack or repeat, the redirects that lead nowhere): like the other check pages, the
// lab's clean page with one edit, or a handler that answers the way such a site does. With them, the
// crawl of the demo finds every kind of findings' table but those that need https, a server that fails
// or refuses the crawler, a limit, WordPress or -render (TestDemoFindsEveryKind lists them and the
// tests that cover them).

// labMoreChecks are those pages: path, kind, the edits of the clean page.
var labMoreChecks = []struct {
	path, kind string
	edits      [][2]string
}{
	{"/lab/title-empty", "title_empty", [][2]string{{`<title>{{title}}</title>`, `<title></title>`}}},
	{"/lab/title-multiple", "title_multiple", [][2]string{{`<title>{{title}}</title>`, `<title>{{title}}</title><title>{{title}}, again</title>`}}},
	{"/lab/title-too-long", "title_too_long", [][2]string{{`<title>{{title}}</title>`, `<title>{{title}}, with every word a shop could think of adding to it</title>`}}},
	{"/lab/title-duplicate-a", "title_duplicate", [][2]string{{`<title>{{title}}</title>`, `<title>Coast tents and dune shelters for the family</title>`}}},
	{"/lab/title-duplicate-b", "", [][2]string{{`<title>{{title}}</title>`, `<title>Coast tents and dune shelters for the family</title>`}}},
	{"/lab/description-missing", "description_missing", [][2]string{{`<meta name="description" content="{{description}}">`, ``}}},
	{"/lab/description-multiple", "description_multiple", [][2]string{{`<meta name="description" content="{{description}}">`,
		`<meta name="description" content="{{description}}"><meta name="description" content="{{description}} Said twice.">`}}},
	{"/lab/h1-missing", "h1_missing", [][2]string{{`<h1>{{h1}}</h1>`, ``}}},
}

// labRedirects are the check pages that answer with a redirect: path, kind, the Location (a
// handler-made one when empty). They live under /site-checks/, linked from /lab/site-checks, as the
// other pages that the crawl reports as broken links do: the shop's broken link stays the first one.
var labRedirects = []struct{ path, kind, location string }{
	{"/site-checks/redirect-loop", "redirect_loop", "/site-checks/redirect-loop-back"},
	{"/site-checks/redirect-loop-back", "", "/site-checks/redirect-loop"},
	{"/site-checks/too-many-redirects", "too_many_redirects", ""}, // ?hop=n to ?hop=n+1, without end
	{"/site-checks/redirect-offsite", "redirect_offsite", "https://www.example.org/partners/cove"},
	{"/site-checks/redirect-to-blocked", "redirect_to_blocked", "/basket/lab"},
	{"/site-checks/bad-redirect", "bad_redirect", ""}, // a 301 without Location
}

// LabMissingSitemap is a sitemap the shop's sitemap index names and the shop does not have (404):
// sitemap_error.
const LabMissingSitemap = "/site-checks/missing-sitemap.xml"

// LabNonCanonicalPath is a page the lab's sitemap lists whose canonical is another page:
// sitemap_url_non_canonical.
const LabNonCanonicalPath = "/site-checks/non-canonical"

// LabMoreKinds maps each of those check pages to the kind found there, for the tests that crawl the demo.
func LabMoreKinds() map[string]string {
	m := map[string]string{}
	for _, c := range labMoreChecks {
		if c.kind != "" {
			m[c.path] = c.kind
		}
	}
	for _, c := range labRedirects {
		if c.kind != "" {
			m[c.path] = c.kind
		}
	}
	m[LabNonCanonicalPath] = "sitemap_url_non_canonical"
	m[LabMissingSitemap] = "sitemap_error"
	return m
}

func init() {
	for _, c := range labMoreChecks {
		check := labCheck{path: c.path, kind: c.kind, edits: c.edits}
		if check.kind == "" {
			check.kind = c.path[len("/lab/"):]
		}
		labPage(c.path, "Check: "+check.kind, true, func(w http.ResponseWriter, r *http.Request) { serveLabCheck(w, r, check) })
	}
	for _, c := range labRedirects {
		h := func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, c.location, http.StatusMovedPermanently)
		}
		switch c.path {
		case "/site-checks/too-many-redirects":
			h = func(w http.ResponseWriter, r *http.Request) {
				n, _ := strconv.Atoi(r.URL.Query().Get("hop"))
				http.Redirect(w, r, c.path+"?hop="+strconv.Itoa(n+1), http.StatusFound)
			}
		case "/site-checks/bad-redirect":
			h = func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusMovedPermanently) }
		}
		siteCheckPages[c.path] = h
		if c.kind != "" {
			siteCheckLinks = append(siteCheckLinks, c.path)
		}
	}
	nonCanonical := labCheck{path: LabNonCanonicalPath, kind: "sitemap_url_non_canonical",
		edits: [][2]string{{`href="{{self}}"`, `href="{{origin}}` + LabSiteCleanPath + `"`}}}
	siteCheckPages[LabNonCanonicalPath] = func(w http.ResponseWriter, r *http.Request) { serveLabCheck(w, r, nonCanonical) }
	siteCheckLinks = append(siteCheckLinks, LabNonCanonicalPath)
}
