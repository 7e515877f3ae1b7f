package store

import (
	"context"

	"github.com/politecrawl/polite/robots"
)

// RobotsStore gives robots.Cache its persistence in the robots_cache table,
// so the one-hour cache (and the five-minute wait after a 5xx) holds across
// runs of the monitor, not just within one.
type RobotsStore struct{ st *Store }

var _ robots.Store = RobotsStore{}

// Robots returns the robots.Store of robots.Cache over this database.
func (s *Store) Robots() RobotsStore { return RobotsStore{s} }

// Load returns the stored entry of authority (scheme://host:port).
func (r RobotsStore) Load(ctx context.Context, authority string) (robots.Entry, bool, error) {
	row, ok, err := r.st.loadRobots(ctx, authority)
	if err != nil || !ok {
		return robots.Entry{}, false, err
	}
	return robots.Entry{
		Authority: row.Host,
		URL:       row.URL,
		Status:    row.Status,
		Body:      row.Body,
		FetchedAt: row.FetchedAt,
		ExpiresAt: row.ExpiresAt,
		Err:       row.Err,
	}, true, nil
}

// Save stores e. It is not cancelled with ctx: a robots.txt answer that was
// fetched is worth keeping even when the run is being stopped.
func (r RobotsStore) Save(ctx context.Context, e robots.Entry) error {
	return r.st.saveRobots(context.WithoutCancel(ctx), robotsRow{
		Host:      e.Authority,
		URL:       e.URL,
		Status:    e.Status,
		Body:      e.Body,
		FetchedAt: e.FetchedAt,
		ExpiresAt: e.ExpiresAt,
		Err:       e.Err,
	})
}
