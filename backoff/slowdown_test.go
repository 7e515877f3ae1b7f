package backoff

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestSlowdownLatch(t *testing.T) {
	var s Slowdown // zero value usable
	early := s.C()
	_, tripped := s.Tripped()
	require.False(t, tripped)
	require.False(t, closed(early))

	at := time.Date(2026, 11, 29, 20, 30, 0, 0, time.UTC)
	require.True(t, s.Trip("https://shop.example/a", at))
	ev, tripped := s.Tripped()
	require.True(t, tripped)
	assert.Equal(t, SlowdownEvent{At: at, URL: "https://shop.example/a"}, ev)
	assert.True(t, closed(early), "a channel taken before the trip is closed by it")
	assert.True(t, closed(s.C()), "a channel taken after the trip is already closed")
	assert.Equal(t, "slowdown tripped at 2026-11-29T20:30:00Z by https://shop.example/a", ev.String())

	// Never resets and never records a second event.
	assert.False(t, s.Trip("https://shop.example/b", at.Add(time.Hour)))
	ev2, _ := s.Tripped()
	assert.Equal(t, ev, ev2)
	assert.True(t, closed(s.C()))
}

func TestSlowdownNil(t *testing.T) {
	var s *Slowdown
	assert.False(t, s.Trip("u", now))
	_, tripped := s.Tripped()
	assert.False(t, tripped)
	assert.Nil(t, s.C())
	n, g := s.Limits()
	assert.Equal(t, 1, n)
	assert.Equal(t, 3*time.Second, g)
}

func TestSlowdownLimits(t *testing.T) {
	n, g := (&Slowdown{}).Limits()
	assert.Equal(t, 1, n)
	assert.Equal(t, 3*time.Second, g)
	n, g = (&Slowdown{InFlight: 3, Gap: time.Second}).Limits()
	assert.Equal(t, 3, n)
	assert.Equal(t, time.Second, g)
	n, g = (&Slowdown{InFlight: -2, Gap: -time.Second}).Limits()
	assert.Equal(t, 1, n)
	assert.Equal(t, 3*time.Second, g)
}

// TestSlowdownConcurrentTrip trips one latch from many goroutines while
// others read it: exactly one trip wins, and everybody sees its event. The
// synctest bubble turns a channel that never closes into an immediate
// deadlock failure instead of a hang.
func TestSlowdownConcurrentTrip(t *testing.T) {
	synctest.Test(t, testSlowdownConcurrentTrip)
}

func testSlowdownConcurrentTrip(t *testing.T) {
	for round := range 20 {
		var (
			s       Slowdown
			wg      sync.WaitGroup
			start   = make(chan struct{})
			winners = make(chan SlowdownEvent, 64)
		)
		const trippers, readers = 32, 16
		for i := range trippers {
			wg.Go(func() {
				<-start
				ev := SlowdownEvent{At: now.Add(time.Duration(i) * time.Millisecond), URL: fmt.Sprintf("https://h/%d", i)}
				if s.Trip(ev.URL, ev.At) {
					winners <- ev
				}
			})
		}
		seen := make(chan SlowdownEvent, readers)
		for range readers {
			wg.Go(func() {
				<-start
				<-s.C() // every reader is released by the one trip
				ev, ok := s.Tripped()
				if !ok {
					t.Error("channel closed but Tripped() false")
				}
				seen <- ev
			})
		}
		close(start)
		wg.Wait()
		close(winners)
		close(seen)
		var won []SlowdownEvent
		for ev := range winners {
			won = append(won, ev)
		}
		require.Len(t, won, 1, "round %d: exactly one Trip returns true", round)
		final, ok := s.Tripped()
		require.True(t, ok)
		require.Equal(t, won[0], final)
		for ev := range seen {
			require.Equal(t, won[0], ev)
		}
	}
}

func BenchmarkSlowdownTripped(b *testing.B) {
	var s Slowdown
	for _, state := range []string{"untripped", "tripped"} {
		if state == "tripped" {
			s.Trip("https://h/", now)
		}
		b.Run(state, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = s.Tripped()
			}
		})
		b.Run(state+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				n := 0
				for pb.Next() {
					if _, ok := s.Tripped(); ok {
						n++
					}
				}
				_ = n
			})
		})
	}
}
