package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
)

// plan is the EXPLAIN QUERY PLAN of query, one detail per line.
func plan(t *testing.T, st *Store, query string, args ...any) string {
	t.Helper()
	rows, err := st.db.Query(`EXPLAIN QUERY PLAN `+query, args...)
	require.NoError(t, err)
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		lines = append(lines, detail)
	}
	require.NoError(t, rows.Err())
	return strings.Join(lines, "\n")
}

// The scheduler's queries read the next_due index, never the whole pages
// table, so a tick costs what is due, not what is tracked.
func TestSchedulerQueriesUseTheDueIndex(t *testing.T) {
	st := openTestStore(t, tempDB(t))
	now := FmtTime(time.Now())
	for _, q := range []struct {
		query string
		args  []any
	}{{dueQuery, []any{now, now, 100}}, {nextDueQuery, nil}} {
		p := plan(t, st, q.query, q.args...)
		assert.Contains(t, p, "USING INDEX pages_due", q.query)
		assert.NotContains(t, p, "USE TEMP B-TREE", "no sort of every page")
		assert.NotRegexp(t, `SCAN pages$`, p)
	}
	// The snapshot reads of one page go through its index too.
	p := plan(t, st, `SELECT `+snapshotColumns+` FROM snapshots WHERE page_url = ? AND blocked_by_robots = 0
		AND bot_protection IS NULL ORDER BY taken_ns DESC, id DESC LIMIT 1`, "https://a.example/")
	assert.Contains(t, p, "snapshot_log_page")
	assert.NotContains(t, p, "SCAN l")
}

// NextDue and DuePages agree with Page.Due when pages are claimed or wait
// for robots.txt past their next_due.
func TestDueFromTheIndexMatchesPageDue(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t, tempDB(t))
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var urls []string
	for i := range 5 {
		urls = append(urls, fmt.Sprintf("https://h%d.example/", i))
	}
	require.NoError(t, st.Track(ctx, urls, 6*time.Hour, t0))
	// h0 claimed for 15 minutes, h1 waiting an hour for robots.txt, h2..h4 due.
	ok, err := st.Claim(ctx, urls[0], t0, t0.Add(15*time.Minute))
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, st.DeferPage(ctx, urls[1], t0, t0.Add(time.Hour), "robots.txt 503"))
	due, err := st.DuePagesLimit(ctx, t0, 2)
	require.NoError(t, err)
	assert.Len(t, due, 2, "the limit holds")
	due, err = st.DuePages(ctx, t0)
	require.NoError(t, err)
	assert.Len(t, due, 3)
	for _, u := range urls[2:] {
		sn := &snapshot.Snapshot{PageURL: u, TakenAt: t0, Status: 200}
		require.NoError(t, st.SaveSnapshot(ctx, sn))
	}
	next, ok, err := st.NextDue(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, t0.Add(15*time.Minute), next, "the claim's end, not the claimed page's next_due")
	require.NoError(t, st.Release(ctx, urls[0]))
	next, _, err = st.NextDue(ctx)
	require.NoError(t, err)
	assert.Equal(t, t0, next)
}

// pageText is ~2 KB of visible text that compresses to about 1 KB, as a
// real page's does.
func pageText(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "words of page %d", i)
	for w := range 300 {
		fmt.Fprintf(&b, " w%x", (w*2654435761+i*40503)%65521)
	}
	return b.String()
}

// dbBytes is the database's size in pages in use (free pages excluded).
func dbBytes(t *testing.T, st *Store) int64 {
	t.Helper()
	var pages, free, size int64
	require.NoError(t, st.db.QueryRow(`SELECT (SELECT page_count FROM pragma_page_count), (SELECT freelist_count FROM pragma_freelist_count),
		(SELECT page_size FROM pragma_page_size)`).Scan(&pages, &free, &size))
	return (pages - free) * size
}

// Two checks that find a page unchanged share its state and its text: the
// database grows by a small log row per unchanged snapshot, the same at
// two sizes, not by the text.
func TestUnchangedSnapshotsCostAFewBytes(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t, tempDB(t))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const pages = 100
	var urls []string
	for i := range pages {
		urls = append(urls, fmt.Sprintf("https://h%03d.example/page", i))
	}
	require.NoError(t, st.Track(ctx, urls, 6*time.Hour, t0))
	check := func(round int) {
		for i, u := range urls {
			sn := &snapshot.Snapshot{PageURL: u, TakenAt: t0.Add(time.Duration(round) * 6 * time.Hour), Status: 200,
				FinalURL: u, Title: fmt.Sprintf("Page %d", i), ContentHash: fmt.Sprint(i), WordCount: 300,
				ResponseTime: time.Duration(10+round%7) * time.Millisecond, BodyBytes: 9000}
			sn.SetText(pageText(i), false)
			require.NoError(t, st.SaveSnapshot(ctx, sn))
		}
	}
	check(0)
	var contents, states int
	count := func() {
		require.NoError(t, st.db.QueryRow(`SELECT (SELECT count(*) FROM contents), (SELECT count(*) FROM snapshot_states)`).Scan(&contents, &states))
	}
	grow := func(rounds int) float64 {
		before := dbBytes(t, st)
		for r := range rounds {
			check(1 + r)
		}
		return float64(dbBytes(t, st)-before) / float64(rounds*pages)
	}
	small := grow(5)  // 500 unchanged snapshots
	large := grow(20) // 2,000 more
	count()
	assert.Equal(t, pages, contents, "one text per page, stored once")
	assert.Equal(t, pages, states, "one state per page")
	t.Logf("bytes per unchanged snapshot: %.1f (500 snapshots), %.1f (2,000)", small, large)
	assert.Less(t, small, 80.0)
	assert.Less(t, large, 80.0, "a log row and its index entry, not the ~1 KB compressed text")
	snaps, err := st.Snapshots(ctx)
	require.NoError(t, err)
	require.Len(t, snaps, pages*26)
	text, err := snaps[pages*26-1].Text()
	require.NoError(t, err)
	assert.Contains(t, text, "words of page 99")
}

// The dashboard's unfiltered and outcome-filtered totals come from
// counters kept by triggers; they match a count of the rows through
// tracking, checks that change a page's outcome, and untracking. Hosts
// (a skip scan of pages_host) lists each host once, in order.
func TestPageCountersMatchCounts(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t, tempDB(t))
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var urls []string
	for i := range 30 {
		urls = append(urls, fmt.Sprintf("https://h%d.example/p%d", i%4, i))
	}
	require.NoError(t, st.Track(ctx, urls, 6*time.Hour, t0))
	agree := func() {
		t.Helper()
		for _, outcome := range append([]string{""}, countedOutcomes...) {
			f := PageFilter{Outcome: outcome}
			_, total, err := st.ListPages(ctx, f, 1, 0)
			require.NoError(t, err)
			where, args := f.where()
			var n int
			require.NoError(t, st.db.QueryRow(`SELECT count(*) FROM pages`+where, args...).Scan(&n))
			assert.Equal(t, n, total, "outcome %q", outcome)
		}
		tot, err := st.Totals(ctx)
		require.NoError(t, err)
		var n int
		require.NoError(t, st.db.QueryRow(`SELECT count(*) FROM pages`).Scan(&n))
		assert.Equal(t, n, tot.Pages)
	}
	agree()
	for i, u := range urls[:12] {
		sn := &snapshot.Snapshot{PageURL: u, TakenAt: t0, Status: 200}
		if i%3 == 0 {
			sn = &snapshot.Snapshot{PageURL: u, TakenAt: t0, Blocked: true, RobotsRule: "disallowed"}
		}
		require.NoError(t, st.SaveSnapshot(ctx, sn))
	}
	require.NoError(t, st.SaveSnapshot(ctx, &snapshot.Snapshot{PageURL: urls[0], TakenAt: t0.Add(6 * time.Hour), Error: "timeout"}))
	require.NoError(t, st.DeferPage(ctx, urls[20], t0, t0.Add(time.Hour), "robots.txt 503"))
	agree()
	_, err := st.Untrack(ctx, urls[:5])
	require.NoError(t, err)
	agree()
	hosts, err := st.Hosts(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"https://h0.example", "https://h1.example", "https://h2.example", "https://h3.example"}, hosts)
	_, err = st.Untrack(ctx, urls)
	require.NoError(t, err)
	agree()
	hosts, err = st.Hosts(ctx)
	require.NoError(t, err)
	assert.Empty(t, hosts)
}

// Untracking a page deletes its log rows and states, and its texts unless
// another page's state still has the same text.
func TestUntrackDeletesUnsharedTexts(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t, tempDB(t))
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	urls := []string{"https://a.example/", "https://b.example/"}
	require.NoError(t, st.Track(ctx, urls, 6*time.Hour, t0))
	for i, u := range urls {
		for j, text := range []string{"shared words", fmt.Sprintf("own words %d", i)} {
			sn := &snapshot.Snapshot{PageURL: u, TakenAt: t0.Add(time.Duration(j) * 6 * time.Hour), Status: 200, ContentHash: text}
			sn.SetText(text, false)
			require.NoError(t, st.SaveSnapshot(ctx, sn))
		}
	}
	rows := func() (contents, states, log int) {
		require.NoError(t, st.db.QueryRow(`SELECT (SELECT count(*) FROM contents), (SELECT count(*) FROM snapshot_states),
			(SELECT count(*) FROM snapshot_log)`).Scan(&contents, &states, &log))
		return
	}
	c, s, l := rows()
	assert.Equal(t, []int{3, 4, 4}, []int{c, s, l})
	_, err := st.Untrack(ctx, urls[:1])
	require.NoError(t, err)
	c, s, l = rows()
	assert.Equal(t, []int{2, 2, 2}, []int{c, s, l}, "a's own text went, the shared one stays for b")
	_, err = st.Untrack(ctx, urls[1:])
	require.NoError(t, err)
	c, s, l = rows()
	assert.Equal(t, []int{0, 0, 0}, []int{c, s, l})
}
