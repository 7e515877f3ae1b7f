package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/politecrawl/polite/frontier"
)

// sqliteQueue is the crawl's frontier queue, kept in its database so that a killed crawl resumes where
// it stopped (frontier.PersistentQueue). It answers from an in-memory frontier queue (order, seen set:
// the fastest there is) and writes every change through the store's one writer, in the same ordered
// stream of transactions as the pages and links: the rows of a page, the pushes of the links found on it
// and its acknowledgement reach the file in that order, so a crash loses a suffix of the crawl, never a
// middle. A page whose acknowledgement was lost is queued again on resume and fetched again: only pages
// in flight (fetched but not yet written) at the crash are fetched twice.
//
// The frontier calls it under its own lock, one call at a time; q.mu only guards the hand-out set the
// writer's closures do not touch.
type sqliteQueue struct {
	st  *Store
	mem frontier.Queue
	now func() time.Time
	seq int64 // push order, continued from the file on resume

	mu  sync.Mutex
	out map[string]map[string]bool // host -> URLs handed out by Pop and not acknowledged
}

// Queue states in queue.state.
const (
	qQueued  = 0 // queued, or handed out and not finished (queued again on resume)
	qDone    = 1
	qFailed  = 2
	qDropped = 3 // its host was stopped (robots.txt unreachable)
)

const (
	insertQueue = `INSERT OR IGNORE INTO queue (crawl_id, url, host, depth, from_url, seq, state) VALUES (?,?,?,?,?,?,0)`
	ackQueue    = `UPDATE queue SET state = ? WHERE crawl_id = ? AND url = ?`
)

// NewSQLiteQueue is the frontier's queue kept in the crawl's database, so that a killed crawl resumes with
// the URLs it had queued and not yet finished. now stamps the rows; tests pass a fake clock.
func NewSQLiteQueue(st *Store, now func() time.Time) *sqliteQueue {
	return &sqliteQueue{st: st, mem: frontier.NewMemoryQueue(), now: now, out: map[string]map[string]bool{}}
}

var _ frontier.PersistentQueue = (*sqliteQueue)(nil)

// Visit keeps the seen set in memory only, as the contract asks: a URL is seen after a restart when it
// was pushed; one refused (robots.txt, page limit) is simply refused again when a page links to it again.
func (q *sqliteQueue) Visit(url string) (bool, error) { return q.mem.Visit(url) }

func (q *sqliteQueue) Push(it frontier.Item) error {
	if err := q.mem.Push(it); err != nil {
		return err
	}
	q.seq++
	id, seq := q.st.CrawlID, q.seq
	q.st.enqueue(func(tx *sql.Tx) error {
		_, err := tx.Stmt(q.st.insQueue).Exec(id, it.URL, it.Host, it.Depth, it.From, seq)
		return err
	})
	return nil
}

// Pop hands out from memory and writes nothing: an item handed out stays queued in the file until it is
// acknowledged, which is exactly what Resume needs.
func (q *sqliteQueue) Pop(host string) (frontier.Item, bool, error) {
	it, ok, err := q.mem.Pop(host)
	if ok {
		q.mu.Lock()
		if q.out[host] == nil {
			q.out[host] = map[string]bool{}
		}
		q.out[host][it.URL] = true
		q.mu.Unlock()
	}
	return it, ok, err
}

// Ack records the page finished. The audit crawler does not give back a page an interrupt cut short (it
// was not fetched): that one stays queued and a resumed crawl fetches it.
func (q *sqliteQueue) Ack(it frontier.Item, err error) error {
	q.mu.Lock()
	delete(q.out[it.Host], it.URL)
	q.mu.Unlock()
	state := qDone
	if err != nil {
		state = qFailed
	}
	id := q.st.CrawlID
	q.st.enqueue(func(tx *sql.Tx) error {
		_, err := tx.Stmt(q.st.ackQueue).Exec(state, id, it.URL)
		return err
	})
	return nil
}

// Drop removes the host's queued items and records it stopped; items in flight keep their place until
// their acknowledgement.
func (q *sqliteQueue) Drop(host string) (int, error) {
	n, err := q.mem.Drop(host)
	if err != nil {
		return n, err
	}
	q.mu.Lock()
	var inFlight []any
	for u := range q.out[host] {
		inFlight = append(inFlight, u)
	}
	q.mu.Unlock()
	id := q.st.CrawlID
	q.st.enqueue(func(tx *sql.Tx) error {
		args := append([]any{qDropped, id, host}, inFlight...)
		where := ""
		if len(inFlight) > 0 {
			where = " AND url NOT IN (?" + strings.Repeat(",?", len(inFlight)-1) + ")"
		}
		if _, err := tx.Exec(`UPDATE queue SET state = ? WHERE crawl_id = ? AND host = ? AND state = 0`+where, args...); err != nil {
			return err
		}
		_, err := tx.Exec(`INSERT OR REPLACE INTO queue_hosts (crawl_id, host, stopped) VALUES (?,?,1)`, id, host)
		return err
	})
	return n, nil
}

// Started is not recorded: a resumed crawl waits a whole gap counted from the resume, which is never
// shorter than waiting from the last request before the crash (see resume.go), so the time of each
// request need not reach the file.
func (q *sqliteQueue) Started(string, time.Time) {}

// Resume reads back the crawl's queue (crawl q.st.crawlID; none for a new crawl): items queued or handed
// out and never acknowledged are queued again in their push order, every pushed URL is seen again, and
// done, failed and stopped hosts are counted. The rows a page queued again had written before the crash
// (its page row and links, when its acknowledgement did not make it) are removed: it is fetched again and
// writes them again.
func (q *sqliteQueue) Resume() (frontier.ResumeState, error) {
	var rs frontier.ResumeState
	id := q.st.CrawlID
	if id == 0 {
		return rs, nil
	}
	ctx := context.Background()
	db := q.st.db
	for _, del := range []string{
		`DELETE FROM link_rows WHERE crawl_id = ?1 AND from_id IN (SELECT u.id FROM queue q JOIN urls u ON u.url = q.url WHERE q.crawl_id = ?1 AND q.state = 0)`,
		`DELETE FROM pages WHERE crawl_id = ?1 AND url IN (SELECT url FROM queue WHERE crawl_id = ?1 AND state = 0)`,
	} {
		if _, err := db.ExecContext(ctx, del, id); err != nil {
			return rs, fmt.Errorf("clear the rows of pages to fetch again: %w", err)
		}
	}
	rows, err := db.QueryContext(ctx, `SELECT url, host, depth, from_url, seq, state FROM queue WHERE crawl_id = ? ORDER BY seq`, id)
	if err != nil {
		return rs, fmt.Errorf("read the queue: %w", err)
	}
	defer rows.Close()
	rs.Hosts = map[string]frontier.ResumeHost{}
	now := q.now()
	for rows.Next() {
		var it frontier.Item
		var seq int64
		var state int
		if err := rows.Scan(&it.URL, &it.Host, &it.Depth, &it.From, &seq, &state); err != nil {
			return rs, fmt.Errorf("read the queue: %w", err)
		}
		q.seq = max(q.seq, seq)
		if _, err := q.mem.Visit(it.URL); err != nil {
			return rs, err
		}
		h := rs.Hosts[it.Host]
		h.LastStart = now // the first request waits a whole gap from now
		if it.Depth == 0 {
			h.Start = true
		}
		switch state {
		case qQueued:
			if err := q.mem.Push(it); err != nil {
				return rs, err
			}
			for len(h.Queued) <= it.Depth {
				h.Queued = append(h.Queued, 0)
			}
			h.Queued[it.Depth]++
		case qDone:
			h.Done++
		case qFailed:
			h.Failed++
		}
		rs.Hosts[it.Host] = h
	}
	if err := rows.Err(); err != nil {
		return rs, fmt.Errorf("read the queue: %w", err)
	}
	stopped, err := db.QueryContext(ctx, `SELECT host FROM queue_hosts WHERE crawl_id = ? AND stopped = 1`, id)
	if err != nil {
		return rs, fmt.Errorf("read the stopped hosts: %w", err)
	}
	defer stopped.Close()
	for stopped.Next() {
		var host string
		if err := stopped.Scan(&host); err != nil {
			return rs, err
		}
		h := rs.Hosts[host]
		h.Stopped, h.LastStart = true, now
		rs.Hosts[host] = h
	}
	return rs, stopped.Err()
}
