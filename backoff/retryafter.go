package backoff

import (
	"math"
	"net/http"
	"strings"
	"time"
)

// maxDeltaDigits bounds the delta-seconds we try to read; anything longer is
// an overflow by construction (uint64 has 20 digits).
const maxDeltaDigits = 20

// ParseRetryAfter reads the Retry-After field values (one per header line,
// as http.Header.Values returns them) per RFC 9110 §10.2.3 and reports the
// wait they ask for, relative to now, and whether they were valid.
//
// A value is delta-seconds (ASCII digits only) or an HTTP-date in any of the
// three forms http.ParseTime accepts; a date not after now means 0. Signs,
// fractions, garbage, delta-seconds that overflow a uint64, and several lines
// that disagree are invalid (false), so the caller falls back to its own
// schedule. A valid value too large for a time.Duration saturates at the
// largest Duration; capping it is the Policy's job. Empty lines are ignored.
func ParseRetryAfter(values []string, now time.Time) (time.Duration, bool) {
	var (
		wait  time.Duration
		found bool
	)
	for _, v := range values {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		d, ok := parseOne(v, now)
		if !ok {
			return 0, false
		}
		if found && d != wait {
			return 0, false // a singleton field with conflicting values
		}
		wait, found = d, true
	}
	return wait, found
}

func parseOne(v string, now time.Time) (time.Duration, bool) {
	if v[0] >= '0' && v[0] <= '9' {
		return parseDelta(v)
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if !t.After(now) {
		return 0, true
	}
	return t.Sub(now), true // Sub saturates instead of overflowing
}

func parseDelta(v string) (time.Duration, bool) {
	v = strings.TrimLeft(v, "0") // leading zeros are valid digits, not magnitude
	if len(v) > maxDeltaDigits {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		digit := uint64(c - '0')
		if n > (math.MaxUint64-digit)/10 {
			return 0, false // overflow: treat as garbage, not as "huge"
		}
		n = n*10 + digit
	}
	if n > uint64(math.MaxInt64/int64(time.Second)) {
		return math.MaxInt64, true
	}
	return time.Duration(n) * time.Second, true
}
