package frontier

import (
	"context"
	"errors"
	"fmt"

	"github.com/politecrawl/polite/robots"
)

// Robots answers whether a crawler answering to tokens (in order of
// preference) may fetch rawURL; *robots.Cache implements it, as does every
// fetch.RobotsChecker. Its error is for a bad URL or a done context only.
// Add fails closed: only a nil error with Outcome robots.Allowed queues the
// URL; robots.Unknown (the zero Verdict) or any other outcome it does not
// know makes the URL Failed, with an Err matching fetch.ErrNoVerdict.
type Robots interface {
	CheckAs(ctx context.Context, tokens []string, rawURL string) (robots.Verdict, error)
}

// Outcome says what Add did with a URL.
type Outcome int

// Add outcomes. Every one but Queued is a reason the URL was dropped.
const (
	Queued            Outcome = iota // queued; Next will hand it out
	Duplicate                        // already seen (queued, done or dropped before)
	OutOfScope                       // another site: report it as external, never follow it
	TooDeep                          // depth above Config.MaxDepth
	PageLimit                        // Config.MaxPages URLs already queued
	Disallowed                       // robots.txt disallows it (checked before queueing)
	RobotsUnreachable                // robots.txt is unreachable (5xx, 429, network): the site is off limits
	Invalid                          // not an absolute http(s) URL with a valid host, or a negative depth
	TooLong                          // longer than MaxURLLength, before or after normalization
	Stopped                          // its host was stopped with StopHost
	Failed                           // ctx ended during the robots check, robots gave no answer, or the Queue failed; see Err
	numOutcomes
)

var outcomeNames = [numOutcomes]string{
	"queued", "duplicate", "out of scope", "too deep", "page limit", "disallowed",
	"robots unreachable", "invalid", "too long", "stopped", "failed",
}

// outcomeKeys are the outcome attribute values of the frontier.add event.
var outcomeKeys = [numOutcomes]string{
	"queued", "duplicate", "out_of_scope", "too_deep", "page_limit", "disallowed",
	"robots_unreachable", "invalid", "too_long", "stopped", "failed",
}

// String returns a lower-case name such as "out of scope".
func (o Outcome) String() string {
	if o >= 0 && o < numOutcomes {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// AddResult is Add's answer.
type AddResult struct {
	Outcome Outcome
	// URL is the normalized URL; for Invalid and TooLong, the URL as given.
	URL string
	// Verdict is the robots.txt verdict when Robots was asked (Queued,
	// Disallowed, RobotsUnreachable); zero otherwise.
	Verdict robots.Verdict
	// Err explains Invalid, TooLong, RobotsUnreachable, Stopped and Failed
	// (errors.Is: context errors, fetch.ErrNoVerdict, the Queue's error).
	Err error
}

// Errors returned by Frontier methods and in AddResult.Err.
var (
	// ErrComplete: nothing is queued, handed out or being added; the crawl is over.
	ErrComplete = errors.New("frontier: crawl complete")
	// ErrNotReady: NextAt has nothing that may start at the given time.
	ErrNotReady = errors.New("frontier: nothing may start yet")
	// ErrInvalidURL wraps the reason a URL was Invalid.
	ErrInvalidURL = errors.New("frontier: invalid URL")
	// ErrTooLong: the URL is longer than MaxURLLength.
	ErrTooLong = errors.New("frontier: URL longer than 8 KiB")
	// ErrStopped: the URL's host was stopped.
	ErrStopped = errors.New("frontier: host stopped")
)
