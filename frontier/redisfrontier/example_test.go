package redisfrontier_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/frontier/redisfrontier"
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

	// One-step wiring: the Frontier becomes the client's gate, one
	// slowdown latch serves both, and the client's robots.txt cache is
	// stored in Redis, so the fleet fetches each robots.txt once.
	client := &fetch.Client{UserAgent: "CrawlCove-Crawler"}
	cfg := redisfrontier.DefaultConfig("shops") // per site: 500 pages, depth 5, 4 in flight, 300 ms
	cfg.Client = client
	f, err := redisfrontier.New(ctx, rdb, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()

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
			// fetch/page: links resolved against <base href> and the final URL.
			if page, perr := res.Page(); perr == nil {
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
