package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/monitor/internal/pagetext"
	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
	"github.com/politecrawl/polite/examples/monitor/internal/store"
)

// bigDashboardDB writes a database of pages tracked pages on 100 hosts with
// perPage snapshots each (visible text stored, one in ten a 304, one page in
// twenty blocked), the way saveSnapshot would have left it, in one
// transaction.
func bigDashboardDB(tb testing.TB, pages, perPage int) string {
	db := filepath.Join(tb.TempDir(), "big.db")
	st, err := store.Open(context.Background(), db, store.CreateIfMissing)
	require.NoError(tb, err)
	require.NoError(tb, st.Close()) // the schema is made; rows go in directly
	ctx := context.Background()
	raw := rawDB(tb, db)
	tx, err := raw.BeginTx(ctx, nil)
	require.NoError(tb, err)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	text := pagetext.Compress("Pricing\nPlans start at ten euros a month, billed yearly. Cancel at any time.")
	for i := range pages {
		host := fmt.Sprintf("https://h%03d.example", i%100)
		u := fmt.Sprintf("%s/page/%05d", host, i)
		oc, detail, status := snapshot.OutcomeOK, "HTTP 200", 200
		if i%20 == 0 {
			oc, detail, status = snapshot.OutcomeBlocked, `disallowed by "Disallow: /page/" (line 2, user-agent 2-UAcomBot)`, 0
		}
		last := t0.Add(time.Duration(perPage-1) * 6 * time.Hour)
		_, err := tx.Exec(`INSERT INTO pages(url, host, interval_seconds, added_at, next_due, last_attempt_at, last_outcome,
			last_detail, last_status, last_change, last_change_at) VALUES(?, ?, 21600, ?, ?, ?, ?, ?, ?, ?, ?)`,
			u, host, store.FmtTime(t0), store.FmtTime(last.Add(6*time.Hour)), store.FmtTime(last), oc, detail, status,
			`title "Pricing" → "Pricing plans"; text +5 −2 words`, store.FmtTime(last))
		require.NoError(tb, err)
		for j := range perPage {
			blocked := i%20 == 0 && j == perPage-1
			nm := j%10 == 9
			_, err := tx.Exec(`INSERT INTO snapshots(page_url, taken_at, blocked_by_robots, status, final_url, title,
				content_hash, word_count, response_ms, text, not_modified, body_bytes, bytes_saved)
				VALUES(?, ?, ?, 200, ?, 'Pricing plans', 'abc', 12, 40, ?, ?, 6100, ?)`,
				u, store.FmtTime(t0.Add(time.Duration(j)*6*time.Hour)), blocked, u, text, nm, map[bool]any{true: 6100, false: nil}[nm])
			require.NoError(tb, err)
		}
	}
	require.NoError(tb, tx.Commit())
	return db
}

// BenchmarkDashboardFirstByte measures the time to the first byte of the
// dashboard over real HTTP with 10,000 tracked pages and 100,000 snapshots:
// the first page, a filtered page, and a page deep in the list.
func BenchmarkDashboardFirstByte(b *testing.B) {
	db := bigDashboardDB(b, 10000, 10)
	h := &harness{db: db, e: env{anyGap: true, guardHooks: guardHooks{Resolver: noDNS}}, clk: newFakeClock()}
	h.e.now = h.clk.Now
	st, err := store.Open(context.Background(), db, store.CreateIfMissing)
	require.NoError(b, err)
	defer st.Close()
	o := options{db: db, userAgent: defaultUserAgent, timeout: time.Second, parallel: 4, checkRate: 10, checkBurst: 3}
	m, err := newMonitor(st, o, h.e)
	require.NoError(b, err)
	s, err := newServer(m, io.Discard)
	require.NoError(b, err)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	client := srv.Client()

	for _, target := range []string{"/", "/?outcome=blocked", "/?host=https%3A%2F%2Fh042.example&page=2", "/?page=150"} {
		b.Run(target, func(b *testing.B) {
			var ttfb time.Duration
			n := 0
			for b.Loop() {
				var start, first time.Time
				trace := &httptrace.ClientTrace{
					WroteRequest:         func(httptrace.WroteRequestInfo) { start = time.Now() },
					GotFirstResponseByte: func() { first = time.Now() },
				}
				req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", srv.URL+target, nil)
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("%s: %d", target, resp.StatusCode)
				}
				ttfb += first.Sub(start)
				n++
			}
			b.ReportMetric(float64(ttfb.Microseconds())/1000/float64(n), "ms-first-byte")
		})
	}
}
