package snapshot

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/politecrawl/polite/fetch"
)

// The address guard is the library's (fetch.Guard, set as the client's
// Guard by main, nil only under -allow-private); this file words its
// refusals the way the monitor's people read them.

// Refusal is the address guard's refusal, worded for the card, the CLI and
// the snapshot: which host, the address it resolved to and that address's
// range. It unwraps to the *fetch.AddressError (and so matches
// fetch.ErrForbiddenAddress).
type Refusal struct{ *fetch.AddressError }

// Error says which host, which address and which range.
func (r *Refusal) Error() string {
	e := r.AddressError
	const tail = " (the monitor does not fetch internal addresses; -allow-private turns this off)"
	_, notAnAddress := netip.ParseAddr(e.Host)
	switch {
	case !e.Addr.IsValid():
		return fmt.Sprintf("refused: host %q is %s%s", e.Host, e.Reason, tail)
	case e.Host != "" && notAnAddress != nil:
		return fmt.Sprintf("refused: %s resolves to %s, %s%s", e.Host, e.Addr, e.Reason, tail)
	default:
		return fmt.Sprintf("refused: %s is %s%s", e.Addr, e.Reason, tail)
	}
}

// Unwrap returns the guard's error.
func (r *Refusal) Unwrap() error { return r.AddressError }

// Refused digs the guard's refusal out of err's chain as a *Refusal; ok
// is false (and err comes back as it is) when the guard did not refuse.
func Refused(err error) (error, bool) {
	var ae *fetch.AddressError
	if errors.As(err, &ae) {
		return &Refusal{ae}, true
	}
	return err, false
}

// CheckURL refuses, before anything is fetched, a URL whose host is, or
// resolves to, an internal address (fetch.Guard.CheckURLResolved), worded
// as a Refusal. A nil Guard (-allow-private) refuses nothing.
func (tk Taker) CheckURL(ctx context.Context, rawURL string) error {
	if err := tk.Guard.CheckURLResolved(ctx, rawURL); err != nil {
		r, _ := Refused(err)
		return r
	}
	return nil
}
