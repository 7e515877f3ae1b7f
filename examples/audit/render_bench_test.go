package main

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/internal/testsite"
)

// BenchmarkRenderedPass20 renders 20 shop pages (each with a stylesheet, a script that writes the page
// and a product photo, like the demo's) at -gap 0 -concurrency 4: one op is a whole run, crawl and
// rendered pass, browser start and shutdown included. Reported besides time: the peak resident memory
// of this process plus every browser process (sampled every 20 ms), and the requests per rendered page
// that reached the site.
//
//	go test -run '^$' -bench RenderedPass20 -benchtime 3x ./examples/audit/
func BenchmarkRenderedPass20(b *testing.B) {
	requireBrowser(b)
	tmp, err := os.MkdirTemp("", "rb") // short: Chromium puts a socket under $TMPDIR
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	b.Setenv("TMPDIR", tmp)

	n := testsite.NewNetwork(b, testsite.Loopback)
	s := n.Add("shop.test")
	s.Robots("User-agent: *\nDisallow: /basket/\n")
	s.Route("/assets/shop.css", testsite.Response{ContentType: "text/css", Body: strings.Repeat("p { margin: 0 }\n", 200)})
	s.Route("/assets/shop.js", script(strings.Repeat("// shop\n", 500)+`document.querySelector("main").insertAdjacentHTML("beforeend", "<p>In stock</p>");`))
	var links strings.Builder
	for i := range 19 {
		p := fmt.Sprintf("/products/item-%02d", i)
		links.WriteString(`<a href="` + p + `">Item</a> `)
		s.HTML(p, benchPage(fmt.Sprintf("Item %d", i)))
	}
	s.HTML("/", benchPage("Home")[:len(benchPage("Home"))-len("</body></html>")]+links.String()+"</body></html>")
	args := append(resolveArgs(n), "-quiet", "-gap", "0", "-concurrency", "4", "-render", "20", "http://shop.test/")

	var peak, peakPSS atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			rss, pss := treeMemory(tmp)
			peak.Store(max(peak.Load(), rss))
			peakPSS.Store(max(peakPSS.Load(), pss))
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	var siteReqs, pages int
	b.ResetTimer()
	for range b.N {
		before := len(paths(s.Requests(), browserUA))
		dbPath := filepath.Join(b.TempDir(), "audit.db")
		var out, errb bytes.Buffer
		if code := runEnv(b.Context(), append([]string{"-db", dbPath}, args...), &out, &errb, crawl.Env{}); code != crawl.ExitOK {
			b.Fatalf("exit %d\n%s%s", code, &out, &errb)
		}
		siteReqs += len(paths(s.Requests(), browserUA)) - before
		db, err := sql.Open("sqlite", dbPath)
		if err != nil {
			b.Fatal(err)
		}
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM render_pages WHERE error IS NULL`).Scan(&n); err != nil {
			b.Fatal(err)
		}
		db.Close()
		pages += n
	}
	b.StopTimer()
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(float64(peakPSS.Load())/(1<<20), "peak-PSS-MiB")
	b.ReportMetric(float64(siteReqs)/float64(pages), "site-requests/page")
	b.ReportMetric(float64(pages)/float64(b.N), "pages/op")
}

func benchPage(title string) string {
	return fmt.Sprintf(`<!doctype html><html><head><title>%s | Shop</title><meta name="description" content="%s, from the shop.">`+
		`<link rel="stylesheet" href="/assets/shop.css"></head><body><nav><a href="/">Home</a></nav><main><h1>%s</h1>`+
		`<img src="/assets/photo.jpg" alt=""><p>%s</p></main><script src="/assets/shop.js"></script></body></html>`,
		title, title, title, strings.Repeat("Words about the product. ", 50))
}

// treeMemory is the resident memory, in bytes, of this process plus every process whose command line
// mentions dir (the browser and its children carry their profile under it): the sum of their RSS (an
// upper bound: pages shared between the browser's processes count once per process) and of their PSS
// (shared pages split between the processes sharing them).
func treeMemory(dir string) (rss, pss int64) {
	r, p := memOf("self")
	rss, pss = r, p
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmd, []byte(dir)) {
			r, p := memOf(e.Name())
			rss, pss = rss+r, pss+p
		}
	}
	return rss, pss
}

func memOf(pid string) (rss, pss int64) {
	st, err := os.ReadFile(filepath.Join("/proc", pid, "smaps_rollup"))
	if err != nil {
		return 0, 0
	}
	kb := func(v string) int64 {
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		return n << 10
	}
	for line := range strings.SplitSeq(string(st), "\n") {
		if v, ok := strings.CutPrefix(line, "Rss:"); ok {
			rss = kb(v)
		}
		if v, ok := strings.CutPrefix(line, "Pss:"); ok {
			pss = kb(v)
		}
	}
	return rss, pss
}
