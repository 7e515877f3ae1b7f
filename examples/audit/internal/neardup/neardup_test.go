package neardup

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestHasherWords(t *testing.T) {
	cases := []struct {
		text  string
		words int
	}{
		{"", 0},
		{"   ,,, ", 0},
		{"one", 1},
		{"Hello, world! 42 times", 4},
		{"naïve café über", 3},
		{"日本語 テキスト", 2},
		{"don't", 2},
	}
	for _, c := range cases {
		var h Hasher
		h.WriteString(c.text)
		if got := h.Words(); got != c.words {
			t.Errorf("Words(%q) = %d, want %d", c.text, got, c.words)
		}
	}
}

func TestSimilarityOfTexts(t *testing.T) {
	base := strings.Repeat("the quick brown fox jumps over the lazy dog near the river bank ", 3) +
		"and then it runs into the forest where nobody can see it any more at all today"
	same := strings.ToUpper(base) // case and punctuation do not count
	if got := Similarity(Of(base), Of(same)); got != 1 {
		t.Errorf("same words in upper case: similarity %v, want 1", got)
	}
	punct := strings.ReplaceAll(base, " ", " , ")
	if got := Similarity(Of(base), Of(punct)); got != 1 {
		t.Errorf("same words with commas: similarity %v, want 1", got)
	}
	other := "a completely different text about kayaks paddles and the sea which shares no phrase " +
		"with the other one whatsoever because every word here was chosen to differ from it"
	if got := Similarity(Of(base), Of(other)); got > 0.2 {
		t.Errorf("unrelated texts: similarity %v, want near 0", got)
	}
	if got := Similarity(Of(""), Of(base)); got != 0 {
		t.Errorf("empty against text: similarity %v, want 0", got)
	}
	if Of("") != Of("  ") {
		t.Error("two empty pages differ")
	}
	short := Of("two words")
	if short == Of("") || short != Of("TWO, words") {
		t.Error("a page shorter than a shingle is one shingle of its words")
	}
}

// TestSimilarityEstimatesJaccard checks the estimate against the true Jaccard similarity of the
// shingle sets, over pairs of the corpus from near-identical to unrelated.
func TestSimilarityEstimatesJaccard(t *testing.T) {
	for _, pair := range [][2]int{{0, 1}, {0, 2}, {0, 3}, {0, 4}, {50, 51}, {50, 52}, {4, 5}} {
		want := jaccard(shingles(pair[0]), shingles(pair[1]))
		got := Similarity(pageFingerprint(pair[0]), pageFingerprint(pair[1]))
		// 64 values: the standard deviation is √(J(1-J)/64), at most 0.0625; allow four.
		if sd := math.Sqrt(want * (1 - want) / Hashes); math.Abs(got-want) > 4*sd+1e-9 {
			t.Errorf("pages %v: estimate %.3f, Jaccard %.3f (sd %.3f)", pair, got, want, sd)
		}
	}
}

func TestStreamingEqualsWhole(t *testing.T) {
	text := "Ünïcode wörds — split ﬁ across writes: 東京 and café, 123 numbers. \xff\xfe broken \xe2\x82 bytes"
	whole := Of(text)
	for cut := range len(text) + 1 {
		var h Hasher
		h.Write([]byte(text[:cut]))
		h.Write([]byte(text[cut:]))
		if h.Sum() != whole {
			t.Fatalf("cut at %d: the fingerprint differs from the whole text's", cut)
		}
	}
	var h Hasher
	for i := range len(text) {
		h.WriteString(text[i : i+1])
	}
	if h.Sum() != whole {
		t.Fatal("byte by byte: the fingerprint differs from the whole text's")
	}
	h.Reset()
	if h.Sum() != Of("") || h.Words() != 0 {
		t.Fatal("Reset did not clear the Hasher")
	}
}

func TestSumDoesNotEndThePage(t *testing.T) {
	var h Hasher
	h.WriteString("first part of the page with a wo")
	_ = h.Sum()
	h.WriteString("rd cut in two")
	if h.Sum() != Of("first part of the page with a word cut in two") {
		t.Error("Sum changed the Hasher")
	}
}

var (
	corpusMu  sync.Mutex
	corpusFPs []Fingerprint
)

// corpus returns the fingerprints of the first n pages of the generated shop, each made once.
func corpus(n int) []Fingerprint {
	corpusMu.Lock()
	defer corpusMu.Unlock()
	for p := len(corpusFPs); p < n; p++ {
		corpusFPs = append(corpusFPs, pageFingerprint(p))
	}
	return corpusFPs[:n:n]
}

func TestGroupsOfTheShop(t *testing.T) {
	n := 10_000
	if testing.Short() {
		n = 2_000
	}
	var x Index
	for p, fp := range corpus(n) {
		x.Add(uint32(p), fp)
	}
	var st Stats
	found := map[[2]int]bool{}
	groups := 0
	for g := range x.GroupsStats(&st) {
		groups++
		base, _ := family(int(g.Members[0].ID))
		for _, m := range g.Members {
			b, off := family(int(m.ID))
			if b != base || off > 3 {
				t.Errorf("false group: %v has page %d, not of family %d's near-copies", ids(g), m.ID, base)
			}
			if m.Closest < DefaultThreshold {
				t.Errorf("page %d: closest %v below the threshold", m.ID, m.Closest)
			}
			found[[2]int{base, off}] = true
		}
	}
	families := n / familySize
	missed := 0
	for f := range families {
		for off := range 4 {
			if !found[[2]int{f * familySize, off}] {
				missed++
				if off == 1 || off == 3 {
					// One changed word (J ≈ 0.97) or an exact copy: never missed.
					t.Errorf("family %d: near-copy %d not grouped (Jaccard %.3f)", f, off,
						jaccard(shingles(f*familySize), shingles(f*familySize+off)))
				}
			}
		}
	}
	// Two changed words is J ≈ 0.94-0.96: found with probability about 0.9 through the base page
	// alone, more through the other copies.
	if recall := 1 - float64(missed)/float64(4*families); recall < 0.97 {
		t.Errorf("recall of the planted near-copies %.3f, want ≥ 0.97", recall)
	}
	if groups > families {
		t.Errorf("%d groups from %d families", groups, families)
	}
	// Each family's exact copy, and now and then a one-word variant whose 64 minima all survive.
	if st.Exact < families || st.Exact > 2*families {
		t.Errorf("%d exact copies found, want %d or a few more", st.Exact, families)
	}
	// Better than quadratic: n²/2 pairs would be 50 million; the bands compare a tiny share.
	if st.Compared > 20*n {
		t.Errorf("%d pairs compared for %d pages", st.Compared, n)
	}
	t.Logf("%d pages: %+v", n, st)
}

func ids(g Group) []uint32 {
	var out []uint32
	for _, m := range g.Members {
		out = append(out, m.ID)
	}
	return out
}

func TestPairsOncePerPair(t *testing.T) {
	var x Index
	for p, fp := range corpus(2_000) {
		x.Add(uint32(p+1000), fp)
	}
	seen := map[[2]uint32]bool{}
	for p := range x.Pairs() {
		if p.A >= p.B {
			t.Errorf("pair %v: A not before B", p)
		}
		k := [2]uint32{p.A, p.B}
		if seen[k] {
			t.Errorf("pair %v twice", p)
		}
		seen[k] = true
		if p.Similarity < DefaultThreshold {
			t.Errorf("pair %v below the threshold", p)
		}
	}
	if !seen[[2]uint32{1000, 1003}] || !seen[[2]uint32{1000, 1001}] {
		t.Errorf("the first family's copies are missing from %v", seen)
	}
	for range x.Pairs() {
		break // stopping early is allowed
	}
}

func TestThreshold(t *testing.T) {
	a := Of(strings.Repeat("alpha beta gamma delta epsilon zeta eta theta iota kappa ", 1) +
		"lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega one two three four")
	b := Of("alpha beta gamma delta epsilon zeta eta theta iota kappa " +
		"lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega one two three five")
	s := Similarity(a, b)
	for _, c := range []struct {
		thr  float64
		want int
	}{{s, 1}, {s + 0.02, 0}, {0, map[bool]int{true: 1, false: 0}[s >= DefaultThreshold]}} {
		x := Index{Threshold: c.thr}
		x.Add(1, a)
		x.Add(2, b)
		got := 0
		for range x.Groups() {
			got++
		}
		if got != c.want {
			t.Errorf("threshold %v (similarity %v): %d groups, want %d", c.thr, s, got, c.want)
		}
	}
}

func TestIdenticalPagesAreOneGroup(t *testing.T) {
	var x Index
	fp := Of("the same template page with nothing of its own on it at all")
	for id := range uint32(1000) {
		x.Add(id*2, fp)
	}
	x.Add(5, Of("something else entirely, a page about lanterns and their wicks and oil"))
	var st Stats
	var got []Group
	for g := range x.GroupsStats(&st) {
		got = append(got, g)
	}
	if len(got) != 1 || len(got[0].Members) != 1000 || got[0].Members[0].ID != 0 || got[0].Members[999].ID != 1998 {
		t.Fatalf("want one group of the 1000 copies in order, got %d groups", len(got))
	}
	if st.Compared != 0 || st.Exact != 999 {
		t.Errorf("identical pages should be paired without band comparisons: %+v", st)
	}
	pairs := 0
	for range x.Pairs() {
		pairs++
	}
	if pairs != 999 {
		t.Errorf("%d pairs for 1000 identical pages, want 999 (each with the first)", pairs)
	}
}

// TestLargeBucketIsCapped: thousands of near-identical pages (not identical) share bands; the
// comparisons stay linear in the pages and the group stays whole.
func TestLargeBucketIsCapped(t *testing.T) {
	var x Index
	body := strings.Join(vocab[:300], " ") // 300 distinct words: a variant is J ≈ 0.98
	n := 3000
	for i := range n {
		x.Add(uint32(i), Of(body+fmt.Sprintf(" item %d", i)))
	}
	var st Stats
	groups, members := 0, 0
	for g := range x.GroupsStats(&st) {
		groups++
		members += len(g.Members)
	}
	if groups != 1 || members != n {
		t.Errorf("%d groups with %d members, want 1 with %d", groups, members, n)
	}
	if st.Compared > bands*MaxBucket*n {
		t.Errorf("%d comparisons for %d pages", st.Compared, n)
	}
	t.Logf("%+v", st)
}

// heapPerPage is the bytes per page an Index keeps after Add (measured with the heap after a
// collection) and allocates during one Groups pass.
func heapPerPage(n int) (kept, search float64) {
	fps := corpus(n)
	var m0, m1, m2 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	x := &Index{}
	for p, fp := range fps {
		x.Add(uint32(p), fp)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	for range x.Groups() {
	}
	runtime.ReadMemStats(&m2)
	runtime.KeepAlive(x)
	return float64(m1.HeapAlloc-m0.HeapAlloc) / float64(n), float64(m2.TotalAlloc-m1.TotalAlloc) / float64(n)
}

// TestMemoryPerPageIsConstant compares two sizes: the bytes per page must not grow with the pages.
func TestMemoryPerPageIsConstant(t *testing.T) {
	if testing.Short() {
		t.Skip("fingerprints 10,000 pages")
	}
	k1, s1 := heapPerPage(2_500)
	k2, s2 := heapPerPage(10_000)
	t.Logf("kept %.0f / %.0f B/page, search %.0f / %.0f B/page at 2,500 / 10,000 pages", k1, k2, s1, s2)
	// Kept: the 132 bytes of fingerprint and id, and up to twice that while append doubles.
	if k2 > 2*(Hashes*2+4)+16 {
		t.Errorf("the index keeps %.0f B/page", k2)
	}
	// Search: a 16-byte sort entry, union-find, flags and the groups, about 30 B/page.
	if s2 > 64 || s2 > 1.25*s1+8 {
		t.Errorf("search allocates %.0f B/page at 10,000 pages against %.0f at 2,500", s2, s1)
	}
}

func FuzzHasher(f *testing.F) {
	f.Add("Hello, world: the quick brown fox", 7)
	f.Add("naïve café \xe2\x82 über 東京", 3)
	f.Add("", 0)
	f.Add("\xff\xfe\xfd", 1)
	f.Fuzz(func(t *testing.T, text string, cut int) {
		whole := Of(text)
		if whole != Of(text) {
			t.Fatal("not deterministic")
		}
		if cut < 0 {
			cut = -cut
		}
		if len(text) > 0 {
			cut %= len(text) + 1
		} else {
			cut = 0
		}
		var h Hasher
		h.Write([]byte(text[:cut]))
		h.WriteString(text[cut:])
		if h.Sum() != whole {
			t.Fatalf("split at %d: fingerprint differs", cut)
		}
		if s := Similarity(whole, h.Sum()); s != 1 {
			t.Fatalf("similarity with itself %v", s)
		}
		if utf8.ValidString(text) && h.Words() > len(text) {
			t.Fatalf("%d words in %d bytes", h.Words(), len(text))
		}
	})
}

func TestGrowThenAddAllocatesNothing(t *testing.T) {
	var x Index
	x.Grow(1000)
	fp := Of("some page")
	id := uint32(0)
	if a := testing.AllocsPerRun(999, func() { x.Add(id, fp); id++ }); a != 0 {
		t.Errorf("Add after Grow allocates %v times", a)
	}
}

func TestFingerprintBytesRoundTrip(t *testing.T) {
	fp := Of("the quick brown fox jumps over the lazy dog")
	b := fp.Bytes()
	if len(b) != FingerprintBytes {
		t.Fatalf("%d bytes, want %d", len(b), FingerprintBytes)
	}
	if b[0] != byte(fp[0]) || b[1] != byte(fp[0]>>8) {
		t.Fatalf("first value %#04x encoded as % x, want little-endian", fp[0], b[:2])
	}
	back, ok := FromBytes(b)
	if !ok || back != fp {
		t.Fatalf("FromBytes(Bytes()) = %v, %v; want the fingerprint back", back, ok)
	}
	for _, n := range []int{0, 1, FingerprintBytes - 1, FingerprintBytes + 1} {
		if got, ok := FromBytes(make([]byte, n)); ok || got != (Fingerprint{}) {
			t.Errorf("FromBytes of %d bytes = %v, %v; want zero, false", n, got, ok)
		}
	}
}

// TestShortPagesEstimateJaccard: pages with fewer shingles than Hashes leave bins empty, which take
// the value of another bin (densification); the estimate must stay unbiased for them, on average over
// many pairs, and each value must still be equal between two pages with probability their Jaccard.
func TestShortPagesEstimateJaccard(t *testing.T) {
	for _, n := range []int{6, 12, 30, 60, 120} {
		var est, jac float64
		const pairs = 300
		for k := range pairs {
			words := make([]string, n)
			for i := range words {
				words[i] = vocab[(k*7919+i*104729)%len(vocab)]
			}
			a := strings.Join(words, " ")
			words[n/2] = "changed"
			b := strings.Join(words, " ")
			est += Similarity(Of(a), Of(b))
			jac += jaccard(textShingles(a), textShingles(b))
		}
		est, jac = est/pairs, jac/pairs
		// The mean of 300 estimates has a standard deviation under 0.004.
		if math.Abs(est-jac) > 0.03 {
			t.Errorf("%d words: mean estimate %.3f, mean Jaccard %.3f", n, est, jac)
		}
		t.Logf("%d words: mean estimate %.3f, mean Jaccard %.3f", n, est, jac)
	}
}

// textShingles is the oracle's shingle set of one text.
func textShingles(text string) map[string]bool {
	words := strings.Fields(strings.ToLower(text))
	set := map[string]bool{}
	for i := 0; i+ShingleWords <= len(words); i++ {
		set[strings.Join(words[i:i+ShingleWords], " ")] = true
	}
	return set
}

// TestHasherAllocatesNothing: fingerprinting a page allocates nothing, whatever its text.
func TestHasherAllocatesNothing(t *testing.T) {
	var parts []string
	pageText(7, func(s string) { parts = append(parts, s) })
	parts = append(parts, "naïve café \xe2\x82 über 東京")
	b := []byte(strings.Join(parts, ""))
	var h Hasher
	if a := testing.AllocsPerRun(100, func() {
		h.Reset()
		for _, s := range parts {
			h.WriteString(s)
		}
		h.Write(b)
		_ = h.Sum()
	}); a != 0 {
		t.Errorf("%v allocations a page", a)
	}
}
