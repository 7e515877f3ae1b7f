// Command colly is the yardstick of bench/scale.sh's CPU comparison: colly v2 crawling the same loopback
// shop as the audit, breadth-first on one host, 16 requests in flight, no delay, until -max-pages pages
// have answered, printing how many did. It parses every page (the links it follows) and keeps nothing
// else, which is the least a crawler does. It is a module of its own so that the polite module never
// depends on colly.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"

	"github.com/gocolly/colly/v2"
)

func main() {
	maxPages := flag.Int64("max-pages", 500, "stop queueing after `N` pages")
	flag.Parse()
	start, err := url.Parse(flag.Arg(0))
	if err != nil || start.Host == "" {
		fmt.Fprintln(os.Stderr, "usage: colly [-max-pages N] http://127.0.0.1:PORT/")
		os.Exit(2)
	}
	c := colly.NewCollector(colly.Async(true), colly.AllowedDomains(start.Hostname()), colly.MaxDepth(100))
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 16}); err != nil {
		fmt.Fprintln(os.Stderr, "colly:", err)
		os.Exit(1)
	}
	var pages, queued atomic.Int64
	c.OnResponse(func(*colly.Response) { pages.Add(1) })
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		if queued.Load() >= *maxPages {
			return
		}
		if err := e.Request.Visit(e.Attr("href")); err == nil {
			queued.Add(1)
		}
	})
	queued.Add(1)
	if err := c.Visit(start.String()); err != nil {
		fmt.Fprintln(os.Stderr, "colly:", err)
		os.Exit(1)
	}
	c.Wait()
	fmt.Printf("pages %d\n", pages.Load())
}
