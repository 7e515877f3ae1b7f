package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/politecrawl/polite/fetch"
)

// A crawler that fetches URLs typed by strangers refuses internal
// addresses: by name before any lookup, and at dial time on the address
// connected.
func ExampleGuard() {
	c := &fetch.Client{Guard: &fetch.Guard{}}
	for _, u := range []string{"http://localhost:8080/admin", "http://169.254.169.254/latest/meta-data/", "http://①②⑦.⓪.⓪.①/"} {
		_, err := c.Get(context.Background(), u)
		var ae *fetch.AddressError
		if errors.Is(err, fetch.ErrForbiddenAddress) && errors.As(err, &ae) {
			fmt.Println("refused:", ae.Reason)
		}
	}
	// Output:
	// refused: a localhost name (always loopback, RFC 6761)
	// refused: a link-local address (169.254.0.0/16: cloud metadata lives here)
	// refused: a loopback address (127.0.0.0/8)
}

// Conditional GET: the second fetch of an unchanged page costs a 304.
func ExampleMemoryValidators() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		fmt.Fprint(w, "<title>Prices</title>")
	}))
	defer srv.Close()
	c := &fetch.Client{Validators: &fetch.MemoryValidators{}}
	for range 2 {
		res, err := c.Get(context.Background(), srv.URL+"/prices")
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(res.Status, res.Unchanged, res.BytesSaved)
	}
	// Output:
	// 200 false 0
	// 304 true 21
}

// A challenge page is the bot protection's answer, not the page.
func ExampleDetectChallenge() {
	h := http.Header{"Cf-Mitigated": {"challenge"}}
	fmt.Println(fetch.DetectChallenge(403, h, []byte("<title>Just a moment...</title>")))
	fmt.Println(fetch.DetectChallenge(200, http.Header{}, []byte("<p>We use Cloudflare. Just a moment...</p>")))
	// Output:
	// cloudflare (header cf-mitigated: challenge)
	// <nil>
}
