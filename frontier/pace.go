package frontier

import (
	"context"
	"fmt"
	"net/url"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/urlnorm"
)

// Start implements fetch.Pacer. Acquire spaces admissions; a request's
// bytes may leave later than its admission (a new connection's dial, TLS,
// a loaded machine) and then reach the site closer to the next request
// than the gap. So fetch calls Start just before each admitted request is
// written: it blocks until both the run's gap and u's host's gap have
// passed since the last request start on the wire, or ctx ends, and
// records this start. The gaps are those of the latest admission, so a
// slowdown that trips after a request was admitted does not hold back
// that request's start: like one that had started already, it is part of
// the run before the trip.
func (f *Frontier) Start(ctx context.Context, u *url.URL) error {
	if u == nil {
		return fmt.Errorf("%w: nil URL", ErrInvalidURL)
	}
	hostName, err := urlnorm.HostPort(u.Scheme, u.Host)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrInvalidURL, u.Redacted(), err)
	}
	for {
		f.mu.Lock()
		h := f.hostLocked(hostName)
		now := f.now().UnixNano()
		at := max(f.lastWrite+f.admitGap, h.lastWrite+h.admitGap)
		if at <= now {
			f.lastWrite, h.lastWrite = now, now
			f.mu.Unlock()
			return nil
		}
		f.mu.Unlock()
		if err := sleep(ctx, nil, at-now); err != nil {
			return fmt.Errorf("frontier: waiting to start %s: %w", u.Redacted(), err)
		}
	}
}

// Wrote implements fetch.Pacer: the request to u that Start let go has
// just been written, so the next start is counted from now.
func (f *Frontier) Wrote(u *url.URL) {
	if u == nil {
		return
	}
	hostName, err := urlnorm.HostPort(u.Scheme, u.Host)
	if err != nil {
		return
	}
	f.mu.Lock()
	if h := f.hosts[hostName]; h != nil {
		now := f.now().UnixNano()
		f.lastWrite, h.lastWrite = max(f.lastWrite, now), max(h.lastWrite, now)
	}
	f.mu.Unlock()
}

var _ fetch.Pacer = (*Frontier)(nil)
