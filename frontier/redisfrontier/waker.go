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
// arrives between the call and the wait is not missed. Next's waiters
// listen to a second bell, rung only by 'n' messages (a URL may be handed
// out sooner than they were told) and by reconnections: a slot freed or a
// lock released does not send every idle fetcher back to Redis.
type waker struct {
	ps     *redis.PubSub
	onSite func()
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	all     bell // every message
	next    bell // 'n' messages
	healthy bool
}

// bell is a generation counter with a channel closed at each ring.
type bell struct {
	gen uint64
	ch  chan struct{}
}

func (b *bell) ring() {
	b.gen++
	close(b.ch)
	b.ch = make(chan struct{})
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
		all: bell{ch: make(chan struct{})}, next: bell{ch: make(chan struct{})}, healthy: true}
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
			w.bump(false, true)
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
			w.bump(true, true) // (re)subscribed: messages may have been missed
		case *redis.Message:
			if m.Payload == "s" && w.onSite != nil {
				w.onSite()
			}
			w.bump(true, m.Payload == "n")
		}
	}
}

func (w *waker) bump(healthy, next bool) {
	w.mu.Lock()
	w.healthy = healthy
	w.all.ring()
	if next {
		w.next.ring()
	}
	w.mu.Unlock()
}

func (w *waker) snapshot() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.all.gen
}

// snapshotNext is snapshot for Next's waiters.
func (w *waker) snapshotNext() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.next.gen
}

// wait returns when a wake-up came after the snapshot gen, after d (0:
// no timeout), or with ctx's error.
func (w *waker) wait(ctx context.Context, gen uint64, d time.Duration) error {
	return w.waitOn(ctx, &w.all, gen, d)
}

// waitNext is wait for Next's waiters, woken by 'n' messages only.
func (w *waker) waitNext(ctx context.Context, gen uint64, d time.Duration) error {
	return w.waitOn(ctx, &w.next, gen, d)
}

func (w *waker) waitOn(ctx context.Context, b *bell, gen uint64, d time.Duration) error {
	w.mu.Lock()
	if b.gen != gen {
		w.mu.Unlock()
		return ctx.Err()
	}
	ch, healthy := b.ch, w.healthy
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
