package main

import (
	"fmt"
	"log/slog"
	"os"
)

// openLog opens -log FILE and makes the logger every component of the crawl gets (robots.Cache,
// fetch.Client, the frontier): their decision events, as JSON lines at Debug level, one per decision, so
// that "why was this URL not crawled?" has an answer (a frontier.add event with outcome disallowed and the
// robots.txt rule and line, say). The file is appended to, so a resumed crawl goes on in the same file.
func openLog(cfg *config) (closeLog func(), err error) {
	if cfg.Log == "" {
		return func() {}, nil
	}
	f, err := os.OpenFile(cfg.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("-log: %w", err)
	}
	cfg.logger = slog.New(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return func() { f.Close() }, nil
}
