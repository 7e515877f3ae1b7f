package testsite_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/politecrawl/polite/internal/testsite"
)

// cleanups stands in for the *testing.T a real test would pass.
type cleanups []func()

func (c *cleanups) Cleanup(f func()) { *c = append(*c, f) }
func (c cleanups) run() {
	for _, f := range slices.Backward(c) {
		f()
	}
}

func Example() {
	var t cleanups // in a test: s := testsite.New(t)
	defer t.run()

	s := testsite.New(&t)
	s.Robots("User-agent: *\nDisallow: /private/\n")
	s.HTML("/", `<a href="/about">About</a>`)
	// The first request is told to slow down, the next one succeeds.
	s.Route("/about",
		testsite.Response{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}},
		testsite.Response{Body: "about us"})

	c := s.Client()
	for _, p := range []string{"/robots.txt", "/", "/about", "/about"} {
		resp, err := c.Get(s.URL() + p)
		if err != nil {
			fmt.Println(err)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Println(p, resp.StatusCode)
	}
	fmt.Println("requests:", s.Paths())
	fmt.Println("/about seen", s.Count("/about"), "times; max in flight", s.MaxInFlight())
	// Output:
	// /robots.txt 200
	// / 200
	// /about 429
	// /about 200
	// requests: [/robots.txt / /about /about]
	// /about seen 2 times; max in flight 1
}
