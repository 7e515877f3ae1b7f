package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/testsite"
)

// newsArticle is a news page as a CMS serves it: navigation, a byline with
// the time it was last rendered, a "read by N people" counter, an ad block
// whose creative rotates, the article, and a footer.
func newsArticle(updated string, readers int, ad, body string) string {
	return fmt.Sprintf(`<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Council approves new bridge — Riverside Post</title><script>dataLayer=[{t:%q}]</script></head>
<body><header><nav><a href="/">Home</a> <a href="/local">Local</a></nav>
<p class="today">Today is %s</p></header>
<main><article class="story"><h1>Council approves new bridge</h1>
<p class="byline">By Ann Lee · Updated %s</p>
<p class="reads">Read by %d people</p>
<div class="ad-slot"><a href="https://ads.example/c">Sponsored: %s</a></div>
%s
</article>
<aside class="ad-slot">Sponsored: %s</aside></main>
<footer>Visitors today: %d · © 2026 Riverside Post</footer></body></html>`, updated, updated, updated, readers, ad, body, ad, readers*3)
}

// TestRulesLimitTheComparedText: with -select, -exclude and -ignore a page
// whose date, visitor counters and ad block change on every load shows no
// change; a change inside the selected article is reported as a word diff.
func TestRulesLimitTheComparedText(t *testing.T) {
	h := newHarness(t)
	s := h.site("news.test", "User-agent: *\nAllow: /\n")
	const story = `<p>The council voted 7–2 to fund a pedestrian bridge.</p>`
	s.Route("/bridge",
		testsite.Response{ContentType: "text/html", Body: newsArticle("1 December 2026, 10:42", 1204, "Cheap flights", story)},
		testsite.Response{ContentType: "text/html", Body: newsArticle("2 December 2026, 08:15", 2977, "New kettles", story)},
		testsite.Response{ContentType: "text/html", Body: newsArticle("3 December 2026, 09:01", 4410, "Sofa sale",
			`<p>The council voted 7–2 to fund a pedestrian bridge.</p><p>Construction starts in spring.</p>`)})
	// The same page without rules, as a control: every load is a change.
	s.Route("/bridge-all",
		testsite.Response{ContentType: "text/html", Body: newsArticle("1 December 2026, 10:42", 1204, "Cheap flights", story)},
		testsite.Response{ContentType: "text/html", Body: newsArticle("2 December 2026, 08:15", 2977, "New kettles", story)})

	code, out, errOut := h.cli("track", "-select", "main article", "-exclude", ".ad-slot",
		"-ignore", `Updated \d{1,2} \w+ \d{4}, \d\d:\d\d`, "-ignore", `Read by [\d,]+ people`, "http://news.test/bridge")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `rules of http://news.test/bridge: select "main article", exclude ".ad-slot", ignore "Updated \\d{1,2} \\w+ \\d{4}, \\d\\d:\\d\\d", ignore "Read by [\\d,]+ people"`)
	h.track("http://news.test/bridge-all")

	h.run()
	h.clk.Advance(6*time.Hour + maxJitter)
	h.run()
	code, report, errOut := h.cli("report")
	require.Equal(t, exitOK, code, errOut)
	assert.NotContains(t, report, "http://news.test/bridge\n", "date, counters and ads changed outside the rules: no change")
	assert.Contains(t, report, "http://news.test/bridge-all\n", "without rules the same page changes on every load")
	assert.Contains(t, report, "[-1-]{+2+}")

	h.clk.Advance(6*time.Hour + maxJitter)
	h.run()
	_, report, _ = h.cli("report")
	assert.Contains(t, report, "http://news.test/bridge\n")
	assert.Contains(t, report, "text (low): 4 words added, 0 removed")
	assert.Contains(t, report, "{+ ¶ Construction starts in spring.+}")
	assert.NotContains(t, report, "Sofa", "the ad is never part of the compared text")

	// The stored text is the compared part only.
	snaps := h.snapshots("http://news.test/bridge")
	require.Len(t, snaps, 3)
	text, err := snaps[2].Text()
	require.NoError(t, err)
	assert.Equal(t, "Council approves new bridge\nBy Ann Lee ·\nThe council voted 7–2 to fund a pedestrian bridge.\nConstruction starts in spring.", text)
}

func TestRulesCommandShowsSetsAndClears(t *testing.T) {
	h := newHarness(t)
	h.track("http://a.test/")
	code, out, _ := h.cli("rules", "http://a.test/")
	require.Equal(t, exitOK, code)
	assert.Equal(t, "rules of http://a.test/: none (the whole visible text is compared)\n", out)

	code, out, errOut := h.cli("rules", "-select", "#main", "-ignore", `\d+ visitors`, "http://a.test/")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "rules of http://a.test/: select \"#main\", ignore \"\\\\d+ visitors\"\n", out)

	// Tracking again without rule flags keeps the rules; with them, replaces.
	h.track("-interval", "12h", "http://a.test/")
	_, out, _ = h.cli("rules", "http://a.test/")
	assert.Contains(t, out, `select "#main"`)
	code, _, errOut = h.cli("track", "-select", "article", "http://a.test/")
	require.Equal(t, exitOK, code, errOut)
	_, out, _ = h.cli("rules", "http://a.test/")
	assert.Equal(t, "rules of http://a.test/: select \"article\"\n", out)

	code, out, _ = h.cli("rules", "-clear", "http://a.test/")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "none")

	code, _, errOut = h.cli("rules", "-select", "p", "http://other.test/")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "not tracked: http://other.test/")
}

// TestBadRulesAreUsageErrors: a rule that cannot be used is refused before
// anything is written, with the parser's reason (exit 2).
func TestBadRulesAreUsageErrors(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-select", "div[", "http://a.test/"}, `textscope: selector "div["`},
		{[]string{"-exclude", "p:nope", "http://a.test/"}, `textscope: exclude "p:nope"`},
		{[]string{"-ignore", `(\d+`, "http://a.test/"}, "textscope: ignore rule 1 \"(\\\\d+\": error parsing regexp: missing closing )"},
		{[]string{"-ignore", `x*`, "http://a.test/"}, "matches the empty text"},
		{[]string{"-ignore", `a{1000}{1000}`, "http://a.test/"}, "ignore rule 1"},
		{[]string{"-select", strings.Repeat("p ", 600), "http://a.test/"}, "over the size limit"},
		{append(strings.Fields(strings.Repeat("-ignore x ", 33)), "http://a.test/"), "at most 32 ignore rules"},
	} {
		code, _, errOut := h.cli(append([]string{"track"}, c.args...)...)
		assert.Equal(t, exitUsage, code, "%v", c.args)
		assert.Contains(t, errOut, c.want, "%v", c.args)
	}
	code, _, errOut := h.cli("rules", "-clear", "-select", "p", "http://a.test/")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "-clear takes no -select")
	code, _, errOut = h.cli("status")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "does not exist", "refused before the database was even created")
}
