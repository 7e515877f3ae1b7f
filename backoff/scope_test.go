package backoff_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/backoff"
)

// The latch's own contract per scope: PerHost trips once per host, each
// trip recorded in order; PerRun once.
func TestSlowdownScopeTrips(t *testing.T) {
	now := time.Unix(1e9, 0)
	for _, tc := range []struct {
		scope backoff.SlowdownScope
		trips int
	}{{backoff.PerRun, 1}, {backoff.PerHost, 2}} {
		t.Run(tc.scope.String(), func(t *testing.T) {
			sd := &backoff.Slowdown{Scope: tc.scope}
			assert.True(t, sd.Trip("http://a.test/x", now))
			assert.False(t, sd.Trip("http://A.test:80/y", now), "same host")
			assert.Equal(t, tc.scope == backoff.PerHost, sd.Trip("http://b.test/", now))
			assert.Equal(t, tc.trips, sd.Trips())
			evs := sd.TripsSince(0)
			require.Len(t, evs, tc.trips)
			assert.Equal(t, "http://a.test/x", evs[0].URL)
			assert.True(t, sd.Slows("http://a.test/z"))
			assert.Equal(t, tc.scope == backoff.PerRun, sd.Slows("http://c.test/"))
			ev, ok := sd.Tripped()
			assert.True(t, ok)
			assert.Equal(t, "http://a.test/x", ev.URL)
			assert.Nil(t, sd.TripsSince(tc.trips))
			_ = fmt.Sprint(ev)
		})
	}
}
