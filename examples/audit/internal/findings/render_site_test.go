package findings

import (
	"testing"

	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/stretchr/testify/assert"
)

// The rendered pass compares the directives beyond title, canonical, robots meta and h1: the meta
// description, noindex appearing or disappearing, nofollow (meta and on links both views have) and the
// hreflang set. A page rendered the same as its HTML shows none of them.
func TestRenderDirectives(t *testing.T) {
	raw := func(r *store.RenderRecord) *store.RenderRecord {
		r.Status, r.Parsed = 200, true
		r.Raw.Title, r.Raw.TitleCount, r.Title, r.TitleCount = "T", 1, "T", 1
		r.Raw.Description, r.Raw.DescriptionCount = "About tents", 1
		r.Raw.Hreflang = []store.HreflangRecord{{Hreflang: "en", URL: "/en"}}
		r.Raw.Nofollow = map[string]bool{"/a": false, "/login": true}
		return r
	}
	same := raw(&store.RenderRecord{URL: "/same", Description: "About tents", DescriptionCount: 1,
		Hreflang: []store.HreflangRecord{{Hreflang: "EN", URL: "/en"}},
		Links:    []store.RenderLink{{To: "/a"}, {To: "/login", Nofollow: true}, {To: "/cut-from-the-list-in-html"}}})
	changed := raw(&store.RenderRecord{URL: "/changed", Description: "Tents!", DescriptionCount: 1, MetaRobots: "noindex, nofollow",
		Hreflang: []store.HreflangRecord{{Hreflang: "en", URL: "/en"}, {Hreflang: "de", URL: "/de"}},
		Links:    []store.RenderLink{{To: "/a", Nofollow: true}, {To: "/login"}}})
	unhidden := raw(&store.RenderRecord{URL: "/unhidden", Description: "About tents", DescriptionCount: 1,
		Hreflang: []store.HreflangRecord{{Hreflang: "en", URL: "/en"}}})
	unhidden.Raw.MetaRobots = "noindex"
	fs := analyzeRender([]*store.RenderRecord{same, changed, unhidden})
	assert.Equal(t, []string{
		"render_description_changed /changed",
		"render_hreflang_changed /changed",
		"render_nofollow_changed /changed",
		"render_noindex_changed /changed",
		"render_noindex_changed /unhidden",
	}, only(fs, KindRenderDescription, KindRenderHreflang, KindRenderNoindex, KindRenderNofollow))
	d := details(fs)
	assert.Equal(t, `meta description "About tents" in the HTML, "Tents!" after JavaScript`, d["render_description_changed /changed"])
	assert.Equal(t, "hreflang en /en in the HTML, de /de, en /en after JavaScript", d["render_hreflang_changed /changed"])
	assert.Equal(t, "meta robots: links followed in the HTML, nofollow after JavaScript; /a followed in the HTML, nofollow after JavaScript; "+
		"/login nofollow in the HTML, followed after JavaScript", d["render_nofollow_changed /changed"])
	assert.Contains(t, d["render_noindex_changed /unhidden"], "JavaScript removes it")
}
