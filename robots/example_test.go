package robots_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"

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

// A crawler whose User-Agent gained a new token keeps obeying the groups
// site owners wrote for its old one: Crawl Cove's page promises "the app
// will keep accepting the old token, so rules you write now keep working".
func ExampleRules_AllowedAs() {
	rules := robots.Parse([]byte(`
User-agent: *
Disallow: /

User-agent: CrawlCove-Crawler
Disallow: /basket/
`))
	ua := "Mozilla/5.0 (compatible; CrawlCove/2.0; +https://crawlcove.example/bot)"
	tokens := robots.Tokens(ua, "CrawlCove-Crawler") // [CrawlCove CrawlCove-Crawler]
	for _, u := range []string{"https://shop.example/products/7", "https://shop.example/basket/42"} {
		fmt.Println(u, rules.AllowedAs(tokens, u), rules.ExplainAs(tokens, u).Token)
	}
	// With the new token alone, no group names it: the `*` group applies.
	fmt.Println(rules.Allowed(robots.ProductToken(ua), "https://shop.example/products/7"))
	// Output:
	// https://shop.example/products/7 true CrawlCove-Crawler
	// https://shop.example/basket/42 false CrawlCove-Crawler
	// false
}

func ExampleTokens() {
	fmt.Println(robots.Tokens("Mozilla/5.0 (compatible; CrawlCove/2.0; +https://crawlcove.example/bot)", "CrawlCove-Crawler"))
	fmt.Println(robots.Tokens("Mozilla/5.0 (compatible; 2-UAcomBot/1.0; +https://2-ua.com/support/robots)", "2-UAcomBot"))
	fmt.Println(robots.Tokens("Googlebot-Image/1.0", "Googlebot"))
	// Output:
	// [CrawlCove CrawlCove-Crawler]
	// [2-UAcomBot]
	// [Googlebot-Image Googlebot]
}

// Several processes share one Store that is also a Locker (here a
// MemoryStore; across machines, one on Redis or in a database). However
// many start at once, the site sees one robots.txt request.
func ExampleLocker() {
	var requests atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			requests.Add(1)
		}
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
	}))
	defer site.Close()

	shared := &robots.MemoryStore{} // implements robots.Store and robots.Locker
	var wg sync.WaitGroup
	for range 5 { // five "processes", each with its own Cache
		cache := &robots.Cache{Client: site.Client(), Store: shared}
		wg.Go(func() {
			if _, err := cache.Check(context.Background(), "ExampleBot", site.URL+"/private/x"); err != nil {
				fmt.Println(err)
			}
		})
	}
	wg.Wait()
	fmt.Println("robots.txt requests:", requests.Load())
	// Output:
	// robots.txt requests: 1
}

// Decision events go to a *slog.Logger: robots.fetch (Info) for each
// robots.txt fetched, robots.decision (Debug) for each check.
func ExampleCache_logger() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: CrawlCove-Crawler\nDisallow: /basket/\n")
	}))
	defer site.Close()
	handler := slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			switch a.Key {
			case slog.TimeKey, "expires": // vary from run to run
				return slog.Attr{}
			case "url", "robots_url":
				return slog.String(a.Key, strings.TrimPrefix(a.Value.String(), site.URL))
			}
			return a
		},
	})
	cache := &robots.Cache{Client: site.Client(), Logger: slog.New(handler)}
	_, _ = cache.CheckAs(context.Background(), []string{"CrawlCove", "CrawlCove-Crawler"}, site.URL+"/basket/42")
	// Output:
	// level=INFO msg=robots.fetch robots_url=/robots.txt status=200 outcome=rules
	// level=DEBUG msg=robots.decision url=/basket/42 outcome=disallowed token=CrawlCove-Crawler rule="Disallow: /basket/" line=2
}
