package crawl

import (
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/neardup"
	"github.com/politecrawl/polite/examples/audit/internal/store"
)

// A resumed crawl learns what it knew from its rows alone: the counts of the progress line, where the
// start page ended up (only when it ended on the site), the first WordPress page, llms.txt reached by a
// link, and the pages whose links and the extra requests already written.
func TestResumedFromRows(t *testing.T) {
	site := func(u *url.URL) bool { return u.Host == "shop.test" || u.Host == "www.shop.test" }
	pages := []*store.PageRecord{
		{URL: "http://shop.test/", FinalURL: "http://www.shop.test/", Status: 200, Depth: 0},
		{URL: "http://shop.test/a", FinalURL: "http://shop.test/a", Status: 200, Depth: 1, WordPress: true},
		{URL: "http://shop.test/b", FinalURL: "http://shop.test/b", Status: 200, Depth: 1, WordPress: true},
		{URL: "http://shop.test/gone", Status: 404, Depth: 1},
		{URL: "http://shop.test/down", Err: "timeout", Depth: 2},
		{URL: "http://shop.test/basket/", Blocked: true, Depth: 1},
		{URL: "http://shop.test/llms.txt", FinalURL: "http://shop.test/llms.txt", Status: 200, ContentType: "text/markdown", Bytes: 12, Depth: 2},
	}
	reqs := []store.RequestRecord{{URL: "http://www.shop.test/wp-json/", Purpose: "wordpress", Status: 200}}
	r := resumedFrom(pages, []string{"http://www.shop.test/", "http://shop.test/a"}, reqs, site)

	assert.Equal(t, int64(7), r.pages)
	assert.Equal(t, int64(1), r.blocked)
	assert.Equal(t, int64(6), r.fetched)
	assert.Equal(t, int64(2), r.errors, "the 404 and the timeout")
	assert.Equal(t, "http://www.shop.test", r.home)
	require.NotNil(t, r.wordpress)
	assert.Equal(t, "http://shop.test/a", *r.wordpress, "the first WordPress page is kept")
	require.NotNil(t, r.llmsPage)
	assert.Equal(t, store.RequestRecord{URL: "http://shop.test/llms.txt", Purpose: "llms", Status: 200, ContentType: "text/markdown", Bytes: 12}, *r.llmsPage)
	assert.Len(t, r.recorded, 7)
	assert.True(t, r.recorded["http://shop.test/basket/"], "a blocked URL has its row too")
	assert.Equal(t, map[string]bool{"http://www.shop.test/": true, "http://shop.test/a": true}, r.linksOf)
	assert.Equal(t, map[string]bool{"http://www.shop.test/wp-json/": true}, r.requested)

	// A start page that left the site tells nothing about where the site lives.
	r = resumedFrom([]*store.PageRecord{{URL: "http://shop.test/", FinalURL: "http://elsewhere.test/", Status: 200}}, nil, nil, site)
	assert.Empty(t, r.home)
}

// A crawl written by an audit whose near-duplicate fingerprints were made another way (version 1, before
// the version was recorded) is refused on resume, as a usage error that says why: its pages' fingerprints
// and the resumed crawl's would be grouped together and compare as nothing alike. The crawl's own
// version resumes.
func TestResumeConfigRefusesOtherFingerprints(t *testing.T) {
	row := &store.CrawlRow{ID: 7, StartURL: "http://shop.test/", Settings: store.Settings{MaxPages: 10, Gap: "1s", Timeout: "15s"}}
	err := ResumeConfig(&Config{}, row)
	var usage *store.UsageError
	require.ErrorAs(t, err, &usage)
	assert.Contains(t, err.Error(), "near-duplicate fingerprints (version 1)")
	assert.Contains(t, err.Error(), "start a new crawl")

	row.Settings.Fingerprint = neardup.Version + 1
	require.Error(t, ResumeConfig(&Config{}, row), "a later version is refused too")

	cfg := &Config{MaxPages: 10, Gap: time.Second, Timeout: 15 * time.Second}
	row.Settings = cfg.Settings()
	assert.Equal(t, neardup.Version, row.Settings.Fingerprint, "a new crawl records the version it writes")
	c := &Config{}
	require.NoError(t, ResumeConfig(c, row))
	assert.Equal(t, 10, c.MaxPages)
}
