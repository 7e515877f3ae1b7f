package frontier_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier"
)

// An Acquire that gives up says which URL it was waiting for.
func TestAcquireErrorNamesTheURL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := frontier.DefaultConfig()
		cfg.MaxInFlight = 1
		f, err := frontier.New(cfg)
		require.NoError(t, err)
		rel, err := f.Acquire(t.Context(), mustURL(t, "https://shop.example/a"))
		require.NoError(t, err)
		defer rel()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err = f.Acquire(ctx, mustURL(t, "https://user:secret@shop.example/b?q=1"))
		require.Error(t, err)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), "https://user:xxxxx@shop.example/b?q=1")
		assert.NotContains(t, err.Error(), "secret")
	})
}
