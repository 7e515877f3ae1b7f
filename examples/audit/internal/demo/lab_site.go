package demo

import (
	"net"
	"net/http"
	"strings"
)

// The check pages of the passes over the whole crawl (findings' site kinds): each kind needs more than
// one page (a link and its target, a page and its canonical, a pair of copies), so each is a small
// group of the lab's pages, built from the lab's clean page with edits. LabSiteKinds names the page of
// each group where its finding appears; LabSiteCleanPath is linked and canonical like a page should be,
// and shows none of these kinds. The pages a sitemap lists (an orphan, a noindex page) live under
// /site-checks/ with their sitemap (in the shop's sitemap index): a sitemap's URLs are crawled at depth 1,
// and a section that sorts after the shop's keeps `-demo -render 5` sampling the shop's own pages.

// LabSiteCleanPath is the clean page of the site kinds: two pages link to it, a redirect and a canonical
// lead to it, the lab's sitemap lists it.
const LabSiteCleanPath = "/lab/site-clean"

// labSiteText is the text the exact duplicates share, labNearText nearly that of the near-duplicates,
// labGoneText the 404 page's.
var (
	labSiteText = labText("/lab/shared-text", 230)
	labGoneText = labText("/site-checks/gone", 160)
	labNearText = labText("/lab/near", 230)
)

// labSiteChecks are the site kinds' pages: the page where the kind appears, whether the lab's index
// links it, and its edits of the clean page.
var labSiteChecks = []struct {
	path, kind string // kind "" for a page that only serves another's check
	linked     bool
	edits      [][2]string
}{
	{"/lab/link-to-redirect", "", true, [][2]string{{`</main>`, `<p><a href="/lab/redirect-source">A moved page</a></p></main>`}}},
	{"/lab/redirect-source", "link_to_redirect", false, nil},    // served as a redirect, below
	{"/site-checks/no-response", "link_no_response", true, nil}, // closes the connection, below
	{"/lab/soft-404-copy", "soft_404_copy", true, [][2]string{{`{{h1}}`, `Check: gone`}, {`{{text}}`, strings.Replace(labGoneText, " ", " and ", 1)}}},
	{"/site-checks/gone", "", true, nil}, // the site's real 404 page, below
	{"/lab/single-inlink", "single_inlink", true, nil},
	{"/lab/deep-1", "", true, [][2]string{{`</main>`, `<p><a href="/lab/deep-2">Further</a> <a href="` + LabSiteCleanPath + `">Clean</a></p></main>`}}},
	{"/lab/deep-2", "", false, [][2]string{{`</main>`, `<p><a href="/lab/deep-3">Further</a></p></main>`}}},
	{"/lab/deep-3", "page_too_deep", false, [][2]string{{`</main>`, `<p><a href="/lab/deep-2">Back</a></p></main>`}}},
	{"/site-checks/orphan", "orphan_page", false, nil},
	{"/lab/h1-duplicate-a", "h1_duplicate", true, [][2]string{{`{{h1}}`, `Dune tents for the coast`}}},
	{"/lab/h1-duplicate-b", "", true, [][2]string{{`{{h1}}`, `Dune tents for the coast`}}},
	{"/lab/exact-duplicate-a", "content_exact_duplicate", true, [][2]string{{`{{h1}}`, `Kayaks`}, {`{{text}}`, labSiteText}}},
	{"/lab/exact-duplicate-b", "", true, [][2]string{{`{{h1}}`, `Kayaks`}, {`{{text}}`, labSiteText}}},
	{"/lab/near-duplicate-a", "content_near_duplicate", true, [][2]string{{`{{text}}`, labNearText + " tide"}}},
	{"/lab/near-duplicate-b", "", true, [][2]string{{`{{text}}`, labNearText + " gull"}}},
	{"/lab/canonical-to-redirect", "canonical_to_redirect", true, [][2]string{{`href="{{self}}"`, `href="{{origin}}/lab/redirect-source"`}}},
	{"/lab/canonical-to-error", "canonical_to_error", true, [][2]string{{`href="{{self}}"`, `href="{{origin}}/site-checks/gone"`}}},
	{"/lab/canonical-to-blocked", "canonical_to_blocked", true, [][2]string{{`href="{{self}}"`, `href="{{origin}}/basket/"`}}},
	{"/lab/canonical-to-noindex", "canonical_to_noindex", true, [][2]string{{`href="{{self}}"`, `href="{{origin}}/lab/noindex-linked"`}}},
	{"/lab/canonical-chain", "canonical_chain", true, [][2]string{{`href="{{self}}"`, `href="{{origin}}/lab/canonical-middle"`}}},
	{"/lab/canonical-middle", "", true, [][2]string{{`href="{{self}}"`, `href="{{origin}}` + LabSiteCleanPath + `"`}}},
	{"/lab/noindex-linked", "noindex_linked", true, [][2]string{{`<title>`, `<meta name="robots" content="noindex"><title>`}}},
	{"/site-checks/noindex-in-sitemap", "sitemap_url_noindex", true, [][2]string{{`<title>`, `<meta name="robots" content="noindex"><title>`}}},
	{"/lab/hreflang-no-return", "hreflang_no_return", true, labHreflang("/lab/hreflang-no-return", "/lab/single-inlink")},
	{"/lab/hreflang-not-200", "hreflang_target_not_200", true, labHreflang("/lab/hreflang-not-200", "/lab/redirect-source")},
	{"/lab/hreflang-not-canonical", "hreflang_target_not_canonical", true, labHreflang("/lab/hreflang-not-canonical", "/lab/canonical-middle")},
	{"/lab/hreflang-noindex", "hreflang_target_noindex", true, labHreflang("/lab/hreflang-noindex", "/lab/noindex-linked")},
	{LabSiteCleanPath, "", true, nil},
}

// labHreflang annotates a page in English (itself) and French (target), with an x-default.
func labHreflang(self, target string) [][2]string {
	return [][2]string{{`</head>`, `<link rel="alternate" hreflang="en" href="{{origin}}` + self + `">` +
		`<link rel="alternate" hreflang="fr" href="{{origin}}` + target + `">` +
		`<link rel="alternate" hreflang="x-default" href="{{origin}}` + self + `"></head>`}}
}

// LabSiteKinds maps each site kind's check page to the kind found there, for the tests that crawl the
// demo.
func LabSiteKinds() map[string]string {
	m := map[string]string{}
	for _, c := range labSiteChecks {
		if c.kind != "" {
			m[c.path] = c.kind
		}
	}
	return m
}

func init() {
	for _, c := range labSiteChecks {
		check := labCheck{path: c.path, kind: c.kind, edits: c.edits}
		if check.kind == "" {
			check.kind = strings.TrimPrefix(c.path, "/lab/")
		}
		h := func(w http.ResponseWriter, r *http.Request) { serveLabCheck(w, r, check) }
		switch c.path {
		case "/lab/redirect-source":
			h = func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, LabSiteCleanPath, http.StatusMovedPermanently)
			}
		case "/site-checks/no-response":
			h = hangUp
		case "/site-checks/gone":
			h = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found</title></head>` +
					`<body><nav><a href="/">Home</a> <a href="/lab/">Check pages</a></nav><main><h1>Check: gone</h1><h2>What this page shows</h2><p>` + labGoneText + `</p></main></body></html>`))
			}
		}
		if strings.HasPrefix(c.path, "/lab/") {
			labPage(c.path, "Site check: "+check.kind, c.linked, h)
			continue
		}
		siteCheckPages[c.path] = h
		if c.linked {
			siteCheckLinks = append(siteCheckLinks, c.path)
		}
	}
	siteCheckPages["/site-checks/sitemap.xml"] = func(w http.ResponseWriter, r *http.Request) {
		// An entry on another site is skipped (sitemap_skipped); LabNonCanonicalPath names another page as
		// its canonical (sitemap_url_non_canonical).
		xmlDoc(w, strings.Replace(Urlset("http://"+r.Host, "/site-checks/orphan", "/site-checks/noindex-in-sitemap", LabNonCanonicalPath),
			`</urlset>`, `<url><loc>https://www.example.org/partners/cove</loc></url></urlset>`, 1))
	}
	// The lab's index cannot link outside /lab/: a lab page links the linked /site-checks/ pages.
	labPage("/lab/site-checks", "Site check: pages listed in a sitemap", true, func(w http.ResponseWriter, r *http.Request) {
		var links strings.Builder
		for _, p := range siteCheckLinks {
			links.WriteString(`<p><a href="` + p + `">` + p + `</a></p>`)
		}
		serveLabCheck(w, r, labCheck{path: "/lab/site-checks", kind: "site-checks", edits: [][2]string{{`</main>`, links.String() + `</main>`}}})
	})
}

// siteCheckPages are the site checks' pages under /site-checks/, siteCheckLinks those linked.
var (
	siteCheckPages = map[string]http.HandlerFunc{}
	siteCheckLinks []string
)

// serveSiteChecks serves the pages under /site-checks/; false if p is not one of them.
func serveSiteChecks(w http.ResponseWriter, r *http.Request, p string) bool {
	h, ok := siteCheckPages[p]
	if ok {
		h(w, r)
	}
	return ok
}

// hangUp closes the connection without an answer: a URL that gave no response.
func hangUp(w http.ResponseWriter, _ *http.Request) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
