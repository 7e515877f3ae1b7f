package robots_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/politecrawl/polite/robots"
)

func Example() {
	rules := robots.Parse([]byte(`
User-agent: *
Disallow: /

User-agent: 2-UAcomBot
Disallow: /
Allow: /blog/
`))
	token := robots.ProductToken("Mozilla/5.0 (compatible; 2-UAcomBot/1.0; +https://2-ua.com/support/robots)")
	for _, u := range []string{"https://example.com/blog/hello", "https://example.com/shop"} {
		fmt.Println(u, rules.Explain(token, u))
	}
	fmt.Println(rules.Allowed("CrawlCove-Crawler", "https://example.com/blog/hello"))
	// Output:
	// https://example.com/blog/hello allowed by "Allow: /blog/" (line 7, user-agent 2-UAcomBot)
	// https://example.com/shop disallowed by "Disallow: /" (line 6, user-agent 2-UAcomBot)
	// false
}

func ExampleCache() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: CrawlCove-Crawler\nDisallow: /basket/\n")
	}))
	defer site.Close()

	// One Cache for the whole crawl; its Client should be the crawler's own.
	cache := &robots.Cache{Client: site.Client()}
	for _, path := range []string{"/basket/42", "/products/7"} {
		v, err := cache.Check(context.Background(), "CrawlCove-Crawler", site.URL+path)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(path, v.Outcome, v.Decision)
	}
	// Output:
	// /basket/42 disallowed disallowed by "Disallow: /basket/" (line 2, user-agent CrawlCove-Crawler)
	// /products/7 allowed allowed: no rule matches (user-agent CrawlCove-Crawler)
}
