package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/demo"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
)

// The demo crawl finds each kind of the passes over the whole crawl on its check page, none of them on
// the site kinds' clean page, and writes a link score into every page row.
func TestDemoLabSiteKinds(t *testing.T) {
	r := demoCrawl(t)
	require.Equal(t, crawl.ExitOK, r.code, r)
	byPage := map[string][]string{}
	for _, s := range r.strs(t, `SELECT kind || ' ' || REPLACE(url, 'http://cove-shop.test', '') FROM findings WHERE page_check = 0 ORDER BY 1`) {
		kind, path, _ := strings.Cut(s, " ")
		byPage[path] = append(byPage[path], kind)
	}
	for path, kind := range demo.LabSiteKinds() {
		assert.Contains(t, byPage[path], kind, "%s shows %s; found %v", path, kind, byPage[path])
	}
	for _, k := range byPage[demo.LabSiteCleanPath] {
		assert.False(t, findings.IsSiteKind(k), "the clean page shows %s", k)
	}
	assert.Zero(t, r.int(t, `SELECT COUNT(*) FROM pages WHERE link_score IS NULL OR link_score NOT BETWEEN 0 AND 100`), "every page has its link score")
	assert.Equal(t, 100, r.int(t, `SELECT MAX(link_score) FROM pages`))
}
