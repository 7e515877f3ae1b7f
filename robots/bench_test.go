package robots

import (
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
