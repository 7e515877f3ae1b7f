package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/monitor/internal/alert"
	"github.com/politecrawl/polite/examples/monitor/internal/changes"
	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func webhookChannel(target string) Channel {
	c := Channel{Config: alert.Config{Kind: "webhook", URL: "https://hooks.example/x"}}
	if target != "" {
		c.Scope, c.Target = "page", target
	}
	return c
}

func count(t *testing.T, st *Store, q string) int {
	t.Helper()
	var n int
	require.NoError(t, st.db.QueryRow(q).Scan(&n))
	return n
}

// TestOutboxIsWrittenInTheSnapshotsTransaction: a delivery that cannot be
// queued takes its snapshot with it (one transaction), and a snapshot
// saved again under the same ID is queued once.
func TestOutboxIsWrittenInTheSnapshotsTransaction(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t, tempDB(t))
	const u = "https://a.example/"
	require.NoError(t, st.Track(ctx, []string{u}, 6*time.Hour, t0))
	_, err := st.AddChannel(ctx, webhookChannel(""), t0)
	require.NoError(t, err)
	require.NoError(t, st.SaveSnapshot(ctx, &snapshot.Snapshot{PageURL: u, TakenAt: t0, Status: 200, Title: "A"}))
	assert.Zero(t, count(t, st, `SELECT count(*) FROM alert_outbox`), "a first snapshot changes nothing")

	// The outbox refuses the row (as a full disk would): the snapshot,
	// its change log and the page's schedule roll back with it.
	_, err = st.db.Exec(`CREATE TRIGGER outbox_full BEFORE INSERT ON alert_outbox BEGIN SELECT RAISE(ABORT, 'outbox full'); END`)
	require.NoError(t, err)
	err = st.SaveSnapshot(ctx, &snapshot.Snapshot{PageURL: u, TakenAt: t0.Add(6 * time.Hour), Status: 200, Title: "B"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "outbox full")
	assert.Equal(t, 1, count(t, st, `SELECT count(*) FROM snapshots`), "no snapshot without its alert")
	assert.Zero(t, count(t, st, `SELECT count(*) FROM change_log`))
	p, _, err := st.Page(ctx, u)
	require.NoError(t, err)
	assert.Equal(t, NextDue(u, t0, 6*time.Hour), p.NextDue, "still due: the check is taken again")

	_, err = st.db.Exec(`DROP TRIGGER outbox_full`)
	require.NoError(t, err)
	sn := &snapshot.Snapshot{PageURL: u, TakenAt: t0.Add(6 * time.Hour), Status: 200, Title: "B"}
	require.NoError(t, st.SaveSnapshot(ctx, sn))
	assert.Equal(t, 1, count(t, st, `SELECT count(*) FROM alert_outbox`))
	ds, err := st.Deliveries(ctx, 10)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	assert.Equal(t, alert.DeliveryKey(MessageID(sn.ID), 1), ds[0].Key)
	assert.Equal(t, "title", ds[0].Message.Changes[0].Kind)
	assert.Equal(t, "A", ds[0].Message.Changes[0].Old)

	// The same change queued again (a retried transaction) is one row.
	tx, err := st.db.BeginTx(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, alert.Enqueue(ctx, tx, 1, &ds[0].Message, time.Now()))
	require.NoError(t, tx.Commit())
	assert.Equal(t, 1, count(t, st, `SELECT count(*) FROM alert_outbox`))
}

// TestChannelsMatchTargetKindAndSeverity: per monitor, host and page, by
// kind and minimum severity; a removed channel takes its deliveries.
func TestChannelsMatchTargetKindAndSeverity(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t, tempDB(t))
	const u, other = "https://a.example/p", "https://b.example/p"
	require.NoError(t, st.Track(ctx, []string{u, other}, 6*time.Hour, t0))
	add := func(c Channel) int64 {
		id, err := st.AddChannel(ctx, c, t0)
		require.NoError(t, err)
		return id
	}
	all := add(webhookChannel(""))
	page := add(webhookChannel(u))
	host := webhookChannel("")
	host.Scope, host.Target = "host", "https://b.example"
	hostID := add(host)
	crit := webhookChannel("")
	crit.Filter = changes.Filter{MinSeverity: changes.Critical}
	critID := add(crit)
	titles := webhookChannel("")
	titles.Filter = changes.Filter{Kinds: []changes.Kind{changes.KindTitle}}
	titleID := add(titles)

	for _, p := range []string{u, other} {
		require.NoError(t, st.SaveSnapshot(ctx, &snapshot.Snapshot{PageURL: p, TakenAt: t0, Status: 200, Title: "A", MetaRobots: "index"}))
		require.NoError(t, st.SaveSnapshot(ctx, &snapshot.Snapshot{PageURL: p, TakenAt: t0.Add(6 * time.Hour), Status: 200, Title: "B", MetaRobots: "noindex"}))
	}
	got := map[int64][]string{}
	ds, err := st.Deliveries(ctx, 50)
	require.NoError(t, err)
	for _, d := range ds {
		var kinds []string
		for _, c := range d.Message.Changes {
			kinds = append(kinds, c.Kind)
		}
		got[d.ChannelID] = append(got[d.ChannelID], fmt.Sprintf("%s %v", d.Message.PageURL, kinds))
	}
	assert.ElementsMatch(t, []string{u + " [noindex_added title]", other + " [noindex_added title]"}, got[all])
	assert.Equal(t, []string{u + " [noindex_added title]"}, got[page])
	assert.Equal(t, []string{other + " [noindex_added title]"}, got[hostID])
	assert.ElementsMatch(t, []string{u + " [noindex_added]", other + " [noindex_added]"}, got[critID])
	assert.ElementsMatch(t, []string{u + " [title]", other + " [title]"}, got[titleID])

	msgs, err := st.ChangeMessages(ctx, u, 10)
	require.NoError(t, err)
	require.Len(t, msgs, 1, "the change log: one message per changed snapshot")
	assert.Equal(t, "critical", msgs[0].Severity)

	ok, err := st.RemoveChannel(ctx, all)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Zero(t, count(t, st, fmt.Sprintf(`SELECT count(*) FROM alert_outbox WHERE channel_id = %d`, all)))
	missing, err := st.Untrack(ctx, []string{u})
	require.NoError(t, err)
	assert.Empty(t, missing)
	msgs, err = st.ChangeMessages(ctx, u, 10)
	require.NoError(t, err)
	assert.Empty(t, msgs, "the change log goes with the page's snapshots")
}

// BenchmarkSaveSnapshotWithAlerts is the cost the outbox adds to saving a
// changed snapshot: no channel, and 20 matching channels (20 deliveries
// queued in the snapshot's transaction).
func BenchmarkSaveSnapshotWithAlerts(b *testing.B) {
	for _, n := range []int{0, 20} {
		b.Run(fmt.Sprintf("channels=%d", n), func(b *testing.B) {
			ctx := context.Background()
			st, err := Open(ctx, b.TempDir()+"/bench.db", CreateIfMissing)
			require.NoError(b, err)
			defer st.Close()
			const u = "https://a.example/"
			require.NoError(b, st.Track(ctx, []string{u}, 6*time.Hour, t0))
			for range n {
				_, err := st.AddChannel(ctx, webhookChannel(""), t0)
				require.NoError(b, err)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				sn := &snapshot.Snapshot{PageURL: u, TakenAt: t0.Add(time.Duration(i) * time.Minute), Status: 200,
					Title: fmt.Sprintf("Title %d", i%2)}
				if err := st.SaveSnapshot(ctx, sn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestChangeLogFollowsTheSnapshotLog: the change log references the log
// row (snapshots is a view), so untracking a page deletes its change log
// through the cascade and keeps its deliveries (what was sent), and a
// snapshot ID is never reused: a change after an untrack is queued under a
// new key, not dropped as a repeat of the deleted page's alert.
func TestChangeLogFollowsTheSnapshotLog(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t, tempDB(t))
	var parent, onDelete string
	require.NoError(t, st.db.QueryRow(`SELECT "table", on_delete FROM pragma_foreign_key_list('change_log')`).Scan(&parent, &onDelete))
	assert.Equal(t, []string{"snapshot_log", "CASCADE"}, []string{parent, onDelete})

	const a, b = "https://a.example/", "https://b.example/"
	require.NoError(t, st.Track(ctx, []string{a, b}, 6*time.Hour, t0))
	_, err := st.AddChannel(ctx, webhookChannel(""), t0)
	require.NoError(t, err)
	save := func(u string, at time.Duration, title string) *snapshot.Snapshot {
		sn := &snapshot.Snapshot{PageURL: u, TakenAt: t0.Add(at), Status: 200, Title: title}
		require.NoError(t, st.SaveSnapshot(ctx, sn))
		return sn
	}
	save(a, 0, "A")
	save(b, 0, "B")
	save(a, 6*time.Hour, "A2")
	gone := save(b, 6*time.Hour, "B2") // the newest snapshot: its ID is the highest
	assert.Equal(t, 2, count(t, st, `SELECT count(*) FROM change_log`))
	assert.Equal(t, 2, count(t, st, `SELECT count(*) FROM alert_outbox`))

	_, err = st.Untrack(ctx, []string{b})
	require.NoError(t, err)
	assert.Zero(t, count(t, st, `SELECT count(*) FROM change_log WHERE page_url = '`+b+`'`), "b's change log went with its snapshots")
	assert.Equal(t, 1, count(t, st, `SELECT count(*) FROM change_log`))
	assert.Equal(t, 2, count(t, st, `SELECT count(*) FROM alert_outbox`), "deliveries are kept")
	ms, err := st.ChangeMessages(ctx, "", 10)
	require.NoError(t, err)
	require.Len(t, ms, 1)
	assert.Equal(t, a, ms[0].PageURL)

	next := save(a, 12*time.Hour, "A3")
	assert.Greater(t, next.ID, gone.ID, "a deleted snapshot's ID is not given again")
	assert.Equal(t, 3, count(t, st, `SELECT count(*) FROM alert_outbox`), "the new change is queued, not taken for b's")
	ms, err = st.ChangeMessages(ctx, a, 10)
	require.NoError(t, err)
	require.Len(t, ms, 2)
	assert.Equal(t, MessageID(next.ID), ms[0].ID)
}
