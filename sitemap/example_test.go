package sitemap_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/sitemap"
)

func ExampleReader() {
	doc := `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <url>
    <loc>https://example.com/en/</loc>
    <lastmod>2024-05-01T10:00:00+02:00</lastmod>
    <xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/"/>
  </url>
  <url><loc>/relative</loc></url>
  <url><loc>https://other.example/</loc></url>
  <url><loc>https://example.com/en/</loc></url>
</urlset>`
	r := sitemap.NewReader(strings.NewReader(doc), "https://example.com/sitemap.xml")
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(e.URL, e.LastMod, e.Alternates)
	}
	fmt.Println(r.Kind(), r.Count(), "returned,", r.Skipped().Total(), "skipped:", r.Skipped())
	// Output:
	// https://example.com/en/ 2024-05-01 08:00:00 +0000 UTC [{de https://example.com/de/}]
	// urlset 1 returned, 3 skipped: relative=1 out-of-scope=1 duplicate=1
}

func ExampleExpander() {
	// A site whose robots.txt names a sitemap index.
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var robotsRequests atomic.Int32
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		robotsRequests.Add(1)
		fmt.Fprintf(w, "User-agent: *\nDisallow: /private/\nSitemap: %s/sitemap_index.xml\n", srv.URL)
	})
	mux.HandleFunc("/sitemap_index.xml", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<sitemapindex><sitemap><loc>%[1]s/posts.xml</loc></sitemap><sitemap><loc>%[1]s/gone.xml</loc></sitemap></sitemapindex>`, srv.URL)
	})
	mux.HandleFunc("/posts.xml", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<urlset><url><loc>%[1]s/posts/1</loc></url><url><loc>%[1]s/posts/2</loc></url></urlset>`, srv.URL)
	})

	ctx := context.Background()
	client := &fetch.Client{UserAgent: "ExampleBot/1.0 (+https://example.com/bot)", MaxBodyBytes: sitemap.DefaultMaxBytes}
	// The client's own robots cache serves its checks and the list of
	// sitemaps, so robots.txt is fetched once.
	roots, err := client.RobotsCache().Sitemaps(ctx, srv.URL+"/")
	if err != nil {
		log.Fatal(err)
	}

	e := &sitemap.Expander{Fetcher: client}
	reports, err := e.Expand(ctx, roots, func(p sitemap.Entry, from sitemap.Source) error {
		fmt.Println("page", strings.TrimPrefix(p.URL, srv.URL), "from", strings.TrimPrefix(from.Sitemap, srv.URL))
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range reports {
		fmt.Println(strings.TrimPrefix(r.URL, srv.URL), r.Level, r.Status, r.Kind, r.Entries, r.Err != nil)
	}
	fmt.Println("robots.txt requests:", robotsRequests.Load())
	// Output:
	// page /posts/1 from /posts.xml
	// page /posts/2 from /posts.xml
	// /sitemap_index.xml 0 200 sitemapindex 2 false
	// /posts.xml 1 200 urlset 2 false
	// /gone.xml 1 404 unknown 0 true
	// robots.txt requests: 1
}
