package alert

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// openDB opens a SQLite database the way the monitor's store does (WAL,
// busy timeout, foreign keys, immediate transactions) with Schema and a
// stand-in for the monitor's snapshots table.
func openDB(t testing.TB, path string) *sql.DB {
	db, err := sql.Open("sqlite", path+"?_busy_timeout=10000&_journal_mode=WAL&_foreign_keys=1&_synchronous=NORMAL&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(Schema + `CREATE TABLE IF NOT EXISTS snapshots(id INTEGER PRIMARY KEY, page_url TEXT NOT NULL, taken_at TEXT NOT NULL);`); err != nil {
		t.Fatal(err)
	}
	return db
}

func addChannel(t testing.TB, db *sql.DB, name string) int64 {
	res, err := db.Exec(`INSERT INTO alert_channels(name, config, created_at) VALUES (?, '{"kind":"webhook"}', ?)`, name, fmtTime(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	return id
}

// saveSnapshot is how the monitor's store writes a changed snapshot and its
// alerts: one transaction.
func saveSnapshot(ctx context.Context, db *sql.DB, m *Message, channels []int64, commit bool) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO snapshots(page_url, taken_at) VALUES (?, ?)`, m.PageURL, fmtTime(m.TakenAt))
	if err != nil {
		return err
	}
	id, _ := res.LastInsertId()
	if m.ID == "" {
		m.ID = fmt.Sprintf("snapshot-%d", id)
	}
	for _, ch := range channels {
		if err := Enqueue(ctx, tx, ch, m, m.TakenAt); err != nil {
			return err
		}
	}
	if !commit {
		return nil
	}
	return tx.Commit()
}

func count(t testing.TB, db *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestEnqueueInTheSnapshotTransaction(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, filepath.Join(t.TempDir(), "mon.db"))
	defer db.Close()
	a, b := addChannel(t, db, "hook"), addChannel(t, db, "slack")
	m := sample()
	m.ID = ""
	if err := saveSnapshot(ctx, db, m, []int64{a, b}, false); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, `SELECT count(*) FROM alert_outbox`) + count(t, db, `SELECT count(*) FROM snapshots`); n != 0 {
		t.Fatalf("rolled back snapshot left %d rows", n)
	}
	m.ID = ""
	if err := saveSnapshot(ctx, db, m, []int64{a, b}, true); err != nil {
		t.Fatal(err)
	}
	// The same change queued again (a retried transaction) is one row per channel.
	if err := Enqueue(ctx, db, a, m, time.Now()); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, `SELECT count(*) FROM alert_outbox WHERE state = 'pending'`); n != 2 {
		t.Fatalf("%d outbox rows, want 2", n)
	}
	var key string
	if err := db.QueryRow(`SELECT idem_key FROM alert_outbox WHERE channel_id = ?`, b).Scan(&key); err != nil || key != DeliveryKey(m.ID, b) {
		t.Fatalf("key %q %v", key, err)
	}
	if err := Enqueue(ctx, db, a, &Message{PageURL: "https://x.example/"}, time.Now()); err == nil {
		t.Fatal("a message without an ID was queued")
	}
	// Deleting a channel drops its deliveries.
	if _, err := db.Exec(`DELETE FROM alert_channels WHERE id = ?`, b); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, `SELECT count(*) FROM alert_outbox`); n != 1 {
		t.Fatalf("%d outbox rows after deleting a channel", n)
	}
}

// clock is a test clock the sender reads.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// senderFixture is a database with one webhook channel to a loopback receiver.
func senderFixture(t *testing.T, answer func(w http.ResponseWriter, n int32)) (*sql.DB, *Sender, *clock, *receiver) {
	db := openDB(t, filepath.Join(t.TempDir(), "mon.db"))
	t.Cleanup(func() { db.Close() })
	r, srv := newReceiver(t, "k", answer)
	ch := addChannel(t, db, "hook")
	clk := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	m := sample()
	if err := saveSnapshot(context.Background(), db, m, []int64{ch}, true); err != nil {
		t.Fatal(err)
	}
	s := &Sender{
		Outbox: &SQLOutbox{DB: db},
		Channel: func(_ context.Context, id int64) (Channel, error) {
			if id != ch {
				return nil, fmt.Errorf("no channel %d", id)
			}
			return &Webhook{URL: srv.URL, Secret: []byte("k"), Net: loopback, Now: clk.Now}, nil
		},
		Backoff: func(n int) time.Duration { return time.Duration(n) * time.Minute },
		Now:     clk.Now,
	}
	return db, s, clk, r
}

func runOnce(t *testing.T, s *Sender, want int) {
	t.Helper()
	n, err := s.RunOnce(context.Background())
	if err != nil || n != want {
		t.Fatalf("RunOnce: %d attempted, %v; want %d", n, err, want)
	}
}

func outcomes(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query(`SELECT outcome FROM alert_attempts ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		out = append(out, s)
	}
	return strings.Join(out, ",")
}

func TestSenderRetriesWithBackoffThenDelivers(t *testing.T) {
	db, s, clk, r := senderFixture(t, func(w http.ResponseWriter, n int32) {
		if n <= 2 {
			http.Error(w, "busy", http.StatusInternalServerError)
		}
	})
	runOnce(t, s, 1) // 500
	runOnce(t, s, 0) // not due for 1 min
	clk.Advance(59 * time.Second)
	runOnce(t, s, 0)
	clk.Advance(time.Second)
	runOnce(t, s, 1) // 500 again: 2 min
	clk.Advance(time.Minute)
	runOnce(t, s, 0)
	clk.Advance(time.Minute)
	runOnce(t, s, 1) // delivered
	clk.Advance(time.Hour)
	runOnce(t, s, 0)
	if got := outcomes(t, db); got != "retry,retry,delivered" {
		t.Fatalf("attempts %s", got)
	}
	ds, err := (&SQLOutbox{DB: db}).Deliveries(context.Background(), "", 10)
	if err != nil || len(ds) != 1 || ds[0].State != Delivered || ds[0].Attempts != 3 || ds[0].LastError != "" ||
		ds[0].Message.ID == "" || r.requests.Load() != 3 {
		t.Fatalf("%+v %v, %d requests", ds, err, r.requests.Load())
	}
}

func TestSenderMarksFailed(t *testing.T) {
	t.Run("after MaxAttempts", func(t *testing.T) {
		db, s, clk, _ := senderFixture(t, func(w http.ResponseWriter, _ int32) { http.Error(w, "down", http.StatusBadGateway) })
		s.MaxAttempts = 3
		for range 3 {
			runOnce(t, s, 1)
			clk.Advance(time.Hour)
		}
		runOnce(t, s, 0)
		ds, _ := (&SQLOutbox{DB: db}).Deliveries(context.Background(), Failed, 10)
		if len(ds) != 1 || ds[0].Attempts != 3 || !strings.Contains(ds[0].LastError, "502") || outcomes(t, db) != "retry,retry,failed" {
			t.Fatalf("%+v %s", ds, outcomes(t, db))
		}
	})
	t.Run("unreadable stored message", func(t *testing.T) {
		db, s, _, r := senderFixture(t, nil)
		if _, err := db.Exec(`UPDATE alert_outbox SET message = '{"id": 7'`); err != nil {
			t.Fatal(err)
		}
		runOnce(t, s, 1)
		ds, _ := (&SQLOutbox{DB: db}).Deliveries(context.Background(), Failed, 10)
		if len(ds) != 1 || !strings.Contains(ds[0].LastError, "stored message unreadable") || r.requests.Load() != 0 {
			t.Fatalf("%+v, %d requests", ds, r.requests.Load())
		}
	})
	t.Run("permanent error at once", func(t *testing.T) {
		db, s, _, _ := senderFixture(t, func(w http.ResponseWriter, _ int32) { http.Error(w, "no such hook", http.StatusNotFound) })
		runOnce(t, s, 1)
		if got := outcomes(t, db); got != "failed" {
			t.Fatalf("attempts %s", got)
		}
	})
	t.Run("retry after", func(t *testing.T) {
		db, s, clk, _ := senderFixture(t, func(w http.ResponseWriter, n int32) {
			if n == 1 {
				w.Header().Set("Retry-After", "600")
				http.Error(w, "slow down", http.StatusTooManyRequests)
			}
		})
		runOnce(t, s, 1)
		clk.Advance(9 * time.Minute) // the backoff (1 min) is shorter than asked
		runOnce(t, s, 0)
		clk.Advance(time.Minute)
		runOnce(t, s, 1)
		if got := outcomes(t, db); got != "retry,delivered" {
			t.Fatalf("attempts %s", got)
		}
	})
}

// The defaults as shipped: DefaultBackoff's waits and DefaultMaxAttempts.
func TestSenderDefaults(t *testing.T) {
	for n, want := range map[int]time.Duration{0: 30 * time.Second, 1: 30 * time.Second, 2: time.Minute, 3: 2 * time.Minute,
		7: 32 * time.Minute, 8: time.Hour, 50: time.Hour} {
		for range 20 {
			if got := DefaultBackoff(n); got < want || got > want+want/5 {
				t.Fatalf("DefaultBackoff(%d) = %v, want %v..%v", n, got, want, want+want/5)
			}
		}
	}
	db, s, clk, r := senderFixture(t, func(w http.ResponseWriter, _ int32) { http.Error(w, "down", http.StatusServiceUnavailable) })
	s.Backoff = nil
	var waits []time.Duration
	for range 20 {
		runOnce(t, s, 1)
		ds, _ := (&SQLOutbox{DB: db}).Deliveries(context.Background(), "", 1)
		if ds[0].State == Failed {
			break
		}
		wait := ds[0].Next.Sub(clk.Now())
		waits = append(waits, wait)
		clk.Advance(wait - time.Nanosecond)
		runOnce(t, s, 0) // not a moment early
		clk.Advance(time.Nanosecond)
	}
	if r.requests.Load() != DefaultMaxAttempts || len(waits) != DefaultMaxAttempts-1 || waits[0] < 30*time.Second || waits[6] < 32*time.Minute {
		t.Fatalf("%d requests, waits %v", r.requests.Load(), waits)
	}
}

// A sender stopped mid-send records nothing: the lease brings the delivery
// back to the next sender.
func TestSenderStoppedMidSendLeavesTheClaim(t *testing.T) {
	release := make(chan struct{})
	db, s, clk, r := senderFixture(t, func(w http.ResponseWriter, n int32) {
		if n == 1 {
			<-release
		}
	})
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-r.bodies; cancel() }()
	if _, err := s.RunOnce(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("RunOnce: %v", err)
	}
	if got := outcomes(t, db); got != "" {
		t.Fatalf("attempts %q", got)
	}
	runOnce(t, s, 0)
	clk.Advance(DefaultLease)
	runOnce(t, s, 1)
	if got := outcomes(t, db); got != "delivered" {
		t.Fatalf("attempts %q", got)
	}
}

func TestLeaseExpiryReclaimsAndFencesTheOldClaim(t *testing.T) {
	db, _, clk, _ := senderFixture(t, nil)
	o := &SQLOutbox{DB: db}
	ctx := context.Background()
	first, err := o.Claim(ctx, clk.Now(), time.Minute, 10)
	if err != nil || len(first) != 1 || first[0].Attempts != 1 {
		t.Fatalf("claim: %+v %v", first, err)
	}
	if again, _ := o.Claim(ctx, clk.Now().Add(59*time.Second), time.Minute, 10); len(again) != 0 {
		t.Fatalf("claimed twice within the lease: %+v", again)
	}
	clk.Advance(time.Minute)
	second, err := o.Claim(ctx, clk.Now(), time.Minute, 10)
	if err != nil || len(second) != 1 || second[0].Attempts != 2 || second[0].ID != first[0].ID {
		t.Fatalf("reclaim: %+v %v", second, err)
	}
	done := Attempt{Started: clk.Now(), Finished: clk.Now(), State: Delivered}
	if err := o.Record(ctx, &first[0], done); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("stale record: %v", err)
	}
	if err := o.Record(ctx, &second[0], done); err != nil {
		t.Fatal(err)
	}
	if got := outcomes(t, db); got != "delivered" {
		t.Fatalf("attempts %s", got)
	}
}

func TestRunDeliversAndStopsOnCancel(t *testing.T) {
	db, s, _, r := senderFixture(t, nil)
	s.Now, s.Poll = nil, 10*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	<-r.bodies
	for count(t, db, `SELECT count(*) FROM alert_outbox WHERE state = 'delivered'`) != 1 {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// The kill -9 test. The sender runs in a child process (this test binary,
// re-executed with senderEnv set: see TestMain). It is killed twice at the
// two moments that matter, and a third run finishes the outbox:
//  1. while a delivery is in flight (the receiver holds the request);
//  2. right after a receiver accepted a delivery and before the attempt was
//     recorded (the child kills itself with SIGKILL there).
//
// Delivery is at least once, by design: every change reaches the receiver,
// the two interrupted ones exactly twice with the same Idempotency-Key, all
// others exactly once; a receiver that drops repeated keys sees each change
// once. Exactly once is impossible without the receiver's help: the sender
// cannot know whether a receiver it lost mid-request acted.
const (
	senderEnv     = "ALERT_TEST_SENDER_DB"
	senderURLEnv  = "ALERT_TEST_SENDER_URL"
	senderKillEnv = "ALERT_TEST_SENDER_KILL_AFTER"
)

func TestMain(m *testing.M) {
	if db := os.Getenv(senderEnv); db != "" {
		os.Exit(senderProcess(db, os.Getenv(senderURLEnv), os.Getenv(senderKillEnv)))
	}
	os.Exit(m.Run())
}

// senderProcess runs a Sender over the database until the outbox is
// finished; killAfter names a key after whose successful send it SIGKILLs
// itself.
func senderProcess(path, url, killAfter string) int {
	db, err := sql.Open("sqlite", path+"?_busy_timeout=10000&_journal_mode=WAL&_foreign_keys=1&_txlock=immediate")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := &Sender{
		Outbox: &SQLOutbox{DB: db},
		Channel: func(context.Context, int64) (Channel, error) {
			return killingChannel{&Webhook{URL: url, Net: loopback}, killAfter}, nil
		},
		Lease: time.Second, Batch: 4, Poll: 20 * time.Millisecond,
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			var open int
			if err := db.QueryRow(`SELECT count(*) FROM alert_outbox WHERE state IN ('pending', 'sending')`).Scan(&open); err == nil && open == 0 {
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	if err := s.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

type killingChannel struct {
	Channel
	killAfter string
}

func (k killingChannel) Send(ctx context.Context, key string, m *Message) error {
	err := k.Channel.Send(ctx, key, m)
	if err == nil && key == k.killAfter {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	return err
}

func TestKill9DuringDeliveryLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the sender process three times")
	}
	path := filepath.Join(t.TempDir(), "mon.db")
	db := openDB(t, path)
	defer db.Close()
	ch := addChannel(t, db, "hook")
	const n = 12
	for i := range n {
		m := sample()
		m.ID = fmt.Sprintf("change-%d", i+1)
		m.TakenAt = m.TakenAt.Add(time.Duration(i) * time.Second)
		if err := saveSnapshot(context.Background(), db, m, []int64{ch}, true); err != nil {
			t.Fatal(err)
		}
	}
	heldKey, killKey := DeliveryKey("change-5", ch), DeliveryKey("change-9", ch)

	var mu sync.Mutex
	received := map[string]int{}
	holding, release := make(chan struct{}), make(chan struct{})
	var holdOnce sync.Once
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		key := req.Header.Get(HeaderKey)
		mu.Lock()
		received[key]++
		first := received[key] == 1
		mu.Unlock()
		if key == heldKey && first {
			holdOnce.Do(func() { close(holding) })
			<-release // the sender is killed meanwhile
		}
	}))

	run := func(killAfter string, wantKilled bool, during func(cmd *exec.Cmd)) {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), senderEnv+"="+path, senderURLEnv+"="+srv.URL, senderKillEnv+"="+killAfter)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if during != nil {
			during(cmd)
		}
		var err error
		select {
		case err = <-exited:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("sender process did not finish\n%s", stderr.String())
		}
		var ee *exec.ExitError
		killed := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
		if killed != wantKilled || (!wantKilled && err != nil) {
			t.Fatalf("sender process: %v (killed %v, want %v)\n%s", err, killed, wantKilled, stderr.String())
		}
	}

	// 1. SIGKILL while the delivery of change-5 is in flight.
	run("", true, func(cmd *exec.Cmd) {
		select {
		case <-holding:
		case <-time.After(60 * time.Second):
			t.Fatal("change-5 never arrived")
		}
		cmd.Process.Signal(syscall.SIGKILL)
	})
	close(release)
	var state string
	db.QueryRow(`SELECT state FROM alert_outbox WHERE idem_key = ?`, heldKey).Scan(&state)
	if state != "sending" {
		t.Fatalf("the in-flight delivery is %q after the kill", state)
	}
	// 2. The child kills itself after change-9 was accepted, before recording it.
	run(killKey, true, nil)
	// 3. A clean run finishes the outbox.
	run("", false, nil)

	mu.Lock()
	defer mu.Unlock()
	for i := range n {
		key := DeliveryKey(fmt.Sprintf("change-%d", i+1), ch)
		want := 1
		if key == heldKey || key == killKey {
			want = 2
		}
		if received[key] != want {
			t.Errorf("%s received %d times, want %d", key, received[key], want)
		}
	}
	if len(received) != n {
		t.Errorf("received %d distinct keys, want %d: %v", len(received), n, received)
	}
	if got := count(t, db, `SELECT count(*) FROM alert_outbox WHERE state = 'delivered'`); got != n {
		t.Errorf("%d of %d deliveries delivered", got, n)
	}
	if got := count(t, db, `SELECT attempts FROM alert_outbox WHERE idem_key = ?`, heldKey); got != 2 {
		t.Errorf("held delivery: %d attempts", got)
	}
	// The killed attempts left no attempt row; every delivery has one delivered row.
	if got := count(t, db, `SELECT count(*) FROM alert_attempts WHERE outcome = 'delivered'`); got != n {
		t.Errorf("%d delivered attempt rows", got)
	}
}

func newServer(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// Two senders on one database (a cron run beside serve -watch, each with
// its own connection pool) never claim one delivery twice.
func TestTwoSendersNeverSendOneDeliveryTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mon.db")
	db := openDB(t, path)
	defer db.Close()
	ch := addChannel(t, db, "hook")
	const n = 60
	for i := range n {
		m := sample()
		m.ID = fmt.Sprintf("change-%d", i)
		if err := saveSnapshot(context.Background(), db, m, []int64{ch}, true); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	received := map[string]int{}
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		received[req.Header.Get(HeaderKey)]++
		mu.Unlock()
	}))
	var wg sync.WaitGroup
	for range 2 {
		other := openDB(t, path)
		defer other.Close()
		s := &Sender{Outbox: &SQLOutbox{DB: other}, Batch: 3, Channel: func(context.Context, int64) (Channel, error) {
			return &Webhook{URL: srv.URL, Net: loopback}, nil
		}}
		wg.Go(func() {
			for {
				k, err := s.RunOnce(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				if k == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	if len(received) != n {
		t.Fatalf("%d distinct deliveries of %d", len(received), n)
	}
	for k, c := range received {
		if c != 1 {
			t.Errorf("%s sent %d times", k, c)
		}
	}
}
