package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/politecrawl/polite/examples/monitor/internal/alert"
	"github.com/politecrawl/polite/examples/monitor/internal/changes"
	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
)

// alertSchema is the alert package's outbox (alert.Schema) and the change
// log the Atom feeds read: one row per snapshot that changed something,
// holding the change's alert.Message. It references the snapshot's log row
// (snapshots is a view, which a foreign key cannot name), so it is deleted
// with it, and with the page when the page is untracked (pages cascade to
// snapshot_log). The outbox keeps its deliveries: they are the record of
// what was sent.
const alertSchema = alert.Schema + `
CREATE TABLE IF NOT EXISTS change_log(
	snapshot_id INTEGER PRIMARY KEY REFERENCES snapshot_log(id) ON DELETE CASCADE,
	page_url TEXT NOT NULL,
	severity INTEGER NOT NULL,
	message TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS change_log_page ON change_log(page_url, snapshot_id);
`

// alertTables are the tables a database needs for this version's alerts.
var alertTables = []string{"alert_channels", "alert_outbox", "alert_attempts", "change_log"}

// SetCompareOptions sets how SaveSnapshot classifies changes (the text
// threshold); the zero value reports every change.
func (s *Store) SetCompareOptions(o changes.Options) { s.compare = o }

// CompareOptions is what SetCompareOptions set, for the pages and reports
// that classify stored snapshots again.
func (s *Store) CompareOptions() changes.Options { return s.compare }

// classify compares sn with the page's stored history (snapshot.Classify:
// the snapshot just before it and the latest comparable one).
func (s *Store) classify(ctx context.Context, sn *snapshot.Snapshot) ([]snapshot.Change, error) {
	last, err := scanSnapshotRow(s.db.QueryRowContext(ctx, `SELECT `+snapshotColumns+` FROM snapshots
WHERE page_url = ? ORDER BY taken_ns DESC, id DESC LIMIT 1`, sn.PageURL))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	base := last
	if !last.Comparable() {
		base, err = scanSnapshotRow(s.db.QueryRowContext(ctx, `SELECT `+snapshotColumns+` FROM snapshots
WHERE page_url = ? AND blocked_by_robots = 0 AND bot_protection IS NULL ORDER BY taken_ns DESC, id DESC LIMIT 1`, sn.PageURL))
		if errors.Is(err, sql.ErrNoRows) {
			base, err = nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return snapshot.Classify(last, base, sn, s.compare), nil
}

// MessageID is the change ID of snapshot id: the same for every channel,
// the first part of each delivery's idempotency key.
func MessageID(snapshotID int64) string { return "snapshot-" + strconv.FormatInt(snapshotID, 10) }

// Message is the alert of sn's changes, without the history link (the
// sender adds it: it depends on where the dashboard is served).
func Message(sn *snapshot.Snapshot, cs []snapshot.Change) *alert.Message {
	m := &alert.Message{ID: MessageID(sn.ID), Monitor: "2-UAcomBot monitor", PageURL: sn.PageURL, TakenAt: sn.TakenAt.UTC()}
	plain := make([]changes.Change, len(cs))
	for i, c := range cs {
		plain[i] = c.Change
		m.Changes = append(m.Changes, alert.Change{Kind: string(c.Kind), Severity: c.Severity.String(),
			Field: c.Field, Old: c.Old, New: c.New})
		if c.Text != nil && len(m.DiffLines) == 0 {
			m.DiffLines = diffLines(c.Text.Plain())
		}
	}
	m.Severity = changes.Max(plain).String()
	return m
}

// diffLines are the lines of a plain word diff that hold a change, at most
// alert.MaxDiffLines.
func diffLines(plain string) []string {
	var out []string
	for line := range strings.SplitSeq(plain, " ¶ ") {
		if strings.Contains(line, "[-") || strings.Contains(line, "{+") {
			out = append(out, strings.TrimSpace(line))
			if len(out) == alert.MaxDiffLines {
				break
			}
		}
	}
	return out
}

// recordChanges writes, in tx (the snapshot's transaction), the change log
// row of sn and one outbox delivery per channel whose target and filter
// match: both are committed with the snapshot or not at all.
func (s *Store) recordChanges(ctx context.Context, tx *sql.Tx, sn *snapshot.Snapshot, cs []snapshot.Change) error {
	if len(cs) == 0 {
		return nil
	}
	m := Message(sn, cs)
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	plain := make([]changes.Change, len(cs))
	for i, c := range cs {
		plain[i] = c.Change
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO change_log(snapshot_id, page_url, severity, message) VALUES (?, ?, ?, ?)`,
		sn.ID, sn.PageURL, int(changes.Max(plain)), string(body)); err != nil {
		return err
	}
	chans, err := channelsOf(ctx, tx, `WHERE disabled = 0 AND (scope = 'monitor' OR (scope = 'host' AND scope_value = ?)
	OR (scope = 'page' AND scope_value = ?))`, hostOf(sn.PageURL), sn.PageURL)
	if err != nil {
		return err
	}
	for _, ch := range chans {
		picked := ch.Filter.Apply(plain)
		if len(picked) == 0 {
			continue
		}
		var sel []snapshot.Change
		for _, c := range cs {
			if ch.Filter.Match(c.Change) {
				sel = append(sel, c)
			}
		}
		if err := alert.Enqueue(ctx, tx, ch.ID, Message(sn, sel), time.Now()); err != nil {
			return err
		}
	}
	return nil
}

// Channel is one row of alert_channels: where alerts go, for which pages,
// and which changes.
type Channel struct {
	ID      int64
	Name    string
	Config  alert.Config
	Scope   string // monitor, host or page
	Target  string // the host (scheme://host[:port]) or the page URL
	Filter  changes.Filter
	Created time.Time
}

// Describe is the channel in one line without its secrets.
func (c Channel) Describe() string {
	target := "every page"
	if c.Scope != "monitor" {
		target = c.Scope + " " + c.Target
	}
	kinds := "every kind"
	if len(c.Filter.Kinds) > 0 {
		ks := make([]string, len(c.Filter.Kinds))
		for i, k := range c.Filter.Kinds {
			ks[i] = string(k)
		}
		kinds = strings.Join(ks, ",")
	}
	return fmt.Sprintf("%s; %s; %s at least %s", c.Config.String(), target, kinds, c.Filter.MinSeverity)
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func channelsOf(ctx context.Context, q querier, where string, args ...any) ([]Channel, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, name, config, scope, scope_value, kinds, min_severity, created_at
		FROM alert_channels `+where+` ORDER BY id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Channel
	for rows.Next() {
		var c Channel
		var cfg, kinds, sev, created string
		if err := rows.Scan(&c.ID, &c.Name, &cfg, &c.Scope, &c.Target, &kinds, &sev, &created); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(cfg), &c.Config); err != nil {
			return nil, fmt.Errorf("alert channel %d: config: %w", c.ID, err)
		}
		if err := json.Unmarshal([]byte(kinds), &c.Filter.Kinds); err != nil {
			return nil, fmt.Errorf("alert channel %d: kinds: %w", c.ID, err)
		}
		if c.Filter.MinSeverity, err = changes.ParseSeverity(sev); err != nil {
			return nil, fmt.Errorf("alert channel %d: %w", c.ID, err)
		}
		c.Created, _ = parseTime(created)
		out = append(out, c)
	}
	return out, rows.Err()
}

// AddChannel stores a channel and returns its ID. The name is unique; ""
// names it after its ID.
func (s *Store) AddChannel(ctx context.Context, c Channel, now time.Time) (int64, error) {
	if c.Scope == "" {
		c.Scope = "monitor"
	}
	cfg, err := json.Marshal(c.Config)
	if err != nil {
		return 0, err
	}
	kinds := c.Filter.Kinds
	if kinds == nil {
		kinds = []changes.Kind{}
	}
	kj, err := json.Marshal(kinds)
	if err != nil {
		return 0, err
	}
	name := c.Name
	if name == "" {
		name = fmt.Sprintf("pending-%d", now.UnixNano())
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, s.wrap(err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO alert_channels(name, config, scope, scope_value, kinds, min_severity, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, name, string(cfg), c.Scope, c.Target, string(kj), c.Filter.MinSeverity.String(), FmtTime(now))
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return 0, fmt.Errorf("an alert channel named %q exists already", c.Name)
		}
		return 0, s.wrap(err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, s.wrap(err)
	}
	if c.Name == "" {
		if _, err := tx.ExecContext(ctx, `UPDATE alert_channels SET name = ? WHERE id = ?`, "channel-"+strconv.FormatInt(id, 10), id); err != nil {
			return 0, s.wrap(err)
		}
	}
	return id, s.wrap(tx.Commit())
}

// Channels lists every alert channel by ID.
func (s *Store) Channels(ctx context.Context) ([]Channel, error) {
	cs, err := channelsOf(ctx, s.db, `WHERE disabled = 0`)
	return cs, s.wrap(err)
}

// ChannelByID returns one channel; ok is false when there is none.
func (s *Store) ChannelByID(ctx context.Context, id int64) (Channel, bool, error) {
	cs, err := channelsOf(ctx, s.db, `WHERE id = ? AND disabled = 0`, id)
	if err != nil || len(cs) == 0 {
		return Channel{}, false, s.wrap(err)
	}
	return cs[0], true, nil
}

// RemoveChannel deletes a channel and its deliveries; ok is false when
// there was none.
func (s *Store) RemoveChannel(ctx context.Context, id int64) (bool, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM alert_channels WHERE id = ?`, id)
	if err != nil {
		return false, s.wrap(err)
	}
	n, err := res.RowsAffected()
	return n == 1, s.wrap(err)
}

// Outbox is the alert outbox over this database, for alert.Sender.
func (s *Store) Outbox() *alert.SQLOutbox { return &alert.SQLOutbox{DB: s.db} }

// EnqueueTest queues a test message for channel id (`monitor alert test`):
// a delivery like any other, under its own key.
func (s *Store) EnqueueTest(ctx context.Context, id int64, m *alert.Message, now time.Time) error {
	return s.wrap(alert.Enqueue(ctx, s.db, id, m, now))
}

// Deliveries lists the newest n deliveries (every state), for the
// dashboard and `alert list`.
func (s *Store) Deliveries(ctx context.Context, n int) ([]alert.Delivery, error) {
	ds, err := s.Outbox().Deliveries(ctx, "", n)
	return ds, s.wrap(err)
}

// FailedDeliveries counts the deliveries whose last attempt failed: given
// up on, or waiting for a retry. The dashboard's banner.
func (s *Store) FailedDeliveries(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM alert_outbox
		WHERE state = 'failed' OR (state IN ('pending', 'sending') AND last_error != '')`).Scan(&n)
	return n, s.wrap(err)
}

// ChangeMessages returns the newest n change messages, of one page (""
// every page), newest first: the Atom feeds.
func (s *Store) ChangeMessages(ctx context.Context, page string, n int) ([]alert.Message, error) {
	q := `SELECT message FROM change_log ORDER BY snapshot_id DESC LIMIT ?`
	args := []any{n}
	if page != "" {
		q = `SELECT message FROM change_log WHERE page_url = ? ORDER BY snapshot_id DESC LIMIT ?`
		args = []any{page, n}
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.wrap(err)
	}
	defer rows.Close()
	var out []alert.Message
	for rows.Next() {
		var body string
		if err := rows.Scan(&body); err != nil {
			return nil, s.wrap(err)
		}
		var m alert.Message
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			return nil, s.wrap(fmt.Errorf("change log: %w", err))
		}
		out = append(out, m)
	}
	return out, s.wrap(rows.Err())
}

// hasAlertTables reports whether tables holds every alert table.
func hasAlertTables(tables map[string]bool) bool {
	return !slices.ContainsFunc(alertTables, func(t string) bool { return !tables[t] })
}
