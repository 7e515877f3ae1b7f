package robots

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// check is one expectation: token may (or may not) fetch url.
type check struct {
	token, url string
	allowed    bool
}

func runChecks(t *testing.T, body string, checks []check) {
	t.Helper()
	r := Parse([]byte(body))
	for _, c := range checks {
		assert.Equal(t, c.allowed, r.Allowed(c.token, c.url), "Allowed(%q, %q)\n%s", c.token, c.url, r.Explain(c.token, c.url))
		assert.Equal(t, c.allowed, r.Explain(c.token, c.url).Allowed, "Explain(%q, %q)", c.token, c.url)
	}
}

// TestRulesFile has one case per rule of shared/ref/robots-rules.md, in its order.
func TestRulesFile(t *testing.T) {
	cases := []struct {
		name   string
		body   string
		checks []check
	}{
		// File and records.
		{"bom ignored", "\xEF\xBB\xBFUser-agent: *\nDisallow: /x\n",
			[]check{{"a", "/x", false}, {"a", "/y", true}}},
		{"partial bom ignored", "\xEF\xBBUser-agent: *\nDisallow: /x\n",
			[]check{{"a", "/x", false}}},
		{"lf line endings", "User-agent: *\nDisallow: /x\nAllow: /x/y\n",
			[]check{{"a", "/x", false}, {"a", "/x/y", true}}},
		{"cr line endings", "User-agent: *\rDisallow: /x\rAllow: /x/y\r",
			[]check{{"a", "/x", false}, {"a", "/x/y", true}}},
		{"crlf line endings", "User-agent: *\r\nDisallow: /x\r\nAllow: /x/y\r\n",
			[]check{{"a", "/x", false}, {"a", "/x/y", true}}},
		{"mixed line endings", "User-agent: *\rDisallow: /x\r\nAllow: /x/y\nDisallow: /z",
			[]check{{"a", "/x", false}, {"a", "/x/y", true}, {"a", "/z", false}}},
		{"comments anywhere", "# hello\nUser-agent: * # everyone\nDisallow: /x # not /x\n#Disallow: /y\nDisallow: /z#q\n",
			[]check{{"a", "/x", false}, {"a", "/y", true}, {"a", "/z", false}, {"a", "/z%23q", false}}},
		{"whitespace around name and value, before colon", "  User-agent :  bot  \n\tDisallow\t:\t/x\t\n",
			[]check{{"bot", "/x", false}, {"bot", "/y", true}}},
		{"names case-insensitive", "USER-AGENT: bot\ndisALLOW: /x\nALLOW: /x/y\n",
			[]check{{"bot", "/x/z", false}, {"bot", "/x/y", true}}},
		{"sitemap does not end a group", "User-agent: a\nSitemap: https://e.com/s.xml\nUser-agent: b\nDisallow: /x\n",
			[]check{{"a", "/x", false}, {"b", "/x", false}}},
		{"other records do not end a group", "User-agent: a\nDisallow: /x\nHost: e.com\nCrawl-delay: 3\nFoo: bar\nDisallow: /y\n",
			[]check{{"a", "/x", false}, {"a", "/y", false}}},
		{"line without colon skipped", "User-agent: *\nthis is not a record\nnotarecord\nDisallow: /x\n",
			[]check{{"a", "/x", false}, {"a", "/notarecord", true}}},
		// A known directive name, whitespace and one word: the colon was
		// forgotten (Google's parser reads these lines the same way).
		{"missing colon after a known name", "user-agent a\nDISALLOW /private\nallow\t/private/ok\n\nUser-agent b\nDisallow /b # comment\n",
			[]check{{"a", "/private/x", false}, {"a", "/private/ok", true}, {"a", "/b", true}, {"b", "/b", false}, {"b", "/private", true}}},
		{"missing colon, value with a colon", "User-agent *\nDisallow /a:b\n",
			[]check{{"x", "/a:b", false}, {"x", "/a", true}}},
		{"missing colon, several words: skipped", "User-agent: *\nDisallow /a /b\nDisallow /c d\n",
			[]check{{"x", "/a", true}, {"x", "/b", true}, {"x", "/c", true}}},
		{"missing colon, unknown name: skipped", "User-agent: *\nDisalow /a\nNoindex /b\nDisallow /c\n",
			[]check{{"x", "/a", true}, {"x", "/b", true}, {"x", "/c", false}}},
		{"missing colon, no value: skipped", "User-agent: a\nDisallow\nUser-agent: b\nDisallow: /b\n",
			[]check{{"a", "/b", false}, {"b", "/b", false}}},
		{"bad crawl-delay does not invalidate the file", "User-agent: *\nCrawl-delay: soon\nDisallow: /x\n",
			[]check{{"a", "/x", false}}},
		{"binary garbage does not invalidate the file", "User-agent: *\n\x00\xff\xfe:::\nDisallow: /x\n",
			[]check{{"a", "/x", false}}},
		{"consecutive user-agents share a group", "User-agent: a\nUser-agent: b\nDisallow: /x\n",
			[]check{{"a", "/x", false}, {"b", "/x", false}, {"c", "/x", true}}},
		{"user-agent after a rule starts a new group", "User-agent: a\nDisallow: /x\nUser-agent: b\nDisallow: /y\n",
			[]check{{"a", "/x", false}, {"a", "/y", true}, {"b", "/x", true}, {"b", "/y", false}}},
		{"empty rule still ends the user-agent run", "User-agent: a\nDisallow:\nUser-agent: b\nDisallow: /y\n",
			[]check{{"a", "/y", true}, {"b", "/y", false}}},
		{"blank lines do not end groups", "User-agent: a\n\nUser-agent: b\n\nDisallow: /x\n\n\nDisallow: /y\n",
			[]check{{"a", "/x", false}, {"b", "/y", false}}},
		{"rules before the first user-agent are ignored", "Disallow: /x\nAllow: /y\nUser-agent: *\nDisallow: /z\n",
			[]check{{"a", "/x", true}, {"a", "/z", false}}},

		// Choosing the group.
		{"token equal, case-insensitive", "User-agent: crawlcove-crawler\nDisallow: /\n",
			[]check{{"CrawlCove-Crawler", "/x", false}, {"CRAWLCOVE-CRAWLER", "/x", false}}},
		{"seed: CrawlCove does not match CrawlCove-Crawler", "User-agent: CrawlCove\nDisallow: /\n",
			[]check{{"CrawlCove-Crawler", "/x", true}, {"CrawlCove", "/x", false}}},
		{"seed: CrawlCove group does not capture CrawlCove-Crawler, * applies", "User-agent: CrawlCove\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\n",
			[]check{{"CrawlCove-Crawler", "/x", true}, {"CrawlCove-Crawler", "/private/a", false}}},
		{"longer token in file does not match shorter crawler token", "User-agent: CrawlCove-Crawler\nDisallow: /\n",
			[]check{{"CrawlCove", "/x", true}}},
		{"file value compared by its token part", "User-agent: CrawlCove-Crawler/1.0\nDisallow: /\n",
			[]check{{"CrawlCove-Crawler", "/x", false}}},
		{"same-token groups are merged", "User-agent: a\nDisallow: /x\n\nUser-agent: b\nDisallow: /b\n\nUser-agent: A\nDisallow: /y\n",
			[]check{{"a", "/x", false}, {"a", "/y", false}, {"a", "/b", true}}},
		{"merged groups: longest match across groups", "User-agent: a\nDisallow: /x\n\nUser-agent: a\nAllow: /x/y\n",
			[]check{{"a", "/x/z", false}, {"a", "/x/y", true}}},
		{"star fallback", "User-agent: a\nDisallow: /a\n\nUser-agent: *\nDisallow: /s\n",
			[]check{{"b", "/s", false}, {"b", "/a", true}, {"a", "/s", true}}},
		{"star groups merged", "User-agent: *\nDisallow: /x\n\nUser-agent: a\nDisallow: /a\n\nUser-agent: *\nDisallow: /y\n",
			[]check{{"b", "/x", false}, {"b", "/y", false}}},
		{"no matching group and no star: allowed", "User-agent: a\nDisallow: /\n",
			[]check{{"b", "/x", true}}},
		{"seed: 2-UAcomBot group beats *", "User-agent: *\nDisallow: /\n\nUser-agent: 2-UAcomBot\nDisallow: /private/\n",
			[]check{{"2-UAcomBot", "/x", true}, {"2-uacombot", "/private/x", false}, {"other", "/x", false}}},
		{"seed: block 2-UAcomBot completely", "User-agent: 2-UAcomBot\nDisallow: /\n",
			[]check{{"2-UAcomBot", "/", false}, {"2-UAcomBot", "/anything", false}, {"other", "/", true}}},

		// Matching a URL.
		{"path and query, not scheme host or fragment", "User-agent: *\nDisallow: /p?q=1\nDisallow: /*example.com\n",
			[]check{{"a", "https://example.com/p?q=1", false}, {"a", "https://example.com/p?q=2", true},
				{"a", "https://example.com/p#?q=1", true}, {"a", "https://example.com/ok", true}}},
		{"empty path is /", "User-agent: *\nDisallow: /$\n",
			[]check{{"a", "https://example.com", false}, {"a", "https://example.com?x", true}, {"a", "https://example.com/a", true}}},
		{"non-ASCII rule matches encoded URL", "User-agent: *\nDisallow: /café\n",
			[]check{{"a", "/caf%C3%A9", false}, {"a", "/caf%c3%a9/x", false}, {"a", "/café", false}, {"a", "/cafe", true}}},
		{"encoded rule matches non-ASCII URL", "User-agent: *\nDisallow: /caf%c3%a9\n",
			[]check{{"a", "/café", false}, {"a", "/caf%C3%A9", false}}},
		{"encoded unreserved decoded", "User-agent: *\nDisallow: /%7Ejoe\nDisallow: /%41B\n",
			[]check{{"a", "/~joe/x", false}, {"a", "/AB", false}, {"a", "/%7ejoe", false}}},
		{"reserved escapes stay distinct", "User-agent: *\nDisallow: /a%2Fb\n",
			[]check{{"a", "/a/b", true}, {"a", "/a%2fb", false}}},
		{"star wildcard", "User-agent: *\nDisallow: /*.pdf\nDisallow: /a*b*c\n",
			[]check{{"a", "/x/y.pdf", false}, {"a", "/x/y.pdf?z", false}, {"a", "/x.pd", true},
				{"a", "/a1b2c3", false}, {"a", "/a1c2b", true}}},
		{"dollar anchors the end", "User-agent: *\nDisallow: /*.pdf$\nDisallow: /exact$\n",
			[]check{{"a", "/y.pdf", false}, {"a", "/y.pdf?z", true}, {"a", "/y.pdfx", true},
				{"a", "/exact", false}, {"a", "/exactly", true}}},
		{"%2A and %24 are literal", "User-agent: *\nDisallow: /file-%2A.html\nDisallow: /foo-%24\n",
			[]check{{"a", "/file-*.html", false}, {"a", "/file-x.html", true}, {"a", "/foo-$", false}, {"a", "/foo-x", true}}},
		{"dollar inside a pattern is literal", "User-agent: *\nDisallow: /a$b\n",
			[]check{{"a", "/a$b", false}, {"a", "/a", true}}},
		{"patterns anchored at the path start", "User-agent: *\nDisallow: private\nDisallow: /*x/\n",
			[]check{{"a", "/private", true}, {"a", "/a/x/", false}}},
		{"empty disallow means nothing", "User-agent: *\nDisallow:\n",
			[]check{{"a", "/x", true}}},
		{"empty allow means nothing", "User-agent: *\nAllow:\nDisallow: /\n",
			[]check{{"a", "/x", false}}},
		{"longest match wins", "User-agent: *\nAllow: /p\nDisallow: /pa\nAllow: /pag\n",
			[]check{{"a", "/p", true}, {"a", "/pa", false}, {"a", "/page", true}}},
		{"tie goes to allow (allow first)", "User-agent: *\nAllow: /page\nDisallow: /page\n",
			[]check{{"a", "/page", true}}},
		{"tie goes to allow (disallow first)", "User-agent: *\nDisallow: /page\nAllow: /page\n",
			[]check{{"a", "/page", true}}},
		{"wildcard specificity by octets", "User-agent: *\nAllow: /folder\nDisallow: /folder*\n",
			[]check{{"a", "/folder/x", false}}},
		{"wildcard tie by octets", "User-agent: *\nDisallow: /*.htm\nAllow: /page.\n",
			[]check{{"a", "/page.htm", true}}},
		{"robots.txt always allowed", "User-agent: *\nDisallow: /\n",
			[]check{{"a", "/robots.txt", true}, {"a", "https://e.com/robots.txt", true}, {"a", "/%72obots.txt", true}, {"a", "/robots.txt2", false}}},
		{"seed: Disallow / with Allow /blog/", "User-agent: 2-UAcomBot\nDisallow: /\nAllow: /blog/\n",
			[]check{{"2-UAcomBot", "/blog/post", true}, {"2-UAcomBot", "/blog", false}, {"2-UAcomBot", "/", false}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runChecks(t, tc.body, tc.checks) })
	}
}

// TestRFCExamples runs the examples of RFC 9309 §2.2.2 and §5.
func TestRFCExamples(t *testing.T) {
	body := `User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF`
	runChecks(t, body, []check{
		{"foobot", "/example/page.html", true},
		{"foobot", "/example/allowed.gif", true},
		{"foobot", "/other", false},
		{"barbot", "/example/page.html", false},
		{"bazbot", "/example/page.html", false},
		{"barbot", "/example/page2.html", true},
		{"quxbot", "/anything", true},
		{"otherbot", "/example/x", false},
		{"otherbot", "/publications/x", true},
		{"otherbot", "/x.gif", false}, // a leading "*" matches from the path start
		{"otherbot", "/x.gif?y", true},
	})
	runChecks(t, "User-agent: *\nAllow: /path/file-with-a-%2A.html\nDisallow: /path/\nAllow: /path/foo-%24\n",
		[]check{{"a", "https://www.example.com/path/file-with-a-*.html", true}, {"a", "/path/foo-$", true}, {"a", "/path/x", false}})
	runChecks(t, "User-agent: *\nDisallow: /path/\nAllow: /foo/bar?baz=quz\nAllow: /foo/bar/%E3%83%84\nAllow: /foo/bar/ツ\n",
		[]check{{"a", "/foo/bar?baz=quz", true}, {"a", "/foo/bar/%E3%83%84", true}, {"a", "/foo/bar/ツ", true}})
}

func TestTruncation(t *testing.T) {
	pad := func(n int) string { return "#" + strings.Repeat("x", n-2) + "\n" }
	head := "User-agent: *\nDisallow: /first\n"

	t.Run("rules past the limit ignored", func(t *testing.T) {
		body := head + pad(MaxBodySize-len(head)) + "Disallow: /late\n"
		r := Parse([]byte(body))
		assert.True(t, r.Truncated())
		assert.False(t, r.Allowed("a", "/first"))
		assert.True(t, r.Allowed("a", "/late"))
	})
	t.Run("exactly the limit is not truncated", func(t *testing.T) {
		tail := "Disallow: /last\n"
		body := head + pad(MaxBodySize-len(head)-len(tail)) + tail
		require.Len(t, body, MaxBodySize)
		r := Parse([]byte(body))
		assert.False(t, r.Truncated())
		assert.False(t, r.Allowed("a", "/last"))
	})
	t.Run("line ending at the limit kept", func(t *testing.T) {
		tail := "Disallow: /last"
		body := head + pad(MaxBodySize-len(head)-len(tail)) + tail + "\nDisallow: /late\n"
		r := Parse([]byte(body))
		assert.True(t, r.Truncated())
		assert.False(t, r.Allowed("a", "/last"))
		assert.True(t, r.Allowed("a", "/late"))
	})
	// A line the limit cuts in two is dropped: its first half is another
	// rule than the one the site owner wrote, and would change answers.
	t.Run("line cut by the limit dropped", func(t *testing.T) {
		for _, c := range []struct {
			name, head, line string
			cut              int // bytes of line before the limit
			token, url       string
			allowed          bool // the right answer; keeping the half line gives the other
		}{
			{"half an Allow would open the site", "User-agent: *\nDisallow: /\n", "Allow: /blog/\n", len("Allow: /"), "a", "/shop", false},
			{"half a Disallow would close more", "User-agent: *\nDisallow: /private/\n", "Disallow: /private-area/\n", len("Disallow: /priv"), "a", "/privacy", true},
			{"half a user-agent would name another crawler", "User-agent: *\nDisallow: /\n\nUser-agent: other\n", "User-agent: CrawlCove-Crawler\n", len("User-agent: CrawlCove"), "CrawlCove", "/x", false},
		} {
			t.Run(c.name, func(t *testing.T) {
				prefix := c.head + pad(MaxBodySize-len(c.head)-c.cut)
				require.Len(t, prefix+c.line[:c.cut], MaxBodySize)
				r := Parse([]byte(prefix + c.line + "Allow: /late\n"))
				assert.True(t, r.Truncated())
				assert.Equal(t, c.allowed, r.Allowed(c.token, c.url), r.Explain(c.token, c.url))
				// The half line, had it been kept, would answer otherwise.
				kept := Parse([]byte(prefix + c.line[:c.cut] + "\n"))
				assert.Equal(t, !c.allowed, kept.Allowed(c.token, c.url), "the case tests nothing")
			})
		}
	})
	t.Run("CR at the limit ends the line", func(t *testing.T) {
		tail := "Disallow: /last"
		body := head + pad(MaxBodySize-len(head)-len(tail)) + tail + "\rDisallow: /late\r"
		r := Parse([]byte(body))
		assert.True(t, r.Truncated())
		assert.False(t, r.Allowed("a", "/last"))
		assert.True(t, r.Allowed("a", "/late"))
	})
}

func TestSitemaps(t *testing.T) {
	r := Parse([]byte("Sitemap: https://e.com/a.xml\nUser-agent: *\nSITEMAP : https://e.com/b.xml # c\nDisallow: /\n" +
		"Sitemap: /relative.xml\nSitemap: https://e.com/a.xml\nSitemap: ftp://e.com/x\nsitemap: http://other.org/c.xml\n"))
	assert.Equal(t, []string{"https://e.com/a.xml", "https://e.com/b.xml", "http://other.org/c.xml"}, r.Sitemaps())
	assert.False(t, r.Allowed("a", "/x"), "sitemap lines do not disturb the group")

	var b strings.Builder
	for i := range 50 {
		b.WriteString("Sitemap: https://e.com/s" + string(rune('a'+i%26)) + ".xml\n")
	}
	assert.Len(t, Parse([]byte(b.String())).Sitemaps(), 26, "many duplicates")
	assert.Nil(t, Parse(nil).Sitemaps())
}

func TestCrawlDelay(t *testing.T) {
	r := Parse([]byte("User-agent: a\nCrawl-delay: soon\nCrawl-delay: 2.5\nCrawl-delay: 9\nDisallow: /a\n\nUser-agent: *\nCrawl-delay: 10\nDisallow: /s\n\nUser-agent: b\nDisallow: /\nCrawl-delay: 1e300\n\nUser-agent: c\nCrawl-delay: -1\n"))
	d, ok := r.CrawlDelay("A")
	assert.True(t, ok)
	assert.Equal(t, 2500*time.Millisecond, d)
	d, ok = r.CrawlDelay("zzz")
	assert.True(t, ok)
	assert.Equal(t, 10*time.Second, d)
	d, ok = r.CrawlDelay("b")
	assert.True(t, ok)
	assert.Equal(t, 24*time.Hour, d)
	_, ok = r.CrawlDelay("c")
	assert.False(t, ok)
	_, ok = Parse([]byte("Crawl-delay: 5\n")).CrawlDelay("a")
	assert.False(t, ok, "crawl-delay outside a group")
}

func TestExplain(t *testing.T) {
	body := "User-agent: *\nDisallow: /\n\n# shop\nUser-agent: CrawlCove-Crawler\nUser-agent: other\nDisallow: /basket/\nAllow: /basket/public\n"
	r := Parse([]byte(body))

	d := r.Explain("crawlcove-crawler", "https://shop.example/basket/1")
	assert.False(t, d.Allowed)
	require.NotNil(t, d.Rule)
	assert.Equal(t, Rule{Allow: false, Pattern: "/basket/", Line: 7}, *d.Rule)
	assert.Equal(t, []string{"CrawlCove-Crawler", "other"}, d.Agents)
	assert.False(t, d.Wildcard)
	assert.Equal(t, `disallowed by "Disallow: /basket/" (line 7, user-agent CrawlCove-Crawler, other)`, d.String())

	d = r.Explain("CrawlCove-Crawler", "/basket/public/x")
	assert.Equal(t, `allowed by "Allow: /basket/public" (line 8, user-agent CrawlCove-Crawler, other)`, d.String())

	d = r.Explain("CrawlCove-Crawler", "/shop")
	assert.True(t, d.Allowed)
	assert.Nil(t, d.Rule)
	assert.Equal(t, `allowed: no rule matches (user-agent CrawlCove-Crawler, other)`, d.String())

	d = r.Explain("CrawlCove", "/x")
	assert.True(t, d.Wildcard)
	assert.Equal(t, []string{"*"}, d.Agents)
	assert.Equal(t, `disallowed by "Disallow: /" (line 2, user-agent *)`, d.String())

	d = r.Explain("CrawlCove", "/robots.txt")
	assert.Equal(t, "allowed: /robots.txt is always allowed", d.String())

	d = Parse([]byte("User-agent: a\nDisallow: /\n")).Explain("b", "/x")
	assert.Nil(t, d.Agents)
	assert.Equal(t, "allowed: no group applies", d.String())

	// Merged groups list the values of every group used.
	d = Parse([]byte("User-agent: a\nDisallow: /x\nUser-agent: b\nDisallow: /y\nUser-agent: A\nDisallow: /z\n")).Explain("a", "/z")
	assert.Equal(t, []string{"a", "A"}, d.Agents)
	assert.Equal(t, 6, d.Rule.Line)

	var nilRules *Rules
	assert.True(t, nilRules.Allowed("a", "/x"))
	assert.True(t, nilRules.Explain("a", "/x").Allowed)
}

func TestProductToken(t *testing.T) {
	for ua, want := range map[string]string{
		"Mozilla/5.0 (compatible; 2-UAcomBot/1.0; +https://2-ua.com/support/robots)": "2-UAcomBot",
		"CrawlCove-Crawler": "CrawlCove-Crawler",
		"CrawlCove-Crawler/2.0 (+https://crawlcove.com)":                                                "CrawlCove-Crawler",
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)":                      "Googlebot",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://bing.com)": "bingbot",
		"curl/8.5.0":                "curl",
		"  polite  ":                "polite",
		"Mozilla/5.0 (compatible;)": "Mozilla",
		"":                          "",
	} {
		assert.Equal(t, want, ProductToken(ua), ua)
	}
}

func TestPathOf(t *testing.T) {
	for in, want := range map[string]string{
		"":                              "/",
		"/":                             "/",
		"https://e.com":                 "/",
		"https://e.com?q":               "/?q",
		"https://user@e.com:8080/a?b#c": "/a?b",
		"/a b":                          "/a%20b",
		"/a*b$":                         "/a%2Ab%24",
		"/%7e%41%2f%zz%":                "/~A%2F%25zz%25",
		"x/y":                           "/x/y",
		"/é":                            "/%C3%A9",
	} {
		assert.Equal(t, want, pathOf(in), in)
	}
}

func TestAllowedDoesNotAllocate(t *testing.T) {
	r := Parse([]byte(realisticRobots(1)))
	urls := []string{"https://www.example.com/products/item-42/reviews?page=3", "/search?q=x", "/", "/my%20page%20(draft)", "/it's%20here?q=(1)"}
	for _, u := range urls {
		n := testing.AllocsPerRun(100, func() { r.Allowed("Googlebot", u); r.Allowed("NoSuchBot", u) })
		assert.Zero(t, n, u)
	}
}

func TestExplainDoesNotAllocate(t *testing.T) {
	r := Parse([]byte(realisticRobots(1)))
	for _, tok := range []string{"Googlebot", "CrawlCove-Crawler", "AhrefsBot"} {
		d := r.Explain(tok, "/search/x?sort=1")
		require.NotNil(t, d.Agents, tok)
		n := testing.AllocsPerRun(100, func() { r.Explain(tok, "/search/x?sort=1") })
		assert.Zero(t, n, tok)
	}
}

func TestHostileFiles(t *testing.T) {
	// Many groups repeating many agents: merged agent lists are built per
	// call instead of precomputed, and answers stay right.
	var b strings.Builder
	for g := range 40 {
		for a := range 400 {
			b.WriteString("User-agent: bot" + strings.Repeat("x", a%7) + string(rune('a'+a%26)) + string(rune('a'+a/26)) + "\n")
		}
		b.WriteString("Disallow: /g" + string(rune('a'+g%26)) + "\n")
	}
	r := Parse([]byte(b.String()))
	d := r.Explain("botaa", "/gb")
	assert.False(t, d.Allowed)
	assert.Len(t, d.Agents, 40*400)

	// A CR-only file of many lines parses in linear time.
	cr := strings.Repeat("Disallow: /x\r", 30000)
	r = Parse([]byte("User-agent: *\r" + cr))
	assert.False(t, r.Allowed("a", "/x"))

	// Pathological wildcards do not backtrack.
	p := "User-agent: *\nDisallow: /" + strings.Repeat("*a", 2000) + "*b\n"
	r = Parse([]byte(p))
	assert.True(t, r.Allowed("a", "/"+strings.Repeat("a", 100000)))
}

func TestRulesAccessors(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /x\nAllow: /y\n"))
	rules := r.Rules()
	assert.Equal(t, []Rule{{Allow: false, Pattern: "/x", Line: 2}, {Allow: true, Pattern: "/y", Line: 3}}, rules)
	rules[0].Pattern = "/changed"
	assert.Equal(t, "/x", r.Rules()[0].Pattern, "Rules returns a copy")
	assert.Equal(t, "Allow: /y", rules[1].String())
	var nilRules *Rules
	assert.Nil(t, nilRules.Rules())
	assert.False(t, nilRules.Truncated())
	assert.Nil(t, nilRules.Sitemaps())
	_, ok := nilRules.CrawlDelay("a")
	assert.False(t, ok)
}

// TestMissingColon: every directive Parse knows is read without its colon
// when a single word follows the name, and gives the same Rule, line and
// file-wide records as with the colon.
func TestMissingColon(t *testing.T) {
	with := "User-agent: a\nCrawl-delay: 3\nDisallow: /x\nAllow: /x/y\nSitemap: https://e.com/s.xml\n"
	without := "User-agent a\nCrawl-delay 3\nDisallow /x\nAllow\t/x/y\nSitemap  https://e.com/s.xml\n"
	rw, ro := Parse([]byte(with)), Parse([]byte(without))
	assert.Equal(t, rw.Rules(), ro.Rules())
	assert.Equal(t, []Rule{{Pattern: "/x", Line: 3}, {Allow: true, Pattern: "/x/y", Line: 4}}, ro.Rules())
	assert.Equal(t, []string{"https://e.com/s.xml"}, ro.Sitemaps())
	d, ok := ro.CrawlDelay("a")
	assert.True(t, ok)
	assert.Equal(t, 3*time.Second, d)
	assert.Equal(t, `disallowed by "Disallow: /x" (line 3, user-agent a)`, ro.Explain("a", "/x/z").String())

	for _, line := range []string{"Disallow", "Disallow /a /b", "Disalow /a", "Noindex /a", "Disallow\x00/a", "this is prose"} {
		r := Parse([]byte("User-agent: *\n" + line + "\n"))
		assert.Empty(t, r.Rules(), "%q is not a record", line)
	}
}
