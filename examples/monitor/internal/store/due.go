package store

import (
	"context"
	"database/sql"
	"hash/fnv"
	"time"
)

// JitterDivisor sets how far past its interval a page's next check may be:
// up to interval/JitterDivisor (30 min for 6 h, 2 h for 24 h).
const JitterDivisor = 12

// Jitter is the page's own offset added to every scheduled check: an
// FNV-1a hash of its URL, in whole seconds below interval/JitterDivisor.
// It is the same on every run and process, so pages checked in the same
// minute (tracked together, caught up together) drift apart by up to that
// much every interval instead of staying in one clump; it is never
// negative, so two scheduled snapshots of a page are never closer than its
// interval (at least the six-hour minimum).
func Jitter(url string, interval time.Duration) time.Duration {
	span := int64(interval/JitterDivisor) / int64(time.Second)
	if span <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(url))
	return time.Duration(h.Sum64()%uint64(span)) * time.Second
}

// NextDue is when a page checked at taken is due again: one interval
// later plus its jitter.
func NextDue(url string, taken time.Time, interval time.Duration) time.Time {
	return taken.Add(interval + Jitter(url, interval))
}

// LastSnapshotAt returns the time of the page's latest snapshot; ok is false
// when it has none.
func (s *Store) LastSnapshotAt(ctx context.Context, url string) (t time.Time, ok bool, err error) {
	var last sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT max(taken_ns) FROM snapshot_log
WHERE page_id = (SELECT id FROM pages WHERE url = ?)`, url).Scan(&last); err != nil {
		return time.Time{}, false, s.wrap(err)
	}
	if !last.Valid {
		return time.Time{}, false, nil
	}
	return time.Unix(0, last.Int64).UTC(), true, nil
}

// ClaimNow takes page url for one check until leaseEnd whether or not it is
// due ("check now"), unless another check holds it or robots.txt asked to
// wait (retry_at after now). It reports false then.
func (s *Store) ClaimNow(ctx context.Context, url string, now, leaseEnd time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `
UPDATE pages SET retry_at = ? WHERE url = ? AND (retry_at IS NULL OR retry_at <= ?)`,
		FmtTime(leaseEnd), url, FmtTime(now))
	if err != nil {
		return false, s.wrap(err)
	}
	rows, err := res.RowsAffected()
	return rows == 1, s.wrap(err)
}
