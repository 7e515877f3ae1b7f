package main

import (
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/demo"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
)

// demoExceptions are the kinds of findings' table that the crawl of the demo cannot show, and the test
// that shows each: the demo is served over http, answers every request, does not refuse the crawler, is
// not WordPress and has no limit to reach.
var demoExceptions = map[string]string{
	"http_link_on_https":      "TestLabPageKindsOverHTTPS (the lab's pages over TLS)",
	"hsts_missing":            "TestLabPageKindsOverHTTPS",
	"mixed_content_active":    "TestLabPageKindsOverHTTPS",
	"mixed_content_passive":   "TestLabPageKindsOverHTTPS",
	"form_insecure":           "TestLabPageKindsOverHTTPS",
	"refuses_crawler":         "TestSiteRefusingTheCrawlerStopsTheAudit (a site answering the crawler 403 everywhere)",
	"slowed_down":             "TestTwinRobots429SlowsTheRun (a site answering 429)",
	"sitemap_url_not_crawled": "TestLinksFirstThenSitemapURLs (-max-pages reached)",
	"sitemap_urls_over_limit": "TestSitemapHoldCap (more sitemap entries than are held for crawling)",
	"wordpress":               "TestWordPressProbesOnlyOnWordPress (a WordPress site)",
	"wordpress_probe":         "TestWordPressProbesOnlyOnWordPress",
}

// allKinds is every kind of findings' one table.
func allKinds() []string {
	var all []string
	for _, c := range findings.Categories {
		all = append(all, findings.KindsOf(c)...)
	}
	sort.Strings(all)
	return all
}

// The crawl of the demo with its rendered pass (`audit -demo -render 5`) finds every kind of findings'
// table but the documented exceptions, each on the check page or shop page made for it; the exceptions
// are kinds of the table that the demo does not show.
func TestDemoFindsEveryKind(t *testing.T) {
	r := demoRenderCrawl(t)
	require.Equal(t, crawl.ExitOK, r.code, r)
	found := r.strs(t, `SELECT DISTINCT kind FROM findings ORDER BY 1`)
	var want []string
	for _, k := range allKinds() {
		if _, ok := demoExceptions[k]; !ok {
			want = append(want, k)
		}
	}
	assert.Equal(t, want, found, "the demo's kinds: the table but the exceptions")
	for k := range demoExceptions {
		assert.True(t, slices.Contains(allKinds(), k), "exception %s is a kind of the table", k)
	}
	for path, kind := range demo.LabMoreKinds() {
		assert.Equal(t, 1, r.int(t, `SELECT COUNT(*) FROM findings WHERE kind = ? AND url = ?`, kind, "http://cove-shop.test"+path), "%s shows %s", path, kind)
	}
}
