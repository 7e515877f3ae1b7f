// Package live pushes the progress of a running job (a crawl) to browsers as
// Server-Sent Events. Publishers call Publish at any rate; each subscriber
// gets coalesced snapshots, at most one per Interval: the counters and state
// as they are now, plus the latest items published since its last message.
// A slow or stalled browser costs its own stream only: Publish never waits
// for a subscriber, and a stream that cannot write for WriteTimeout ends (the
// browser's EventSource reconnects and gets the current state).
//
// It must not authenticate, check Host headers or set security headers:
// mount the Hub behind localweb's Guard. It keeps no history beyond the
// latest MaxItems items and never blocks a publisher on I/O.
package live

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Defaults of a Hub whose fields are zero.
const (
	// DefaultInterval is the least time between two messages to one
	// subscriber: at most ten messages a second, whatever the publish rate.
	DefaultInterval = 100 * time.Millisecond
	// DefaultMaxItems is how many of the latest items a message carries at most.
	DefaultMaxItems = 50
	// DefaultMaxSubscribers caps the streams open at once.
	DefaultMaxSubscribers = 8
	// DefaultHeartbeat is the longest silence on a stream: a comment line is
	// written when nothing changed for this long.
	DefaultHeartbeat = 15 * time.Second
	// DefaultWriteTimeout is how long one message may take to write before
	// the stream is given up.
	DefaultWriteTimeout = 10 * time.Second
)

// EventName is the SSE event name of a snapshot message
// (EventSource.addEventListener("snapshot", …)).
const EventName = "snapshot"

// Event is one update from a publisher; every field is optional.
type Event struct {
	// Add is added to the named counters (a counter starts at zero).
	Add map[string]int64
	// Set replaces named state values (the politeness state, a host's
	// robots.txt status): the latest value wins.
	Set map[string]string
	// Item, when not nil, joins the latest items (a page just crawled). It
	// is encoded as JSON by Publish; an item that cannot be encoded is
	// dropped and counted in Stats.BadItems.
	Item any
}

// Message is what a subscriber receives, as the JSON data of a "snapshot"
// event. Items are numbered from 1 in publish order: Items[i] is item
// FirstItem+i, and Skipped items were published between the subscriber's
// previous message and FirstItem but are not sent (more than MaxItems came in
// one Interval).
type Message struct {
	Seq       uint64            `json:"seq"` // events published so far
	Counters  map[string]int64  `json:"counters"`
	State     map[string]string `json:"state"`
	Items     []json.RawMessage `json:"items"`
	FirstItem uint64            `json:"first_item"`
	Skipped   uint64            `json:"skipped"`
}

// Stats are a Hub's totals since it was made.
type Stats struct {
	Published   uint64 // events
	Items       uint64 // items kept (BadItems not included)
	BadItems    uint64 // items that could not be encoded
	Messages    uint64 // snapshot messages written, all subscribers together
	Heartbeats  uint64
	Subscribers int    // streams open now
	Refused     uint64 // streams refused at MaxSubscribers
	Dropped     uint64 // streams ended by a failed or timed-out write
}

// Hub fans published events out to subscribers. Set its fields before first
// use; the zero Hub uses the defaults. A Hub is an http.Handler: mount it on
// a GET route (behind localweb's Guard).
type Hub struct {
	Interval       time.Duration // least time between two messages to one subscriber (0: DefaultInterval)
	MaxItems       int           // latest items kept and sent per message (0: DefaultMaxItems)
	MaxSubscribers int           // streams open at once (0: DefaultMaxSubscribers)
	Heartbeat      time.Duration // longest silence on a stream (0: DefaultHeartbeat)
	WriteTimeout   time.Duration // longest write of one message (0: DefaultWriteTimeout)

	mu       sync.Mutex
	seq      uint64
	counters map[string]int64
	state    map[string]string
	ring     []json.RawMessage // item n is at (n-1) % len(ring)
	nItems   uint64
	subs     map[*stream]struct{}
	stats    Stats
}

func orDefault[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// Publish records e and wakes the subscribers. It never waits for one: its
// cost is encoding the item and a short critical section.
func (h *Hub) Publish(e Event) {
	var raw json.RawMessage
	bad := false
	if e.Item != nil {
		b, err := json.Marshal(e.Item)
		if err != nil {
			bad = true
		} else {
			raw = b
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	h.seq++
	h.stats.Published++
	for k, v := range e.Add {
		h.counters[k] += v
	}
	for k, v := range e.Set {
		h.state[k] = v
	}
	switch {
	case bad:
		h.stats.BadItems++
	case raw != nil:
		h.nItems++
		h.stats.Items++
		h.ring[(h.nItems-1)%uint64(len(h.ring))] = raw
	}
	for s := range h.subs {
		select {
		case s.notify <- struct{}{}:
		default: // already woken; it will read the newest state
		}
	}
}

// init makes the maps and the ring; h.mu is held.
func (h *Hub) init() {
	if h.ring == nil {
		h.ring = make([]json.RawMessage, orDefault(h.MaxItems, DefaultMaxItems))
		h.counters = map[string]int64{}
		h.state = map[string]string{}
		h.subs = map[*stream]struct{}{}
	}
}

// Snapshot is the current state with the latest items, as a new subscriber's
// first message has it (for a page rendered on the server).
func (h *Hub) Snapshot() Message {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	return h.messageSince(0)
}

// Stats returns the Hub's totals.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.stats
	s.Subscribers = len(h.subs)
	return s
}

// messageSince is the state now and the items after item number since; h.mu
// is held.
func (h *Hub) messageSince(since uint64) Message {
	m := Message{
		Seq:      h.seq,
		Counters: make(map[string]int64, len(h.counters)),
		State:    make(map[string]string, len(h.state)),
		Items:    []json.RawMessage{},
	}
	for k, v := range h.counters {
		m.Counters[k] = v
	}
	for k, v := range h.state {
		m.State[k] = v
	}
	first := since + 1
	if n := uint64(len(h.ring)); h.nItems > n && h.nItems-n+1 > first {
		first = h.nItems - n + 1
	}
	m.FirstItem, m.Skipped = first, first-since-1
	for i := first; i <= h.nItems; i++ {
		m.Items = append(m.Items, h.ring[(i-1)%uint64(len(h.ring))])
	}
	return m
}

// stream is one subscriber's position.
type stream struct {
	hub      *Hub
	notify   chan struct{}
	sent     bool      // a message was returned
	sentAt   time.Time // when the last message or heartbeat was returned
	lastSeq  uint64
	lastItem uint64
}

// subscribe adds a stream, or returns nil at the cap.
func (h *Hub) subscribe() *stream {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	if len(h.subs) >= orDefault(h.MaxSubscribers, DefaultMaxSubscribers) {
		h.stats.Refused++
		return nil
	}
	s := &stream{hub: h, notify: make(chan struct{}, 1)}
	h.subs[s] = struct{}{}
	return s
}

func (h *Hub) unsubscribe(s *stream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, s)
}

// take returns the message due to s, if anything changed since its last one
// (or it has had none).
func (s *stream) take() (Message, bool) {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.sent && h.seq == s.lastSeq {
		return Message{}, false
	}
	m := h.messageSince(s.lastItem)
	s.lastSeq, s.lastItem = m.Seq, h.nItems
	return m, true
}

// next waits until a message is due to s and returns it: the state now, at
// once for the first, then when something changed, never sooner than
// Interval after the last. It returns nil for a heartbeat when nothing
// changed for Heartbeat, and ctx's error when ctx ends.
func (s *stream) next(ctx context.Context) (*Message, error) {
	h := s.hub
	if s.sent {
		if err := sleep(ctx, time.Until(s.sentAt.Add(orDefault(h.Interval, DefaultInterval)))); err != nil {
			return nil, err
		}
	}
	for {
		if m, ok := s.take(); ok {
			s.sent, s.sentAt = true, time.Now()
			return &m, nil
		}
		wait := time.Until(s.sentAt.Add(orDefault(h.Heartbeat, DefaultHeartbeat)))
		if wait <= 0 {
			s.sentAt = time.Now()
			return nil, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-s.notify:
		case <-t.C:
		}
		t.Stop()
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ServeHTTP streams snapshots as text/event-stream until the request's
// context ends (the browser went away, the server shuts down) or a write
// fails. Beyond MaxSubscribers it answers 503 with Retry-After. Each message
// gets its own write deadline (WriteTimeout), so the server's WriteTimeout
// does not end a long stream, while a browser that reads nothing for
// WriteTimeout is dropped. (net/http clears the read deadline once a GET's
// headers are read, so ReadTimeout does not end it either; tested.)
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "live updates are read with GET", http.StatusMethodNotAllowed)
		return
	}
	s := h.subscribe()
	if s == nil {
		w.Header().Set("Retry-After", "5")
		http.Error(w, "too many live views are open; close one and reload", http.StatusServiceUnavailable)
		return
	}
	defer h.unsubscribe(s)
	rc := http.NewResponseController(w)
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	var buf bytes.Buffer
	buf.WriteString("retry: 2000\n\n") // the browser reconnects after 2 s
	for {
		m, err := s.next(r.Context())
		if err != nil {
			return
		}
		if m == nil {
			buf.WriteString(": heartbeat\n\n")
		} else {
			fmt.Fprintf(&buf, "id: %d\nevent: %s\ndata: ", m.Seq, EventName)
			if err := json.NewEncoder(&buf).Encode(m); err != nil { // one line: JSON escapes newlines
				return
			}
			buf.WriteString("\n")
		}
		rc.SetWriteDeadline(time.Now().Add(orDefault(h.WriteTimeout, DefaultWriteTimeout)))
		_, err = w.Write(buf.Bytes())
		if err == nil {
			err = rc.Flush()
		}
		buf.Reset()
		h.mu.Lock()
		switch {
		case err != nil:
			h.stats.Dropped++
		case m == nil:
			h.stats.Heartbeats++
		default:
			h.stats.Messages++
		}
		h.mu.Unlock()
		if err != nil {
			return
		}
	}
}
