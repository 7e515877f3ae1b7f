package store

import (
	"context"

	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
	"github.com/politecrawl/polite/fetch"
)

// Validators is the monitor's fetch.ValidatorStore (Client.Validators):
// the snapshots are the store. The validators of a URL are the ETag and
// Last-Modified of the last good snapshot of the page being checked
// (snapshot.ForPage in the request's context) when that snapshot's final
// URL is the URL asked about, so a 304 confirms exactly the snapshot whose
// fields are carried over, and two tracked URLs that redirect to one
// target keep their own. Without a page in the context (the free tool)
// nothing is conditional.
type Validators struct{ s *Store }

// Validators returns the store's fetch.ValidatorStore.
func (s *Store) Validators() Validators { return Validators{s} }

// Load returns the validators of url for the page in ctx.
func (v Validators) Load(ctx context.Context, url string) (fetch.Validators, bool, error) {
	page := snapshot.PageOf(ctx)
	if page == "" {
		return fetch.Validators{}, false, nil
	}
	sn, ok, err := v.s.LastGood(ctx, page)
	if err != nil || !ok || sn.FinalURL != url || (sn.ETag == "" && sn.LastModified == "") {
		return fetch.Validators{}, false, err
	}
	return fetch.Validators{ETag: sn.ETag, LastModified: sn.LastModified, Size: sn.BodyBytes}, true, nil
}

// Store does nothing: the snapshot committed after the fetch records the
// response's validators (none when it said Cache-Control: no-store).
func (Validators) Store(context.Context, string, fetch.Validators) error { return nil }

// Delete does nothing: a snapshot that is not good (a redirect, a 404)
// is never the baseline, so its page sends no validators next time.
func (Validators) Delete(context.Context, string) error { return nil }
