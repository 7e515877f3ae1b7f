package htmlx_test

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/politecrawl/polite/internal/htmlx"
)

func Example() {
	page := `<html><head><title>Blue widgets</title>
<meta name="description" content="Widgets, in blue.">
<link rel="canonical" href="/widgets/blue">
<link rel="stylesheet" href="/wp-content/themes/shop/style.css">
</head><body><h1>Blue widgets</h1>
<p>All our <a href="../about#team">widgets</a> are blue.</p>
<a href="https://ads.example/" rel="sponsored">Ad</a> <a href="mailto:shop@example.com">Mail us</a>
</body></html>`
	u, _ := url.Parse("https://shop.example/widgets/blue?ref=home")
	p, err := htmlx.Parse(strings.NewReader(page), u)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("title %q (%d), h1 %q, %d words\n", p.Title, p.TitleCount, p.H1, p.WordCount)
	fmt.Println("canonical", p.Canonical, "wordpress", p.WordPress)
	for _, l := range p.Links {
		fmt.Printf("%s %s %q nofollow=%v\n", l.Tag, l.URL, l.Text, l.Nofollow)
	}
	// Output:
	// title "Blue widgets" (1), h1 ["Blue widgets"], 10 words
	// canonical https://shop.example/widgets/blue wordpress true
	// link https://shop.example/widgets/blue "" nofollow=false
	// link https://shop.example/wp-content/themes/shop/style.css "" nofollow=false
	// a https://shop.example/about "widgets" nofollow=false
	// a https://ads.example/ "Ad" nofollow=true
}
