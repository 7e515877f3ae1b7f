// Package eventlog is the decision-event log the packages' tests read back:
// a JSON-lines slog logger writing to memory, as the examples' -log FILE
// writes to a file.
package eventlog

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// Log holds the JSON lines a logger from New wrote. It is safe for
// concurrent use.
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// New returns a JSON-lines logger enabled from level on, and its Log.
func New(level slog.Level) (*slog.Logger, *Log) {
	l := &Log{}
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: level})), l
}

// Write appends one or more JSON lines.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// Events returns the logged events named msg, in order, each as its JSON
// object without "time" and "msg" ("level" stays).
func (l *Log) Events(t testing.TB, msg string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(l.buf.String()) {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("event log line is not JSON: %v\n%s", err, line)
		}
		if ev["msg"] == msg {
			delete(ev, "time")
			delete(ev, "msg")
			out = append(out, ev)
		}
	}
	return out
}
