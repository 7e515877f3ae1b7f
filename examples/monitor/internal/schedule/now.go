package schedule

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
)

// MinSnapshotGap is the least time between two snapshots of one page,
// whatever took them (the schedule or "check now"): the six-hour minimum
// interval the 2-UAcomBot page promises site owners.
const MinSnapshotGap = 6 * time.Hour

// ErrNotTracked: "check now" was asked for a page the database does not
// track.
var ErrNotTracked = errors.New("not tracked")

// NowRefused is why "check now" took no snapshot, and from when it would.
type NowRefused struct {
	URL    string
	Reason string
	// Until is when a check becomes allowed; zero when unknown (another
	// check holds the page).
	Until time.Time
}

func (e *NowRefused) Error() string {
	msg := fmt.Sprintf("check now of %s refused: %s", e.URL, e.Reason)
	if !e.Until.IsZero() {
		msg += "; allowed from " + snapshot.When(e.Until)
	}
	return msg
}

// RunNow takes one snapshot of a tracked page now, whether or not it is
// due, through the process's host gate (so it waits its turn behind the
// scheduler's and the free tool's requests to the host, -gap apart). It
// is refused (a *NowRefused) within MinSnapshotGap of the page's last
// snapshot, while robots.txt of its host is in its re-check window after a
// 5xx or no answer, and while another check holds the page. The line is
// the run's line for the page; the page's next scheduled check is one
// interval after this snapshot.
func (r *Runner) RunNow(ctx context.Context, url string) (outcome, line string, err error) {
	p, ok, err := r.Store.Page(ctx, url)
	if err != nil {
		return "", "", err
	}
	if !ok {
		return "", "", fmt.Errorf("%w: %s", ErrNotTracked, url)
	}
	now := r.Now()
	if p.LastOutcome == snapshot.OutcomeRobotsWait && p.RetryAt.After(now) {
		return "", "", &NowRefused{URL: url, Until: p.RetryAt,
			Reason: "robots.txt of its host did not answer (" + p.LastDetail + "); it is asked again after the re-check wait, not before"}
	}
	last, ok, err := r.Store.LastSnapshotAt(ctx, url)
	if err != nil {
		return "", "", err
	}
	if ok && now.Before(last.Add(MinSnapshotGap)) {
		return "", "", &NowRefused{URL: url, Until: last.Add(MinSnapshotGap),
			Reason: fmt.Sprintf("its last snapshot was taken at %s, and two snapshots of a page are at least %s apart", snapshot.When(last),
				strings.TrimSuffix(MinSnapshotGap.String(), "0m0s"))}
	}
	if ok, err := r.Store.ClaimNow(context.WithoutCancel(ctx), url, now, now.Add(ClaimLease)); err != nil {
		return "", "", err
	} else if !ok {
		return "", "", &NowRefused{URL: url, Reason: "it is being checked right now"}
	}
	client, rc := r.NewClient(r.HostGate, func(string, ...any) {})
	oc, line, wait, err := r.take(ctx, rc, client, p, now)
	switch {
	case err != nil:
		return "", "", err
	case oc == "":
		return "", "", fmt.Errorf("check now of %s interrupted: %w", url, context.Cause(ctx))
	case oc == snapshot.OutcomeRobotsWait:
		return oc, line, &NowRefused{URL: url, Until: wait, Reason: "robots.txt of its host did not answer; it is asked again after the re-check wait, not before"}
	}
	return oc, line, nil
}
