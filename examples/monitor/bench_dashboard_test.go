package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/monitor/internal/store"
)

// bigDashboardDB writes a database of pages tracked pages on 100 hosts with
// perPage snapshots each (visible text stored, one in ten a 304, one page in
// twenty blocked, one in ten changed once) in the store's layout.
func bigDashboardDB(tb testing.TB, pages, perPage int) string {
	db := filepath.Join(tb.TempDir(), "big.db")
	require.NoError(tb, store.Synthesize(context.Background(), db, store.SynthConfig{
		Pages: pages, Hosts: 100, PerPage: perPage, HostFormat: "https://h%03d.example", PathFormat: "/page/%05d",
		ChangedEvery: 10, BlockedEvery: 20, Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}))
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
