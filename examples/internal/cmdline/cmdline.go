// Package cmdline holds what every example program's command line shares: the
// -log decision-event file, text from a site made safe to print on a terminal,
// and range checks for numeric flags that refuse NaN and infinities.
//
// It never fetches, opens a database or parses HTML: it is the edge between a
// program and its terminal, nothing more.
package cmdline

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Safe returns s with every byte or rune that could drive a terminal written as
// a visible escape: C0 and C1 controls, DEL, invalid UTF-8 and the Unicode
// format characters that reorder or hide text (U+202E and friends). Text from a
// site (a robots.txt line, a title, a URL) passes through Safe before it is
// printed, so it cannot retitle the window, move the cursor or clear the screen.
func Safe(s string) string {
	clean := true
	for _, r := range s {
		if unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeRune reports whether r is a control or format character (tab included:
// it is printed as \x09 so columns stay where the program put them).
func unsafeRune(r rune) bool {
	return r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// OpenLog opens path for the JSON-lines decision-event log that -log FILE
// writes (every level from Debug on), creating or truncating it. The error
// names the path. close flushes nothing (slog writes each line as it comes) but
// reports a failed close, which on some file systems is where a full disk shows.
func OpenLog(path string) (logger *slog.Logger, close func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, fmt.Errorf("-log %s: %w", path, err)
	}
	logger = slog.New(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return logger, func() error {
		if err := f.Close(); err != nil {
			return fmt.Errorf("-log %s: %w", path, err)
		}
		return nil
	}, nil
}

// FloatIn returns an error naming flag unless v is a finite number within
// [lo, hi]. NaN compares false with everything, so a plain "v < lo || v > hi"
// lets it through; this check does not.
func FloatIn(flag string, v, lo, hi float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < lo || v > hi {
		return fmt.Errorf("-%s %v: must be a number from %v to %v", flag, v, lo, hi)
	}
	return nil
}

// IntIn returns an error naming flag unless lo <= v <= hi.
func IntIn(flag string, v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("-%s %d: must be from %d to %d", flag, v, lo, hi)
	}
	return nil
}

// DurationIn returns an error naming flag unless lo <= v <= hi.
func DurationIn(flag string, v, lo, hi time.Duration) error {
	if v < lo || v > hi {
		return fmt.Errorf("-%s %v: must be from %v to %v", flag, v, lo, hi)
	}
	return nil
}
