package robots

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Crawl Cove page: "The app will keep accepting the old token, so rules
// you write now keep working." A crawler whose User-Agent gains a new token
// still obeys the groups that name its old one.
func TestAllowedAsFirstNamedTokenDecides(t *testing.T) {
	const body = "User-agent: CrawlCove-Crawler\nDisallow: /basket/\n\n" +
		"User-agent: *\nDisallow: /everything-for-others/\n\n" +
		"User-agent: Googlebot-Image\nDisallow: /img/\n\n" +
		"User-agent: Googlebot\nDisallow: /private/\n"
	r := Parse([]byte(body))
	newAndOld := []string{"CrawlCove", "CrawlCove-Crawler"}
	for _, c := range []struct {
		tokens  []string
		url     string
		allowed bool
		token   string // Decision.Token
	}{
		// No group names CrawlCove: the old token's group decides, not `*`.
		{newAndOld, "/basket/1", false, "CrawlCove-Crawler"},
		{newAndOld, "/everything-for-others/x", true, "CrawlCove-Crawler"},
		// The new token alone is not named: `*` applies.
		{[]string{"CrawlCove"}, "/basket/1", true, ""},
		{[]string{"CrawlCove"}, "/everything-for-others/x", false, ""},
		// A specific token before its family: the specific group wins...
		{[]string{"Googlebot-Image", "Googlebot"}, "/img/a.png", false, "Googlebot-Image"},
		{[]string{"Googlebot-Image", "Googlebot"}, "/private/x", true, "Googlebot-Image"},
		// ...and the family applies when the specific one is not named.
		{[]string{"Googlebot-News", "Googlebot"}, "/private/x", false, "Googlebot"},
		// Order is preference: the first named token decides, not the union.
		{[]string{"Googlebot", "CrawlCove-Crawler"}, "/basket/1", true, "Googlebot"},
		// Case and version suffixes do not matter.
		{[]string{"crawlcove-crawler/2.0"}, "/basket/1", false, "crawlcove-crawler"},
		// No tokens at all: `*`.
		{nil, "/everything-for-others/x", false, ""},
	} {
		assert.Equal(t, c.allowed, r.AllowedAs(c.tokens, c.url), "AllowedAs(%q, %q)", c.tokens, c.url)
		d := r.ExplainAs(c.tokens, c.url)
		assert.Equal(t, c.allowed, d.Allowed, "ExplainAs(%q, %q): %s", c.tokens, c.url, d)
		assert.Equal(t, c.token, d.Token, "ExplainAs(%q, %q).Token", c.tokens, c.url)
		assert.Equal(t, c.token == "" && len(d.Agents) > 0, d.Wildcard, "Wildcard for %q", c.tokens)
	}
	assert.True(t, r.AllowedAs(newAndOld, "/robots.txt"))
	var nilRules *Rules
	assert.True(t, nilRules.AllowedAs(newAndOld, "/basket/"))
}

func TestExplainSaysWhichTokenMatched(t *testing.T) {
	r := Parse([]byte("User-agent: 2-UAcomBot\nDisallow: /\nAllow: /blog/\n"))
	d := r.Explain("2-uacombot", "/shop")
	assert.False(t, d.Allowed)
	assert.Equal(t, "2-uacombot", d.Token)
	assert.Equal(t, []string{"2-UAcomBot"}, d.Agents)
	assert.Equal(t, "", r.Explain("OtherBot", "/shop").Token)
}

func TestAllowedAsDoesNotAllocate(t *testing.T) {
	r := Parse([]byte(realisticRobots(1)))
	tokens := []string{"CrawlCove", "CrawlCove-Crawler"}
	for _, u := range []string{"https://www.example.com/products/item-42/reviews?page=3", "/search?q=x", "/"} {
		n := testing.AllocsPerRun(100, func() { r.AllowedAs(tokens, u); r.ExplainAs(tokens, u) })
		assert.Zero(t, n, u)
	}
}

func TestTokens(t *testing.T) {
	assert.Equal(t, []string{"CrawlCove", "CrawlCove-Crawler"},
		Tokens("Mozilla/5.0 (compatible; CrawlCove/2.0; +https://crawlcove.example/bot)", "CrawlCove-Crawler"))
	assert.Equal(t, []string{"CrawlCove-Crawler"}, Tokens("CrawlCove-Crawler", "crawlcove-crawler"))
	assert.Equal(t, []string{"2-UAcomBot"}, Tokens("Mozilla/5.0 (compatible; 2-UAcomBot/1.0; +https://2-ua.com/support/robots)", "2-UAcomBot"))
	assert.Equal(t, []string{"MyBot", "Googlebot"}, Tokens("MyBot/1.0", "", "  Googlebot  ", "mybot"))
	assert.Empty(t, Tokens("", ""))
}

// The zero Verdict and every error path fail closed: code that switches on
// the outcome and forgets the error never reads "allowed".
func TestVerdictFailsClosed(t *testing.T) {
	var zero Verdict
	assert.Equal(t, Unknown, zero.Outcome)
	assert.False(t, zero.Allowed())
	assert.NotContains(t, zero.String(), "allowed")
	assert.Contains(t, zero.String(), "unknown")

	c := &Cache{}
	for _, u := range []string{"/relative/path", "", "ftp://e.com/x"} {
		v, err := c.Check(context.Background(), "Bot", u)
		require.ErrorIs(t, err, ErrBadURL, u)
		assert.Equal(t, Unknown, v.Outcome, u)
		assert.False(t, v.Allowed(), u)
		assert.ErrorIs(t, v.Err, ErrBadURL, u)
		assert.Contains(t, v.String(), "unknown", u)
		assert.NotContains(t, v.String(), "allowed", u)
	}

	s := newSite(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("User-agent: *\nAllow: /\n")) })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v, err := (&Cache{Client: s.Client()}).Check(ctx, "Bot", s.URL+"/x")
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, Unknown, v.Outcome)
	assert.False(t, v.Allowed())

	// Every outcome's String agrees with it.
	for o, word := range map[Outcome]string{Unknown: "unknown", Allowed: "allowed", Disallowed: "disallowed", Unreachable: "unreachable"} {
		assert.Equal(t, word, o.String())
	}
	v, err = (&Cache{Client: s.Client()}).Check(context.Background(), "Bot", s.URL+"/x")
	require.NoError(t, err)
	assert.Equal(t, Allowed, v.Outcome)
	assert.True(t, v.Allowed())
	assert.Contains(t, v.String(), ": allowed")
}

func TestCheckAsUsesTheTokenList(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("User-agent: CrawlCove-Crawler\nDisallow: /basket/\n"))
	})
	c := &Cache{Client: s.Client()}
	v, err := c.CheckAs(context.Background(), []string{"CrawlCove", "CrawlCove-Crawler"}, s.URL+"/basket/1")
	require.NoError(t, err)
	assert.Equal(t, Disallowed, v.Outcome)
	assert.Equal(t, "CrawlCove-Crawler", v.Decision.Token)
	v, err = c.Check(context.Background(), "CrawlCove", s.URL+"/basket/1")
	require.NoError(t, err)
	assert.Equal(t, Allowed, v.Outcome)
}
