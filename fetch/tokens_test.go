package fetch_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/testsite"
	"github.com/politecrawl/polite/robots"
)

// A crawler whose User-Agent gained a new token keeps obeying the groups
// written for its old one when RobotsTokens lists it as a fallback ("rules
// you write now keep working"); without the fallback it would not.
func TestRobotsTokensKeepTheOldToken(t *testing.T) {
	const ua = "Mozilla/5.0 (compatible; CrawlCove/2.0; +https://crawlcove.example/bot)"
	for _, tt := range []struct {
		name    string
		tokens  []string
		blocked bool
	}{
		{"new token and the old one", robots.Tokens(ua, "CrawlCove-Crawler"), true},
		{"derived from the User-Agent alone", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := testsite.NewNetwork(t, testsite.InMemory)
				a := n.Add("a.test")
				a.Robots("User-agent: CrawlCove-Crawler\nDisallow: /basket/\n\nUser-agent: *\nAllow: /\n")
				a.Page("/basket/1", "text/plain", "basket")
				c := &fetch.Client{UserAgent: ua, RobotsTokens: tt.tokens, Transport: n.Transport(), Gate: fetch.NoLimits{}}
				_, err := c.Get(t.Context(), "http://a.test/basket/1")
				if !tt.blocked {
					require.NoError(t, err)
					assert.Equal(t, 1, a.Count("/basket/1"))
					return
				}
				fe := requireFetchError(t, err, "http://a.test/basket/1")
				assert.ErrorIs(t, err, fetch.ErrDisallowed)
				assert.Equal(t, "CrawlCove-Crawler", fe.Verdict.Decision.Token, "the fallback token decided")
				assert.Equal(t, 0, a.Count("/basket/1"), "never requested")
			})
		})
	}
}

func TestTokens(t *testing.T) {
	c := &fetch.Client{UserAgent: "Mozilla/5.0 (compatible; 2-UAcomBot/1.0; +https://2-ua.com/support/robots)"}
	assert.Equal(t, []string{"2-UAcomBot"}, c.Tokens())
	assert.Equal(t, []string{robots.ProductToken(fetch.DefaultUserAgent)}, (&fetch.Client{}).Tokens())
	c.RobotsTokens = []string{"CrawlCove", "CrawlCove-Crawler"}
	got := c.Tokens()
	assert.Equal(t, []string{"CrawlCove", "CrawlCove-Crawler"}, got)
	got[0] = "changed"
	assert.Equal(t, "CrawlCove", c.RobotsTokens[0], "Tokens returns a copy")
}

// verdictChecker is a RobotsChecker of a third party that answers with a
// fixed verdict and no error: the zero Verdict (Outcome Unknown) or an
// outcome fetch does not know.
type verdictChecker struct{ v robots.Verdict }

func (c verdictChecker) CheckAs(context.Context, []string, string) (robots.Verdict, error) {
	return c.v, nil
}

// fetch fails closed: a checker answering anything but Allowed with a nil
// error never leads to a request, from any entry point.
func TestUnknownVerdictFailsClosed(t *testing.T) {
	for _, v := range []robots.Verdict{{}, {Outcome: robots.Unknown, Decision: robots.Decision{Allowed: true}}, {Outcome: robots.Outcome(42)}} {
		t.Run(v.Outcome.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := testsite.NewNetwork(t, testsite.InMemory)
				a := n.Add("a.test")
				a.Page("/p", "text/plain", "page")
				g := newGate(t, 0)
				c := newClient(n, g)
				c.Robots = verdictChecker{v}

				_, err := c.Get(t.Context(), "http://a.test/p")
				fe := requireFetchError(t, err, "http://a.test/p")
				assert.ErrorIs(t, err, fetch.ErrNoVerdict)
				assert.NotErrorIs(t, err, fetch.ErrDisallowed)
				require.NotNil(t, fe.Verdict)

				req, err := http.NewRequest(http.MethodGet, "http://a.test/p", nil)
				require.NoError(t, err)
				resp, err := c.HTTPClient().Do(req)
				if resp != nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				assert.ErrorIs(t, err, fetch.ErrNoVerdict)

				assert.Equal(t, 0, a.Total(), "nothing was requested")
				assert.Empty(t, g.Acquired())
			})
		})
	}
}
