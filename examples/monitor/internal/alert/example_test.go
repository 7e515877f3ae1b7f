package alert_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/politecrawl/polite/examples/monitor/internal/alert"
)

// A receiver checks a delivery's signature and drops a repeat by its key.
func ExampleVerify() {
	secret := []byte("per-channel secret")
	seen := map[string]bool{} // a real receiver keeps this in its database
	http.HandleFunc("POST /polite-hook", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			return
		}
		if alert.Verify(secret, r.Header, body, time.Now(), 5*time.Minute) != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		if key := r.Header.Get(alert.HeaderKey); !seen[key] {
			seen[key] = true
			// act on the alert once
		}
	})
}

// How the monitor runs the sender next to its scheduler: channels are built
// from their stored settings and dial through the monitor's address guard.
func ExampleSender() {
	var db *sql.DB                                                              // the store's database, holding alert.Schema
	var guard alert.Net                                                         // the monitor's SSRF guard: Net{HTTPClient: ..., Dial: ...}
	var channelConfig func(ctx context.Context, id int64) (alert.Config, error) // reads alert_channels
	s := &alert.Sender{
		Outbox: &alert.SQLOutbox{DB: db},
		Channel: func(ctx context.Context, id int64) (alert.Channel, error) {
			c, err := channelConfig(ctx, id)
			if err != nil {
				return nil, err
			}
			return c.Channel(guard)
		},
		Logger: slog.Default(),
	}
	go s.Run(context.Background())
}
