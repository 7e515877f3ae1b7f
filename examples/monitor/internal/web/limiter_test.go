package web

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRateLimiterRefillsOverTime(t *testing.T) {
	l := newIPLimiter(10.0/60, 1)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ok, _ := l.allow("a", now)
	require.True(t, ok)
	ok, wait := l.allow("a", now)
	require.False(t, ok)
	assert.Equal(t, 6*time.Second, wait)
	ok, _ = l.allow("a", now.Add(6*time.Second))
	assert.True(t, ok, "a refused request does not use a token")
}
