package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/internal/testsite"
)

// generatedPage is page i of an n-page site: a realistic ~6 KB document with 20 internal links, an
// external one, and the usual head fields.
func generatedPage(i, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Product %d | Generated Shop</title>`+
		`<meta name="description" content="Description of product %d."><link rel="canonical" href="/p%d">`+
		`<link rel="stylesheet" href="/static/site.css"><script src="/static/app.js"></script></head><body>`+
		`<nav><a href="/">Home</a> <a href="/about">About</a></nav><h1>Product %d</h1>`, i, i, i, i)
	for j := range 20 {
		fmt.Fprintf(&b, `<a href="/p%d">Related product %d</a> `, (i*7+j*13+1)%n, j)
	}
	b.WriteString(`<a href="https://partner.example/">Partner</a><main>`)
	for range 40 {
		b.WriteString("<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore.</p>")
	}
	b.WriteString("</main></body></html>")
	return b.String()
}

// generatedHandler serves the n-page site, its robots.txt and a 404 for the rest.
func generatedHandler(n int) http.Handler {
	pages := make(map[string]string, n+2)
	links := make([]string, 0, n)
	for i := range n {
		pages[fmt.Sprintf("/p%d", i)] = generatedPage(i, n)
		links = append(links, fmt.Sprintf(`<a href="/p%d">%d</a>`, i, i))
	}
	pages["/"] = "<!doctype html><title>Generated Shop</title><h1>Shop</h1>" + strings.Join(links[:min(50, n)], " ")
	pages["/about"] = "<!doctype html><title>About</title><h1>About</h1>"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("User-agent: *\nDisallow: /cart/\n"))
			return
		}
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(body))
	})
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// crawl500 crawls the generated site once into a fresh database and returns wall and CPU seconds.
func crawl500(b *testing.B, e crawl.Env, db string) (wall, cpu float64) {
	var out, errb bytes.Buffer
	c0, t0 := cpuTime(), time.Now()
	code := runEnv(b.Context(), []string{"-db", db, "-gap", "0", "-concurrency", "16", "-no-report", "http://shop.test/"}, &out, &errb, e)
	wall, cpu = time.Since(t0).Seconds(), (cpuTime() - c0).Seconds()
	if code != crawl.ExitOK {
		b.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		os.Remove(f)
	}
	return wall, cpu
}

func generatedNetwork(b *testing.B) *testsite.Network {
	n := testsite.NewNetwork(b, testsite.Loopback)
	s := n.Add("shop.test")
	s.Handle("/*", generatedHandler(600).ServeHTTP)
	s.Handle("/", generatedHandler(600).ServeHTTP)
	return n
}

// BenchmarkCrawl500 crawls a generated 500-page loopback site with -gap 0 -concurrency 16 -no-report, the
// database written (the frontier's queue in it, for -resume), and reports pages/s and CPU seconds per
// 1,000 pages (the test server's CPU included: it runs in the same process).
func BenchmarkCrawl500(b *testing.B) {
	e := crawl.Env{Transport: generatedNetwork(b).Transport(), Terminal: func(io.Writer) bool { return false }}
	dir := b.TempDir()
	var wall, cpu float64
	i := 0
	for b.Loop() {
		w, c := crawl500(b, e, filepath.Join(dir, fmt.Sprintf("bench%d.db", i)))
		wall, cpu, i = wall+w, cpu+c, i+1
	}
	b.ReportMetric(float64(500*i)/wall, "pages/s")
	b.ReportMetric(cpu/float64(500*i)*1000, "cpu-s/1000pages")
}

// BenchmarkPersistedQueueCost measures what keeping the frontier's queue in the database (for -resume)
// costs: each iteration crawls the 500-page site twice, once with the queue in memory only and once
// persisted, in alternating order, so that both see the same load on a shared machine. It reports both
// rates and the persisted one's share of the in-memory one (wall and CPU).
func BenchmarkPersistedQueueCost(b *testing.B) {
	n := generatedNetwork(b)
	mem := crawl.Env{Transport: n.Transport(), Terminal: func(io.Writer) bool { return false }, MemoryQueue: true}
	per := mem
	per.MemoryQueue = false
	dir := b.TempDir()
	var wallM, cpuM, wallP, cpuP float64
	i := 0
	for b.Loop() {
		first, second := mem, per
		if i%2 == 1 {
			first, second = per, mem
		}
		w1, c1 := crawl500(b, first, filepath.Join(dir, fmt.Sprintf("a%d.db", i)))
		w2, c2 := crawl500(b, second, filepath.Join(dir, fmt.Sprintf("b%d.db", i)))
		if i%2 == 1 {
			w1, c1, w2, c2 = w2, c2, w1, c1
		}
		wallM, cpuM, wallP, cpuP, i = wallM+w1, cpuM+c1, wallP+w2, cpuP+c2, i+1
	}
	b.ReportMetric(float64(500*i)/wallM, "memory-pages/s")
	b.ReportMetric(float64(500*i)/wallP, "persisted-pages/s")
	b.ReportMetric(100*wallP/wallM, "wall-%-of-memory")
	b.ReportMetric(100*cpuP/cpuM, "cpu-%-of-memory")
}

// TestServeGeneratedSite serves the generated site for measuring the built binary from outside (peak RSS,
// CPU of the crawler alone); it runs only when AUDIT_SERVE_ADDR is set, e.g.
//
//	AUDIT_SERVE_ADDR=127.0.0.1:8765 go test -run TestServeGeneratedSite -timeout 0 ./examples/audit &
//	/usr/bin/time -v audit -db /tmp/b.db -gap 0 -concurrency 16 http://127.0.0.1:8765/
func TestServeGeneratedSite(t *testing.T) {
	addr := os.Getenv("AUDIT_SERVE_ADDR")
	if addr == "" {
		t.Skip("set AUDIT_SERVE_ADDR to serve the generated site")
	}
	ctx, stop := signal.NotifyContext(t.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Addr: addr, Handler: generatedHandler(600)}
	go func() {
		<-ctx.Done() // a manual measurement aid: stop it with Ctrl-C or kill
		srv.Close()
	}()
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		t.Fatal(err)
	}
}
