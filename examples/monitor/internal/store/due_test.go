package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Jitter is a fixed offset per URL, never negative, below
// interval/JitterDivisor, and spread: 10,000 URLs checked in the same
// minute are due again over the whole jitter span, not in one minute.
func TestJitterIsPerPageBoundedAndSpread(t *testing.T) {
	const interval = 6 * time.Hour
	taken := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	perMinute := map[int64]int{}
	for i := range 10000 {
		u := fmt.Sprintf("https://h%d.example/page/%d", i%100, i)
		j := Jitter(u, interval)
		assert.Equal(t, j, Jitter(u, interval), "deterministic")
		if j < 0 || j >= interval/JitterDivisor {
			t.Fatalf("jitter %v of %s out of [0, %v)", j, u, interval/JitterDivisor)
		}
		next := NextDue(u, taken, interval)
		assert.False(t, next.Before(taken.Add(interval)), "never sooner than the interval")
		perMinute[next.Unix()/60]++
	}
	// 30 minutes of jitter: about 333 a minute, none far above.
	assert.GreaterOrEqual(t, len(perMinute), 30)
	for m, n := range perMinute {
		assert.LessOrEqual(t, n, 450, "minute %d", m)
	}
	assert.Equal(t, time.Duration(0), Jitter("https://a.example/", time.Second), "no span, no jitter")
}
