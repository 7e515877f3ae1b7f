package robots

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// watchedStore is a MemoryStore (Store and Locker) that counts the Lock
// calls begun, so a test knows when every process waits on the lock.
type watchedStore struct {
	MemoryStore
	locking atomic.Int32
}

func (s *watchedStore) Lock(ctx context.Context, authority string) (func(), error) {
	s.locking.Add(1)
	return s.MemoryStore.Lock(ctx, authority)
}

// loadSaveOnly hides the Locker of a Store: what a shared store without
// a fetch lock gives.
type loadSaveOnly struct{ Store }

// heldRobots serves robots.txt, holding the first request until released
// and answering later ones at once (so a test that sees two never hangs).
type heldRobots struct {
	*site
	fetches atomic.Int32
	release chan struct{}
	once    sync.Once
}

func newHeldRobots(t *testing.T, body string) *heldRobots {
	h := &heldRobots{release: make(chan struct{})}
	h.site = newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		if h.fetches.Add(1) == 1 {
			select {
			case <-h.release:
			case <-r.Context().Done():
			}
		}
		fmt.Fprint(w, body)
	})
	t.Cleanup(h.unblock) // before the server closes
	return h
}

func (h *heldRobots) unblock() { h.once.Do(func() { close(h.release) }) }

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10s: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// Issue 14: "a thousand workers starting together make one robots.txt
// request per host". Eight processes (Caches) share one Store that is a
// Locker; each has ten goroutines checking the same site at once.
func TestLockerOneFetchForTheFleet(t *testing.T) {
	const processes, callers = 8, 10
	site := newHeldRobots(t, "User-agent: *\nDisallow: /private/\n")
	store := &watchedStore{}
	caches := make([]*Cache, processes)
	for i := range caches {
		caches[i] = &Cache{Client: site.Client(), Store: store}
	}
	var wg sync.WaitGroup
	outcomes := make([]Outcome, processes*callers)
	for i := range outcomes {
		wg.Go(func() {
			path := "/public"
			if i%2 == 1 {
				path = "/private/x"
			}
			v, err := caches[i/callers].Check(context.Background(), "bot", site.URL+path)
			assert.NoError(t, err)
			outcomes[i] = v.Outcome
		})
	}
	// One process fetches (held by the server); the seven others wait on its lock.
	waitFor(t, "every process asks for the lock", func() bool {
		return store.locking.Load() == processes || site.fetches.Load() > 1
	})
	site.unblock()
	wg.Wait()

	assert.Equal(t, int32(1), site.fetches.Load(), "one robots.txt request for the fleet")
	assert.Equal(t, int32(processes), store.locking.Load(), "one Lock per process: its callers share it")
	for i, o := range outcomes {
		want := Allowed
		if i%2 == 1 {
			want = Disallowed
		}
		assert.Equal(t, want, o, "caller %d", i)
	}
	store.mu.Lock()
	assert.Empty(t, store.locks, "no lock left behind")
	store.mu.Unlock()
}

// The control: the same fleet on a shared Store without the lock fetches
// once per process, which is what the Locker is for.
func TestWithoutLockerEveryProcessFetches(t *testing.T) {
	const processes = 2 // the first fetch is held, so the second cannot find it in the Store
	site := newHeldRobots(t, "User-agent: *\nDisallow: /private/\n")
	store := loadSaveOnly{&MemoryStore{}}
	var wg sync.WaitGroup
	for range processes {
		c := &Cache{Client: site.Client(), Store: store}
		wg.Go(func() { _, _ = c.Check(context.Background(), "bot", site.URL+"/x") })
	}
	waitFor(t, "every process fetches", func() bool { return site.fetches.Load() == processes })
	site.unblock()
	wg.Wait()
}

// flakyLocker fails to lock while broken, as a shared store that is down.
type flakyLocker struct {
	MemoryStore
	broken atomic.Bool
}

func (s *flakyLocker) Lock(ctx context.Context, authority string) (func(), error) {
	if s.broken.Load() {
		return nil, errors.New("dial tcp 127.0.0.1:6379: connection refused")
	}
	return s.MemoryStore.Lock(ctx, authority)
}

// When the lock cannot be taken the cache fails closed: no request, an
// error matching ErrLock, Outcome Unknown, and nothing cached, so the next
// call after the store recovers fetches.
func TestLockerFailureFailsClosed(t *testing.T) {
	s := newSite(t, robotsBody("User-agent: *\nAllow: /\n"))
	store := &flakyLocker{}
	store.broken.Store(true)
	var storeErrs []error
	c := &Cache{Client: s.Client(), Store: store, OnStoreError: func(err error) { storeErrs = append(storeErrs, err) }}
	ctx := context.Background()
	for range 2 {
		v, err := c.Check(ctx, "bot", s.URL+"/x")
		require.ErrorIs(t, err, ErrLock)
		assert.Contains(t, err.Error(), "connection refused")
		assert.Contains(t, err.Error(), s.URL+"/robots.txt")
		assert.Equal(t, Unknown, v.Outcome)
		assert.False(t, v.Allowed())
		assert.ErrorIs(t, v.Err, ErrLock)
		_, err = c.Sitemaps(ctx, s.URL)
		assert.ErrorIs(t, err, ErrLock)
	}
	assert.Equal(t, 0, s.count("/robots.txt"), "nothing fetched without the lock")
	assert.Equal(t, 0, c.Len(), "nothing cached")
	assert.Empty(t, storeErrs, "a lock failure is the caller's error, not a store error")

	store.broken.Store(false)
	v, err := c.Check(ctx, "bot", s.URL+"/x")
	require.NoError(t, err)
	assert.Equal(t, Allowed, v.Outcome)
	assert.Equal(t, 1, s.count("/robots.txt"))
}

// A caller that gives up while waiting for another process's lock gets its
// context's error, and leaves the lock to the others.
func TestLockerWaitEndsWithContext(t *testing.T) {
	site := newHeldRobots(t, "User-agent: *\nDisallow: /\n")
	store := &watchedStore{}
	holder := &Cache{Client: site.Client(), Store: store}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = holder.Check(context.Background(), "bot", site.URL+"/x")
	}()
	waitFor(t, "the first process fetches", func() bool { return site.fetches.Load() == 1 })

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	v, err := (&Cache{Client: site.Client(), Store: store}).Check(ctx, "bot", site.URL+"/x")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, Unknown, v.Outcome)
	site.unblock()
	<-done
	assert.Equal(t, int32(1), site.fetches.Load())
	waitFor(t, "every lock released", func() bool {
		store.mu.Lock()
		defer store.mu.Unlock()
		return len(store.locks) == 0
	})
}

func TestMemoryStoreLock(t *testing.T) {
	var s MemoryStore
	ctx := context.Background()
	unlock, err := s.Lock(ctx, "https://a.example")
	require.NoError(t, err)
	other, err := s.Lock(ctx, "https://b.example")
	require.NoError(t, err, "authorities lock independently")
	other()

	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = s.Lock(short, "https://a.example")
	require.ErrorIs(t, err, context.DeadlineExceeded, "held: the second Lock waits")

	got := make(chan func(), 1)
	go func() {
		u, err := s.Lock(ctx, "https://a.example")
		assert.NoError(t, err)
		got <- u
	}()
	unlock()
	unlock() // a second call does nothing
	(<-got)()
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Empty(t, s.locks, "idle authorities are forgotten")
}
