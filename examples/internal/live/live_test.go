package live

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkItems asserts that the numbered items of msgs (each item is its
// number, as published) come in order with nothing unaccounted for, and
// returns how many were sent and skipped in all.
func checkItems(t *testing.T, msgs []Message) (sent, skipped uint64) {
	t.Helper()
	var last uint64
	for i, m := range msgs {
		require.Equal(t, last+m.Skipped+1, m.FirstItem, "message %d: first item follows the last one sent and the skipped ones", i)
		for j, raw := range m.Items {
			n, err := strconv.ParseUint(string(raw), 10, 64)
			require.NoError(t, err)
			require.Equal(t, m.FirstItem+uint64(j), n, "message %d item %d", i, j)
		}
		if len(m.Items) > 0 {
			last = m.FirstItem + uint64(len(m.Items)) - 1
		} else {
			last = m.FirstItem - 1
		}
		sent += uint64(len(m.Items))
		skipped += m.Skipped
	}
	return sent, skipped
}

// At 1,000 events a second a subscriber gets one message per Interval, never
// two closer than that, each with the counters of that moment and at most
// MaxItems items; the last message has the final counters, and every item
// was either sent or counted as skipped.
func TestCoalescesToOneMessagePerInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &Hub{MaxItems: 5}
		s := h.subscribe()
		start := time.Now()
		go func() {
			for i := 1; i <= 1000; i++ {
				h.Publish(Event{Add: map[string]int64{"pages": 1}, Set: map[string]string{"last": strconv.Itoa(i)}, Item: i})
				time.Sleep(time.Millisecond)
			}
		}()
		var msgs []Message
		var times []time.Duration
		for {
			m, err := s.next(t.Context())
			require.NoError(t, err)
			require.NotNil(t, m, "no heartbeat while events flow")
			msgs = append(msgs, *m)
			times = append(times, time.Since(start))
			if m.Counters["pages"] == 1000 {
				break
			}
		}
		assert.LessOrEqual(t, len(msgs), 12, "about one message per 100 ms over one second")
		assert.GreaterOrEqual(t, len(msgs), 10)
		for i := 1; i < len(msgs); i++ {
			assert.GreaterOrEqual(t, times[i]-times[i-1], DefaultInterval, "message %d came too soon", i)
			assert.Greater(t, msgs[i].Seq, msgs[i-1].Seq)
			assert.GreaterOrEqual(t, msgs[i].Counters["pages"], msgs[i-1].Counters["pages"])
			assert.LessOrEqual(t, len(msgs[i].Items), 5)
		}
		final := msgs[len(msgs)-1]
		assert.Equal(t, "1000", final.State["last"])
		assert.EqualValues(t, 1000, final.Seq)
		sent, skipped := checkItems(t, msgs)
		assert.EqualValues(t, 1000, sent+skipped)
		assert.Equal(t, json.RawMessage("1000"), final.Items[len(final.Items)-1], "the newest item is in the last message")
	})
}

// Nothing changed, nothing sent but a heartbeat every Heartbeat; a change
// after a quiet spell goes out at once, a change right after a message waits
// for the Interval.
func TestQuietStreamAndPacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &Hub{}
		s := h.subscribe()
		start := time.Now()
		m, err := s.next(t.Context())
		require.NoError(t, err)
		require.NotNil(t, m, "the first message at once, even with nothing published")
		assert.Zero(t, time.Since(start))
		assert.Empty(t, m.Counters)

		for i := 1; i <= 2; i++ {
			m, err = s.next(t.Context())
			require.NoError(t, err)
			assert.Nil(t, m, "a heartbeat")
			assert.Equal(t, time.Duration(i)*DefaultHeartbeat, time.Since(start))
		}

		time.Sleep(time.Second)
		h.Publish(Event{Add: map[string]int64{"pages": 1}})
		at := time.Now()
		m, err = s.next(t.Context())
		require.NoError(t, err)
		require.NotNil(t, m)
		assert.Zero(t, time.Since(at), "after a quiet spell a change goes out at once")

		time.Sleep(10 * time.Millisecond)
		h.Publish(Event{Add: map[string]int64{"pages": 1}})
		m, err = s.next(t.Context())
		require.NoError(t, err)
		require.NotNil(t, m)
		assert.Equal(t, DefaultInterval, time.Since(at), "paced: one Interval after the last message")
		assert.EqualValues(t, 2, m.Counters["pages"])
	})
}

func TestNextEndsWithTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &Hub{}
		s := h.subscribe()
		ctx, cancel := context.WithCancel(t.Context())
		_, err := s.next(ctx)
		require.NoError(t, err)
		go func() {
			time.Sleep(time.Second)
			cancel()
		}()
		start := time.Now()
		_, err = s.next(ctx) // waiting for a change or the heartbeat
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, time.Second, time.Since(start))
	})
}

// Publish never waits for a subscriber, even one that never reads: it
// completes every call while the stream sits unread.
func TestPublishDoesNotWaitForSubscribers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &Hub{}
		for range DefaultMaxSubscribers {
			require.NotNil(t, h.subscribe()) // nobody ever calls next
		}
		done := make(chan int)
		go func() {
			n := 0
			for i := range 100_000 {
				h.Publish(Event{Add: map[string]int64{"pages": 1}, Item: i})
				n++
			}
			done <- n
		}()
		synctest.Wait() // every goroutine is blocked or done: a blocked Publish would leave done unsent
		select {
		case n := <-done:
			assert.Equal(t, 100_000, n)
		default:
			t.Fatal("Publish blocked on a subscriber that does not read")
		}
		st := h.Stats()
		assert.EqualValues(t, 100_000, st.Published)
		assert.EqualValues(t, 100_000, st.Items)
		assert.Equal(t, DefaultMaxSubscribers, st.Subscribers)
	})
}

func TestSnapshotAndBadItems(t *testing.T) {
	h := &Hub{MaxItems: 3}
	for i := 1; i <= 5; i++ {
		h.Publish(Event{Add: map[string]int64{"pages": 2}, Item: i})
	}
	h.Publish(Event{Item: func() {}}) // cannot be encoded
	m := h.Snapshot()
	assert.EqualValues(t, 6, m.Seq)
	assert.EqualValues(t, 10, m.Counters["pages"])
	assert.EqualValues(t, 3, m.FirstItem)
	assert.EqualValues(t, 2, m.Skipped)
	assert.Equal(t, []json.RawMessage{json.RawMessage("3"), json.RawMessage("4"), json.RawMessage("5")}, m.Items)
	st := h.Stats()
	assert.EqualValues(t, 1, st.BadItems)
	assert.EqualValues(t, 5, st.Items)

	var zero Hub
	m = zero.Snapshot()
	assert.Zero(t, m.Seq)
	assert.NotNil(t, m.Items, "an empty list, not null, in JSON")
	b, err := json.Marshal(m)
	require.NoError(t, err)
	assert.JSONEq(t, `{"seq":0,"counters":{},"state":{},"items":[],"first_item":1,"skipped":0}`, string(b))
}

func BenchmarkPublish(b *testing.B) {
	type page struct {
		URL    string `json:"url"`
		Status int    `json:"status"`
		Title  string `json:"title"`
	}
	for _, subs := range []int{0, 1, 8} {
		b.Run("subscribers="+strconv.Itoa(subs), func(b *testing.B) {
			h := &Hub{}
			for range subs {
				h.subscribe()
			}
			p := page{URL: "https://shop.example/products/kayak", Status: 200, Title: "Kayak – Cove Shop"}
			add := map[string]int64{"pages": 1, "requests": 1}
			b.ReportAllocs()
			for b.Loop() {
				h.Publish(Event{Add: add, Item: p})
			}
		})
	}
}
