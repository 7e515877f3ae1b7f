// Package linkscore computes the internal link score of each page of a crawl: PageRank over the
// site's own link graph, scaled to 0–100 as Screaming Frog's Link Score is.
//
// The model: pages are numbered 0..n-1 by the caller (dense uint32 ids, e.g. the rank of a page's
// row id). The caller declares the redirects first (Redirect: page from answered with a redirect to
// page to), then hands over the links as a stream that can be read more than once (Links): Load
// reads it twice and keeps the graph in compressed sparse rows, 3 bytes per link and 8 per page,
// while RankStream keeps no links at all and reads the stream again on every iteration.
// Rank iterates PageRank with damping 0.85 until the ranks move less than a tolerance, and
// Ranks.Score maps a rank to 0–100 on a log scale.
//
// What counts: a followed link counts once for each time it appears (a page that links to another
// twice gives it twice the share; pass distinct pairs for the other reading); nofollow links and
// links from a page to itself are left out; a link to a redirecting page counts as a link to the
// page the redirects end at (a chain is followed to its end, a loop drops the link), and the
// redirecting page itself is not ranked (rank 0, no share of the teleport mass). A page with no
// followed links (a dead end, an error page) is dangling: its rank is spread evenly over all
// ranked pages. linkscore never touches the database, the network or a URL: it sees only numbers.
//
// Memory: Load holds 3 bytes per counted link and 8 per page (up to 16,777,216 pages), Rank 20 bytes
// more per page. At 1,000,000 pages × 60 links that is 188 MB of graph (244 MB with 4-byte ids) and
// 20 MB of ranks. RankStream holds 24 bytes per page and nothing per link (24 MB at a million pages)
// at the price of one reading of the links per iteration.
package linkscore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

const (
	// DefaultDamping is the probability that the random surfer follows a link rather than jumping
	// to a random page: 0.85, as in Brin and Page (1998) and Screaming Frog.
	DefaultDamping = 0.85

	// DefaultTolerance ends the iteration when the ranks (which sum to 1) changed by less than
	// this in total (L1 norm) in one iteration. The error left is then below
	// Tolerance·d/(1-d), about 6e-6 in total: far below what a 0–100 score shows.
	DefaultTolerance = 1e-6

	// DefaultMaxIterations bounds the iteration: the change shrinks by the damping factor (0.85)
	// each time at worst, so 1e-6 is reached in about 90 iterations.
	DefaultMaxIterations = 200

	// maxRedirectHops is how far a redirect chain is followed, the crawler's own limit of ten hops.
	maxRedirectHops = 10

	none = ^uint32(0) // no redirect; or, as a resolved target, a redirect that loops
)

// ErrLinksChanged is returned when the link stream did not yield the same links on each reading.
var ErrLinksChanged = errors.New("linkscore: the link stream yielded different links on a second reading")

// RangeError is returned for a page id outside 0..Pages-1.
type RangeError struct {
	What  string // "link", "redirect"
	ID    uint32 // the page id named
	Pages int    // how many pages the graph has
}

// Error names the kind of reference and both numbers, so the caller can find the bad row.
func (e *RangeError) Error() string {
	return fmt.Sprintf("linkscore: %s names page %d, but there are %d pages", e.What, e.ID, e.Pages)
}

// Link is a link from page From to page To.
type Link struct {
	From, To uint32 // page ids, 0..pages-1
	Nofollow bool   // rel=nofollow (or the page's meta robots nofollow): not counted
}

// Links streams the links of the crawl: it calls yield for each link, stops when yield returns
// false, and returns the error that cut the reading short (a database error), if any. It must yield
// the same links every time it is called; the order does not matter.
type Links func(yield func(Link) bool) error

// Graph is the link graph of one crawl. Create it with New, declare the redirects, then Load the
// links and Rank, or RankStream without Load. A Graph is not safe for concurrent use.
type Graph struct {
	pages    int
	redirect []uint32 // redirect[v] is the page v redirects to, or none; nil when no redirect
	resolved []uint32 // the end of v's redirect chain (none for a loop); nil until resolve
	outDeg   []uint32 // counted links from each page
	off      []uint32 // in-links of v are sources off[v] to off[v+1]-1 of src; nil until Load
	src      []byte   // the sources, 3 bytes each, little-endian (idBytes), and a byte of padding
}

// idBytes is the size of a source in the graph: 3 bytes, for up to 16,777,216 pages. A 4-byte read
// at its place and a mask give it (the byte after the last source is padding), so Rank's loop has no
// more work than with uint32 ids, and the graph is a quarter smaller.
const idBytes = 3

// maxPages is the most pages Load takes (ids of idBytes bytes).
const maxPages = 1 << (8 * idBytes)

// New returns an empty graph of the given number of pages.
func New(pages int) *Graph {
	return &Graph{pages: max(0, pages)}
}

// Pages is the number of pages of the graph.
func (g *Graph) Pages() int { return g.pages }

// Redirect records that page from redirects to page to (one hop; a chain is several calls). Declare
// redirects before Load or RankStream. Only a redirect to a crawled page belongs here: a redirect
// that leaves the site or ends in an error is left out, and its page is then ranked as a page with
// no links.
func (g *Graph) Redirect(from, to uint32) error {
	for _, id := range []uint32{from, to} {
		if int64(id) >= int64(g.pages) {
			return &RangeError{What: "redirect", ID: id, Pages: g.pages}
		}
	}
	if g.redirect == nil {
		g.redirect = make([]uint32, g.pages)
		for i := range g.redirect {
			g.redirect[i] = none
		}
	}
	g.redirect[from] = to
	g.resolved = nil
	return nil
}

// resolve follows every redirect chain once, so each link is resolved in constant time.
func (g *Graph) resolve() {
	if g.redirect == nil || g.resolved != nil {
		return
	}
	g.resolved = make([]uint32, g.pages)
	for v := range g.resolved {
		t := uint32(v)
		for hop := 0; g.redirect[t] != none; hop++ {
			if hop == maxRedirectHops || g.redirect[t] == uint32(v) {
				t = none // a loop, or longer than the crawler follows
				break
			}
			t = g.redirect[t]
		}
		g.resolved[v] = t
	}
}

// isRedirect reports whether page v redirects (so is not ranked).
func (g *Graph) isRedirect(v uint32) bool { return g.redirect != nil && g.redirect[v] != none }

// edge applies the counting rules to l: the counted link, or ok false.
func (g *Graph) edge(l Link) (from, to uint32, ok bool, err error) {
	if int64(l.From) >= int64(g.pages) {
		return 0, 0, false, &RangeError{What: "link", ID: l.From, Pages: g.pages}
	}
	if int64(l.To) >= int64(g.pages) {
		return 0, 0, false, &RangeError{What: "link", ID: l.To, Pages: g.pages}
	}
	if l.Nofollow || g.isRedirect(l.From) {
		return 0, 0, false, nil
	}
	to = l.To
	if g.resolved != nil {
		to = g.resolved[to]
	}
	if to == none || to == l.From {
		return 0, 0, false, nil
	}
	return l.From, to, true, nil
}

// read calls fn with each counted link of links, and returns how many there were and an
// order-independent checksum of them.
func (g *Graph) read(links Links, fn func(from, to uint32)) (count uint64, sum uint64, err error) {
	var bad error
	err = links(func(l Link) bool {
		from, to, ok, e := g.edge(l)
		if e != nil {
			bad = e
			return false
		}
		if ok {
			count++
			sum += mix(uint64(from)<<32 | uint64(to))
			fn(from, to)
		}
		return true
	})
	if bad != nil {
		return 0, 0, bad
	}
	return count, sum, err
}

// Load reads the links twice, first to count them per page and then to place them, and keeps them
// as compressed sparse rows: 3 bytes per counted link and 8 bytes per page (offsets and counts).
func (g *Graph) Load(links Links) error {
	g.resolve()
	g.off, g.src = nil, nil
	if g.pages > maxPages {
		return fmt.Errorf("linkscore: %d pages, more than Load's %d (RankStream takes any number)", g.pages, maxPages)
	}
	out := make([]uint32, g.pages)
	off := make([]uint32, g.pages+1)
	count, sum, err := g.read(links, func(from, to uint32) {
		out[from]++
		off[to]++
	})
	if err != nil {
		return err
	}
	if count > math.MaxUint32 {
		return fmt.Errorf("linkscore: %d links, more than 4,294,967,295", count)
	}
	// off[v] becomes the end of v's in-links; placing a link moves it back one, so after the second
	// reading off[v] is the start.
	var cum uint32
	for v := range g.pages {
		cum += off[v]
		off[v] = cum
	}
	off[g.pages] = cum
	src := make([]byte, idBytes*int(cum)+1)
	count2, sum2, err := g.read(links, func(from, to uint32) {
		if off[to] == 0 {
			return // more links than the first reading had: the count and checksum say so below
		}
		off[to]--
		i := idBytes * int(off[to])
		src[i], src[i+1], src[i+2] = byte(from), byte(from>>8), byte(from>>16)
	})
	if err != nil {
		return err
	}
	if count2 != count || sum2 != sum {
		return ErrLinksChanged
	}
	g.outDeg, g.off, g.src = out, off, src
	return nil
}

// Links is the number of counted links Load kept.
func (g *Graph) Links() int { return len(g.src) / idBytes }

// Bytes is the memory the graph holds: the compressed rows, the counts and the redirects.
func (g *Graph) Bytes() int {
	return len(g.src) + 4*(len(g.off)+len(g.outDeg)+len(g.redirect)+len(g.resolved))
}

// Options tunes Rank; the zero value gives the defaults.
type Options struct {
	Damping       float64 // in (0, 1); zero means DefaultDamping
	Tolerance     float64 // zero means DefaultTolerance
	MaxIterations int     // zero means DefaultMaxIterations
}

func (o Options) withDefaults() Options {
	if o.Damping <= 0 || o.Damping >= 1 {
		o.Damping = DefaultDamping
	}
	if o.Tolerance <= 0 {
		o.Tolerance = DefaultTolerance
	}
	if o.MaxIterations <= 0 {
		o.MaxIterations = DefaultMaxIterations
	}
	return o
}

// Ranks is the PageRank of each page: Rank[v] for page v, summing to 1 over the ranked pages (every
// page that does not redirect), 0 for a redirecting page.
type Ranks struct {
	Rank       []float64 // indexed by page id
	Iterations int       // iterations run
	Delta      float64   // the L1 change of the last iteration
	Converged  bool      // Delta fell below the tolerance within MaxIterations

	lo, hi float64 // the least and greatest rank of a ranked page
}

// Rank computes PageRank over the loaded graph. It returns an error only if ctx ends first.
func (g *Graph) Rank(ctx context.Context, o Options) (*Ranks, error) {
	if g.off == nil {
		return nil, errors.New("linkscore: Rank before Load (or use RankStream)")
	}
	return g.iterate(ctx, o, func(contrib []float32, next []float64) error {
		for v := range next {
			var s float64
			lo, end := idBytes*int(g.off[v]), idBytes*int(g.off[v+1])
			src := g.src[lo : end+1]
			for i := 0; i+3 < len(src); i += idBytes {
				s += float64(contrib[binary.LittleEndian.Uint32(src[i:i+4])&(maxPages-1)])
			}
			next[v] = s
		}
		return nil
	})
}

// RankStream computes the same ranks as Load and Rank without keeping the links: it reads links
// once to count each page's links and once more on every iteration, so it holds 24 bytes per page
// and nothing per link. It stops at the first error of links or of ctx.
func (g *Graph) RankStream(ctx context.Context, links Links, o Options) (*Ranks, error) {
	g.resolve()
	out := make([]uint32, g.pages)
	count, sum, err := g.read(links, func(from, _ uint32) { out[from]++ })
	if err != nil {
		return nil, err
	}
	g.outDeg = out
	return g.iterate(ctx, o, func(contrib []float32, next []float64) error {
		clear(next)
		c, s, err := g.read(links, func(from, to uint32) { next[to] += float64(contrib[from]) })
		if err == nil && (c != count || s != sum) {
			err = ErrLinksChanged
		}
		return err
	})
}

// iterate runs the power iteration; step must set next[v] to the sum of contrib[u] over the counted
// links u→v. contrib (rank/out-degree) is float32: the links' random reads of it then touch half
// the cache lines (400 KB at 100,000 pages, within a core's L2), and its 24 bits of precision are
// summed in float64, far finer than the tolerance.
func (g *Graph) iterate(ctx context.Context, o Options, step func(contrib []float32, next []float64) error) (*Ranks, error) {
	o = o.withDefaults()
	d := o.Damping
	n := g.pages
	ranked := n
	for v := range n {
		if g.isRedirect(uint32(v)) {
			ranked--
		}
	}
	r := &Ranks{Rank: make([]float64, n)}
	if ranked == 0 {
		r.Converged = true
		return r, nil
	}
	rank, next, contrib := r.Rank, make([]float64, n), make([]float32, n)
	for v := range rank {
		if !g.isRedirect(uint32(v)) {
			rank[v] = 1 / float64(ranked)
		}
	}
	for r.Iterations < o.MaxIterations {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var dangling float64
		for v, x := range rank {
			if k := g.outDeg[v]; k > 0 {
				contrib[v] = float32(x / float64(k))
			} else {
				contrib[v] = 0
				dangling += x // a redirect's rank is 0, so it adds nothing
			}
		}
		if err := step(contrib, next); err != nil {
			return nil, err
		}
		base := (1-d)/float64(ranked) + d*dangling/float64(ranked)
		var delta float64
		for v := range next {
			x := 0.0
			if !g.isRedirect(uint32(v)) {
				x = base + d*next[v]
			}
			delta += math.Abs(x - rank[v])
			rank[v] = x
		}
		r.Iterations++
		r.Delta = delta
		if delta < o.Tolerance {
			r.Converged = true
			break
		}
	}
	lo, hi := math.Inf(1), 0.0
	for v, x := range rank {
		if !g.isRedirect(uint32(v)) {
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	r.lo, r.hi = lo, hi
	return r, nil
}

// Score is the link score of page v, 0–100 on a log scale between the least and the greatest rank
// of the crawl:
//
//	score = 100 · ln(rank / min rank) / ln(max rank / min rank)
//
// so the best-linked page scores 100, a page nothing links to scores 0 (its rank is the minimum:
// teleport and dangling share only), and each step of 10 points multiplies the rank by the same
// factor. Screaming Frog also scales its Link Score logarithmically to 0–100; its exact formula is
// not published. A redirecting page scores 0; when every ranked page has the same rank (a cycle, a
// one-page site) each scores 100.
func (r *Ranks) Score(v uint32) float64 {
	x := r.Rank[v]
	if x <= 0 {
		return 0
	}
	if !(r.hi > r.lo*(1+1e-9)) {
		return 100
	}
	return max(0, min(100, 100*math.Log(x/r.lo)/math.Log(r.hi/r.lo)))
}

// mix is the splitmix64 finaliser, for the links' checksum.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	x ^= x >> 31
	return x
}
