package fetch_test

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/testsite"
)

// seenSet is the smallest real Claimer: a set of URLs.
type seenSet struct {
	mu   sync.Mutex
	seen map[string]bool
	asks []string
}

func (s *seenSet) Claim(_ context.Context, u *url.URL) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := u.String()
	s.asks = append(s.asks, k)
	if s.seen[k] {
		return false, nil
	}
	s.seen[k] = true
	return true, nil
}

// TestClaimerStopsAtSeenTarget: a redirect whose target the crawl has
// seen is not followed; Get returns the redirect itself, without error,
// naming the target. The URL passed to Get is never claimed, and HEAD
// does not claim.
func TestClaimerStopsAtSeenTarget(t *testing.T) {
	site := testsite.New(t)
	site.Robots("User-agent: *\nAllow: /\n")
	site.Redirect("/redir-chain", "/redir", http.StatusFound)
	site.Redirect("/redir", "/a", http.StatusMovedPermanently)
	site.HTML("/a", "<title>A</title>")
	claims := &seenSet{seen: map[string]bool{site.URL() + "/a": true}}
	c := &fetch.Client{Gate: fetch.NoLimits{}, Claimer: claims}
	res, err := c.Get(context.Background(), site.URL()+"/redir-chain")
	require.NoError(t, err)
	assert.Equal(t, site.URL()+"/a", res.DuplicateTarget)
	assert.Equal(t, site.URL()+"/redir", res.FinalURL)
	assert.Equal(t, http.StatusMovedPermanently, res.Status)
	assert.Equal(t, "/a", res.Header.Get("Location"))
	require.Len(t, res.Redirects, 1)
	assert.Equal(t, site.URL()+"/redir-chain", res.Redirects[0].URL)
	assert.Zero(t, site.Count("/a"))
	assert.Equal(t, []string{site.URL() + "/redir", site.URL() + "/a"}, claims.asks)

	_, err = c.Head(context.Background(), site.URL()+"/redir")
	require.NoError(t, err)
	assert.Equal(t, 1, site.Count("/a"), "HEAD follows without claiming")
	assert.Len(t, claims.asks, 2)
}
