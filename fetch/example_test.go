package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/politecrawl/polite/fetch"
)

func Example() {
	// A small site: robots.txt, a redirect and a page.
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: 2-UAcomBot\nDisallow: /private/\n")
	})
	mux.Handle("/old", http.RedirectHandler("/new", http.StatusMovedPermanently))
	mux.HandleFunc("/new", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<title>New</title>")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	c := &fetch.Client{
		UserAgent: "Mozilla/5.0 (compatible; 2-UAcomBot/1.0; +https://2-ua.com/support/robots)",
		Header:    http.Header{"X-AGENT": {"2-UA"}},
		// In a crawl, frontier.New(frontier.Config{Client: c, ...}) makes the
		// frontier its gate (in flight, gap, per host, slowdown).
	}
	ctx := context.Background()

	res, err := c.Get(ctx, srv.URL+"/old")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, res.MediaType(), string(res.Body))
	for _, h := range res.Redirects {
		fmt.Println("redirect:", h.Status, h.Location)
	}

	_, err = c.Get(ctx, srv.URL+"/private/report")
	var fe *fetch.Error
	if errors.Is(err, fetch.ErrDisallowed) && errors.As(err, &fe) {
		fmt.Println("skipped:", fe.Verdict.Decision.Rule.Pattern)
	}
	// Output:
	// 200 text/html <title>New</title>
	// redirect: 301 /new
	// skipped: /private/
}

// Third-party code that takes an *http.Client becomes polite by
// construction: robots.txt per hop, the gate, retries, the timeout.
func ExampleClient_HTTPClient() {
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /admin\n")
	})
	mux.HandleFunc("/feed.xml", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<rss>for %s</rss>", r.UserAgent())
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	c := &fetch.Client{UserAgent: "CrawlCove-Crawler"}
	hc := c.HTTPClient() // hand this to any library

	resp, err := hc.Get(srv.URL + "/feed.xml")
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(string(body))

	_, err = hc.Get(srv.URL + "/admin")
	fmt.Println(errors.Is(err, fetch.ErrDisallowed))
	// Output:
	// <rss>for CrawlCove-Crawler</rss>
	// true
}

// A crawler stores the server's time as a page's response time, not the
// time the call took: Total also counts the robots.txt check, the waits at
// the politeness gate and before retries.
func ExampleResult_ResponseTime() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return // no rules
		}
		fmt.Fprint(w, "<title>page</title>")
	}))
	defer srv.Close()

	c := &fetch.Client{UserAgent: "CrawlCove-Crawler"}
	res, err := c.Get(context.Background(), srv.URL+"/page")
	if err != nil {
		fmt.Println(err)
		return
	}
	server := res.ResponseTime() // TTFB + Download of the final request
	politeness := res.RobotsWait + res.GateWait + res.RetryWait
	fmt.Println("server time is part of the total:", server <= res.Total)
	fmt.Println("so are the waits:", server+politeness <= res.Total)
	fmt.Println("robots.txt was fetched first:", res.RobotsWait > 0)
	// Output:
	// server time is part of the total: true
	// so are the waits: true
	// robots.txt was fetched first: true
}
