package fetch

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/politecrawl/polite/robots"
)

// Sentinel causes of an [*Error], for errors.Is.
var (
	// ErrDisallowed: robots.txt forbids the URL for the crawler's token.
	// The Error's Verdict carries the matching rule. No request was sent.
	ErrDisallowed = errors.New("blocked by robots.txt")
	// ErrSiteOffLimits: the site's robots.txt answered 5xx or could not be
	// fetched, so the whole site is off limits for now. No request was sent.
	// The error also wraps the robots.txt fetch's cause (errors.Is finds
	// ErrTimeout, context.DeadlineExceeded or a syscall error).
	ErrSiteOffLimits = errors.New("site off limits: robots.txt unreachable")
	// ErrNoVerdict: the robots checker returned no error but no answer
	// either (Outcome robots.Unknown, e.g. a zero Verdict from a custom
	// RobotsChecker, or any outcome fetch does not know). fetch fails
	// closed: no request was sent.
	ErrNoVerdict = errors.New("robots.txt check gave no answer")
	// ErrTooManyRedirects: a redirect past MaxRedirects was not followed.
	ErrTooManyRedirects = errors.New("too many redirects")
	// ErrRedirectLoop: a redirect pointed at a URL already in the chain.
	ErrRedirectLoop = errors.New("redirect loop")
	// ErrBadRedirect: a redirect had no Location, an unparseable one, or a
	// target that is not an http(s) URL.
	ErrBadRedirect = errors.New("bad redirect")
	// ErrMethod: a method other than GET or HEAD was refused before any I/O.
	ErrMethod = errors.New("method not allowed (only GET and HEAD are sent)")
	// ErrBadURL: the URL is not an absolute http or https URL with a host.
	ErrBadURL = errors.New("not an absolute http(s) URL")
	// ErrTimeout: the per-request timeout expired (connect, headers or body).
	// Errors carrying it also match context.DeadlineExceeded.
	ErrTimeout = errors.New("request timed out")
	// ErrBodyTooLarge is returned by reads from a response body of
	// [Client.RoundTripper] past MaxBodyBytes. ([Client.Get] truncates and
	// flags instead.)
	ErrBodyTooLarge = errors.New("response body larger than the cap")
)

// Error is the error type of this package: what was being done (Op, the
// method), to which URL, the redirect chain so far, the robots verdict when
// robots.txt decided, and the cause. Its message always names the URL.
type Error struct {
	Op        string          // "GET" or "HEAD" (or the refused method)
	URL       string          // the URL the failure is about
	Redirects []Hop           // redirect chain before the failure, oldest first
	Verdict   *robots.Verdict // set when robots.txt refused the URL
	Err       error           // cause; see the Err* variables
}

// Error returns "fetch: OP URL: cause".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("fetch: ")
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteByte(' ')
	}
	b.WriteString(e.URL)
	if n := len(e.Redirects); n > 0 {
		b.WriteString(" (after ")
		b.WriteString(strconv.Itoa(n))
		if n == 1 {
			b.WriteString(" redirect)")
		} else {
			b.WriteString(" redirects)")
		}
	}
	b.WriteString(": ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("unknown error")
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Timeout reports whether the per-request timeout expired, like net.Error.
func (e *Error) Timeout() bool { return errors.Is(e.Err, ErrTimeout) }

// timeoutError wraps both ErrTimeout and context.DeadlineExceeded so callers
// can test for either.
func timeoutError(d time.Duration) error {
	return fmt.Errorf("%w after %v: %w", ErrTimeout, d, context.DeadlineExceeded)
}

// verdictError turns a refusing robots verdict into the cause of an Error.
func verdictError(v *robots.Verdict) error {
	switch v.Outcome {
	case robots.Disallowed:
		return fmt.Errorf("%w: %s", ErrDisallowed, v.Decision)
	case robots.Unreachable:
	default:
		if v.Err != nil {
			return fmt.Errorf("%w (outcome %s): %w", ErrNoVerdict, v.Outcome, v.Err)
		}
		return fmt.Errorf("%w (outcome %s)", ErrNoVerdict, v.Outcome)
	}
	msg := "robots.txt status " + strconv.Itoa(v.Status)
	if v.Status == 0 {
		msg = "robots.txt not fetched"
	}
	if !v.RecheckAt.IsZero() {
		msg += ", recheck at " + v.RecheckAt.UTC().Format(time.RFC3339)
	}
	if v.Err != nil {
		return fmt.Errorf("%w (%s): %w", ErrSiteOffLimits, msg, v.Err)
	}
	return fmt.Errorf("%w (%s)", ErrSiteOffLimits, msg)
}
