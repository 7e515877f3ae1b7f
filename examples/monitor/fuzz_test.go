package main

import (
	"context"
	"testing"

	"github.com/politecrawl/polite/frontier"
)

// FuzzCanonicalURL: a URL the monitor accepts is stored in the exact form
// the frontier hands back (runOnce matches items to pages by it), and
// canonicalizing is idempotent. It never panics.
func FuzzCanonicalURL(f *testing.F) {
	for _, s := range []string{
		"https://Example.COM:443/a#frag", "http://example.com", "http://[::1]:8080/x?y=1", "https://xn--bcher-kva.example/",
		"https://bücher.example/ä?q=ü", "http://a.example/%7euser/%2e%2e/x", "http://a.example/?", "ftp://x/", "http://u:p@x/",
		"HTTP://A.EXAMPLE:0080/./b/../c", "http://a.example:65536/", "  http://a.example/\t",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := canonicalURL(raw)
		if err != nil {
			return
		}
		again, err := canonicalURL(u)
		if err != nil || again != u {
			t.Fatalf("canonicalURL(%q) = %q, then %q, %v", raw, u, again, err)
		}
		fr, err := frontier.New(frontier.Config{MaxInFlight: 1})
		if err != nil {
			t.Fatal(err)
		}
		res := fr.Add(context.Background(), u, 0, "")
		if res.Outcome != frontier.Queued || res.URL != u {
			t.Fatalf("frontier.Add(%q) = %v %q, %v", u, res.Outcome, res.URL, res.Err)
		}
	})
}
