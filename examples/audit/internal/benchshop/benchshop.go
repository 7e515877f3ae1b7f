// Package benchshop is the generated shop the scale benchmark (bench/scale.sh) and the heap-growth test
// crawl: n product pages of about 22.7 KB with 60 links each, a robots.txt, and a 404 for every other
// path. Pages are made on request from their number, so serving it takes no memory that grows with n.
//
// Page 0 is the home page (/), page i is /p/i. Page i links to its children 58i+1..58i+58 (a tree, so
// every page is reached and the depth is about log58(n)), to the home page and, to fill its 60 links, to
// pseudo-random products. It serves; it never listens itself (bench/shop does, on loopback).
package benchshop

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Page shape: what the shop measured.
const (
	LinksPerPage = 60    // links on each page
	PageBytes    = 22700 // about the size of each page
	children     = LinksPerPage - 2
)

// Handler serves the n-page shop.
func Handler(n int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "User-agent: *\nDisallow: /cart/\n")
			return
		}
		i, ok := pageNumber(r.URL.Path, n)
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		bw := bufio.NewWriterSize(w, 32<<10)
		writePage(bw, i, n)
		bw.Flush()
	})
}

// pageNumber is the page a path names: / is 0, /p/<i> is i.
func pageNumber(path string, n int) (int, bool) {
	if path == "/" {
		return 0, true
	}
	s, ok := strings.CutPrefix(path, "/p/")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(s)
	if err != nil || i < 1 || i >= n || strconv.Itoa(i) != s {
		return 0, false
	}
	return i, true
}

func href(i int) string {
	if i == 0 {
		return "/"
	}
	return "/p/" + strconv.Itoa(i)
}

// words are the body text's vocabulary; each page draws its paragraphs from it by its number, so pages
// differ in their text (no site-wide duplicate content) and in their titles.
var words = strings.Fields(`lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore
et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip ex ea commodo consequat
duis aute irure in reprehenderit voluptate velit esse cillum fugiat nulla pariatur excepteur sint occaecat cupidatat non
proident sunt culpa qui officia deserunt mollit anim id est laborum shirt shoe jacket linen cotton wool leather canvas blue
green red black white small medium large organic recycled classic modern`)

func writePage(w *bufio.Writer, i, n int) {
	start := w.Buffered()
	fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Product %d | Generated Shop</title>`+
		`<meta name="description" content="Product %d of the generated shop, in stock and shipped in two days.">`+
		`<link rel="canonical" href="%s"><meta name="viewport" content="width=device-width"></head><body>`+
		`<nav><a href="/">Home</a></nav><h1>Product %d</h1><ul class="related">`, i, i, href(i), i)
	links := 1
	for c := children*i + 1; c <= children*i+children && c < n; c++ {
		fmt.Fprintf(w, `<li><a href="%s">Product %d</a></li>`, href(c), c)
		links++
	}
	for links < LinksPerPage {
		j := int((uint64(i)*2654435761 + uint64(links)*40503) % uint64(n))
		fmt.Fprintf(w, `<li><a href="%s">See also %d</a></li>`, href(j), j)
		links++
	}
	w.WriteString("</ul><main>")
	x := uint64(i)*6364136223846793005 + 1442695040888963407
	for w.Buffered()-start < PageBytes-90 {
		w.WriteString("<p>")
		for range 12 {
			x = x*6364136223846793005 + 1442695040888963407
			w.WriteString(words[(x>>33)%uint64(len(words))])
			w.WriteByte(' ')
		}
		w.WriteString("</p>")
	}
	w.WriteString("</main><footer>Generated shop</footer></body></html>")
}
