package robots

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/temoto/robotstxt"
)

// The benchmarks run this package and temoto/robotstxt side by side on the
// same generated file; compare with benchstat (see the package notes).

var benchURLs = []string{
	"https://www.example.com/products/item-42/reviews?page=3&sort=price",
	"https://www.example.com/search/help/shipping",
	"https://www.example.com/catalog/archive/tag/category-1203/listing?color=red",
	"https://www.example.com/blog/2026/11/polite-crawling.html",
	"https://www.example.com/media/brochure.pdf",
	"https://www.example.com/",
}

// temoto's Test takes a path, so it is given the path and query.
var benchPaths = []string{
	"/products/item-42/reviews?page=3&sort=price",
	"/search/help/shipping",
	"/catalog/archive/tag/category-1203/listing?color=red",
	"/blog/2026/11/polite-crawling.html",
	"/media/brochure.pdf",
	"/",
}

func BenchmarkParse(b *testing.B) {
	body := []byte(realisticRobots(1))
	b.Run("impl=polite", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			Parse(body)
		}
	})
	b.Run("impl=temoto", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := robotstxt.FromBytes(body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkAllowed(b *testing.B) {
	body := []byte(realisticRobots(1))
	r := Parse(body)
	t, err := robotstxt.FromBytes(body)
	if err != nil {
		b.Fatal(err)
	}
	// One token with its own group, one that falls back to `*`.
	for _, agent := range []string{"Googlebot", "CrawlCove-Crawler"} {
		b.Run("impl=polite/agent="+agent, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r.Allowed(agent, benchURLs[i%len(benchURLs)])
				i++
			}
		})
		b.Run("impl=temoto/agent="+agent, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				t.FindGroup(agent).Test(benchPaths[i%len(benchPaths)])
				i++
			}
		})
	}
}

// BenchmarkCacheCheckHit is the per-URL cost a crawler pays once robots.txt
// is cached, with every goroutine checking URLs of the same few hosts:
// without a Logger, with one whose handler is not enabled for Debug (the
// cost must stay zero allocations), and with decision events written as
// JSON lines (to io.Discard).
func BenchmarkCacheCheckHit(b *testing.B) {
	body := realisticRobots(1)
	var urls []string
	var hosts []string
	for range 8 {
		s := newSiteB(b, body)
		hosts = append(hosts, s)
		for _, u := range benchURLs {
			urls = append(urls, s+u[len("https://www.example.com"):])
		}
	}
	for _, lc := range []struct {
		name   string
		logger *slog.Logger
	}{
		{"none", nil},
		{"disabled", slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))},
		{"debug", slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug}))},
	} {
		b.Run("logger="+lc.name, func(b *testing.B) {
			c := &Cache{Logger: lc.logger}
			for _, h := range hosts {
				if _, err := c.Check(b.Context(), "Googlebot", h+"/"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					if _, err := c.Check(context.Background(), "Googlebot", urls[i%len(urls)]); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		})
	}
}

func newSiteB(b *testing.B, body string) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, body)
	}))
	b.Cleanup(s.Close)
	return s.URL
}
