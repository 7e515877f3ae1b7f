package backoff

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var now = time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)

func response(code int, retryAfter ...string) *http.Response {
	h := http.Header{}
	for _, v := range retryAfter {
		h.Add("Retry-After", v)
	}
	return &http.Response{StatusCode: code, Header: h}
}

// TestDecideStatusAttempts walks every status class through attempts 0..3
// with the default policy: the exact published schedule.
func TestDecideStatusAttempts(t *testing.T) {
	type want struct {
		retry    bool
		wait     time.Duration
		slowdown bool
	}
	schedule := func(slow bool) [4]want {
		return [4]want{
			{true, 500 * time.Millisecond, slow}, // attempt 0 counts as 1
			{true, 500 * time.Millisecond, slow},
			{true, time.Second, slow},
			{false, 0, slow}, // third attempt was the last
		}
	}
	final := [4]want{}
	cases := []struct {
		code int
		want [4]want
	}{
		{100, final}, {200, final}, {204, final}, {301, final}, {304, final}, {308, final},
		{400, final}, {401, final}, {403, final}, {404, final}, {408, final}, {410, final}, {425, final}, {451, final},
		{429, schedule(true)},
		{500, final}, {501, final},
		{502, schedule(false)}, {503, schedule(false)}, {504, schedule(false)},
		{505, final}, {599, final}, {0, final}, {999, final}, {-1, final},
	}
	policies := map[string]*Policy{"Default()": Default(), "zero": {}, "nil": nil}
	for name, p := range policies {
		for _, tc := range cases {
			for attempt := 0; attempt <= 3; attempt++ {
				t.Run(fmt.Sprintf("%s/%d/attempt%d", name, tc.code, attempt), func(t *testing.T) {
					d := p.Decide(attempt, response(tc.code), nil, now)
					w := tc.want[attempt]
					assert.Equal(t, w.retry, d.Retry, "retry (%s)", d.Reason)
					assert.Equal(t, w.wait, d.Wait, "wait (%s)", d.Reason)
					assert.Equal(t, w.slowdown, d.Slowdown, "slowdown (%s)", d.Reason)
					assert.NotEmpty(t, d.Reason)
				})
			}
		}
	}
}

func TestDecideRetryAfter(t *testing.T) {
	future := func(d time.Duration, layout string) string { return now.Add(d).UTC().Format(layout) }
	const expo1 = 500 * time.Millisecond // attempt 1 fallback
	cases := []struct {
		name   string
		values []string
		want   time.Duration
	}{
		{"absent", nil, expo1},
		{"seconds", []string{"5"}, 5 * time.Second},
		{"zero", []string{"0"}, 0},
		{"padded", []string{"  7\t"}, 7 * time.Second},
		{"leading zeros", []string{"0012"}, 12 * time.Second},
		{"IMF-fixdate", []string{future(10*time.Second, http.TimeFormat)}, 10 * time.Second},
		{"RFC 850", []string{future(11*time.Second, time.RFC850)}, 11 * time.Second},
		{"ANSI C", []string{future(12*time.Second, time.ANSIC)}, 12 * time.Second},
		{"past date", []string{"Sun, 06 Nov 1994 08:49:37 GMT"}, 0},
		{"date equal to now", []string{future(0, http.TimeFormat)}, 0},
		{"garbage", []string{"soon"}, expo1},
		{"negative", []string{"-5"}, expo1},
		{"plus sign", []string{"+5"}, expo1},
		{"fraction", []string{"1.5"}, expo1},
		{"unit", []string{"5s"}, expo1},
		{"empty", []string{""}, expo1},
		{"overflowing", []string{"99999999999999999999"}, expo1},
		{"huge valid", []string{"86400"}, 30 * time.Second},
		{"beyond Duration", []string{"9223372037"}, 30 * time.Second},
		{"uint64 max", []string{"18446744073709551615"}, 30 * time.Second},
		{"far future date", []string{"Fri, 31 Dec 9999 23:59:59 GMT"}, 30 * time.Second},
		{"exactly cap", []string{"30"}, 30 * time.Second},
		{"just over cap", []string{"31"}, 30 * time.Second},
		{"two equal lines", []string{"5", "5"}, 5 * time.Second},
		{"two lines agreeing seconds and date", []string{"10", future(10*time.Second, http.TimeFormat)}, 10 * time.Second},
		{"two conflicting lines", []string{"5", "10"}, expo1},
		{"valid and garbage", []string{"5", "later"}, expo1},
		{"comma-joined", []string{"5, 10"}, expo1},
		{"empty line ignored", []string{"", "4"}, 4 * time.Second},
		{"bad date", []string{"Sun, 32 Nov 1994 08:49:37 GMT"}, expo1},
	}
	for _, tc := range cases {
		for _, code := range []int{429, 503} {
			t.Run(fmt.Sprintf("%d/%s", code, tc.name), func(t *testing.T) {
				d := Default().Decide(1, response(code, tc.values...), nil, now)
				require.True(t, d.Retry, d.Reason)
				assert.Equal(t, tc.want, d.Wait, d.Reason)
			})
		}
	}
	// 502 and 504: the same exponential schedule, Retry-After not consulted.
	for _, code := range []int{502, 504} {
		d := Default().Decide(2, response(code, "20"), nil, now)
		assert.True(t, d.Retry)
		assert.Equal(t, time.Second, d.Wait, "status %d", code)
	}
	// Retry-After is still honoured on the last allowed retry, and not after it.
	d := Default().Decide(2, response(429, "7"), nil, now)
	assert.Equal(t, Decision{Retry: true, Wait: 7 * time.Second, Slowdown: true, Reason: d.Reason}, d)
	d = Default().Decide(3, response(429, "7"), nil, now)
	assert.False(t, d.Retry)
	assert.Zero(t, d.Wait)
	assert.True(t, d.Slowdown)
}

func TestCap(t *testing.T) {
	p := &Policy{MaxRetries: 100}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		assert.Equal(t, w, p.Exponential(i+1), "attempt %d", i+1)
		assert.Equal(t, w, p.Decide(i+1, response(503), nil, now).Wait, "attempt %d", i+1)
	}
	// Far attempts and absurd multipliers saturate at the cap instead of overflowing.
	assert.Equal(t, 30*time.Second, p.Exponential(math.MaxInt))
	assert.Equal(t, 30*time.Second, (&Policy{Multiplier: 1e308}).Exponential(3))
	assert.Equal(t, 30*time.Second, (&Policy{Multiplier: math.Inf(1)}).Exponential(2))
	assert.Equal(t, 30*time.Second, (&Policy{Base: math.MaxInt64}).Exponential(1))

	// A custom cap applies to Retry-After too.
	small := &Policy{Cap: time.Second}
	assert.Equal(t, time.Second, small.Decide(1, response(429, "5"), nil, now).Wait)
	assert.Equal(t, 500*time.Millisecond, small.Decide(1, response(429), nil, now).Wait)
	assert.Equal(t, time.Second, small.Decide(2, response(429), nil, now).Wait)

	// Whatever a custom Backoff returns is clamped to [0, Cap].
	for _, got := range []time.Duration{-time.Hour, math.MinInt64, math.MaxInt64, time.Hour} {
		p := &Policy{Backoff: func(*Policy, int, *http.Response, time.Time) time.Duration { return got }}
		w := p.Decide(1, response(503), nil, now).Wait
		assert.True(t, w >= 0 && w <= DefaultCap, "backoff %v gave wait %v", got, w)
	}
}

func TestFieldDefaultsAndOverrides(t *testing.T) {
	// Out-of-range values fall back to the defaults rather than misbehaving.
	odd := &Policy{Base: -time.Second, Multiplier: math.NaN(), Cap: -1}
	assert.Equal(t, 500*time.Millisecond, odd.Exponential(1))
	assert.Equal(t, time.Second, odd.Exponential(2))
	assert.Equal(t, time.Second, (&Policy{Multiplier: 0.5}).Exponential(2))

	custom := &Policy{Base: 100 * time.Millisecond, Multiplier: 3, Cap: time.Second, MaxRetries: 4}
	for attempt, w := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 300 * time.Millisecond, 3: 900 * time.Millisecond, 4: time.Second} {
		d := custom.Decide(attempt, response(429), nil, now)
		assert.True(t, d.Retry)
		assert.Equal(t, w, d.Wait, "attempt %d", attempt)
	}
	assert.False(t, custom.Decide(5, response(429), nil, now).Retry)

	constant := &Policy{Multiplier: 1}
	assert.Equal(t, 500*time.Millisecond, constant.Exponential(2))

	none := &Policy{MaxRetries: NoRetries}
	d := none.Decide(1, response(429), nil, now)
	assert.False(t, d.Retry)
	assert.True(t, d.Slowdown, "a 429 slows the run even when retries are off")
	assert.Contains(t, d.Reason, "429")

	statuses := &Policy{RetryStatuses: []int{500}, SlowdownStatuses: []int{503}}
	assert.True(t, statuses.Decide(1, response(500), nil, now).Retry)
	d = statuses.Decide(1, response(503), nil, now)
	assert.False(t, d.Retry)
	assert.True(t, d.Slowdown)
	d = statuses.Decide(1, response(429), nil, now)
	assert.False(t, d.Retry)
	assert.False(t, d.Slowdown)

	empty := &Policy{RetryStatuses: []int{}, SlowdownStatuses: []int{}}
	d = empty.Decide(1, response(429), nil, now)
	assert.Equal(t, false, d.Retry || d.Slowdown)

	// Default() spells out exactly what the zero value means.
	def := Default()
	assert.Equal(t, 2, def.MaxRetries)
	assert.Equal(t, 500*time.Millisecond, def.Base)
	assert.Equal(t, 2.0, def.Multiplier)
	assert.Equal(t, 30*time.Second, def.Cap)
	assert.Zero(t, def.Jitter)
	assert.False(t, def.RetryTransportErrors)
	assert.ElementsMatch(t, []int{429, 502, 503, 504}, def.RetryStatuses)
	assert.Equal(t, []int{429}, def.SlowdownStatuses)
	assert.Equal(t, 1, def.SlowdownInFlight)
	assert.Equal(t, 3*time.Second, def.SlowdownGap)
	def.RetryStatuses[0] = 999 // callers own their copy
	assert.Contains(t, Default().RetryStatuses, 429)
}

func TestJitter(t *testing.T) {
	p := &Policy{Jitter: 0.5, MaxRetries: 10}
	seen := map[time.Duration]bool{}
	for range 200 {
		w := p.Decide(1, response(503), nil, now).Wait
		require.GreaterOrEqual(t, w, 500*time.Millisecond, "jitter never shortens the promised wait")
		require.LessOrEqual(t, w, 750*time.Millisecond)
		seen[w] = true
		require.LessOrEqual(t, p.Decide(9, response(503), nil, now).Wait, 30*time.Second, "jitter never passes the cap")
		require.Equal(t, 3*time.Second, p.Decide(1, response(429, "3"), nil, now).Wait, "Retry-After is not jittered")
	}
	assert.Greater(t, len(seen), 1, "jitter should vary the wait")
	// Jitter above 1 is treated as 1; NaN and negatives as off.
	for range 50 {
		assert.LessOrEqual(t, (&Policy{Jitter: 7}).Exponential(1), time.Second)
	}
	assert.Equal(t, 500*time.Millisecond, (&Policy{Jitter: math.NaN()}).Exponential(1))
	assert.Equal(t, 500*time.Millisecond, (&Policy{Jitter: -1}).Exponential(1))
}

// refusedErr returns a real connection-refused error from a closed loopback port.
func refusedErr(t *testing.T) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	resp, err := http.Get("http://" + addr + "/")
	if resp != nil {
		resp.Body.Close()
	}
	require.Error(t, err)
	return err
}

func TestTransportErrors(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:1/", nil)
	require.NoError(t, err)
	_, cancelled := http.DefaultClient.Do(req) // a real cancelled request
	require.ErrorIs(t, cancelled, context.Canceled)

	transport := []struct {
		name string
		err  error
	}{
		{"refused", refusedErr(t)},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}},
		{"timeout", &url.Error{Op: "Get", URL: "http://x/", Err: context.DeadlineExceeded}},
		{"plain", errors.New("boom")},
	}
	never := []struct {
		name string
		err  error
	}{
		{"context.Canceled", context.Canceled},
		{"wrapped", fmt.Errorf("get: %w", context.Canceled)},
		{"real cancelled request", cancelled},
	}
	on := &Policy{RetryTransportErrors: true}
	for _, tc := range transport {
		t.Run(tc.name, func(t *testing.T) {
			for attempt := 0; attempt <= 3; attempt++ {
				d := Default().Decide(attempt, nil, tc.err, now)
				assert.Equal(t, Decision{Reason: d.Reason}, d, "off by default")
				assert.Contains(t, d.Reason, tc.err.Error())

				d = on.Decide(attempt, nil, tc.err, now)
				assert.Equal(t, attempt < 3, d.Retry, "attempt %d", attempt)
				assert.False(t, d.Slowdown)
				if attempt < 3 {
					assert.Equal(t, on.Exponential(attempt), d.Wait)
				}
			}
		})
	}
	for _, tc := range never {
		t.Run(tc.name, func(t *testing.T) {
			d := on.Decide(1, nil, tc.err, now)
			assert.False(t, d.Retry)
			assert.Contains(t, d.Reason, "cancel")
		})
	}
	// An error wins over a response passed alongside it; nothing at all is final.
	assert.False(t, Default().Decide(1, response(503), errors.New("x"), now).Retry)
	assert.False(t, Default().Decide(1, nil, nil, now).Retry)
}

func TestReplaceableFunctions(t *testing.T) {
	var gotAttempt int
	p := &Policy{
		// Retry every 5xx, never slow down.
		CheckRetry: func(p *Policy, resp *http.Response, err error) (bool, bool, string) {
			return resp != nil && resp.StatusCode >= 500, false, "custom"
		},
		// Linear: one second per attempt.
		Backoff: func(p *Policy, attempt int, resp *http.Response, now time.Time) time.Duration {
			gotAttempt = attempt
			return time.Duration(attempt) * time.Second
		},
	}
	d := p.Decide(2, response(500), nil, now)
	assert.True(t, d.Retry)
	assert.Equal(t, 2*time.Second, d.Wait)
	assert.Equal(t, 2, gotAttempt)
	assert.Contains(t, d.Reason, "custom")
	assert.False(t, p.Decide(1, response(429), nil, now).Slowdown)

	// A custom Backoff can reuse the building blocks.
	p = &Policy{Backoff: func(p *Policy, attempt int, resp *http.Response, now time.Time) time.Duration {
		if d, ok := ParseRetryAfter(resp.Header.Values("Retry-After"), now); ok {
			return d
		}
		return p.Exponential(attempt)
	}}
	assert.Equal(t, 9*time.Second, p.Decide(1, response(502, "9"), nil, now).Wait)

	// The exported defaults tolerate a nil policy.
	r, s, _ := DefaultCheckRetry(nil, response(429), nil)
	assert.True(t, r && s)
	assert.Equal(t, 500*time.Millisecond, DefaultBackoff(nil, 1, response(429), now))
}

func TestNewSlowdownCarriesSettings(t *testing.T) {
	n, g := Default().NewSlowdown().Limits()
	assert.Equal(t, 1, n)
	assert.Equal(t, 3*time.Second, g)
	n, g = (&Policy{SlowdownInFlight: 2, SlowdownGap: 5 * time.Second}).NewSlowdown().Limits()
	assert.Equal(t, 2, n)
	assert.Equal(t, 5*time.Second, g)
	var nilPolicy *Policy
	n, g = nilPolicy.NewSlowdown().Limits()
	assert.Equal(t, 1, n)
	assert.Equal(t, 3*time.Second, g)
}

func BenchmarkDecide(b *testing.B) {
	p := Default()
	resps := []*http.Response{response(200), response(404), response(429), response(429, "5"), response(503, now.Add(time.Minute).Format(http.TimeFormat))}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = p.Decide(1+i%3, resps[i%len(resps)], nil, now)
	}
}

func BenchmarkParseRetryAfter(b *testing.B) {
	for _, v := range []string{"120", now.Add(time.Minute).Format(http.TimeFormat)} {
		b.Run(strconv.Itoa(len(v)), func(b *testing.B) {
			vals := []string{v}
			b.ReportAllocs()
			for b.Loop() {
				_, _ = ParseRetryAfter(vals, now)
			}
		})
	}
}
