package frontier_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/internal/testsite"
)

// redirectSite is a loopback site where /a is linked directly and reached
// through /redir (301 → /a) and /redir-chain (302 → /redir → /a); /a
// links to /missing. directFirst lists the direct link first.
func redirectSite(t *testing.T, directFirst bool) *testsite.Site {
	site := testsite.New(t)
	site.Robots("User-agent: *\nAllow: /\n")
	links := `<a href="/redir-chain">c</a> <a href="/redir">r</a> <a href="/a">a</a>`
	if directFirst {
		links = `<a href="/a">a</a> <a href="/redir">r</a> <a href="/redir-chain">c</a>`
	}
	site.HTML("/", `<title>Home</title>`+links)
	site.Redirect("/redir", "/a", http.StatusMovedPermanently)
	site.Redirect("/redir-chain", "/redir", http.StatusFound)
	site.HTML("/a", `<title>A</title><a href="/missing">m</a> <a href="/">home</a>`)
	site.Status("/missing", http.StatusNotFound)
	return site
}

// documentedLoop runs the documented loop (frontier doc, README) over f with
// client, from start plus extra URLs (a sitemap's), and returns the
// From of every item handed out, by URL.
func documentedLoop(t *testing.T, f frontier.Interface, client *fetch.Client, start string, extra ...string) map[string]string {
	t.Helper()
	ctx := context.Background()
	require.Equal(t, frontier.Queued, f.Add(ctx, start, 0, "").Outcome)
	for _, u := range extra {
		f.Add(ctx, u, 1, start+"sitemap.xml")
	}
	var mu sync.Mutex
	from := map[string]string{}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for {
				it, err := f.Next(ctx)
				if err != nil {
					if !errors.Is(err, frontier.ErrComplete) {
						t.Error(err)
					}
					return
				}
				mu.Lock()
				from[it.URL] = it.From
				mu.Unlock()
				res, err := client.Get(ctx, it.URL)
				if p, perr := res.Page(); perr == nil {
					for _, l := range p.Links {
						f.Add(ctx, l.URL, it.Depth+1, res.FinalURL)
					}
				}
				_ = f.Done(it, err)
			}
		})
	}
	wg.Wait()
	return from
}

// TestRedirectTargetRequestedOnce: however /a is reached — linked, through
// one or two redirects, from a sitemap — the site sees one request for it,
// in either link order; the links of /a are attributed to /a.
func TestRedirectTargetRequestedOnce(t *testing.T) {
	for _, directFirst := range []bool{false, true} {
		site := redirectSite(t, directFirst)
		client := &fetch.Client{}
		cfg := frontier.DefaultConfig()
		cfg.Gap = 0
		cfg.Client = client
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		require.Same(t, f, client.Claimer)
		from := documentedLoop(t, f, client, site.URL()+"/", site.URL()+"/redir")
		assert.Equal(t, 1, site.Count("/a"), "direct first %v: %v", directFirst, site.Paths())
		assert.Equal(t, 1, site.Count("/redir"), "direct first %v: %v", directFirst, site.Paths())
		assert.Equal(t, 1, site.Count("/redir-chain"), "direct first %v: %v", directFirst, site.Paths())
		assert.Equal(t, 1, site.Count("/missing"))
		assert.Equal(t, site.URL()+"/a", from[site.URL()+"/missing"], "links of a redirected page belong to the final URL")
	}
}

// TestClaimDirect: Claim's answers.
func TestClaimDirect(t *testing.T) {
	ctx := context.Background()
	f, err := frontier.New(frontier.DefaultConfig())
	require.NoError(t, err)
	require.Equal(t, frontier.Queued, f.Add(ctx, "https://shop.example/", 0, "").Outcome)
	u := mustURL(t, "https://shop.example/a")
	ok, err := f.Claim(ctx, u)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, _ = f.Claim(ctx, mustURL(t, "https://SHOP.example:443/a#x")) // the same URL, normalized
	assert.False(t, ok)
	assert.Equal(t, frontier.Duplicate, f.Add(ctx, "https://shop.example/a", 1, "https://shop.example/").Outcome)
	ok, _ = f.Claim(ctx, mustURL(t, "https://shop.example/"))
	assert.False(t, ok, "a queued URL is claimed already")
	ok, _ = f.Claim(ctx, mustURL(t, "https://other.example/a"))
	assert.True(t, ok, "out of scope: followed, not recorded")
	assert.Equal(t, frontier.Queued, f.Add(ctx, "https://other.example/a", 0, "").Outcome, "an out-of-scope claim recorded nothing")
	assert.Equal(t, 2, f.Stats().Queued, "a claim queues nothing")
}
