package neardup

import (
	"cmp"
	"iter"
	"slices"
)

const (
	// DefaultThreshold is the similarity at and above which two pages are near-duplicates:
	// Screaming Frog's default of 90 %. With 64 values it means at least 58 equal values (an
	// estimate of 0.906; 57 would be 0.891).
	DefaultThreshold = 0.90

	// bands × rows = Hashes. Two pages are a candidate pair when all rows of one band are equal:
	// at similarity s that happens with probability 1-(1-s⁸)⁸, which is 0.989 at s = 0.9,
	// 0.9998 at 0.95, 0.77 at 0.8, 0.03 at 0.5 and 0.00005 at 0.3.
	bands = 8
	rows  = Hashes / bands

	// MaxBucket bounds the comparisons in one band bucket: a bucket of at most MaxBucket pages is
	// compared pair by pair; in a larger one (hundreds of pages that share a band, nearly always
	// near-copies of each other) each page is compared with the MaxBucket pages after it in the
	// bucket's order, so a search never compares more than bands·MaxBucket·n = 512n pairs, whatever
	// the pages: a site of near-identical pages costs 512n comparisons, not n²/2. Groups stay whole
	// through union-find; Pairs may then leave out some pairs of a large group.
	MaxBucket = 64
)

// Index collects fingerprints and finds the near-duplicate pages among them. Add every page, then
// call Groups (or Pairs); each call searches afresh, in time about linear in the pages when few
// pairs of pages are similar. The zero value uses DefaultThreshold. An Index is not safe for
// concurrent use.
type Index struct {
	// Threshold is the least estimated similarity of a near-duplicate pair, in (0, 1]; zero means
	// DefaultThreshold.
	Threshold float64

	ids []uint32
	fps []Fingerprint
}

// Add adds page id with its fingerprint. Ids are the caller's (a page's row id); each should be
// added once. A page with too few words to compare (the audit's thin-content pages) is better left
// out: all empty pages have the same fingerprint.
func (x *Index) Add(id uint32, fp Fingerprint) {
	x.ids = append(x.ids, id)
	x.fps = append(x.fps, fp)
}

// Grow makes room for n more pages, so that adding them allocates nothing more. The audit knows its
// page count (a COUNT over the pages table): growing by appends instead leaves the discarded smaller
// arrays to the garbage collector, and at a million pages the process's peak RSS is then 3.5 times
// the 132 MB the Index holds.
func (x *Index) Grow(n int) {
	x.ids = slices.Grow(x.ids, n)
	x.fps = slices.Grow(x.fps, n)
}

// Len is the number of pages added.
func (x *Index) Len() int { return len(x.ids) }

// Pair is a verified near-duplicate pair.
type Pair struct {
	A, B       uint32  // page ids, A added before B
	Similarity float64 // the estimate, ≥ the threshold
}

// Member is a page of a Group.
type Member struct {
	ID      uint32  // the id the page was added with
	Closest float64 // the highest similarity to another member found
}

// Group is a set of near-duplicate pages: each member is a near-duplicate of at least one other
// (the groups are the connected parts of the near-duplicate pairs, so two members at the ends of a
// chain can be less alike than the threshold). Members are in the order they were added.
type Group struct {
	Members []Member // at least two
}

// Stats counts the work of the last search.
type Stats struct {
	Pages       int // pages searched
	Exact       int // pages with the same fingerprint as an earlier page
	Compared    int // candidate pairs compared
	Verified    int // pairs at or above the threshold
	CappedBands int // band buckets larger than MaxBucket
}

// Pairs yields each verified near-duplicate pair once: pages with identical fingerprints are
// paired with the first of them, not with each other (a group of k identical pages gives k-1
// pairs), and a band bucket of more than MaxBucket pages is compared only within a window.
func (x *Index) Pairs() iter.Seq[Pair] {
	return func(yield func(Pair) bool) {
		x.search(nil, func(i, j int, m int) bool {
			return yield(Pair{A: x.ids[i], B: x.ids[j], Similarity: estimate(m)})
		})
	}
}

// Groups yields the groups of near-duplicate pages, in the order their first members were added.
func (x *Index) Groups() iter.Seq[Group] {
	return func(yield func(Group) bool) {
		x.groups(nil, yield)
	}
}

// GroupsStats is Groups that also fills st when the search is done (before the first group).
func (x *Index) GroupsStats(st *Stats) iter.Seq[Group] {
	return func(yield func(Group) bool) {
		x.groups(st, yield)
	}
}

func (x *Index) groups(st *Stats, yield func(Group) bool) {
	n := len(x.ids)
	uf := make([]uint32, n) // union-find parent; a root is the smallest index of its set
	for i := range uf {
		uf[i] = uint32(i)
	}
	best := make([]uint8, n) // most equal values with any member found
	x.search(st, func(i, j int, m int) bool {
		union(uf, i, j)
		best[i] = max(best[i], uint8(m))
		best[j] = max(best[j], uint8(m))
		return true
	})
	// Count the members under each root, then list the members of the sets of two or more.
	size := make([]uint32, n)
	for i := range uf {
		r := find(uf, i)
		uf[i] = uint32(r)
		size[r]++
	}
	for i := range n {
		if uf[i] != uint32(i) || size[i] < 2 {
			continue
		}
		// i is a root: its members are at i and after it, and there are size[i] of them.
		g := Group{Members: make([]Member, 0, size[i])}
		for j := i; len(g.Members) < int(size[i]); j++ {
			if uf[j] == uint32(i) {
				g.Members = append(g.Members, Member{ID: x.ids[j], Closest: estimate(int(best[j]))})
			}
		}
		if !yield(g) {
			return
		}
	}
}

func find(uf []uint32, i int) int {
	for int(uf[i]) != i {
		uf[i] = uf[uf[i]] // path halving
		i = int(uf[i])
	}
	return i
}

func union(uf []uint32, i, j int) {
	ri, rj := find(uf, i), find(uf, j)
	if ri == rj {
		return
	}
	if rj < ri {
		ri, rj = rj, ri
	}
	uf[rj] = uint32(ri)
}

// entry is a page's place in one sorted table: its key and its index.
type entry struct {
	key uint64
	i   uint32
}

// search calls pair(i, j, m) for each verified pair of indexes i < j with m equal values, each pair
// once, until pair returns false.
func (x *Index) search(st *Stats, pair func(i, j int, m int) bool) {
	thr := x.Threshold
	if thr <= 0 || thr > 1 {
		thr = DefaultThreshold
	}
	need := Hashes // the fewest equal values at or above thr
	for need > 0 && estimate(need-1) >= thr {
		need--
	}
	var s Stats
	s.Pages = len(x.ids)
	defer func() {
		if st != nil {
			*st = s
		}
	}()

	// Identical fingerprints first: sorted by a hash of the whole fingerprint, each is paired with
	// the first page that has it and left out of the band tables, so a thousand identical pages are
	// a thousand pairs and not half a million comparisons per band.
	t := make([]entry, len(x.fps))
	for i := range x.fps {
		t[i] = entry{key: hashValues(x.fps[i][:]), i: uint32(i)}
	}
	sortEntries(t)
	dup := make([]bool, len(x.fps)) // a copy of an earlier fingerprint
	for a := 0; a < len(t); {
		b := a + 1
		for b < len(t) && t[b].key == t[a].key {
			b++
		}
		// Within a run the indexes ascend, so the first equal page is the earliest, never a copy.
		for k := a + 1; k < b; k++ {
			for f := a; f < k; f++ {
				if x.fps[t[f].i] != x.fps[t[k].i] {
					continue
				}
				dup[t[k].i] = true
				s.Exact++
				s.Verified++
				if !pair(int(t[f].i), int(t[k].i), Hashes) {
					return
				}
				break
			}
		}
		a = b
	}

	t = t[:0]
	for i := range x.fps {
		if !dup[i] {
			t = append(t, entry{i: uint32(i)})
		}
	}
	for band := range bands {
		lo := band * rows
		for k := range t {
			t[k].key = hashValues(x.fps[t[k].i][lo : lo+rows])
		}
		sortEntries(t)
		for a := 0; a < len(t); {
			b := a + 1
			for b < len(t) && t[b].key == t[a].key {
				b++
			}
			if b-a > MaxBucket {
				s.CappedBands++
			}
			for p := a; p < b; p++ {
				for q := p + 1; q < b && q <= p+MaxBucket; q++ {
					i, j := int(t[p].i), int(t[q].i)
					if i > j {
						i, j = j, i
					}
					fi, fj := &x.fps[i], &x.fps[j]
					if firstBand(fi, fj) != band {
						continue // a hash collision, or the pair was compared in an earlier band
					}
					s.Compared++
					m := matches(fi, fj)
					if m < need {
						continue
					}
					s.Verified++
					if !pair(i, j, m) {
						return
					}
				}
			}
			a = b
		}
	}
}

// firstBand is the first band in which a and b are equal, or -1.
func firstBand(a, b *Fingerprint) int {
	for band := range bands {
		lo := band * rows
		if [rows]uint16(a[lo:lo+rows]) == [rows]uint16(b[lo:lo+rows]) {
			return band
		}
	}
	return -1
}

// hashValues hashes a run of fingerprint values into a table key.
func hashValues(vs []uint16) uint64 {
	h := uint64(len(vs))
	for k := 0; k+4 <= len(vs); k += 4 {
		w := uint64(vs[k]) | uint64(vs[k+1])<<16 | uint64(vs[k+2])<<32 | uint64(vs[k+3])<<48
		h = mix(h ^ w)
	}
	return h
}

func sortEntries(t []entry) {
	slices.SortFunc(t, func(a, b entry) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
}
