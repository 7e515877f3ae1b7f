package main

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/monitor/internal/textscope"
)

// TestRulesFormShowsAndEditsRules: the history page shows a page's rules;
// the form replaces them after the same checks as the CLI (a bad pattern
// is a 400 with the reason, nothing stored) and clears them when empty.
func TestRulesFormShowsAndEditsRules(t *testing.T) {
	h := newHarness(t)
	s := newTestServer(t, h)
	h.track("http://shop.test/kettle")
	page := "/page?url=" + url.QueryEscape("http://shop.test/kettle")
	r := do(t, s, "GET", page, nil)
	require.Equal(t, http.StatusOK, r.code)
	assert.Contains(t, r.body, "What is compared:\n      the whole visible text")

	r = do(t, s, "POST", "/page/rules", url.Values{"url": {"http://shop.test/kettle"}, "select": {".product"},
		"exclude": {".ad-slot"}, "ignore": {"Only \\d+ left\r\n\r\n\\d+ people are looking\r\n"}}, "Sec-Fetch-Site", "same-origin")
	require.Equal(t, http.StatusSeeOther, r.code, r.body)
	assert.Equal(t, "/page?done=rules&url="+url.QueryEscape("http://shop.test/kettle"), r.header.Get("Location"))
	st := openTestStore(t, h.db)
	rules, err := st.Rules(context.Background(), "http://shop.test/kettle")
	require.NoError(t, err)
	assert.Equal(t, textscope.Rules{Selector: ".product", Exclude: ".ad-slot", Ignore: []string{`Only \d+ left`, `\d+ people are looking`}}, rules)
	r = do(t, s, "GET", r.header.Get("Location"), nil)
	assert.Contains(t, r.body, "Rules saved")
	assert.Contains(t, r.body, `<code class="rule-select">.product</code> without <code class="rule-exclude">.ad-slot</code>, ignoring 2 pattern(s)`)
	assert.Contains(t, r.body, "Only \\d&#43; left\n\\d&#43; people are looking</textarea>")

	r = do(t, s, "POST", "/page/rules", url.Values{"url": {"http://shop.test/kettle"}, "ignore": {"(unclosed"}})
	assert.Equal(t, http.StatusBadRequest, r.code)
	assert.Contains(t, r.body, "ignore rule 1 &#34;(unclosed&#34;: error parsing regexp")
	rules, _ = st.Rules(context.Background(), "http://shop.test/kettle")
	assert.Equal(t, ".product", rules.Selector, "a refused form changes nothing")

	r = do(t, s, "POST", "/page/rules", url.Values{"url": {"http://shop.test/kettle"}})
	require.Equal(t, http.StatusSeeOther, r.code)
	rules, _ = st.Rules(context.Background(), "http://shop.test/kettle")
	assert.Equal(t, textscope.Rules{}, rules)

	r = do(t, s, "POST", "/page/rules", url.Values{"url": {"http://shop.test/other"}, "select": {"p"}})
	assert.Equal(t, http.StatusNotFound, r.code)
}

// TestCheckNowButton: the button takes a snapshot and comes back to the
// history with it; a second press inside six hours is a 409 that says from
// when it is allowed, and fetches nothing.
func TestCheckNowButton(t *testing.T) {
	h := newHarness(t)
	site := h.site("shop.test", "User-agent: *\nAllow: /\n", "/kettle")
	s := newTestServer(t, h)
	h.track("http://shop.test/kettle")
	page := "/page?url=" + url.QueryEscape("http://shop.test/kettle")
	r := do(t, s, "GET", page, nil)
	assert.Contains(t, r.body, `<form class="inline checknow" method="post" action="/page/check-now">`)

	r = do(t, s, "POST", "/page/check-now", url.Values{"url": {"http://shop.test/kettle"}}, "Sec-Fetch-Site", "same-origin")
	require.Equal(t, http.StatusSeeOther, r.code, r.body)
	assert.Equal(t, "/page?done=checked&url="+url.QueryEscape("http://shop.test/kettle"), r.header.Get("Location"))
	assert.Equal(t, 1, site.Count("/kettle"))
	r = do(t, s, "GET", r.header.Get("Location"), nil)
	assert.Contains(t, r.body, "Checked now: the new snapshot is at the top.")
	assert.Contains(t, r.body, "first snapshot")

	h.clk.Advance(time.Hour)
	r = do(t, s, "POST", "/page/check-now", url.Values{"url": {"http://shop.test/kettle"}})
	assert.Equal(t, http.StatusConflict, r.code)
	assert.Contains(t, r.body, "check now of http://shop.test/kettle refused: its last snapshot was taken at 2026-11-29 12:00:00Z")
	assert.Contains(t, r.body, "allowed from 2026-11-29 18:00:00Z")
	assert.Equal(t, 1, site.Count("/kettle"))

	r = do(t, s, "POST", "/page/check-now", url.Values{"url": {"http://shop.test/none"}})
	assert.Equal(t, http.StatusNotFound, r.code)
}
