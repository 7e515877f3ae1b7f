package backoff

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scripted is a loopback server answering with a fixed sequence of
// statuses (and Retry-After values), recording what it saw.
type scripted struct {
	mu     sync.Mutex
	script []struct {
		code       int
		retryAfter string
	}
	seen []int
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	step := s.script[min(len(s.seen), len(s.script)-1)]
	s.seen = append(s.seen, step.code)
	if step.retryAfter != "" {
		w.Header().Set("Retry-After", step.retryAfter)
	}
	w.WriteHeader(step.code)
}

func (s *scripted) served() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.seen...)
}

// retryLoop is the loop a fetcher runs: attempt, decide, trip, wait under ctx.
func retryLoop(ctx context.Context, client *http.Client, p *Policy, sd *Slowdown, url string) (status int, waits []time.Duration, err error) {
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, waits, err
		}
		resp, err := client.Do(req)
		if resp != nil {
			resp.Body.Close()
			status = resp.StatusCode
		}
		d := p.Decide(attempt, resp, err, time.Now())
		if d.Slowdown {
			sd.Trip(url, time.Now())
		}
		if !d.Retry {
			return status, waits, err
		}
		waits = append(waits, d.Wait)
		t := time.NewTimer(d.Wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return status, waits, ctx.Err()
		}
	}
}

// TestRetryLoopFakeTime drives the policy against a real loopback server and
// checks, in synctest's fake time, that the loop waited exactly the promised
// schedule and that the server saw exactly the promised attempts.
func TestRetryLoopFakeTime(t *testing.T) {
	type step = struct {
		code       int
		retryAfter string
	}
	cases := []struct {
		name      string
		script    []step
		wantSeen  []int
		wantWaits []time.Duration
		slowdown  bool
	}{
		{"429 then 200", []step{{429, ""}, {200, ""}}, []int{429, 200}, []time.Duration{500 * time.Millisecond}, true},
		{"429 forever", []step{{429, ""}}, []int{429, 429, 429}, []time.Duration{500 * time.Millisecond, time.Second}, true},
		{"429 Retry-After", []step{{429, "4"}, {429, "100"}, {200, ""}}, []int{429, 429, 200}, []time.Duration{4 * time.Second, 30 * time.Second}, true},
		{"503 Retry-After garbage", []step{{503, "later"}, {503, "2"}, {503, ""}}, []int{503, 503, 503}, []time.Duration{500 * time.Millisecond, 2 * time.Second}, false},
		{"502 then 504 then 200", []step{{502, "9"}, {504, ""}, {200, ""}}, []int{502, 504, 200}, []time.Duration{500 * time.Millisecond, time.Second}, false},
		{"404 final", []step{{404, ""}}, []int{404}, nil, false},
		{"500 final", []step{{500, ""}}, []int{500}, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			site := &scripted{script: tc.script}
			srv := httptest.NewServer(site) // outside the bubble: real loopback
			defer srv.Close()
			synctest.Test(t, func(t *testing.T) {
				// No keep-alive, so no connection goroutine outlives the bubble.
				tr := &http.Transport{DisableKeepAlives: true}
				defer tr.CloseIdleConnections()
				var sd Slowdown
				start := time.Now()
				status, waits, err := retryLoop(t.Context(), &http.Client{Transport: tr}, Default(), &sd, srv.URL+"/p")
				require.NoError(t, err)
				assert.Equal(t, tc.wantSeen[len(tc.wantSeen)-1], status)
				assert.Equal(t, tc.wantWaits, waits)
				var total time.Duration
				for _, w := range tc.wantWaits {
					total += w
				}
				assert.Equal(t, total, time.Since(start), "fake time elapsed = the sum of the promised waits")
				_, tripped := sd.Tripped()
				assert.Equal(t, tc.slowdown, tripped)
			})
			assert.Equal(t, tc.wantSeen, site.served(), "what the server saw")
		})
	}
}

// TestRetryLoopCancelledDuringWait: a wait is abandoned as soon as the
// context ends, and no further request reaches the server.
func TestRetryLoopCancelledDuringWait(t *testing.T) {
	site := &scripted{script: []struct {
		code       int
		retryAfter string
	}{{429, "20"}}}
	srv := httptest.NewServer(site)
	defer srv.Close()
	synctest.Test(t, func(t *testing.T) {
		tr := &http.Transport{DisableKeepAlives: true}
		defer tr.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		start := time.Now()
		_, waits, err := retryLoop(ctx, &http.Client{Transport: tr}, Default(), &Slowdown{}, srv.URL+"/p")
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, []time.Duration{20 * time.Second}, waits)
		assert.Equal(t, 5*time.Second, time.Since(start))
	})
	assert.Equal(t, []int{429}, site.served())
}
