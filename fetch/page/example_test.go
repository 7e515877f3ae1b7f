package page_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/fetch/page"
)

func Example() {
	html := `<html><head><title>Blue widgets</title>
<meta name="description" content="Widgets, in blue.">
<link rel="canonical" href="/widgets/blue">
</head><body><h1>Blue widgets</h1>
<p>All our <a href="../about#team">widgets</a> are blue.</p>
<a href="https://ads.example/" rel="sponsored">Ad</a> <a href="mailto:shop@example.com">Mail us</a>
</body></html>`
	p, err := page.Parse(strings.NewReader(html), "https://shop.example/widgets/blue?ref=home")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("title %q, h1 %q, %d words\n", p.Title, p.H1, p.WordCount)
	fmt.Println("canonical", p.Canonical)
	for _, l := range p.Links {
		fmt.Printf("%s %s %q nofollow=%v\n", l.Tag, l.URL, l.Text, l.Nofollow)
	}
	// Output:
	// title "Blue widgets", h1 ["Blue widgets"], 10 words
	// canonical https://shop.example/widgets/blue
	// link https://shop.example/widgets/blue "" nofollow=false
	// a https://shop.example/about "widgets" nofollow=false
	// a https://ads.example/ "Ad" nofollow=true
}

// A fetched page: fetch.Result.Page resolves links against the final URL,
// after redirects, and decodes the body by its Content-Type.
func Example_fetch() {
	mux := http.NewServeMux()
	mux.Handle("/old", http.RedirectHandler("/shop/", http.StatusMovedPermanently))
	mux.HandleFunc("/shop/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		w.Header().Set("X-Robots-Tag", "noarchive")
		fmt.Fprint(w, "<title>Caf\xe9</title><a href=\"menu\">Menu</a>")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	c := &fetch.Client{UserAgent: "ExampleBot/1.0"}
	res, err := c.Get(context.Background(), srv.URL+"/old")
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := res.Page()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Title, p.Encoding, p.XRobotsTag)
	fmt.Println(strings.TrimPrefix(p.Links[0].URL, srv.URL))
	// Output:
	// Café windows-1252 noarchive
	// /shop/menu
}

// Options bound the work, and pass the Content-Type so that its charset
// decodes the page.
func ExampleOptions_Parse() {
	opt := page.Options{MaxBytes: 1 << 20, MaxLinks: 2, ContentType: "text/html; charset=windows-1252"}
	p, err := opt.Parse(strings.NewReader("<h1>na\xefve</h1><a href=/1>1</a><a href=/2>2</a><a href=/3>3</a>"), "https://s.example/")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.H1, len(p.Links), "links kept,", p.LinksDropped, "dropped")
	// Output:
	// [naïve] 2 links kept, 1 dropped
}

func ExampleError() {
	_, err := page.Parse(strings.NewReader("<title>t</title>"), "/not/absolute")
	var pe *page.Error
	fmt.Println(errors.Is(err, page.ErrPageURL), errors.As(err, &pe), pe.URL)
	// Output:
	// true true /not/absolute
}
