package main

import (
	"testing"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// `audit -demo -render 5` shows every finding of the rendered pass, each on the demo page built for it.
func TestDemoRender(t *testing.T) {
	r := demoRenderCrawl(t)
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Equal(t, []string{
		"links_only_after_render /",
		"render_canonical_changed /offers/",
		"render_description_changed /offers/",
		"render_h1_changed /offers/",
		"render_hreflang_changed /offers/",
		"render_js_error /contact",
		"render_nofollow_changed /offers/",
		"render_noindex_changed /offers/",
		"render_resource_blocked_by_robots /products/",
		"render_resource_failed /contact",
		"render_robots_meta_changed /offers/",
		"render_title_changed /about",
	}, r.strs(t, `SELECT kind || ' ' || REPLACE(url, 'http://cove-shop.test', '') FROM findings
		WHERE kind LIKE 'render_%' OR kind = 'links_only_after_render' ORDER BY 1`))
	assert.Equal(t, []string{"/", "/about", "/contact", "/products/", "/sale"},
		r.strs(t, `SELECT REPLACE(url, 'http://cove-shop.test', '') FROM render_pages ORDER BY 1`), "the sample: the home page and one page of each section")
	assert.Contains(t, r.stdout, "Rendered pass: 5 of 5 sampled pages")
	assert.Contains(t, r.stdout, "the rendered pass's browser made")
	assert.Contains(t, r.stdout, "to /sitemap.xml: 0.\nOf those")
	assert.Contains(t, r.stdout, "with another User-Agent: 0;", "the browser's requests are told apart, not counted as another crawler")
}
