package frontier_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/internal/htmlx"
	"github.com/politecrawl/polite/internal/testsite"
	"github.com/politecrawl/polite/robots"
)

// cleanups stands in for the *testing.T a test would give testsite.
type cleanups []func()

func (c *cleanups) Cleanup(f func()) { *c = append(*c, f) }
func (c cleanups) run() {
	for _, f := range slices.Backward(c) {
		f()
	}
}

// Example crawls a small loopback site with the audit crawler's defaults:
// robots.txt is fetched (through the same gate) before the first URL is
// queued, a disallowed link is never requested, an external one is only
// reported, and every request is paced 300 ms apart.
func Example() {
	var t cleanups
	defer t.run()
	site := testsite.New(&t)
	site.Robots("User-agent: *\nDisallow: /private/\n")
	site.HTML("/", `<a href="/a">A</a> <a href="/b">B</a> <a href="https://elsewhere.example/">elsewhere</a>`)
	site.HTML("/a", `<a href="/private/x">secret</a> <a href="/b#top">B again</a>`)
	site.HTML("/b", `<a href="/a/../">home</a>`)

	const ua = "CrawlCove-Crawler"
	slowdown := &backoff.Slowdown{}
	// robots.txt requests pass the frontier's gate too (set once the
	// frontier exists), with the 15 s timeout, and a 429 on them trips the
	// same slowdown as one on a page.
	robotsTransport := &fetch.Transport{UserAgent: ua, Timeout: fetch.DefaultTimeout, Slowdown: slowdown}
	rules := &robots.Cache{Client: &http.Client{Transport: robotsTransport}}

	cfg := frontier.DefaultConfig() // 500 pages, depth 5, 4 in flight, 300 ms gap
	cfg.Robots, cfg.RobotsTokens = rules, []string{ua}
	cfg.Slowdown = slowdown
	f, err := frontier.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	robotsTransport.Gate = f
	client := &fetch.Client{UserAgent: ua, Gate: f, Robots: rules, Slowdown: slowdown}

	ctx := context.Background()
	short := func(u string) string { return strings.TrimPrefix(u, site.URL()) }
	fmt.Println(short(site.URL()+"/"), f.Add(ctx, site.URL()+"/", 0, "").Outcome)
	for {
		it, err := f.Next(ctx) // in a real crawler: several workers run this loop
		if errors.Is(err, frontier.ErrComplete) {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		res, err := client.Get(ctx, it.URL)
		if err == nil {
			fmt.Println("GET", short(it.URL), res.Status)
			base, _ := url.Parse(res.FinalURL)
			page, _ := htmlx.Parse(bytes.NewReader(res.Body), base)
			for _, l := range page.Links {
				fmt.Printf("  %s: %s\n", short(l.URL), f.Add(ctx, l.URL, it.Depth+1, it.URL).Outcome)
			}
		}
		f.Done(it, err)
	}
	st := f.Stats()
	fmt.Println("requests:", st.Requests, "done:", st.Done, "blocked:", st.Blocked)
	fmt.Println("server saw:", site.Paths())
	// Output:
	// / queued
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
