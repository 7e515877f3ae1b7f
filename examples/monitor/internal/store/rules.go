package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/politecrawl/polite/examples/monitor/internal/textscope"
)

// A page's rules (pages.rules, JSON {"select", "exclude", "ignore"}) say
// which part of it is compared: textscope.Rules, checked by
// textscope.Compile before they are stored and compiled again by each
// check. NULL is no rules: the whole visible text.

type storedRules struct {
	Select  string   `json:"select,omitempty"`
	Exclude string   `json:"exclude,omitempty"`
	Ignore  []string `json:"ignore,omitempty"`
}

// SetRules replaces the rules of a tracked page, after checking them
// (a *textscope.SelectorError or *textscope.RuleError when unusable).
// found is false when the page is not tracked; nothing is written then.
func (s *Store) SetRules(ctx context.Context, url string, r textscope.Rules) (found bool, err error) {
	if _, err := textscope.Compile(r); err != nil {
		return false, err
	}
	var v sql.NullString
	if r.Selector != "" || r.Exclude != "" || len(r.Ignore) > 0 {
		b, err := json.Marshal(storedRules{Select: r.Selector, Exclude: r.Exclude, Ignore: r.Ignore})
		if err != nil {
			return false, err
		}
		v = sql.NullString{String: string(b), Valid: true}
	}
	res, err := s.db.ExecContext(ctx, `UPDATE pages SET rules = ? WHERE url = ?`, v, url)
	if err != nil {
		return false, s.wrap(err)
	}
	n, err := res.RowsAffected()
	return n == 1, s.wrap(err)
}

// Rules returns the rules of a page (the zero Rules when it has none or is
// not tracked).
func (s *Store) Rules(ctx context.Context, url string) (textscope.Rules, error) {
	var v sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT rules FROM pages WHERE url = ?`, url).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !v.Valid) {
		return textscope.Rules{}, nil
	}
	if err != nil {
		return textscope.Rules{}, s.wrap(err)
	}
	var sr storedRules
	if err := json.Unmarshal([]byte(v.String), &sr); err != nil {
		return textscope.Rules{}, s.wrap(fmt.Errorf("rules of %s: %w", url, err))
	}
	return textscope.Rules{Selector: sr.Select, Exclude: sr.Exclude, Ignore: sr.Ignore}, nil
}
