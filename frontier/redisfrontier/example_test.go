package redisfrontier_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/frontier/redisfrontier"
	"github.com/politecrawl/polite/internal/htmlx"
	"github.com/politecrawl/polite/robots"
)

// Example is one worker of a fleet: run the same program on as many
// machines as you like, all pointing at one Redis, and they share the
// crawl "shops", its queue, its per-site limits and its slowdown. (It
// needs a running Redis, so it is compiled but not run by go test;
// TestCrawlOneSite runs the same wiring.)
func Example() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()

	const ua = "CrawlCove-Crawler"
	slowdown := &backoff.Slowdown{}
	robotsTransport := &fetch.Transport{UserAgent: ua, Timeout: fetch.DefaultTimeout, Slowdown: slowdown}
	rules := &robots.Cache{Client: &http.Client{Transport: robotsTransport}}

	cfg := redisfrontier.DefaultConfig("shops") // per site: 500 pages, depth 5, 4 in flight, 300 ms
	cfg.Robots, cfg.RobotsTokens, cfg.Slowdown = rules, robots.Tokens(ua), slowdown
	f, err := redisfrontier.New(ctx, rdb, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	robotsTransport.Gate = f      // robots.txt requests pass the fleet's gate
	rules.Store = f.RobotsStore() // and are fetched once for the fleet
	client := &fetch.Client{UserAgent: ua, Gate: f, Robots: rules, Slowdown: slowdown}

	// Every worker may add the start URLs: the fleet queues each once.
	f.Add(ctx, "https://shop.example/", 0, "")
	f.AddSite(ctx, "https://small.example/", redisfrontier.Limits{MaxPages: 50, MaxDepth: 3, InFlight: 1, Gap: time.Second})

	for {
		it, err := f.Next(ctx)
		if errors.Is(err, frontier.ErrComplete) {
			break
		}
		if err != nil { // ErrStateLost, ErrUnavailable, ctx
			fmt.Println(err)
			return
		}
		res, err := client.Get(ctx, it.URL)
		var links []string
		if err == nil {
			base, _ := url.Parse(res.FinalURL)
			if page, perr := htmlx.Parse(bytes.NewReader(res.Body), base); perr == nil {
				for _, l := range page.Links {
					links = append(links, l.URL)
				}
			}
		}
		// The links and the Done in one round trip.
		if _, err := f.Finish(ctx, it, err, links); err != nil {
			fmt.Println(err)
		}
	}
	st, _ := f.FleetStats(ctx)
	fmt.Println("fleet-wide pages:", st.Done, "requests:", st.Requests, "re-handed:", st.Rehanded)
}
