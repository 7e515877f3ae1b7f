package redisfrontier

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// waker turns the crawl's wake-up channel into local wake-ups. Scripts
// publish on it whenever something a waiter may care about changes (an
// item or slot freed, a URL queued, a slowdown tripped, a lock released);
// every waiter of this process then looks again. A waiter takes a
// snapshot of the generation before its Redis call, so a message that
// arrives between the call and the wait is not missed.
type waker struct {
	ps     *redis.PubSub
	onSite func()
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	gen     uint64
	ch      chan struct{}
	healthy bool
}

// unhealthyWait bounds waits while the subscription is down (Redis
// restarting), when wake-ups may be lost.
const unhealthyWait = 100 * time.Millisecond

func startWaker(ctx context.Context, rdb redis.UniversalClient, channel string, onSite func(), log *slog.Logger) (*waker, error) {
	ps := rdb.Subscribe(ctx, channel)
	if _, err := ps.Receive(ctx); err != nil { // the subscription confirmation
		_ = ps.Close()
		return nil, err
	}
	rctx, cancel := context.WithCancel(context.Background())
	w := &waker{ps: ps, onSite: onSite, log: log, cancel: cancel, done: make(chan struct{}),
		ch: make(chan struct{}), healthy: true}
	go w.loop(rctx)
	return w, nil
}

func (w *waker) loop(ctx context.Context) {
	defer close(w.done)
	pause := 50 * time.Millisecond
	for {
		msg, err := w.ps.Receive(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			// The connection broke; the next Receive reconnects and
			// resubscribes. Until then waits are bounded.
			w.bump(false)
			t := time.NewTimer(pause)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
			pause = min(2*pause, time.Second)
			continue
		}
		pause = 50 * time.Millisecond
		switch m := msg.(type) {
		case *redis.Subscription:
			w.bump(true) // (re)subscribed: messages may have been missed
		case *redis.Message:
			if m.Payload == "s" && w.onSite != nil {
				w.onSite()
			}
			w.bump(true)
		}
	}
}

func (w *waker) bump(healthy bool) {
	w.mu.Lock()
	w.gen++
	w.healthy = healthy
	close(w.ch)
	w.ch = make(chan struct{})
	w.mu.Unlock()
}

func (w *waker) snapshot() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.gen
}

// wait returns when a wake-up came after the snapshot gen, after d (0:
// no timeout), or with ctx's error.
func (w *waker) wait(ctx context.Context, gen uint64, d time.Duration) error {
	w.mu.Lock()
	if w.gen != gen {
		w.mu.Unlock()
		return ctx.Err()
	}
	ch, healthy := w.ch, w.healthy
	w.mu.Unlock()
	if !healthy && (d <= 0 || d > unhealthyWait) {
		d = unhealthyWait
	}
	var timer <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ch:
		return nil
	case <-timer:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *waker) close() {
	w.cancel()
	_ = w.ps.Close()
	<-w.done
}
