package backoff_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/politecrawl/polite/backoff"
)

// A retry loop driven by the policy against a server that answers 429 once
// (asking, via Retry-After, to wait 0 seconds) and then 200. The 429 also
// trips the run-wide slowdown, which the rest of the crawl then obeys.
func Example() {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()

	ctx := context.Background()
	policy := backoff.Default()
	slowdown := policy.NewSlowdown() // shared by the whole run
	url := srv.URL + "/page"

	for attempt := 1; ; attempt++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if resp != nil {
			resp.Body.Close()
		}
		d := policy.Decide(attempt, resp, err, time.Now())
		if d.Slowdown && slowdown.Trip(url, time.Now()) {
			inFlight, gap := slowdown.Limits()
			fmt.Printf("slowdown tripped: %d in flight, %v gap from now on\n", inFlight, gap)
		}
		if !d.Retry {
			fmt.Printf("attempt %d: %s, done\n", attempt, d.Reason)
			break
		}
		fmt.Printf("attempt %d: %s\n", attempt, d.Reason)
		select { // every wait takes the context
		case <-time.After(d.Wait):
		case <-ctx.Done():
			return
		}
	}
	_, tripped := slowdown.Tripped()
	fmt.Println("server saw", hits.Load(), "requests; slowdown tripped:", tripped)
	// Output:
	// slowdown tripped: 1 in flight, 3s gap from now on
	// attempt 1: 429 Too Many Requests: retry 1 of 2 after 0s
	// attempt 2: 200 OK (not retried), done
	// server saw 2 requests; slowdown tripped: true
}

// The waits the default policy asks for after a 429 without Retry-After:
// the published schedule, computed rather than slept.
func ExamplePolicy_Decide() {
	p := backoff.Default()
	resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}}
	for attempt := 1; attempt <= 3; attempt++ {
		d := p.Decide(attempt, resp, nil, time.Now())
		fmt.Printf("after attempt %d: retry=%v wait=%v slowdown=%v\n", attempt, d.Retry, d.Wait, d.Slowdown)
	}
	// Output:
	// after attempt 1: retry=true wait=500ms slowdown=true
	// after attempt 2: retry=true wait=1s slowdown=true
	// after attempt 3: retry=false wait=0s slowdown=true
}

func ExampleParseRetryAfter() {
	now := time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)
	for _, v := range [][]string{
		{"120"},
		{"Sun, 29 Nov 2026 20:00:30 GMT"},
		{"Fri, 31 Dec 1999 23:59:59 GMT"}, // in the past
		{"-5"},
		{"5", "10"}, // two header lines that disagree
	} {
		d, ok := backoff.ParseRetryAfter(v, now)
		fmt.Printf("%q: %v %v\n", v, d, ok)
	}
	// Output:
	// ["120"]: 2m0s true
	// ["Sun, 29 Nov 2026 20:00:30 GMT"]: 30s true
	// ["Fri, 31 Dec 1999 23:59:59 GMT"]: 0s true
	// ["-5"]: 0s false
	// ["5" "10"]: 0s false
}

// Replacing the retry decision without forking the package: also retry a
// 500, and keep everything else as the default decides.
func ExampleCheckRetry() {
	p := backoff.Default()
	p.CheckRetry = func(p *backoff.Policy, resp *http.Response, err error) (bool, bool, string) {
		if resp != nil && resp.StatusCode == http.StatusInternalServerError {
			return true, false, "500 treated as temporary"
		}
		return backoff.DefaultCheckRetry(p, resp, err)
	}
	d := p.Decide(1, &http.Response{StatusCode: 500, Header: http.Header{}}, nil, time.Now())
	fmt.Println(d.Retry, d.Wait)
	// Output: true 500ms
}
