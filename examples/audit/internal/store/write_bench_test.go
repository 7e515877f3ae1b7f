package store

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/benchshop"
	"github.com/politecrawl/polite/frontier"
)

// shopRecord is page i of an n-page generated shop (bench/scale.sh's) as the crawl records it: the
// page's fields and its 60 links, read from the page as the shop serves it.
func shopRecord(tb testing.TB, shop http.Handler, i int) *PageRecord {
	const origin = "http://127.0.0.1:8080"
	path := "/"
	if i > 0 {
		path = "/p/" + strconv.Itoa(i)
	}
	w := httptest.NewRecorder()
	shop.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
	body := w.Body.String()
	u := origin + path
	p := &PageRecord{URL: u, FinalURL: u, Status: 200, Depth: i % 4, FoundOn: origin + "/", Source: "link",
		ContentType: "text/html; charset=utf-8", Response: 900 * time.Microsecond, TTFB: 400 * time.Microsecond,
		Bytes: len(body), Attempts: 1, Title: "Product " + strconv.Itoa(i) + " | Generated Shop", TitleCount: 1,
		Description:      "Product " + strconv.Itoa(i) + " of the generated shop, in stock and shipped in two days.",
		DescriptionCount: 1, Canonical: u, H1: "Product " + strconv.Itoa(i), H1Count: 1, WordCount: 3000,
		FetchedAt: time.Date(2026, 12, 2, 5, 0, 0, i, time.UTC), Parsed: true, Lang: "en",
		TextHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", Fingerprint: make([]byte, 128)}
	// The shop writes its links as <a href="...">text</a> and nothing else as <a.
	for rest := body; ; {
		_, after, ok := strings.Cut(rest, `<a href="`)
		if !ok {
			break
		}
		href, after, _ := strings.Cut(after, `">`)
		text, after, _ := strings.Cut(after, `</a>`)
		p.Links = append(p.Links, LinkRecord{From: u, To: origin + href, Anchor: text, Tag: "a"})
		rest = after
	}
	p.Internal = len(p.Links)
	if len(p.Links) != benchshop.LinksPerPage {
		tb.Fatalf("page %s has %d links, want %d", u, len(p.Links), benchshop.LinksPerPage)
	}
	return p
}

// BenchmarkWritePage is the writer's cost per crawled page: a generated shop page's row with its 60 links,
// the queue rows of the pages it finds first and its acknowledgement, through the real writer onto a file,
// with at most backlog pages waiting to be written as the crawl bounds them (crawl.WriteBacklog × the
// default -concurrency 16). The Flush at the end (ANALYZE, and what else ends the crawl's writes) counts.
func BenchmarkWritePage(b *testing.B) {
	const backlog = 4 * 16
	shop := benchshop.Handler(max(b.N, 100))
	st, err := OpenStore(b.Context(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.BeginCrawl(b.Context(), CrawlInfo{StartURL: "http://127.0.0.1:8080/", UserAgent: "bench", Token: "bench", Started: time.Now(), Settings: struct{}{}}); err != nil {
		b.Fatal(err)
	}
	q := NewSQLiteQueue(st, time.Now)
	pushed := map[string]bool{}
	waiting := make(chan struct{}, backlog)
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for i := range b.N {
		p := shopRecord(b, shop, i) // made here, so that memory stays flat at any b.N (BenchmarkShopRecord is its cost)
		waiting <- struct{}{}
		for _, l := range p.Links {
			if !pushed[l.To] {
				pushed[l.To] = true
				if err := q.Push(frontier.Item{URL: l.To, Host: "127.0.0.1:8080", Depth: p.Depth + 1, From: p.URL}); err != nil {
					b.Fatal(err)
				}
			}
		}
		st.Page(p)
		if err := q.Ack(frontier.Item{URL: p.URL, Host: "127.0.0.1:8080"}, nil); err != nil {
			b.Fatal(err)
		}
		st.AfterCommit(func() { <-waiting })
	}
	if err := st.Flush(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(st.IndexTime().Seconds()*1000, "index-ms")
	// The machine is shared: wall time per page is mostly waiting for a CPU, CPU time is what to compare.
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkShopRecord is the cost of making a page's record in BenchmarkWritePage, included in its figures.
func BenchmarkShopRecord(b *testing.B) {
	shop := benchshop.Handler(max(b.N, 100))
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	for i := range b.N {
		shopRecord(b, shop, i)
	}
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the user+system CPU time the process has used so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
