package frontier_test

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/internal/testsite"
)

// cleanups stands in for the *testing.T a test would give testsite.
type cleanups []func()

func (c *cleanups) Cleanup(f func()) { *c = append(*c, f) }
func (c cleanups) run() {
	for _, f := range slices.Backward(c) {
		f()
	}
}

// Example is a complete polite crawler: the audit crawler's defaults
// (500 pages, depth 5, 4 requests in flight, 300 ms between request
// starts, the 429 slowdown), robots.txt fetched once and obeyed before a
// URL is queued and before every request and redirect hop, and every
// request — robots.txt included — through one gate. Config.Client wires
// the client in one step.
func Example() {
	var t cleanups
	defer t.run()
	site := testsite.New(&t) // a loopback site: robots.txt, three pages, an external link
	site.Robots("User-agent: *\nDisallow: /private/\n")
	site.HTML("/", `<a href="/a">A</a> <a href="/b">B</a> <a href="https://elsewhere.example/">elsewhere</a>`)
	site.HTML("/a", `<a href="/private/x">secret</a> <a href="/b#top">B again</a>`)
	site.HTML("/b", `<a href="/a/../">home</a>`)

	client := &fetch.Client{UserAgent: "CrawlCove-Crawler"}
	cfg := frontier.DefaultConfig()
	cfg.Client = client // the frontier becomes the client's gate; one robots.txt cache, one slowdown
	f, err := frontier.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	f.Add(ctx, site.URL()+"/", 0, "") // the start URL: its host and www twin are the scope
	for {                             // run this loop in up to cfg.MaxInFlight goroutines
		it, err := f.Next(ctx) // blocks until a request to it may start
		if err != nil {
			break // frontier.ErrComplete, or ctx ended
		}
		res, err := client.Get(ctx, it.URL) // robots.txt per hop, retries, body cap
		if err == nil {
			fmt.Println("GET", it.URL[len(site.URL()):], res.Status)
			for _, link := range links(res) {
				r := f.Add(ctx, link, it.Depth+1, it.URL) // disallowed, external, seen: not queued
				fmt.Printf("  %s: %s\n", strings.TrimPrefix(link, site.URL()), r.Outcome)
			}
		}
		f.Done(it, err)
	}
	st := f.Stats()
	fmt.Println("requests:", st.Requests, "done:", st.Done, "blocked:", st.Blocked)
	fmt.Println("server saw:", site.Paths())
	// Output:
	// GET / 200
	//   /a: queued
	//   /b: queued
	//   https://elsewhere.example/: out of scope
	// GET /a 200
	//   /private/x: disallowed
	//   /b: duplicate
	// GET /b 200
	//   /: duplicate
	// requests: 4 done: 3 blocked: 1
	// server saw: [/robots.txt / /a /b]
}

// links returns the absolute links of a fetched HTML page.
func links(res *fetch.Result) []string {
	p, err := res.Page() // fetch/page: links resolved against <base href> and the final URL
	if err != nil {
		return nil // not HTML, no body
	}
	var out []string
	for _, l := range p.Links {
		out = append(out, l.URL)
	}
	return out
}
