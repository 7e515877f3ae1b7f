package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/store"
)

// cpuTime is the process's CPU time so far (user + system): on a shared, loaded machine the wall time
// of a request is mostly waiting for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fillDB writes a crawl of n pages straight into a new database through store's writer, as a crawl
// does: one in ten a 404 with a broken_link finding, each page with a title and a timing.
func fillDB(b *testing.B, n int) string {
	b.Helper()
	db := filepath.Join(b.TempDir(), "big.db")
	ctx := context.Background()
	st, err := store.OpenStore(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	if err := st.BeginCrawl(ctx, store.CrawlInfo{StartURL: "https://shop.example/", UserAgent: "CrawlCove-Crawler", Token: "CrawlCove-Crawler",
		Started: time.Now(), Settings: store.Settings{MaxPages: n}}); err != nil {
		b.Fatal(err)
	}
	var fs []store.FindingRecord
	for i := range n {
		p := &store.PageRecord{URL: fmt.Sprintf("https://shop.example/p/%07d", i), Status: 200, Depth: 1 + i%5, Source: "link",
			ContentType: "text/html", Response: time.Duration(i%900) * time.Millisecond, Title: fmt.Sprintf("Product %d | Shop", i),
			Parsed: true, TitleCount: 1, FetchedAt: time.Now()}
		if i%10 == 0 {
			p.Status = 404
			fs = append(fs, store.FindingRecord{URL: p.URL, Kind: "broken_link", Detail: "HTTP 404; linked from 1 page: /"})
		}
		p.FinalURL = p.URL
		st.Page(p)
	}
	if err := st.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := st.WriteFindings(ctx, fs); err != nil {
		b.Fatal(err)
	}
	if err := st.FinishCrawl(ctx, store.CrawlEnd{Outcome: "finished", Finished: time.Now(), Pages: n}); err != nil {
		b.Fatal(err)
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	return db
}

// BenchmarkURLTableFirstByte measures the time to the first byte of the explore view's URL table of a
// 100,000-page crawl, served as `audit app` serves it (loopback, behind the Guard): ms/first-byte is the
// figure (target < 100 ms), for the default order and the other sorts, a kind's tab and a search.
func BenchmarkURLTableFirstByte(b *testing.B) {
	const n = 100_000
	db := fillDB(b, n)
	s := serveDB(b, db)
	c := s.client(b)
	for _, bc := range []struct{ name, query string }{
		{"all-by-url", ""},
		{"all-by-url-page-500", "?offset=50000"},
		{"all-by-status-desc", "?sort=status&desc=1"},
		{"all-by-response", "?sort=response"},
		{"links-tab", "?cat=Links"},
		{"broken_link-in-links-tab", "?cat=Links&kind=broken_link"},
		{"search-title", "?q=Product+4242"},
		{"search-url", "?q=p%2F00123"},
		{"search-every-page", "?q=Product"},
		{"search-two-letters", "?q=42"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var first time.Duration
			cpu0 := cpuTime()
			for b.Loop() {
				start := time.Now()
				resp, err := c.Get(s.base + "/crawls/1" + bc.query)
				if err != nil {
					b.Fatal(err)
				}
				var one [1]byte
				if _, err := io.ReadFull(resp.Body, one[:]); err != nil {
					b.Fatal(err)
				}
				first += time.Since(start)
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("HTTP %d", resp.StatusCode)
				}
			}
			b.ReportMetric(float64(first.Microseconds())/1000/float64(b.N), "ms/first-byte")
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}
