package crawl

import "hash/maphash"

// urlSet is a set of URLs kept as 64-bit hashes, about 10 to 20 bytes a URL where a map of the strings
// takes some 100: the crawler's sets of URLs done grow with the site, and at a million pages that is the
// difference between 20 MB and 200 MB. Two URLs whose hashes collide count as one; for n URLs that happens
// with probability about n²/2⁶⁵ (3·10⁻⁸ at a million), the same bargain as the frontier's seen set.
type urlSet struct {
	seed maphash.Seed
	m    map[uint64]struct{}
}

func newURLSet() *urlSet { return &urlSet{seed: maphash.MakeSeed(), m: map[uint64]struct{}{}} }

// has reports whether u is in the set.
func (s *urlSet) has(u string) bool {
	_, ok := s.m[maphash.String(s.seed, u)]
	return ok
}

// add puts u in the set and reports whether it was new.
func (s *urlSet) add(u string) bool {
	h := maphash.String(s.seed, u)
	if _, ok := s.m[h]; ok {
		return false
	}
	s.m[h] = struct{}{}
	return true
}
