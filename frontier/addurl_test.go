package frontier_test

import (
	"context"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/internal/testsite"
	"github.com/politecrawl/polite/robots"
)

// AddURL answers every URL as Add answers its string: the same outcome, normal form, error and verdict,
// and the same queue afterwards, for URLs in normal form (given to the scope as parsed), not in normal
// form (parsed again from the normal form), out of scope, disallowed, duplicate, too deep, too long, past
// the page limit, and not http(s).
func TestAddURLAgreesWithAdd(t *testing.T) {
	site := testsite.New(t)
	site.Robots("User-agent: *\nDisallow: /private/\n")
	base := site.URL()
	newFrontier := func() *frontier.Frontier {
		cfg := frontier.DefaultConfig()
		cfg.MaxPages, cfg.MaxDepth = 8, 2
		cfg.Robots = &robots.Cache{}
		cfg.RobotsTokens = []string{"CrawlCove-Crawler"}
		scope, err := frontier.SameSite(base + "/")
		require.NoError(t, err)
		cfg.Scope = scope
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		return f
	}
	byString, byURL := newFrontier(), newFrontier()
	urls := []string{
		base + "/", base + "/a", base + "/a", strings.ToUpper("http://") + strings.TrimPrefix(base, "http://") + "/x/../b#top",
		base + "/%7Euser", base + "/c?q=a%20b", "http://other.example/", base + "/private/x", base + "/deep",
		base + "/" + strings.Repeat("a", frontier.MaxURLLength), "mailto:someone@example.com", "ftp://" + site.Host() + "/",
		base + "/d", base + "/e", base + "/f", base + "/g", base + "/h", base + "/b",
	}
	ctx := context.Background()
	for i, raw := range urls {
		depth := 1
		switch {
		case i == 0:
			depth = 0
		case strings.HasSuffix(raw, "/deep"):
			depth = 3
		}
		u, err := url.Parse(raw)
		require.NoError(t, err, raw)
		want := byString.Add(ctx, u.String(), depth, base+"/")
		got := byURL.AddURL(ctx, u, depth, base+"/")
		assert.Equal(t, want.Outcome, got.Outcome, raw)
		assert.Equal(t, want.URL, got.URL, raw)
		assert.Equal(t, fmt.Sprint(want.Err), fmt.Sprint(got.Err), raw)
		assert.Equal(t, want.Verdict.Outcome, got.Verdict.Outcome, raw)
	}
	assert.Equal(t, byString.Stats().Dropped, byURL.Stats().Dropped)
	assert.Equal(t, byString.Stats().Queued, byURL.Stats().Queued)
	assert.Equal(t, frontier.Invalid, byURL.AddURL(ctx, nil, 1, "").Outcome, "a nil URL")
}

// A URL already parsed and in normal form is not parsed again: AddURL allocates less than Add (its
// string, not a url.URL with its fields).
func TestAddURLAllocatesLessThanAdd(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations differ under the race detector")
	}
	newFrontier := func() *frontier.Frontier {
		cfg := benchConfig()
		scope, err := frontier.SameSite("https://host-0000.example.com/")
		require.NoError(t, err)
		cfg.Scope = scope
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		return f
	}
	const runs = 2000
	raws := make([]string, 2*runs)
	parsed := make([]*url.URL, len(raws))
	for i := range raws {
		raws[i] = benchURL(i, 1)
		parsed[i] = mustURL(t, raws[i])
	}
	ctx := context.Background()
	// bytesPer adds raws[from:from+runs] (first a warm-up half, so the queue and seen set have grown)
	// and returns the bytes allocated per URL.
	bytesPer := func(add func(i int) frontier.AddResult) float64 {
		for i := range runs / 2 {
			require.Equal(t, frontier.Queued, add(i).Outcome)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := runs / 2; i < 2*runs; i++ {
			if r := add(i); r.Outcome != frontier.Queued {
				t.Fatalf("%s: %s", raws[i], r.Outcome)
			}
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / float64(2*runs-runs/2)
	}
	byString, byURL := newFrontier(), newFrontier()
	add := bytesPer(func(i int) frontier.AddResult { return byString.Add(ctx, raws[i], 1, "") })
	addURL := bytesPer(func(i int) frontier.AddResult { return byURL.AddURL(ctx, parsed[i], 1, "") })
	t.Logf("bytes allocated per URL: Add %.0f, AddURL %.0f", add, addURL)
	assert.Less(t, addURL, add-32, "a url.URL is 144 bytes, the string of this one 80")
}
