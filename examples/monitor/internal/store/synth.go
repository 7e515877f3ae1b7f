package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
)

// SynthConfig describes a synthetic database for benchmarks: Pages tracked
// pages spread over Hosts hosts, each with PerPage snapshots Interval apart,
// most unchanged.
type SynthConfig struct {
	Pages, Hosts, PerPage int
	// HostFormat makes a host from its number, e.g. "http://h%05d.test:8080";
	// PathFormat a page's path from the page's number, e.g. "/p/%07d".
	HostFormat, PathFormat string
	// ChangedEvery: every n-th page's text changes once, halfway through
	// its snapshots (0: no page changes).
	ChangedEvery int
	// BlockedEvery: every n-th page's last snapshot is blocked by robots.txt.
	BlockedEvery int
	// TextWords is the length of each page's visible text (300 when 0).
	TextWords int
	Start     time.Time     // the first snapshot of every page
	Interval  time.Duration // between snapshots, and the pages' interval (6h when 0)
}

// Synthesize writes the pages and snapshots of cfg into the database at
// path (created, and expected to be empty) in the store's layout, in bulk:
// one statement per round of snapshots, texts compressed as SaveSnapshot
// stores them and shared the same way. It is for benchmarks; the monitor
// never calls it.
func Synthesize(ctx context.Context, path string, cfg SynthConfig) error {
	if cfg.Pages <= 0 || cfg.Hosts <= 0 || cfg.PerPage <= 0 {
		return fmt.Errorf("synthesize: Pages, Hosts and PerPage must be positive")
	}
	if cfg.TextWords == 0 {
		cfg.TextWords = 300
	}
	if cfg.Interval == 0 {
		cfg.Interval = 6 * time.Hour
	}
	st, err := Open(ctx, path, CreateIfMissing)
	if err != nil {
		return err
	}
	defer st.Close()
	// A cache that holds the log's index while every page gets its next
	// round (the default 2 MB would spill it to the WAL again and again).
	if _, err := st.db.ExecContext(ctx, `PRAGMA cache_size = -262144`); err != nil {
		return st.wrap(err)
	}
	tx, err := st.db.BeginTx(ctx, nil)
	if err != nil {
		return st.wrap(err)
	}
	defer tx.Rollback()
	// The counters are counted once at the end, not by a trigger per row.
	for _, q := range []string{`DROP TRIGGER snapshots_counted`, `DROP TRIGGER snapshots_uncounted`, `DROP TRIGGER pages_counted`,
		`DROP TRIGGER pages_uncounted`, `DROP TRIGGER pages_recounted`, `DELETE FROM counters`,
		`DROP TRIGGER hosts_added`, `DROP TRIGGER hosts_removed`, `DROP TRIGGER hosts_moved`, `DELETE FROM hosts`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return st.wrap(err)
		}
	}
	step := cfg.Interval.Nanoseconds()
	last := cfg.Start.Add(time.Duration(cfg.PerPage-1) * cfg.Interval)
	if _, err := tx.ExecContext(ctx, `
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
INSERT INTO pages(id, url, host, interval_seconds, added_at, next_due, last_attempt_at, last_outcome, last_detail, last_status)
SELECT i + 1, printf(?, i % ?) || printf(?, i), printf(?, i % ?), ?, ?, ?, ?, 'ok', 'HTTP 200', 200 FROM n`,
		cfg.Pages, cfg.HostFormat, cfg.Hosts, cfg.PathFormat, cfg.HostFormat, cfg.Hosts, int64(cfg.Interval/time.Second),
		FmtTime(cfg.Start), FmtTime(last.Add(cfg.Interval)), FmtTime(last)); err != nil {
		return st.wrap(fmt.Errorf("synthesize pages: %w", err))
	}
	// Three states per page at fixed ids: (page-1)*3 + 1 the text it
	// had, + 2 the changed text, + 3 blocked.
	insState, err := tx.PrepareContext(ctx, `INSERT INTO snapshot_states(id, page_id, key, blocked_by_robots, robots_rule,
	status, final_url, title, content_hash, word_count, content_id, body_bytes) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return st.wrap(err)
	}
	defer insState.Close()
	insContent, err := tx.PrepareContext(ctx, `INSERT INTO contents(hash, text_z) VALUES(?, ?)`)
	if err != nil {
		return st.wrap(err)
	}
	defer insContent.Close()
	state := func(id, pageID int64, sn *snapshot.Snapshot) error {
		s, err := stateOf(sn)
		if err != nil {
			return err
		}
		key, err := s.key()
		if err != nil {
			return err
		}
		var contentID any
		if s.Text != nil {
			res, err := insContent.ExecContext(ctx, s.TextKey, s.Text)
			if err != nil {
				return err
			}
			if contentID, err = res.LastInsertId(); err != nil {
				return err
			}
		}
		_, err = insState.ExecContext(ctx, id, pageID, key, s.Blocked, s.RobotsRule, s.Status, s.FinalURL, s.Title,
			s.ContentHash, s.Words, contentID, s.BodyBytes)
		return err
	}
	words := make([]string, cfg.TextWords)
	for i := range cfg.Pages {
		if i%1000 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		pageID := int64(i) + 1
		u := fmt.Sprintf(cfg.HostFormat, i%cfg.Hosts) + fmt.Sprintf(cfg.PathFormat, i)
		r := rand.New(rand.NewPCG(uint64(i), 25))
		for w := range words {
			words[w] = vocabulary[r.IntN(len(vocabulary))]
		}
		good := func(title string) *snapshot.Snapshot {
			sn := &snapshot.Snapshot{PageURL: u, Status: 200, FinalURL: u, Title: title, WordCount: len(words), BodyBytes: 9000}
			text := strings.Join(words, " ")
			sn.ContentHash = fmt.Sprintf("%x", contentKey([]byte(text)))
			sn.SetText(text, false)
			return sn
		}
		title := fmt.Sprintf("Page %d of host %d", i, i%cfg.Hosts)
		if err := state(pageID*3-2, pageID, good(title)); err != nil {
			return st.wrap(fmt.Errorf("synthesize %s: %w", u, err))
		}
		if cfg.ChangedEvery > 0 && i%cfg.ChangedEvery == 0 {
			for w := range 5 {
				words[r.IntN(len(words))] = vocabulary[w]
			}
			if err := state(pageID*3-1, pageID, good(title)); err != nil {
				return st.wrap(fmt.Errorf("synthesize %s: %w", u, err))
			}
		}
		if cfg.BlockedEvery > 0 && i%cfg.BlockedEvery == 0 {
			blocked := &snapshot.Snapshot{PageURL: u, Blocked: true, RobotsRule: `disallowed by "Disallow: /" (line 2, user-agent 2-UAcomBot)`}
			if err := state(pageID*3, pageID, blocked); err != nil {
				return st.wrap(fmt.Errorf("synthesize %s: %w", u, err))
			}
		}
	}
	changed, blocked := max(cfg.ChangedEvery, 0), max(cfg.BlockedEvery, 0)
	half := cfg.PerPage / 2
	for j := range cfg.PerPage {
		if _, err := tx.ExecContext(ctx, `
INSERT INTO snapshot_log(page_id, taken_ns, state_id, response_ms, not_modified, bytes_saved, changes)
SELECT id, ?1, CASE
		WHEN ?2 > 0 AND ?3 = ?4 - 1 AND (id - 1) % ?2 = 0 THEN id * 3
		WHEN ?5 > 0 AND ?3 >= ?6 AND (id - 1) % ?5 = 0 THEN id * 3 - 1
		ELSE id * 3 - 2 END,
	20 + (id * 7 + ?3) % 80,
	?3 % 10 = 9, CASE WHEN ?3 % 10 = 9 THEN 9000 END,
	CASE WHEN ?5 > 0 AND ?3 = ?6 AND (id - 1) % ?5 = 0 THEN '["text"]' END
FROM pages ORDER BY id`,
			cfg.Start.UnixNano()+int64(j)*step, blocked, j, cfg.PerPage, changed, half); err != nil {
			return st.wrap(fmt.Errorf("synthesize snapshots: %w", err))
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE pages SET last_change = '[low] text +5 −5 words', last_change_at = ? WHERE ?2 > 0 AND (id - 1) % ?2 = 0`,
		FmtTime(cfg.Start.Add(time.Duration(half)*cfg.Interval)), changed); err != nil {
		return st.wrap(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE pages SET last_outcome = 'blocked', last_detail = 'disallowed by "Disallow: /"', last_status = NULL
WHERE ?1 > 0 AND (id - 1) % ?1 = 0`, blocked); err != nil {
		return st.wrap(err)
	}
	if _, err := tx.ExecContext(ctx, counters); err != nil {
		return st.wrap(err)
	}
	return st.wrap(tx.Commit())
}

// vocabulary is the synthetic pages' words.
var vocabulary = strings.Fields(`pricing plans start at ten euros a month billed yearly cancel any time our team
support contact email phone address opening hours monday friday weekend delivery shipping returns warranty product
service customer review rating stars quality price offer discount sale new arrival collection summer winter spring
autumn size colour material cotton wool leather steel wood glass paper black white red blue green yellow small
medium large extra free fast secure payment card account login register password privacy policy terms conditions
cookie settings language english german french spanish italian news blog article author date read more share
follow newsletter subscribe home about careers jobs press partners investors report annual results growth market
city country region local global online store shop cart checkout order tracking number status update help faq`)
