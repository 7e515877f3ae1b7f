package snapshot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/politecrawl/polite/examples/monitor/internal/textscope"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/robots"
)

// Taken is one check's result: a snapshot to store, or (WaitUntil set) a
// temporary disallow because robots.txt was unreachable.
type Taken struct {
	Snapshot
	WaitUntil  *time.Time
	WaitDetail string
	// Refused: the address guard refused the page, its robots.txt or a
	// redirect target.
	Refused bool
}

// Taker makes the one polite check of a page: Guard (the client's own
// address guard; nil under -allow-private) refuses internal targets early
// and clearly, Tokens are asked of robots.txt in order, Recheck is when an
// unreachable robots.txt is asked again at the latest.
type Taker struct {
	Guard   *fetch.Guard
	Tokens  []string
	Recheck time.Duration
	// Scope cuts the compared text to the page's rules (a selector, ignore
	// patterns); nil compares the whole visible text.
	Scope *textscope.Scope
}

// Take does one check of pageURL, the same for a scheduled snapshot and the
// free tool: the address guard, robots.txt, then (if allowed) one polite GET,
// conditional on prev's validators. interrupted means ctx ended first and
// nothing should be recorded.
func (tk Taker) Take(ctx context.Context, rc *robots.Cache, client *fetch.Client, pageURL string, start time.Time, prev *Snapshot) (*Taken, bool) {
	t := &Taken{Snapshot: Snapshot{PageURL: pageURL, TakenAt: start}}
	if err := tk.CheckURL(ctx, pageURL); err != nil {
		t.Error, t.Refused = err.Error(), true
		return t, false
	}
	v, err := rc.CheckAs(ctx, tk.Tokens, pageURL)
	if err != nil {
		if ctx.Err() != nil {
			return nil, true
		}
		t.Error = err.Error()
		return t, false
	}
	switch v.Outcome {
	case robots.Allowed:
	case robots.Unreachable:
		if r, refused := Refused(v.Err); refused {
			// The dialer refused robots.txt's address: that is the
			// answer, not a temporary outage.
			t.Error, t.Refused = r.Error(), true
			return t, false
		}
		// A temporary disallow: nothing is fetched, nothing stored as a
		// snapshot, the page stays due and is retried after the re-check.
		retry := v.RecheckAt
		if retry.IsZero() || !retry.After(start) {
			retry = start.Add(tk.Recheck)
		}
		t.WaitUntil = &retry
		t.WaitDetail = fmt.Sprintf("robots.txt unreachable (%s); re-check after %s", robotsCause(v), When(retry))
		return t, false
	case robots.Disallowed:
		t.Blocked, t.RobotsRule = true, v.Decision.String()
		return t, false
	default:
		// Unknown: never read as allowed.
		t.Error = "robots.txt: no answer: " + v.String()
		return t, false
	}

	fctx := ctx
	if prev != nil {
		// The client's Validators (the store) sends prev's validators to
		// the URL that gave them: a 304 confirms prev.
		fctx = ForPage(ctx, pageURL)
	}
	res, err := client.Get(fctx, pageURL)
	if err != nil && ctx.Err() != nil {
		return nil, true
	}
	t.Snapshot = *FromFetchScoped(pageURL, start, res, err, prev, tk.Scope)
	t.Refused = errors.Is(err, fetch.ErrForbiddenAddress)
	return t, false
}

func robotsCause(v robots.Verdict) string {
	if v.Status != 0 {
		return fmt.Sprintf("HTTP %d", v.Status)
	}
	if v.Err != nil {
		return v.Err.Error()
	}
	return "no answer"
}

type pageKey struct{}

// ForPage returns ctx marked as a check of the tracked page pageURL: the
// store's fetch.ValidatorStore then answers with the validators of that
// page's last good snapshot.
func ForPage(ctx context.Context, pageURL string) context.Context {
	return context.WithValue(ctx, pageKey{}, pageURL)
}

// PageOf returns the page ForPage marked ctx with, or "".
func PageOf(ctx context.Context) string {
	p, _ := ctx.Value(pageKey{}).(string)
	return p
}

// When prints a time for people: UTC, to the second.
func When(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }
