package linkscore

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"testing"
)

// slice is a Links over a fixed list.
func slice(ls ...Link) Links {
	return func(yield func(Link) bool) error {
		for _, l := range ls {
			if !yield(l) {
				return nil
			}
		}
		return nil
	}
}

func follow(pairs ...[2]uint32) []Link {
	var ls []Link
	for _, p := range pairs {
		ls = append(ls, Link{From: p[0], To: p[1]})
	}
	return ls
}

// both ranks the graph with Load+Rank and with RankStream and checks they agree.
func both(t *testing.T, pages int, redirects [][2]uint32, links []Link) *Ranks {
	t.Helper()
	mk := func() *Graph {
		g := New(pages)
		for _, r := range redirects {
			if err := g.Redirect(r[0], r[1]); err != nil {
				t.Fatal(err)
			}
		}
		return g
	}
	g := mk()
	if err := g.Load(slice(links...)); err != nil {
		t.Fatal(err)
	}
	a, err := g.Rank(context.Background(), Options{Tolerance: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	b, err := mk().RankStream(context.Background(), slice(links...), Options{Tolerance: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	for v := range a.Rank {
		if math.Abs(a.Rank[v]-b.Rank[v]) > 1e-12 {
			t.Fatalf("page %d: Rank %v, RankStream %v", v, a.Rank[v], b.Rank[v])
		}
	}
	if !a.Converged {
		t.Fatalf("did not converge: %+v", a)
	}
	return a
}

func near(t *testing.T, what string, got []float64, want ...float64) {
	t.Helper()
	for i := range want {
		if math.Abs(got[i]-want[i]) > 5e-6 {
			t.Errorf("%s: rank %v, want %v", what, got, want)
			return
		}
	}
}

// The worked examples are solved by hand from PR(v) = (1-d)/N + d·(Σ PR(u)/out(u) + dangling/N).
func TestHandComputed(t *testing.T) {
	// A→B, A→C, B→C, C→A: B = 0.05+0.425A, C = 0.0925+0.78625A, A = 0.05+0.85C
	// ⇒ A = 0.128625/0.3316875.
	r := both(t, 3, nil, follow([2]uint32{0, 1}, [2]uint32{0, 2}, [2]uint32{1, 2}, [2]uint32{2, 0}))
	a := 0.128625 / 0.3316875
	near(t, "three pages", r.Rank, a, 0.05+0.425*a, 0.0925+0.78625*a)

	// A star: four leaves link to the centre, which links nowhere (dangling). Leaves get
	// L = 1/(1+k+dk), the centre L(1+dk).
	r = both(t, 5, nil, follow([2]uint32{1, 0}, [2]uint32{2, 0}, [2]uint32{3, 0}, [2]uint32{4, 0}))
	l := 1 / (1 + 4 + 0.85*4)
	near(t, "star", r.Rank, l*(1+0.85*4), l, l, l, l)

	// A chain 0→1→2, the end dangling: r0 = b, r1 = 1.85b, r2 = 2.5725b, b = 0.05/0.271125.
	r = both(t, 3, nil, follow([2]uint32{0, 1}, [2]uint32{1, 2}))
	b := 0.05 / (1 - 0.85*2.5725/3)
	near(t, "chain", r.Rank, b, 1.85*b, 2.5725*b)

	// A cycle: every page the same, 1/N; every score 100.
	r = both(t, 4, nil, follow([2]uint32{0, 1}, [2]uint32{1, 2}, [2]uint32{2, 3}, [2]uint32{3, 0}))
	near(t, "cycle", r.Rank, 0.25, 0.25, 0.25, 0.25)
	if r.Score(2) != 100 {
		t.Errorf("cycle: score %v, want 100", r.Score(2))
	}

	// No links at all: every page dangling, 1/N.
	r = both(t, 2, nil, nil)
	near(t, "no links", r.Rank, 0.5, 0.5)
}

func TestNofollowIsLeftOut(t *testing.T) {
	links := follow([2]uint32{0, 1}, [2]uint32{1, 2})
	with := append(slices.Clone(links), Link{From: 0, To: 2, Nofollow: true}, Link{From: 2, To: 0, Nofollow: true})
	near(t, "nofollow", both(t, 3, nil, with).Rank, both(t, 3, nil, links).Rank...)
}

func TestSelfLinksAndRepeats(t *testing.T) {
	// A self link is left out; a repeated link counts each time.
	near(t, "self link", both(t, 3, nil, follow([2]uint32{0, 1}, [2]uint32{1, 1}, [2]uint32{1, 2})).Rank,
		both(t, 3, nil, follow([2]uint32{0, 1}, [2]uint32{1, 2})).Rank...)
	twice := both(t, 3, nil, follow([2]uint32{0, 1}, [2]uint32{0, 1}, [2]uint32{0, 2})).Rank
	if twice[1] <= twice[2] {
		t.Errorf("a page linked twice ranks %v, the page linked once %v", twice[1], twice[2])
	}
}

func TestRedirectsPassToTheirTarget(t *testing.T) {
	// Page 1 redirects to page 2 (via 3 → chain 1→3→2): 0→1 counts as 0→2, and neither 1 nor 3 is
	// ranked, so the graph is the two-page graph 0→2 over pages {0, 2}.
	r := both(t, 4, [][2]uint32{{1, 3}, {3, 2}}, follow([2]uint32{0, 1}, [2]uint32{2, 0}, [2]uint32{1, 0}))
	direct := both(t, 2, nil, follow([2]uint32{0, 1}, [2]uint32{1, 0}))
	near(t, "redirect", []float64{r.Rank[0], r.Rank[2]}, direct.Rank...)
	if r.Rank[1] != 0 || r.Rank[3] != 0 || r.Score(1) != 0 {
		t.Errorf("redirecting pages ranked: %v", r.Rank)
	}
	// A redirect loop drops the links into it.
	loop := both(t, 4, [][2]uint32{{1, 3}, {3, 1}}, follow([2]uint32{0, 1}, [2]uint32{0, 2}, [2]uint32{2, 0}))
	plain := both(t, 2, nil, follow([2]uint32{0, 1}, [2]uint32{1, 0}))
	near(t, "loop", []float64{loop.Rank[0], loop.Rank[2]}, plain.Rank...)
}

// randomGraph is a generated site of n pages with perPage links each: the first 20 go to the menu
// (pages 0-19), a third of the rest to the pages just after it (pagination, related products: the
// local structure that slows PageRank's convergence), the others to pages anywhere; the link just
// after the menu is nofollow. The same seed yields the same links on every reading.
func randomGraph(n, perPage int, seed uint64) Links {
	const nav = 20
	return func(yield func(Link) bool) error {
		for p := range n {
			for k := range perPage {
				var to uint32
				switch h := mix(seed ^ uint64(p)<<20 ^ uint64(k)); {
				case k < nav:
					to = uint32(k % n)
				case k%3 == 0:
					to = uint32((p + 1 + int(h%32)) % n)
				default:
					to = uint32(h % uint64(n))
				}
				if !yield(Link{From: uint32(p), To: to, Nofollow: k == nav}) {
					return nil
				}
			}
		}
		return nil
	}
}

func TestScoresAreMonotone(t *testing.T) {
	n := 2000
	g := New(n)
	if err := g.Load(randomGraph(n, 30, 3)); err != nil {
		t.Fatal(err)
	}
	r, err := g.Rank(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	order := make([]uint32, n)
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int { return compare(r.Rank[a], r.Rank[b]) })
	for i := 1; i < n; i++ {
		if r.Score(order[i]) < r.Score(order[i-1]) {
			t.Fatalf("score not monotone in rank at %d", i)
		}
	}
	if lo, hi := r.Score(order[0]), r.Score(order[n-1]); lo != 0 || hi != 100 {
		t.Errorf("scores run from %v to %v, want 0 to 100", lo, hi)
	}
	var sum float64
	for _, x := range r.Rank {
		sum += x
	}
	if math.Abs(sum-1) > 1e-6 || !r.Converged || r.Delta >= DefaultTolerance {
		t.Errorf("sum %v, %+v", sum, r.Iterations)
	}
	// The menu pages, linked from every page, are the top.
	for v := range uint32(20) {
		if r.Score(v) < 95 {
			t.Errorf("menu page %d scores %v", v, r.Score(v))
		}
	}
}

func compare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestStreamMatchesLoadOnALargerGraph(t *testing.T) {
	n := 3000
	g := New(n)
	for v := uint32(100); v < 150; v++ {
		if err := g.Redirect(v, v+1000); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Load(randomGraph(n, 25, 9)); err != nil {
		t.Fatal(err)
	}
	a, err := g.Rank(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := g.RankStream(context.Background(), randomGraph(n, 25, 9), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Iterations != b.Iterations {
		t.Errorf("iterations %d and %d", a.Iterations, b.Iterations)
	}
	for v := range a.Rank {
		if math.Abs(a.Rank[v]-b.Rank[v]) > 1e-12 {
			t.Fatalf("page %d: %v and %v", v, a.Rank[v], b.Rank[v])
		}
	}
}

// Page ids of all three bytes (100,000 pages) come back as they went in: Load and Rank agree with
// RankStream, which keeps no graph.
func TestThreeByteIDs(t *testing.T) {
	const n = 100_000
	g := New(n)
	if err := g.Load(randomGraph(n, 12, 7)); err != nil {
		t.Fatal(err)
	}
	a, err := g.Rank(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(n).RankStream(context.Background(), randomGraph(n, 12, 7), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for v := range a.Rank {
		if math.Abs(a.Rank[v]-b.Rank[v]) > 1e-12 {
			t.Fatalf("page %d: Rank %v, RankStream %v", v, a.Rank[v], b.Rank[v])
		}
	}
}

func TestBadInput(t *testing.T) {
	if err := New(maxPages + 1).Load(slice()); err == nil {
		t.Errorf("Load of %d pages: no error", maxPages+1)
	}
	g := New(3)
	var re *RangeError
	if err := g.Redirect(1, 3); !errors.As(err, &re) || re.ID != 3 {
		t.Errorf("redirect to page 3 of 3: %v", err)
	}
	if err := g.Load(slice(Link{From: 0, To: 7})); !errors.As(err, &re) || re.ID != 7 {
		t.Errorf("link to page 7 of 3: %v", err)
	}
	if _, err := New(3).Rank(context.Background(), Options{}); err == nil {
		t.Error("Rank before Load: no error")
	}
	// A stream that changes between readings.
	calls := 0
	changing := func(yield func(Link) bool) error {
		calls++
		yield(Link{From: 0, To: 1})
		if calls > 1 {
			yield(Link{From: 1, To: 2})
		}
		return nil
	}
	if err := New(3).Load(changing); !errors.Is(err, ErrLinksChanged) {
		t.Errorf("changed stream, Load: %v", err)
	}
	calls = 0
	if _, err := New(3).RankStream(context.Background(), changing, Options{}); !errors.Is(err, ErrLinksChanged) {
		t.Errorf("changed stream, RankStream: %v", err)
	}
	// A same-sized stream whose links differ: the checksum catches it.
	calls = 0
	swapped := func(yield func(Link) bool) error {
		calls++
		if calls == 1 {
			yield(Link{From: 0, To: 1})
		} else {
			yield(Link{From: 0, To: 2})
		}
		return nil
	}
	if err := New(3).Load(swapped); !errors.Is(err, ErrLinksChanged) {
		t.Errorf("swapped stream: %v", err)
	}
	// A reading error is returned as it is.
	boom := errors.New("disk I/O error")
	failing := func(yield func(Link) bool) error { yield(Link{From: 0, To: 1}); return boom }
	if err := New(3).Load(failing); !errors.Is(err, boom) {
		t.Errorf("failing stream: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(3).RankStream(ctx, slice(), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if r, err := New(0).RankStream(context.Background(), slice(), Options{}); err != nil || len(r.Rank) != 0 {
		t.Errorf("empty graph: %v %v", r, err)
	}
}

// loadedBytes is the heap a loaded graph of n pages × perPage links holds per link, its 8 bytes a page
// (the offsets and the counts) left out: the heap with the graph loaded less the heap once it is
// dropped, both after a collection, so that what the runtime and the test framework free or allocate
// meanwhile (tens of KB, which failed the measure from before the graph existed) does not count.
func loadedBytes(n, perPage int) (perLink float64, links, pages, bytes int) {
	var with, without runtime.MemStats
	g := New(n)
	if err := g.Load(randomGraph(n, perPage, 5)); err != nil {
		panic(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&with)
	links, pages, bytes = g.Links(), g.Pages(), g.Bytes()
	runtime.KeepAlive(g)
	g = nil
	runtime.GC()
	runtime.ReadMemStats(&without)
	return float64(with.HeapAlloc-without.HeapAlloc-uint64(8*n)) / float64(links), links, pages, bytes
}

// TestMemoryPerLinkIsConstant compares two sizes: the loaded graph holds 3 bytes per link and 8 per
// page, whatever the size.
func TestMemoryPerLinkIsConstant(t *testing.T) {
	small, links1, _, _ := loadedBytes(20_000, 30)
	large, links2, pages2, bytes2 := loadedBytes(200_000, 30)
	t.Logf("%.2f B/link at %d links, %.2f at %d", small, links1, large, links2)
	for _, b := range []float64{small, large} {
		if b < 2.9 || b > 3.3 {
			t.Errorf("%.2f B/link, want about 3", b)
		}
	}
	if bytes2 != 3*links2+1+4*(2*pages2+1) {
		t.Errorf("Bytes %d for %d links, %d pages", bytes2, links2, pages2)
	}
}
