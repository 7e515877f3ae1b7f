package backoff_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/politecrawl/polite/backoff"
)

func TestDefaultAdaptive(t *testing.T) {
	const floor, ceil = 300 * time.Millisecond, 30 * time.Second
	ok := func(d time.Duration) backoff.Observation { return backoff.Observation{Status: 200, Elapsed: d} }
	a := backoff.DefaultAdaptive

	// Fast answers keep the configured gap; it is never undercut.
	assert.Equal(t, floor, a(floor, ceil, floor, ok(10*time.Millisecond)))
	assert.Equal(t, floor, a(floor, ceil, 0, ok(0)), "cur below floor counts as floor")
	// Slow answers: halfway towards 3 × the response time.
	assert.Equal(t, 150*time.Millisecond+1500*time.Millisecond, a(floor, ceil, floor, ok(time.Second)))
	// Failures: doubled, at least 1 s and 3 × the response time.
	for _, o := range []backoff.Observation{{Status: 503}, {Status: 500}, {Status: 429}, {Err: errors.New("timeout")}} {
		assert.Equal(t, time.Second, a(floor, ceil, floor, o), "%+v", o)
		assert.Equal(t, 4*time.Second, a(floor, ceil, 2*time.Second, o), "%+v", o)
	}
	assert.Equal(t, 15*time.Second, a(floor, ceil, time.Second, backoff.Observation{Status: 504, Elapsed: 5 * time.Second}))
	// Capped.
	assert.Equal(t, ceil, a(floor, ceil, 20*time.Second, backoff.Observation{Status: 503}))
	// Recovery: fast answers bring a long gap back to the floor.
	cur := ceil
	n := 0
	for ; cur > floor; n++ {
		cur = a(floor, ceil, cur, ok(10*time.Millisecond))
	}
	assert.Equal(t, floor, cur)
	assert.LessOrEqual(t, n, 8, "halving the distance per answer")
}

func TestObservationFailed(t *testing.T) {
	assert.False(t, backoff.Observation{Status: 200}.Failed())
	assert.False(t, backoff.Observation{Status: 404}.Failed())
	assert.True(t, backoff.Observation{Status: 502}.Failed())
	assert.True(t, backoff.Observation{}.Failed(), "no response")
}
