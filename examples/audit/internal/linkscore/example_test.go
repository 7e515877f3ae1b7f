package linkscore_test

import (
	"context"
	"fmt"

	"github.com/politecrawl/polite/examples/audit/internal/linkscore"
)

// A four-page site: the home page links to two pages, one of them through an old URL that
// redirects; every page links home; one link is nofollow.
func Example() {
	const home, products, about, oldProducts = 0, 1, 2, 3
	g := linkscore.New(4)
	if err := g.Redirect(oldProducts, products); err != nil {
		panic(err)
	}
	links := func(yield func(linkscore.Link) bool) error { // in the audit: a query over the links table
		for _, l := range []linkscore.Link{
			{From: home, To: oldProducts}, // counts as home → products
			{From: home, To: about},
			{From: products, To: home},
			{From: about, To: home},
			{From: about, To: products, Nofollow: true},
		} {
			if !yield(l) {
				return nil
			}
		}
		return nil
	}
	if err := g.Load(links); err != nil {
		panic(err)
	}
	r, err := g.Rank(context.Background(), linkscore.Options{})
	if err != nil {
		panic(err)
	}
	for _, p := range []uint32{home, products, about, oldProducts} {
		fmt.Printf("page %d: rank %.3f, score %.0f\n", p, r.Rank[p], r.Score(p))
	}
	// Output:
	// page 0: rank 0.486, score 100
	// page 1: rank 0.257, score 0
	// page 2: rank 0.257, score 0
	// page 3: rank 0.000, score 0
}
