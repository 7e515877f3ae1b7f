package frontier_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier"
)

// depthLiar is a replacement Queue that returns items at the wrong depth.
type depthLiar struct{ frontier.Queue }

func (q depthLiar) Pop(host string) (frontier.Item, bool, error) {
	it, ok, err := q.Queue.Pop(host)
	it.Depth += 7
	return it, ok, err
}

// A faulty replacement Queue makes Next fail with an error, not panic.
func TestNextSurvivesAFaultyQueue(t *testing.T) {
	cfg := frontier.DefaultConfig()
	cfg.Queue = depthLiar{frontier.NewMemoryQueue()}
	f, err := frontier.New(cfg)
	require.NoError(t, err)
	require.Equal(t, frontier.Queued, f.Add(context.Background(), "https://shop.example/", 0, "").Outcome)
	_, _, err = f.NextAt(time.Now())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "https://shop.example/")
	assert.Equal(t, 0, f.Stats().Out)
}
