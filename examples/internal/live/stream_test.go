package live

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/internal/localweb"
)

// sseEvent is one event block of a text/event-stream.
type sseEvent struct {
	id, event, data string
	comment         bool
}

// readEvents parses a text/event-stream as the EventSource spec does (the
// fields this package writes), calling f for each block until f returns
// false or the stream ends.
func readEvents(r io.Reader, f func(sseEvent) bool) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var ev sseEvent
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if ev != (sseEvent{}) && !f(ev) {
				return nil
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, ":"):
			ev.comment = true
		default:
			name, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch name {
			case "id":
				ev.id = value
			case "event":
				ev.event = value
			case "data":
				ev.data += value
			}
		}
	}
}

// serveBehindGuard serves h the way an app does, on localweb's Server with
// its token, until the test ends; tweak (if not nil) changes the Server
// before Listen. It returns the server and a maker of tokened requests.
func serveBehindGuard(t *testing.T, h http.Handler, tweak func(*localweb.Server)) (*localweb.Server, func(path string) *http.Request) {
	t.Helper()
	s := &localweb.Server{Handler: h}
	if tweak != nil {
		tweak(s)
	}
	require.NoError(t, s.Listen())
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-served)
	})
	return s, func(path string) *http.Request {
		req, err := http.NewRequest("GET", "http://"+s.ListenAddr()+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+s.Guard.Token)
		return req
	}
}

// A publisher at 1,000 events a second for three seconds, a client reading
// the stream through localweb's guard: the counters arrive in order and
// complete, every item is sent or counted as skipped, no more than one
// message per Interval arrives, and the stream outlives the server's 300 ms
// read and write timeouts.
func TestThousandEventsPerSecondOverLoopback(t *testing.T) {
	h := &Hub{}
	_, req := serveBehindGuard(t, h, func(s *localweb.Server) {
		s.ReadTimeout, s.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond // far shorter than the stream lives
	})
	resp, err := http.DefaultClient.Do(req("/events"))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Equal(t, localweb.CSP, resp.Header.Get("Content-Security-Policy"), "served behind the guard")

	const events = 3000 // 1,000/s for 3 s, published on schedule every 10 ms
	published := make(chan int, 1)
	start := time.Now()
	go func() {
		n := 0
		for n < events {
			time.Sleep(10 * time.Millisecond)
			due := min(events, int(time.Since(start)/time.Millisecond))
			for ; n < due; n++ {
				h.Publish(Event{Add: map[string]int64{"pages": 1, "requests": 2}, Item: n + 1})
			}
		}
		h.Publish(Event{Set: map[string]string{"crawl": "finished"}})
		published <- n
	}()

	var msgs []Message
	var lastID uint64
	err = readEvents(resp.Body, func(ev sseEvent) bool {
		if ev.comment {
			return true
		}
		require.Equal(t, EventName, ev.event)
		var m Message
		require.NoError(t, json.Unmarshal([]byte(ev.data), &m))
		id, err := strconv.ParseUint(ev.id, 10, 64)
		require.NoError(t, err)
		require.Equal(t, m.Seq, id)
		if len(msgs) > 0 {
			require.Greater(t, id, lastID, "in order")
			prev := msgs[len(msgs)-1]
			require.GreaterOrEqual(t, m.Counters["pages"], prev.Counters["pages"])
		}
		require.Equal(t, 2*m.Counters["pages"], m.Counters["requests"], "a message is one moment's state, never half an event")
		lastID = id
		msgs = append(msgs, m)
		return m.State["crawl"] != "finished"
	})
	require.NoError(t, err)
	elapsed := time.Since(start)
	n := <-published
	require.Equal(t, events, n)

	final := msgs[len(msgs)-1]
	assert.EqualValues(t, n, final.Counters["pages"], "the final counters arrive complete")
	assert.EqualValues(t, n+1, final.Seq)
	sent, skipped := checkItems(t, msgs)
	assert.EqualValues(t, n, sent+skipped, "every item sent or counted as skipped")
	assert.LessOrEqual(t, len(msgs), int(elapsed/DefaultInterval)+2, "at most one message per Interval")
	st := h.Stats()
	t.Logf("published %d events in %v (%.0f/s); delivered %d messages (%.1f/s), %d items sent, %d coalesced away; hub stats %+v",
		n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), len(msgs), float64(len(msgs))/elapsed.Seconds(), sent, skipped, st)
}

// A client that stops reading never blocks the publisher: it completes
// every Publish while the stream sits unread, and the stalled stream is
// dropped after WriteTimeout, so the hub has no subscriber left.
func TestStalledClientIsDroppedPublisherNeverBlocked(t *testing.T) {
	h := &Hub{MaxItems: 500, WriteTimeout: 500 * time.Millisecond}
	srv := httptest.NewServer(h)
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.(*net.TCPConn).SetReadBuffer(4096))
	_, err = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: "+srv.Listener.Addr().String()+"\r\n\r\n")
	require.NoError(t, err)
	// Read the response head and the first message, then never read again.
	br := bufio.NewReader(conn)
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		if strings.HasPrefix(line, "data:") {
			break
		}
	}

	big := strings.Repeat("x", 2000)
	const events = 20_000
	done := 0
	for i := range events {
		h.Publish(Event{Add: map[string]int64{"pages": 1}, Item: big + strconv.Itoa(i)})
		done++
		if i%1000 == 0 {
			time.Sleep(20 * time.Millisecond) // let the stream write and fill the socket
		}
	}
	assert.Equal(t, events, done, "every Publish returned while the client read nothing")
	require.Eventually(t, func() bool { return h.Stats().Subscribers == 0 }, 30*time.Second, 10*time.Millisecond,
		"the stalled stream is dropped after WriteTimeout")
	st := h.Stats()
	assert.EqualValues(t, 1, st.Dropped)
	assert.EqualValues(t, events, st.Published)
	t.Logf("stalled client: %d events published, %d messages written before the stream was dropped", st.Published, st.Messages)
}

func TestSubscriberCapAndMethods(t *testing.T) {
	h := &Hub{MaxSubscribers: 2}
	srv := httptest.NewServer(h)
	defer srv.Close()
	open := func() *http.Response {
		resp, err := http.Get(srv.URL)
		require.NoError(t, err)
		return resp
	}
	a, b := open(), open()
	require.Equal(t, http.StatusOK, a.StatusCode)
	require.Equal(t, http.StatusOK, b.StatusCode)
	c := open()
	assert.Equal(t, http.StatusServiceUnavailable, c.StatusCode)
	assert.Equal(t, "5", c.Header.Get("Retry-After"))
	body, _ := io.ReadAll(c.Body)
	c.Body.Close()
	assert.Contains(t, string(body), "too many live views")
	assert.EqualValues(t, 1, h.Stats().Refused)

	a.Body.Close() // the browser tab closed: its place is free again
	require.Eventually(t, func() bool { return h.Stats().Subscribers == 1 }, 10*time.Second, 5*time.Millisecond)
	d := open()
	assert.Equal(t, http.StatusOK, d.StatusCode)
	d.Body.Close()
	b.Body.Close()

	resp, err := http.Post(srv.URL, "text/plain", strings.NewReader("x"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "GET, HEAD", resp.Header.Get("Allow"))
}

// The stream's first bytes: the reconnect delay and the current state at once.
func TestStreamStartsWithRetryAndState(t *testing.T) {
	h := &Hub{}
	h.Publish(Event{Add: map[string]int64{"pages": 7}, Set: map[string]string{"gap": "300ms"}, Item: map[string]any{"url": "/a", "status": 200}})
	_, req := serveBehindGuard(t, h, nil)
	resp, err := http.DefaultClient.Do(req("/events"))
	require.NoError(t, err)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var head []string
	for len(head) < 5 {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		head = append(head, line)
	}
	assert.Equal(t, []string{
		"retry: 2000\n", "\n", "id: 1\n", "event: snapshot\n",
		`data: {"seq":1,"counters":{"pages":7},"state":{"gap":"300ms"},"items":[{"status":200,"url":"/a"}],"first_item":1,"skipped":0}` + "\n",
	}, head)
}

// An idle stream carries heartbeat comments, which EventSource ignores; HEAD
// gets the stream's headers and no stream.
func TestIdleStreamHeartbeatsAndHead(t *testing.T) {
	h := &Hub{Heartbeat: 50 * time.Millisecond}
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	var got []sseEvent
	err = readEvents(resp.Body, func(ev sseEvent) bool {
		got = append(got, ev)
		return len(got) < 3
	})
	require.NoError(t, err)
	assert.Equal(t, EventName, got[0].event, "the state first")
	assert.Equal(t, []sseEvent{{comment: true}, {comment: true}}, got[1:], "then heartbeats while nothing changes")
	require.Eventually(t, func() bool { return h.Stats().Heartbeats >= 2 }, 10*time.Second, 5*time.Millisecond, "counted once written")

	head, err := http.Head(srv.URL)
	require.NoError(t, err)
	head.Body.Close()
	assert.Equal(t, http.StatusOK, head.StatusCode)
	assert.Equal(t, "text/event-stream; charset=utf-8", head.Header.Get("Content-Type"))
}
