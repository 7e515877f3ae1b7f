package frontier_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier"
)

// MaxInFlight above MaxHostInFlight: PerHostInFlight 0 still asks one host
// for at most MaxHostInFlight at once, while other hosts fill the rest.
func TestPerHostInFlightZeroStaysAtMostMaxHostInFlight(t *testing.T) {
	cfg := frontier.DefaultConfig()
	cfg.MaxInFlight = 64
	cfg.Gap = 0
	cfg.MaxPages = 0
	cfg.MaxDepth = 0
	cfg.Scope = func(*url.URL) bool { return true }
	f, err := frontier.New(cfg)
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 40 {
		require.Equal(t, frontier.Queued, f.Add(ctx, fmt.Sprintf("https://one.example/%d", i), 0, "").Outcome)
		require.Equal(t, frontier.Queued, f.Add(ctx, fmt.Sprintf("https://h%d.example/", i), 0, "").Outcome)
	}
	perHost := map[string]int{}
	for range 16 + 40 {
		it, err := f.Next(ctx)
		require.NoError(t, err)
		perHost[it.Host]++
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = f.Next(short)
	assert.Error(t, err, "a 17th item of one.example waits")
	assert.Equal(t, frontier.MaxHostInFlight, perHost["one.example"])
	assert.Len(t, perHost, 41)
}
