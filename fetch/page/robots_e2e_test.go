package page_test

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/internal/testsite"
	"github.com/politecrawl/polite/robots"
)

// reescapedRobots disallows the five URLs of issue 18, each holding a
// character Go must escape (space, non-ASCII) with '(' ')' or "'", which
// net/url re-escapes as %28 %29 %27.
const reescapedRobots = "User-agent: *\n" +
	"Disallow: /my%20page%20(draft)\n" +
	"Disallow: /café(1)\n" +
	"Disallow: /a(b c\n" +
	"Disallow: /it's here\n" +
	"Disallow: /q*(x)\n"

// reescapedTargets are the five, and other spellings of them: as a page
// writes them, as net/url re-escapes them, in lower-case hex.
var reescapedTargets = []string{
	"/my page (draft)", "/café(1)", "/a(b c", "/it's here", "/q/z(x) y",
	"/my%20page%20%28draft%29", "/caf%C3%A9%281%29", "/a%28b%20c", "/it%27s%20here", "/q/z%28x%29%20y",
	"/my%20page%20(draft)?v=2", "/caf%c3%a9(1)", "/a(b%20c/d", "/it's%20here#top", "/q/z%28x)",
}

// disallowedPath reports a request for one of the five, however it was
// spelt on the wire.
func disallowedPath(t *testing.T, requestURI string) bool {
	p, _, _ := strings.Cut(requestURI, "?")
	d, err := url.PathUnescape(p)
	require.NoError(t, err, requestURI)
	for _, pre := range []string{"/my page (draft)", "/café(1)", "/a(b c", "/it's here"} {
		if strings.HasPrefix(d, pre) {
			return true
		}
	}
	return strings.HasPrefix(d, "/q") && strings.Contains(d[2:], "(x)")
}

// TestReescapedURLsNeverRequested crawls a loopback site through the
// frontier and fetch.Client, the documented loop, where a page links to
// the five disallowed URLs in several spellings, directly and through
// redirects (whose Location net/url re-escapes), and checks that the
// server never sees a request for any of them.
func TestReescapedURLsNeverRequested(t *testing.T) {
	site := testsite.New(t)
	site.Robots(reescapedRobots)
	var body strings.Builder
	for i, target := range reescapedTargets {
		body.WriteString(`<a href="` + html.EscapeString(target) + `">direct</a>`)
		hop := "/hop/" + string(rune('a'+i))
		site.Redirect(hop, target, 302)
		body.WriteString(`<a href="` + hop + `">via a redirect</a>`)
	}
	// A redirect to an absolute URL, and a chain.
	site.Redirect("/hop/abs", site.URL()+"/my page (draft)", 301)
	site.Redirect("/hop/chain", "/hop/abs", 307)
	body.WriteString(`<a href="/hop/abs">abs</a><a href="/hop/chain">chain</a><a href="/ok(1)">allowed</a>`)
	site.HTML("/", body.String())
	site.HTML("/ok(1)", "<p>allowed")
	site.NotFound(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) })

	client := &fetch.Client{UserAgent: "CrawlCove-Crawler"}
	cfg := frontier.DefaultConfig()
	cfg.Gap = 0 // the test's own value: nothing to be polite to but itself
	cfg.Client = client
	f, err := frontier.New(cfg)
	require.NoError(t, err)
	ctx := t.Context()
	require.Equal(t, frontier.Queued, f.Add(ctx, site.URL()+"/", 0, "").Outcome)

	var disallowedLinks, refusedHops int // links the frontier refused, hops fetch refused
	var duplicateTargets []string        // redirect targets the crawl had already (fetch.Claimer)
	for {
		it, err := f.Next(ctx)
		if err != nil {
			require.ErrorIs(t, err, frontier.ErrComplete)
			break
		}
		res, err := client.Get(ctx, it.URL)
		var fe *fetch.Error
		if errors.As(err, &fe) && fe.Verdict != nil && fe.Verdict.Outcome == robots.Disallowed {
			refusedHops++
		} else {
			require.NoError(t, err, it.URL)
		}
		if err == nil && res.DuplicateTarget != "" {
			duplicateTargets = append(duplicateTargets, res.DuplicateTarget)
		}
		if err == nil {
			if p, perr := res.Page(); perr == nil {
				for _, l := range p.Links {
					o := f.Add(ctx, l.URL, it.Depth+1, res.FinalURL).Outcome
					if o == frontier.Disallowed {
						disallowedLinks++
					}
					if !strings.HasPrefix(l.Raw, "/hop/") && l.Raw != "/ok(1)" {
						// Spellings of one URL normalise alike: the first is
						// refused, the others are duplicates of it.
						assert.Contains(t, []frontier.Outcome{frontier.Disallowed, frontier.Duplicate}, o, "link %q (%s)", l.Raw, l.URL)
					}
				}
			}
		}
		f.Done(it, err)
	}
	for _, r := range site.Requests() {
		assert.False(t, disallowedPath(t, r.Path), "the server saw %s", r.Path)
	}
	assert.Equal(t, 1, site.Count("/ok(1)"), "the allowed page was crawled")
	assert.GreaterOrEqual(t, disallowedLinks, 5, "each of the five refused by the frontier")
	// /hop/chain leads to /hop/abs, which the crawl requested already (its
	// link comes first): the frontier's Claimer stops it there.
	assert.Equal(t, []string{site.URL() + "/hop/abs"}, duplicateTargets)
	assert.Equal(t, len(reescapedTargets)+1, refusedHops, "every other redirect refused at its hop")
	for i := range reescapedTargets {
		assert.Equal(t, 1, site.Count("/hop/"+string(rune('a'+i))), "redirect %d was followed to its target's check", i)
	}
}

// TestReescapedRedirectRefusedByHTTPClient: the same redirects through
// Client.HTTPClient, the net/http path (http.Client follows the Location,
// the RoundTripper checks each hop).
func TestReescapedRedirectRefusedByHTTPClient(t *testing.T) {
	site := testsite.New(t)
	site.Robots(reescapedRobots)
	for i, target := range reescapedTargets {
		site.Redirect("/hop/"+string(rune('a'+i)), target, 302)
	}
	site.NotFound(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) })
	hc := (&fetch.Client{UserAgent: "CrawlCove-Crawler"}).HTTPClient()
	ctx := context.Background()
	for i := range reescapedTargets {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, site.URL()+"/hop/"+string(rune('a'+i)), nil)
		require.NoError(t, err)
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		var fe *fetch.Error
		require.ErrorAs(t, err, &fe, "redirect to %s", reescapedTargets[i])
		require.NotNil(t, fe.Verdict, "redirect to %s: %v", reescapedTargets[i], err)
		assert.Equal(t, robots.Disallowed, fe.Verdict.Outcome)
	}
	for _, r := range site.Requests() {
		assert.False(t, disallowedPath(t, r.Path), "the server saw %s", r.Path)
	}
}
