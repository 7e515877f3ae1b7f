package crawl

import (
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/examples/audit/internal/store"
)

// The audit relies on the library's wiring and defaults, and sets nothing that turns them off: the
// frontier is built with Config.Client, so it is the pages client's gate and its Claimer (a redirect
// target the crawl has is not requested again); one 429 slows the whole run (backoff.PerRun), and
// Crawl-delay is not read (the bot page says so), nor does an adaptive pace change the promised gap.
func TestCrawlerWiringKeepsTheLibraryDefaults(t *testing.T) {
	st, err := store.OpenStore(t.Context(), filepath.Join(t.TempDir(), "a.db"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	cfg := &Config{DB: "a.db", URL: "https://shop.example/", UserAgent: DefaultUserAgent, MaxPages: 500, MaxDepth: 5,
		Concurrency: 4, Gap: 300 * time.Millisecond, Timeout: 15 * time.Second}
	c, err := NewCrawler(cfg, Env{Now: time.Now, Terminal: func(io.Writer) bool { return false }}, st, io.Discard)
	require.NoError(t, err)

	assert.Same(t, c.Client, c.frontierCfg.Client, "the frontier is built with Config.Client")
	assert.Equal(t, c.Front, c.Client.Gate, "the frontier is the pages client's gate")
	require.IsType(t, claimRecorder{}, c.Client.Claimer)
	assert.Equal(t, c.Front, c.Client.Claimer.(claimRecorder).next, "and its Claimer, through the crawl's note of what it let through")
	assert.Nil(t, c.probe.Claimer, "llms.txt and the probes follow no redirect: nothing to claim")

	assert.Equal(t, backoff.PerRun, c.Slow.Scope, "one 429 slows the whole run")
	assert.Equal(t, backoff.PerRun, c.Policy.SlowdownScope)
	assert.Same(t, c.Slow, c.Client.Slowdown, "fetch trips the latch the frontier applies")
	assert.Same(t, c.Slow, c.frontierCfg.Slowdown)
	assert.False(t, c.frontierCfg.HonorCrawlDelay, "Crawl-delay is not read")
	assert.Nil(t, c.frontierCfg.Adaptive, "the gap is the promised one")
	assert.Zero(t, c.frontierCfg.PerHostGap)
	assert.Equal(t, 4, c.frontierCfg.MaxInFlight)
	assert.Equal(t, 300*time.Millisecond, c.frontierCfg.Gap)
}
