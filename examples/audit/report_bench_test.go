package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/politecrawl/polite/internal/testsite"
)

func responseStatus(code int) testsite.Response { return testsite.Response{Status: code} }

func contextWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	return ctx, cancel
}

// generatedCrawl writes an n-page crawl into the database at path with the real store code and the real
// analysis, without a network: 20 links per page, one page in 10 a 404, one in 13 a redirect, one in 50
// blocked by robots.txt, three in four without a meta description, half of them in a sitemap (plus 5%
// more sitemap URLs the page limit left out).
func generatedCrawl(tb testing.TB, path string, n int) {
	tb.Helper()
	ctx := context.Background()
	st, err := store.OpenStore(ctx, path)
	if err != nil {
		tb.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cfg := &crawl.Config{MaxPages: n, MaxDepth: 5, Concurrency: 16, Timeout: 15 * time.Second}
	base := "http://shop.test"
	if err := st.BeginCrawl(ctx, store.CrawlInfo{StartURL: base + "/", UserAgent: crawl.DefaultUserAgent, Token: crawl.DefaultUserAgent,
		Started: t0, Settings: cfg.Settings()}); err != nil {
		tb.Fatal(err)
	}
	urlOf := func(i int) string {
		if i == 0 {
			return base + "/"
		}
		return fmt.Sprintf("%s/p%d", base, i)
	}
	var listed [][2]string
	sm := base + "/sitemap.xml"
	for i := range n {
		u := urlOf(i)
		depth := 0
		if i > 0 {
			depth = 1 + i%5
		}
		p := &store.PageRecord{URL: u, FinalURL: u, Status: 200, Depth: depth, Source: "link", FoundOn: base + "/",
			ContentType: "text/html; charset=utf-8", Response: time.Duration(3+i%700) * time.Millisecond,
			TTFB: time.Duration(2+i%500) * time.Millisecond, Bytes: 6000 + i%3000, Attempts: 1, Parsed: true,
			Title: fmt.Sprintf("Product %d | Generated Shop", i), TitleCount: 1, H1: fmt.Sprintf("Product %d", i), H1Count: 1,
			WordCount: 300 + i%200, FetchedAt: t0.Add(time.Duration(i) * 3 * time.Millisecond)}
		if i == 0 {
			p.Source, p.FoundOn = "start", ""
		}
		if i%4 == 0 {
			p.Description, p.DescriptionCount = fmt.Sprintf("Description of product %d.", i), 1
		}
		switch {
		case i > 0 && i%50 == 49:
			p = &store.PageRecord{URL: u, Depth: depth, Source: "link", FoundOn: base + "/", Blocked: true,
				RobotsRule: `disallowed by "Disallow: /cart/" (line 2, user-agent *)`}
		case i > 0 && i%10 == 9:
			p.Status, p.Parsed, p.Title, p.TitleCount, p.H1, p.H1Count = 404, false, "", 0, "", 0
		case i > 0 && i%13 == 12:
			to := urlOf((i + 1) % n)
			p.Redirects = []store.HopRecord{{URL: u, Status: 301, Location: to}}
			p.FinalURL, p.Attempts = to, 2
		}
		if p.Parsed {
			for j := range 20 {
				l := store.LinkRecord{From: u, To: urlOf((i*7 + j*13 + 1) % n), Anchor: fmt.Sprintf("Related product %d", j), Tag: "a"}
				p.Links = append(p.Links, l)
				p.Internal++
			}
			if i%25 == 0 {
				p.Links = append(p.Links, store.LinkRecord{From: u, To: "https://partner.example/", External: true, Anchor: "Partner", Tag: "a"})
				p.External++
			}
		}
		if i%2 == 0 {
			listed = append(listed, [2]string{sm, u})
		}
		st.Page(p)
	}
	for i := n; i < n+n/20; i++ {
		listed = append(listed, [2]string{sm, urlOf(i)})
	}
	smRec := store.SitemapRecord{URL: sm, Level: 0, Status: 200, Kind: "urlset", Entries: len(listed)}
	st.Sitemap(smRec)
	for _, l := range listed {
		st.SitemapURL(l[0], l[1])
	}
	if err := st.Flush(); err != nil {
		tb.Fatal(err)
	}
	notCrawled := listed[len(listed)-n/20:]
	if _, err := findings.Run(ctx, st, findings.Extra{NotCrawled: notCrawled}); err != nil {
		tb.Fatal(err)
	}
	if err := st.FinishCrawl(ctx, store.CrawlEnd{Finished: t0.Add(time.Duration(n) * 3 * time.Millisecond), Outcome: "finished",
		Pages: n, Requests: n + n/13 + 4}); err != nil {
		tb.Fatal(err)
	}
	if err := st.Close(); err != nil {
		tb.Fatal(err)
	}
}

// auditedPage is page i of an n-page generated site with the problems audits find on real sites: three
// pages in four without a meta description, one in eleven with two h1, one in seventeen with a long
// title, and among its 20 internal links a 404 (one page in ten), a redirect (one in thirteen) and a
// robots-disallowed URL (one in fifty).
func auditedPage(i, n int) string {
	var b strings.Builder
	title := fmt.Sprintf("Product %d | Generated Shop", i)
	if i%17 == 0 {
		title += " | The longest product title of the whole shop, too long"
	}
	fmt.Fprintf(&b, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>%s</title>`, title)
	if i%4 == 0 {
		fmt.Fprintf(&b, `<meta name="description" content="Description of product %d.">`, i)
	}
	fmt.Fprintf(&b, `<link rel="canonical" href="/p%d"></head><body><nav><a href="/">Home</a></nav><h1>Product %d</h1>`, i, i)
	if i%11 == 0 {
		b.WriteString("<h1>Also see</h1>")
	}
	for j := range 20 {
		href := fmt.Sprintf("/p%d", (i*7+j*13+1)%n)
		switch {
		case j == 0 && i%10 == 0:
			href = fmt.Sprintf("/missing%d", i)
		case j == 1 && i%13 == 0:
			href = fmt.Sprintf("/old%d", i)
		case j == 2 && i%50 == 0:
			href = fmt.Sprintf("/cart/%d", i)
		}
		fmt.Fprintf(&b, `<a href="%s">Related product %d</a> `, href, j)
	}
	b.WriteString(`<a href="https://partner.example/">Partner</a><main>`)
	for range 40 {
		b.WriteString("<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore.</p>")
	}
	b.WriteString("</main></body></html>")
	return b.String()
}

// auditedSite serves the n-page site of auditedPage with its robots.txt and a sitemap of every page.
func auditedSite(n int) http.Handler {
	pages := make(map[string]string, n+1)
	links := make([]string, 0, 50)
	var sm strings.Builder
	sm.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i := range n {
		pages[fmt.Sprintf("/p%d", i)] = auditedPage(i, n)
		fmt.Fprintf(&sm, "<url><loc>http://shop.test/p%d</loc></url>", i)
		if i < 50 {
			links = append(links, fmt.Sprintf(`<a href="/p%d">%d</a>`, i, i))
		}
	}
	sm.WriteString("</urlset>")
	pages["/"] = "<!doctype html><title>Generated Shop</title><meta name=description content=\"A shop.\"><h1>Shop</h1>" + strings.Join(links, " ")
	sitemap := sm.String()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case p == "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "User-agent: *\nDisallow: /cart/\nSitemap: http://shop.test/sitemap.xml\n")
			return
		case p == "/sitemap.xml":
			w.Header().Set("Content-Type", "application/xml")
			io.WriteString(w, sitemap)
			return
		case strings.HasPrefix(p, "/old"):
			http.Redirect(w, r, "/p"+strings.TrimPrefix(p, "/old"), http.StatusMovedPermanently)
			return
		}
		body, ok := pages[p]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, body)
	})
}

// crawlAuditedSite crawls the generated site of n pages (-gap 0 -concurrency 16 -max-pages n) into db.
func crawlAuditedSite(tb testing.TB, db string, n int) {
	tb.Helper()
	netw := testsite.NewNetwork(tb, testsite.Loopback)
	s := netw.Add("shop.test")
	h := auditedSite(n)
	s.NotFound(h.ServeHTTP)
	e := crawl.Env{Transport: netw.Transport(), Terminal: func(io.Writer) bool { return false }}
	var out, errb bytes.Buffer
	code := runEnv(context.Background(), []string{"-db", db, "-gap", "0", "-concurrency", "16", "-max-pages", fmt.Sprint(n),
		"-max-depth", "10", "-no-report", "-quiet", "http://shop.test/"}, &out, &errb, e)
	if code != crawl.ExitOK {
		tb.Fatalf("crawl exit %d: %s", code, errb.String())
	}
}

// benchCrawls caches the crawls the benchmarks read, by size, across -count runs (a 10,000-page crawl
// takes seconds); TestMain removes them.
var benchCrawls struct {
	sync.Mutex
	dir string
	db  map[int]string
}

func benchCrawl(b *testing.B, n int) string {
	benchCrawls.Lock()
	defer benchCrawls.Unlock()
	if db, ok := benchCrawls.db[n]; ok {
		return db
	}
	if benchCrawls.dir == "" {
		dir, err := os.MkdirTemp("", "audit-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchCrawls.dir, benchCrawls.db = dir, map[int]string{}
	}
	db := filepath.Join(benchCrawls.dir, fmt.Sprintf("crawl%d.db", n))
	crawlAuditedSite(b, db, n)
	benchCrawls.db[n] = db
	return db
}

// BenchmarkReport measures `audit report` (HTML) on real crawls of the generated site of 500 and 10,000
// pages: time per report (ns/op) and the file's size.
//
//	go test -run '^$' -bench BenchmarkReport -benchtime 10x -count 6 ./examples/audit
func BenchmarkReport(b *testing.B) {
	for _, n := range []int{500, 10_000} {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			db := benchCrawl(b, n)
			out := filepath.Join(b.TempDir(), "report.html")
			b.ResetTimer()
			c0, runs := cpuTime(), 0
			for b.Loop() {
				var so, se bytes.Buffer
				if code := runEnv(context.Background(), []string{"report", "-db", db, "-o", out}, &so, &se, crawl.Env{}); code != crawl.ExitOK {
					b.Fatalf("exit %d: %s", code, se.String())
				}
				runs++
			}
			b.StopTimer()
			// CPU time too: on a shared machine the wall time (ns/op) is what the load leaves over.
			b.ReportMetric(float64((cpuTime()-c0).Milliseconds())/float64(runs), "cpu-ms/op")
			fi, err := os.Stat(out)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(fi.Size())/1e6, "MB")
		})
	}
}

// BenchmarkReportFormats measures the CSV and JSON exports of the 10,000-page crawl.
func BenchmarkReportFormats(b *testing.B) {
	dir := b.TempDir()
	db := benchCrawl(b, 10_000)
	for _, f := range []string{"csv", "json"} {
		b.Run(f, func(b *testing.B) {
			out := filepath.Join(dir, "out-"+f)
			c0, runs := cpuTime(), 0
			for b.Loop() {
				var so, se bytes.Buffer
				if code := runEnv(context.Background(), []string{"report", "-db", db, "-format", f, "-o", out}, &so, &se, crawl.Env{}); code != crawl.ExitOK {
					b.Fatalf("exit %d: %s", code, se.String())
				}
				runs++
			}
			b.ReportMetric(float64((cpuTime()-c0).Milliseconds())/float64(runs), "cpu-ms/op")
		})
	}
}
