package render

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/stretchr/testify/assert"
)

func cand(raw string, depth int) store.RenderCandidate {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	return store.RenderCandidate{URL: raw, Final: raw, Depth: depth, Section: sectionOf(u)}
}

func finals(cs []store.RenderCandidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Final)
	}
	return out
}

// The sample covers the site: every section before a second page of any, and a section's depths in
// turns, not the first N pages in crawl order.
func TestRenderSampleSpreadsOverSectionsAndDepths(t *testing.T) {
	const h = "http://shop.test"
	var cands []store.RenderCandidate
	cands = append(cands, cand(h+"/", 0))
	// Crawl order puts forty product pages first; a first-N sample would be products only.
	for i := range 40 {
		cands = append(cands, cand(fmt.Sprintf("%s/products/item-%02d", h, i), 2))
	}
	cands = append(cands,
		cand(h+"/products/", 1),
		cand(h+"/products/tents/tent-1", 3),
		cand(h+"/blog/", 1), cand(h+"/blog/post-1", 2), cand(h+"/blog/post-2", 2),
		cand(h+"/about", 1), cand(h+"/help/faq/returns", 4))

	assert.Equal(t, []string{h + "/", h + "/about", h + "/blog/", h + "/products/", h + "/help/faq/returns"},
		finals(sampleForRender(cands, 5)), "round one: the home page, then one page of every section, shallow sections first")

	assert.Equal(t, []string{h + "/", h + "/about", h + "/blog/", h + "/products/", h + "/help/faq/returns",
		h + "/blog/post-1", h + "/products/item-00", h + "/blog/post-2", h + "/products/tents/tent-1", h + "/products/item-01"},
		finals(sampleForRender(cands, 10)), "then a second page of each section, taking the section's depths in turn")

	assert.Len(t, sampleForRender(cands, 500), len(cands), "a sample larger than the site is the site")
	assert.Empty(t, sampleForRender(cands, 0))
	assert.Empty(t, sampleForRender(nil, 5))
	assert.Equal(t, finals(sampleForRender(cands, 10)), finals(sampleForRender(cands, 10)), "deterministic")
}

func TestSectionOf(t *testing.T) {
	for raw, want := range map[string]string{
		"http://a.test/":              "/",
		"http://a.test":               "/",
		"http://a.test/about":         "/about",
		"http://a.test/products/":     "/products/",
		"http://a.test/products/tent": "/products/",
		"http://a.test/?p=1":          "/",
	} {
		u, err := url.Parse(raw)
		assert.NoError(t, err)
		assert.Equal(t, want, sectionOf(u), raw)
	}
}
