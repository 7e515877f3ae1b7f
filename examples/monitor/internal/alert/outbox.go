package alert

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"time"
)

// Schema is the outbox's SQL (SQLite), for the monitor's store to run on
// open. alert_channels holds what `monitor alert add` configures;
// alert_outbox one row per change and channel, written in the snapshot's
// transaction (Enqueue); alert_attempts one row per finished attempt, for
// the dashboard. Times are UTC text with a nine-digit fraction, so text
// order is time order.
const Schema = `
CREATE TABLE IF NOT EXISTS alert_channels(
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,
	config TEXT NOT NULL,                 -- JSON Config: kind, URL or SMTP settings, secret
	scope TEXT NOT NULL DEFAULT 'monitor' CHECK (scope IN ('monitor', 'host', 'page')),
	scope_value TEXT NOT NULL DEFAULT '', -- the host (scheme://host[:port]) or the page URL
	kinds TEXT NOT NULL DEFAULT '[]',     -- JSON list of change kinds; empty: every kind
	min_severity TEXT NOT NULL DEFAULT 'info',
	created_at TEXT NOT NULL,
	disabled INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS alert_channels_scope ON alert_channels(scope, scope_value);
CREATE TABLE IF NOT EXISTS alert_outbox(
	id INTEGER PRIMARY KEY,
	idem_key TEXT NOT NULL UNIQUE,        -- change ID + "/" + channel: a change is queued once per channel
	channel_id INTEGER NOT NULL REFERENCES alert_channels(id) ON DELETE CASCADE,
	page_url TEXT NOT NULL,
	message TEXT NOT NULL,                -- JSON Message
	state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sending', 'delivered', 'failed')),
	attempts INTEGER NOT NULL DEFAULT 0,  -- claims so far; also the fencing token of the current claim
	next_attempt_at TEXT NOT NULL,        -- pending: not before; sending: the lease's end
	last_error TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL,
	finished_at TEXT                      -- delivered or failed
);
CREATE INDEX IF NOT EXISTS alert_outbox_due ON alert_outbox(state, next_attempt_at);
CREATE INDEX IF NOT EXISTS alert_outbox_page ON alert_outbox(page_url, id);
CREATE TABLE IF NOT EXISTS alert_attempts(
	id INTEGER PRIMARY KEY,
	outbox_id INTEGER NOT NULL REFERENCES alert_outbox(id) ON DELETE CASCADE,
	attempt INTEGER NOT NULL,
	started_at TEXT NOT NULL,
	finished_at TEXT NOT NULL,
	outcome TEXT NOT NULL CHECK (outcome IN ('delivered', 'retry', 'failed')),
	error TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS alert_attempts_outbox ON alert_attempts(outbox_id);
`

// State is where a delivery is.
type State string

// The states of a delivery.
const (
	Pending   State = "pending"   // waiting for its next attempt
	Sending   State = "sending"   // claimed by a sender until its lease ends
	Delivered State = "delivered" // the receiver accepted it
	Failed    State = "failed"    // given up: a permanent error or MaxAttempts
)

const timeFormat = "2006-01-02T15:04:05.000000000Z"

func fmtTime(t time.Time) string { return t.UTC().Format(timeFormat) }

// Delivery is one message for one channel in the outbox.
type Delivery struct {
	ID        int64
	Key       string // the idempotency key: DeliveryKey(message ID, channel)
	ChannelID int64
	Message   Message
	State     State
	Attempts  int       // claims so far, this one included
	Next      time.Time // Pending: not before; Sending: the lease's end
	LastError string

	unreadable string // Claim could not decode the stored message: sent as a failure
}

// DeliveryKey is the idempotency key of a change's delivery to a channel.
func DeliveryKey(changeID string, channelID int64) string {
	return changeID + "/" + strconv.FormatInt(channelID, 10)
}

// Execer is a *sql.Tx (or *sql.DB).
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Enqueue queues m for channel in tx, the transaction that stores the
// snapshot m is about: both are written or neither. A change queued again
// for the same channel (the snapshot's transaction retried) is one row.
func Enqueue(ctx context.Context, tx Execer, channelID int64, m *Message, now time.Time) error {
	if m.ID == "" || m.PageURL == "" {
		return fmt.Errorf("alert: queueing a message without an ID or page URL (%q, %q)", m.ID, m.PageURL)
	}
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("alert: encoding message %s: %w", m.ID, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO alert_outbox(idem_key, channel_id, page_url, message, next_attempt_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(idem_key) DO NOTHING`,
		DeliveryKey(m.ID, channelID), channelID, m.PageURL, string(body), fmtTime(now), fmtTime(now))
	if err != nil {
		return fmt.Errorf("alert: queueing %s for channel %d: %w", m.ID, channelID, err)
	}
	return nil
}

// Attempt is the outcome of one claimed delivery's send.
type Attempt struct {
	Started, Finished time.Time
	State             State     // Delivered, Pending (retry at Next) or Failed
	Next              time.Time // Pending: the next attempt
	Err               string
}

// Outbox is what a Sender needs of the store. The monitor's store
// implements it over its database (SQLOutbox is the implementation over
// Schema).
type Outbox interface {
	// Claim marks up to n deliveries due at now (pending and due, or
	// sending with an expired lease) as sending until now+lease, counts
	// the attempt, and returns them.
	Claim(ctx context.Context, now time.Time, lease time.Duration, n int) ([]Delivery, error)
	// Record stores the outcome of the attempt of d, unless d's claim was
	// lost (its lease expired and it was claimed again): ErrLeaseLost.
	Record(ctx context.Context, d *Delivery, a Attempt) error
}

// ErrLeaseLost is returned by Record when the delivery was claimed again
// after its lease expired; the newer claim records the outcome.
var ErrLeaseLost = errors.New("alert: delivery lease lost")

// SQLOutbox is the Outbox over a database holding Schema.
type SQLOutbox struct{ DB *sql.DB }

// Claim implements Outbox. One statement: two senders never claim one row.
func (o *SQLOutbox) Claim(ctx context.Context, now time.Time, lease time.Duration, n int) ([]Delivery, error) {
	rows, err := o.DB.QueryContext(ctx, `UPDATE alert_outbox SET state = 'sending', attempts = attempts + 1, next_attempt_at = ?
		WHERE id IN (SELECT id FROM alert_outbox WHERE state IN ('pending', 'sending') AND next_attempt_at <= ?
			ORDER BY next_attempt_at, id LIMIT ?)
		RETURNING id, idem_key, channel_id, message, attempts, next_attempt_at, last_error`,
		fmtTime(now.Add(lease)), fmtTime(now), n)
	if err != nil {
		return nil, fmt.Errorf("alert: claiming deliveries: %w", err)
	}
	defer rows.Close()
	var out []Delivery
	for rows.Next() {
		var d Delivery
		var msg, next string
		if err := rows.Scan(&d.ID, &d.Key, &d.ChannelID, &msg, &d.Attempts, &next, &d.LastError); err != nil {
			return nil, fmt.Errorf("alert: claiming deliveries: %w", err)
		}
		d.State = Sending
		d.Next, _ = time.Parse(timeFormat, next)
		if err := json.Unmarshal([]byte(msg), &d.Message); err != nil {
			// Recorded as failed by the sender: the row cannot be sent.
			d.unreadable = "stored message unreadable: " + err.Error()
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("alert: claiming deliveries: %w", err)
	}
	return out, nil
}

// Record implements Outbox: the outbox row and the attempt row in one
// transaction, fenced by the claim's attempt number.
func (o *SQLOutbox) Record(ctx context.Context, d *Delivery, a Attempt) error {
	tx, err := o.DB.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("alert: recording delivery %d: %w", d.ID, err)
	}
	defer tx.Rollback()
	next := a.Next
	var finished any
	if a.State != Pending {
		next, finished = a.Finished, fmtTime(a.Finished)
	}
	res, err := tx.ExecContext(ctx, `UPDATE alert_outbox SET state = ?, next_attempt_at = ?, last_error = ?, finished_at = ?
		WHERE id = ? AND state = 'sending' AND attempts = ?`,
		string(a.State), fmtTime(next), a.Err, finished, d.ID, d.Attempts)
	if err != nil {
		return fmt.Errorf("alert: recording delivery %d: %w", d.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("%w: delivery %d attempt %d", ErrLeaseLost, d.ID, d.Attempts)
	}
	outcome := map[State]string{Delivered: "delivered", Pending: "retry", Failed: "failed"}[a.State]
	if _, err := tx.ExecContext(ctx, `INSERT INTO alert_attempts(outbox_id, attempt, started_at, finished_at, outcome, error)
		VALUES (?, ?, ?, ?, ?, ?)`, d.ID, d.Attempts, fmtTime(a.Started), fmtTime(a.Finished), outcome, a.Err); err != nil {
		return fmt.Errorf("alert: recording delivery %d: %w", d.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("alert: recording delivery %d: %w", d.ID, err)
	}
	return nil
}

// Deliveries lists the outbox newest first, at most n rows, of one state
// ("" every state): what the dashboard shows, failures first of all.
func (o *SQLOutbox) Deliveries(ctx context.Context, state State, n int) ([]Delivery, error) {
	rows, err := o.DB.QueryContext(ctx, `SELECT id, idem_key, channel_id, message, state, attempts, next_attempt_at, last_error
		FROM alert_outbox WHERE ? = '' OR state = ? ORDER BY id DESC LIMIT ?`, string(state), string(state), n)
	if err != nil {
		return nil, fmt.Errorf("alert: listing deliveries: %w", err)
	}
	defer rows.Close()
	var out []Delivery
	for rows.Next() {
		var d Delivery
		var msg, st, next string
		if err := rows.Scan(&d.ID, &d.Key, &d.ChannelID, &msg, &st, &d.Attempts, &next, &d.LastError); err != nil {
			return nil, fmt.Errorf("alert: listing deliveries: %w", err)
		}
		d.State = State(st)
		d.Next, _ = time.Parse(timeFormat, next)
		_ = json.Unmarshal([]byte(msg), &d.Message)
		out = append(out, d)
	}
	return out, rows.Err()
}

// Backoff is the wait before attempt n+1 after n failed attempts.
type Backoff func(n int) time.Duration

// DefaultBackoff waits 30 s after the first failure, doubling up to 1 h,
// each wait with up to 20% of random jitter so receivers that failed
// together are not retried together: 8 attempts span about 1 h 4 min.
func DefaultBackoff(n int) time.Duration {
	d := 30 * time.Second << min(max(n-1, 0), 7)
	d = min(d, time.Hour)
	return d + rand.N(d/5+1)
}

// Defaults of a Sender.
const (
	DefaultMaxAttempts = 8
	DefaultLease       = 5 * time.Minute // longer than any channel's timeout
	DefaultBatch       = 16
	DefaultPoll        = 10 * time.Second
)

// Sender delivers what the outbox holds. Its zero fields take the Default
// values; Outbox and Channel are required.
type Sender struct {
	Outbox Outbox
	// Channel returns the channel a delivery goes to (built from its
	// stored Config). An error is retried like a failed send.
	Channel     func(ctx context.Context, id int64) (Channel, error)
	MaxAttempts int
	Backoff     Backoff
	Lease       time.Duration
	Batch       int
	Poll        time.Duration
	Now         func() time.Time
	Logger      *slog.Logger
}

func (s *Sender) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// RunOnce claims the deliveries due now, sends them one by one and records
// each attempt. It returns how many it attempted; an error is the outbox's
// (a failed send is recorded, not returned).
func (s *Sender) RunOnce(ctx context.Context) (int, error) {
	if s.Outbox == nil || s.Channel == nil {
		return 0, errors.New("alert: Sender needs an Outbox and a Channel function")
	}
	lease, batch := orDefault(s.Lease, DefaultLease), orDefault(s.Batch, DefaultBatch)
	ds, err := s.Outbox.Claim(ctx, s.now(), lease, batch)
	if err != nil {
		return 0, err
	}
	for i := range ds {
		if err := s.deliver(ctx, &ds[i]); err != nil {
			if errors.Is(err, ErrLeaseLost) {
				s.log().Warn("alert.lease_lost", "key", ds[i].Key, "attempt", ds[i].Attempts)
				continue
			}
			return i + 1, err
		}
	}
	return len(ds), nil
}

func (s *Sender) log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.New(slog.DiscardHandler)
}

func orDefault[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

func (s *Sender) deliver(ctx context.Context, d *Delivery) error {
	a := Attempt{Started: s.now()}
	var err error
	switch {
	case d.unreadable != "":
		err = Permanent(errors.New(d.unreadable))
	default:
		var ch Channel
		if ch, err = s.Channel(ctx, d.ChannelID); err == nil {
			err = ch.Send(ctx, d.Key, &d.Message)
		}
	}
	a.Finished = s.now()
	if ctx.Err() != nil && err != nil {
		// Shutting down: leave the claim; the lease brings it back.
		return ctx.Err()
	}
	maxAttempts := orDefault(s.MaxAttempts, DefaultMaxAttempts)
	switch {
	case err == nil:
		a.State = Delivered
	case IsPermanent(err) || d.Attempts >= maxAttempts:
		a.State, a.Err = Failed, clip(err.Error(), 1000)
	default:
		backoff := s.Backoff
		if backoff == nil {
			backoff = DefaultBackoff
		}
		wait := backoff(d.Attempts)
		var ra *RetryAfterError
		if errors.As(err, &ra) && ra.After > wait {
			wait = ra.After
		}
		a.State, a.Next, a.Err = Pending, a.Finished.Add(wait), clip(err.Error(), 1000)
	}
	s.log().Info("alert.attempt", "key", d.Key, "channel", d.ChannelID, "attempt", d.Attempts,
		"state", string(a.State), "error", a.Err)
	// The outcome is recorded even when ctx ends now: it already happened.
	return s.Outbox.Record(context.WithoutCancel(ctx), d, a)
}

// Run calls RunOnce every Poll (and at once again while a batch was full)
// until ctx ends; it returns nil then. An outbox error is logged and
// retried at the next poll.
func (s *Sender) Run(ctx context.Context) error {
	poll, batch := orDefault(s.Poll, DefaultPoll), orDefault(s.Batch, DefaultBatch)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		n, err := s.RunOnce(ctx)
		if err != nil && ctx.Err() == nil {
			s.log().Error("alert.outbox", "error", err.Error())
		}
		if n >= batch && err == nil {
			t.Reset(0)
		} else {
			t.Reset(poll)
		}
	}
}
