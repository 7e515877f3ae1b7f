package backoff

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestParseRetryAfter(t *testing.T) {
	at := func(d time.Duration, layout string) string { return now.Add(d).UTC().Format(layout) }
	cases := []struct {
		name   string
		values []string
		want   time.Duration
		ok     bool
	}{
		{"none", nil, 0, false},
		{"only empty", []string{"", "  "}, 0, false},
		{"seconds", []string{"120"}, 120 * time.Second, true},
		{"zero", []string{"0"}, 0, true},
		{"many zeros", []string{strings.Repeat("0", 100)}, 0, true},
		{"zero-padded", []string{strings.Repeat("0", 50) + "3"}, 3 * time.Second, true},
		{"OWS", []string{" \t5 "}, 5 * time.Second, true},
		{"IMF-fixdate", []string{at(90*time.Second, http.TimeFormat)}, 90 * time.Second, true},
		{"RFC 850", []string{at(90*time.Second, time.RFC850)}, 90 * time.Second, true},
		{"ANSI C", []string{at(90*time.Second, time.ANSIC)}, 90 * time.Second, true},
		{"RFC 9110 example", []string{"Fri, 31 Dec 1999 23:59:59 GMT"}, 0, true},
		{"past", []string{at(-time.Hour, http.TimeFormat)}, 0, true},
		{"now", []string{at(0, http.TimeFormat)}, 0, true},
		{"sub-second date rounds to the second", []string{now.Add(1500 * time.Millisecond).Format(http.TimeFormat)}, time.Second, true},
		{"max Duration seconds", []string{"9223372036"}, 9223372036 * time.Second, true},
		{"beyond Duration saturates", []string{"9223372037"}, math.MaxInt64, true},
		{"uint64 max saturates", []string{"18446744073709551615"}, math.MaxInt64, true},
		{"uint64 max + 1 overflows", []string{"18446744073709551616"}, 0, false},
		{"overflowing", []string{"99999999999999999999"}, 0, false},
		{"very long", []string{strings.Repeat("9", 10000)}, 0, false},
		{"far future date saturates", []string{"Fri, 31 Dec 9999 23:59:59 GMT"}, time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Sub(now), true},
		{"negative", []string{"-1"}, 0, false},
		{"plus", []string{"+1"}, 0, false},
		{"fraction", []string{"1.5"}, 0, false},
		{"exponent", []string{"1e3"}, 0, false},
		{"hex", []string{"0x10"}, 0, false},
		{"unit", []string{"10s"}, 0, false},
		{"inner space", []string{"1 0"}, 0, false},
		{"garbage", []string{"tomorrow"}, 0, false},
		{"non-ASCII digits", []string{"١٢"}, 0, false},
		{"lowercase date", []string{"fri, 31 dec 1999 23:59:59 gmt"}, 0, false},
		{"date without zone", []string{"Fri, 31 Dec 1999 23:59:59"}, 0, false},
		{"ISO date", []string{"2026-11-29T20:00:10Z"}, 0, false},
		{"two equal", []string{"5", " 5"}, 5 * time.Second, true},
		{"two agreeing forms", []string{"90", at(90*time.Second, http.TimeFormat)}, 90 * time.Second, true},
		{"two past dates", []string{"Fri, 31 Dec 1999 23:59:59 GMT", at(-time.Minute, time.ANSIC)}, 0, true},
		{"two conflicting", []string{"5", "6"}, 0, false},
		{"conflicting date", []string{"5", at(time.Hour, http.TimeFormat)}, 0, false},
		{"valid then garbage", []string{"5", "x"}, 0, false},
		{"garbage then valid", []string{"x", "5"}, 0, false},
		{"valid then overflow", []string{"5", "99999999999999999999"}, 0, false},
		{"comma list", []string{"5, 6"}, 0, false},
		{"comma list equal", []string{"5, 5"}, 0, false},
		{"empty lines skipped", []string{"", "8", ""}, 8 * time.Second, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseRetryAfter(tc.values, now)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

// FuzzParseRetryAfter checks that no input panics, and that the result is
// never negative, is 0 when invalid, and agrees with a plain reading of
// delta-seconds when the input is all digits.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{
		"0", "5", "120", "-5", "1.5", "+5", "5s", "", " 7 ", "99999999999999999999", "18446744073709551615",
		"9223372037", "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
		"Fri, 31 Dec 9999 23:59:59 GMT", "5, 10", "\x00", "١٢",
	} {
		f.Add(s, "")
		f.Add(s, "5")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, values := range [][]string{{a}, {a, b}, {b, a}} {
			d, ok := ParseRetryAfter(values, now)
			if d < 0 {
				t.Fatalf("ParseRetryAfter(%q) = %v, negative", values, d)
			}
			if !ok && d != 0 {
				t.Fatalf("ParseRetryAfter(%q) = %v, false; want 0 when invalid", values, d)
			}
			// Symmetric: the order of the lines never matters.
			if len(values) == 2 {
				d2, ok2 := ParseRetryAfter([]string{values[1], values[0]}, now)
				if d != d2 || ok != ok2 {
					t.Fatalf("order matters: %q -> %v,%v but reversed -> %v,%v", values, d, ok, d2, ok2)
				}
			}
		}
		s := strings.TrimSpace(a)
		if s != "" && strings.Trim(s, "0123456789") == "" {
			d, ok := ParseRetryAfter([]string{a}, now)
			digits := strings.TrimLeft(s, "0")
			switch {
			case len(digits) < 19: // fits easily: exact seconds
				var n int64
				for _, c := range digits {
					n = n*10 + int64(c-'0')
				}
				want := time.Duration(math.MaxInt64) // saturated
				if n <= math.MaxInt64/int64(time.Second) {
					want = time.Duration(n) * time.Second
				}
				if !ok || d != want {
					t.Fatalf("ParseRetryAfter(%q) = %v,%v; want %v,true", a, d, ok, want)
				}
			case len(digits) > 20:
				if ok {
					t.Fatalf("ParseRetryAfter(%q) = %v, true; want overflow rejected", a, d)
				}
			}
		}
		if utf8.ValidString(a) && !valid(ParseRetryAfter([]string{a}, now)) {
			// An invalid value must also poison any pair it is in.
			if _, ok := ParseRetryAfter([]string{a, "5"}, now); ok && strings.TrimSpace(a) != "" {
				t.Fatalf("invalid %q accepted alongside a valid value", a)
			}
		}
	})
}

func valid(_ time.Duration, ok bool) bool { return ok }
