package robots

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/temoto/robotstxt"
)

// TestDifferentialTemoto compares with github.com/temoto/robotstxt on files
// where temoto follows RFC 9309: tokens that are not prefixes of each
// other (temoto picks groups by prefix), literal patterns starting with "/"
// (its wildcard precedence differs), no two rules with the same pattern
// (it breaks ties by order, not Allow), every group with a rule (temoto
// drops rule-less groups), no Crawl-delay or empty rules (they change its
// grouping), and paths other than /robots.txt. A quarter of the records
// are written without their colon ("Disallow /a"), which both parsers read
// as if it were there; temoto's departure on colon-less lines of several
// words is pinned in TestTemotoDepartures.
func TestDifferentialTemoto(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 11))
	tokens := []string{"alpha", "bravo", "charlie", "delta"}
	randPath := func(maxLen int) string {
		var b strings.Builder
		b.WriteByte('/')
		for range rng.IntN(maxLen) {
			b.WriteByte("abc/"[rng.IntN(4)])
		}
		return b.String()
	}
	sep := func() string {
		if rng.IntN(4) == 0 {
			return " " // the colon forgotten
		}
		return ": "
	}
	files, checks := 0, 0
	for range 3000 {
		var b strings.Builder
		used := map[string]bool{}
		groups := 1 + rng.IntN(4)
		for range groups {
			if rng.IntN(3) == 0 {
				b.WriteString("User-agent" + sep() + "*\n")
			}
			for range 1 + rng.IntN(2) {
				tok := tokens[rng.IntN(len(tokens))]
				if rng.IntN(2) == 0 {
					tok = strings.ToUpper(tok[:1]) + tok[1:]
				}
				fmt.Fprintf(&b, "User-agent%s%s\n", sep(), tok)
			}
			for n, tries := 1+rng.IntN(5), 0; n > 0 && tries < 100; tries++ {
				p := randPath(6)
				if used[p] {
					continue
				}
				n--
				used[p] = true
				if rng.IntN(2) == 0 {
					fmt.Fprintf(&b, "Allow%s%s\n", sep(), p)
				} else {
					fmt.Fprintf(&b, "Disallow%s%s\n", sep(), p)
				}
			}
			b.WriteString("\n")
		}
		body := b.String()
		ours := Parse([]byte(body))
		theirs, err := robotstxt.FromString(body)
		if err != nil {
			t.Fatalf("temoto rejected %q: %v", body, err)
		}
		files++
		for range 20 {
			path := randPath(10)
			for _, tok := range append(tokens, "echo") {
				checks++
				want := theirs.FindGroup(tok).Test(path)
				if got := ours.Allowed(tok, path); got != want {
					t.Fatalf("file:\n%s\nAllowed(%q, %q) = %v, temoto says %v (%s)", body, tok, path, got, want, ours.Explain(tok, path))
				}
			}
		}
	}
	t.Logf("%d files, %d checks agree", files, checks)
}

// TestTemotoDepartures pins the differences the README lists, so that a
// temoto upgrade that fixes one is noticed.
func TestTemotoDepartures(t *testing.T) {
	prefix, _ := robotstxt.FromString("User-agent: CrawlCove\nDisallow: /\n")
	if prefix.TestAgent("/x", "CrawlCove-Crawler") {
		t.Error("temoto no longer picks groups by prefix")
	}
	if _, err := robotstxt.FromString("Disallow: /x\nUser-agent: *\nDisallow: /y\n"); err == nil {
		t.Error("temoto no longer rejects a rule before the first user-agent")
	}
	tie, _ := robotstxt.FromString("User-agent: *\nDisallow: /page\nAllow: /page\n")
	if tie.TestAgent("/page", "a") {
		t.Error("temoto now lets Allow win ties")
	}
	self, _ := robotstxt.FromString("User-agent: *\nDisallow: /\n")
	if self.TestAgent("/robots.txt", "a") {
		t.Error("temoto now allows /robots.txt implicitly")
	}
	// A colon-less line of several words is prose to Google's parser and to
	// this package; temoto reads its first two words as a record.
	words, _ := robotstxt.FromString("User-agent: *\nDisallow /private /other\n")
	if words.TestAgent("/private", "a") {
		t.Error("temoto no longer reads a colon-less line of several words as a record")
	}
	r := Parse([]byte("Disallow: /x\nUser-agent: CrawlCove\nDisallow: /\nUser-agent: *\nDisallow: /page\nAllow: /page\n" +
		"Disallow /private /other\n"))
	if !r.Allowed("CrawlCove-Crawler", "/page") || r.Allowed("CrawlCove", "/x") || !r.Allowed("CrawlCove", "/robots.txt") ||
		!r.Allowed("CrawlCove-Crawler", "/private") {
		t.Error("this package should get all of these right")
	}
}
