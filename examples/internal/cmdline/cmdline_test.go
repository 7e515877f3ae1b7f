package cmdline

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSafe(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text, é ü 中文", "plain text, é ü 中文"},
		{"\x1b]0;pwned\x07\x1b[2J", `\x1b]0;pwned\x07\x1b[2J`},
		{"a\tb\nc\rd", `a\x09b\x0ac\x0dd`},
		{"del\x7f", `del\x7f`},
		{"c1\u009bX", `c1\u009bX`},
		{"rtl\u202eevil", `rtl\u202eevil`},
		{"bad\xffutf8", `bad\xffutf8`},
	}
	for _, c := range cases {
		if got := Safe(c.in); got != c.want {
			t.Errorf("Safe(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzSafe(f *testing.F) {
	f.Add("\x1b[31mred\x1b[0m")
	f.Add("ok")
	f.Add("\xc3")
	f.Fuzz(func(t *testing.T, s string) {
		out := Safe(s)
		for _, r := range out {
			if unsafeRune(r) {
				t.Fatalf("Safe(%q) = %q keeps %U", s, out, r)
			}
		}
		if Safe(out) != out {
			t.Fatalf("Safe is not idempotent on %q", s)
		}
	})
}

func TestFloatIn(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -0.1, 10.5} {
		if err := FloatIn("check-rate", v, 0, 10); err == nil {
			t.Errorf("FloatIn(%v) accepted", v)
		} else if !strings.Contains(err.Error(), "-check-rate") {
			t.Errorf("error %q does not name the flag", err)
		}
	}
	for _, v := range []float64{0, 0.5, 10} {
		if err := FloatIn("check-rate", v, 0, 10); err != nil {
			t.Errorf("FloatIn(%v) = %v", v, err)
		}
	}
}

func TestIntAndDurationIn(t *testing.T) {
	if IntIn("concurrency", 0, 1, 16) == nil || IntIn("concurrency", 17, 1, 16) == nil || IntIn("concurrency", 16, 1, 16) != nil {
		t.Error("IntIn range")
	}
	if DurationIn("gap", -time.Millisecond, 0, time.Minute) == nil || DurationIn("gap", time.Minute, 0, time.Minute) != nil {
		t.Error("DurationIn range")
	}
}

func TestOpenLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.json")
	lg, closeLog, err := OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	lg.Debug("robots.decision", "url", "https://x.test/")
	if err := closeLog(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `"msg":"robots.decision"`) {
		t.Errorf("log = %q", b)
	}
	bad := filepath.Join(t.TempDir(), "no", "dir", "log.json")
	if _, _, err := OpenLog(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("OpenLog(%s) error %v does not name the path", bad, err)
	}
}
