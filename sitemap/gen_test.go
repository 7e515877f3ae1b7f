package sitemap

import (
	"fmt"
	"io"
)

// urlsetGen streams a generated urlset of n entries without holding it in
// memory, so heap measurements see only the reader.
type urlsetGen struct {
	n, i  int
	entry func(buf []byte, i int) []byte // appends entry i; genEntry by default
	state int                            // 0 header, 1 entries, 2 footer, 3 done
	buf   []byte
	off   int
}

func newURLSetGen(n int) *urlsetGen { return &urlsetGen{n: n, entry: genEntry} }

const genHeader = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">
`

func genEntry(buf []byte, i int) []byte {
	return fmt.Appendf(buf, "  <url>\n    <loc>https://www.example.com/products/category-%d/item-%d-with-a-longer-slug.html</loc>\n    <lastmod>2024-%02d-%02dT%02d:%02d:%02d+00:00</lastmod>\n    <changefreq>weekly</changefreq>\n    <priority>0.%d</priority>\n  </url>\n",
		i%97, i, i%12+1, i%28+1, i%24, i%60, i%60, i%10)
}

func (g *urlsetGen) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if g.off == len(g.buf) {
			g.buf, g.off = g.buf[:0], 0
			switch g.state {
			case 0:
				g.buf = append(g.buf, genHeader...)
				g.state = 1
			case 1:
				if g.i == g.n {
					g.state = 2
					continue
				}
				for k := 0; k < 64 && g.i < g.n; k++ {
					g.buf = g.entry(g.buf, g.i)
					g.i++
				}
			case 2:
				g.buf = append(g.buf, "</urlset>\n"...)
				g.state = 3
			default:
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			}
		}
		c := copy(p[n:], g.buf[g.off:])
		g.off += c
		n += c
	}
	return n, nil
}

func genURLSet(n int) []byte {
	b, _ := io.ReadAll(newURLSetGen(n))
	return b
}
