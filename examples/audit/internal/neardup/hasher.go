// Package neardup finds near-duplicate pages: pages whose text is at least 90 % the same, the
// threshold Screaming Frog's near-duplicate report uses.
//
// The model: a page's words are read in a stream by a [Hasher] into a [Fingerprint], a MinHash
// signature of its set of 3-word shingles (64 values of 16 bits, 128 bytes). The fraction of equal
// values between two fingerprints estimates the Jaccard similarity of the two shingle sets, the
// measure Screaming Frog's 90 % is expressed in. An [Index] takes fingerprints one at a time
// (Add), finds candidate pairs with LSH banding (8 bands of 8 values: pages that agree on a whole band
// land in the same bucket, so no pair of pages is compared unless a band matches), verifies each
// candidate by its estimated similarity and joins the verified pairs into groups with union-find.
//
// neardup never touches the database, the network or the HTML: the caller feeds it the visible words
// of each page's content (Screaming Frog leaves navigation and footer out, and so should the caller)
// and writes the groups it yields. It keeps 128 bytes of fingerprint and a 4-byte id per page, and
// about 25 bytes more per page while it searches; it never holds a page's text.
package neardup

import (
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf8"
)

const (
	// Hashes is the number of MinHash values in a Fingerprint. 64 values estimate a similarity of
	// 0.9 with a standard deviation of 0.04.
	Hashes = 64

	// ShingleWords is the number of consecutive words in a shingle. Three: one-word shingles (a bag
	// of words) ignore word order, so two pages built from the same vocabulary look alike; with k-word
	// shingles one changed word changes k shingles, so at five or more a page with two or three
	// edited words in 200 already falls below 90 %. Three keeps the order and still counts an edit
	// of one word as a small change.
	ShingleWords = 3
)

// Fingerprint is the MinHash signature of a page's shingles, by one-permutation hashing (Li, Owen
// and Zhang 2012): each shingle's 64-bit hash picks one of Hashes bins by its top bits, and each value
// is the low 16 bits of the smallest hash of any shingle in its bin (b-bit MinHash, Li and König
// 2010). A bin no shingle fell in takes the value of another bin, chosen by a fixed sequence of probes
// (optimal densification, Shrivastava 2017), so for two pages each value is equal with probability
// their Jaccard similarity, as with Hashes independent hash functions, for the cost of one. A page with
// no words has every value 0xFFFF.
type Fingerprint [Hashes]uint16

// Version names the way Fingerprint is computed. Fingerprints of different versions estimate
// nothing when compared, so a store that keeps them records the version they were made with:
// version 1 took the minima of Hashes hash functions of each shingle; version 2 is one-permutation
// hashing with densification.
const Version = 2

// Similarity estimates the Jaccard similarity of the shingle sets of the two pages, between 0 and
// 1: the share of equal values, corrected for the 1 in 65,536 chance that two different 16-bit
// minima are equal.
func Similarity(a, b Fingerprint) float64 {
	return estimate(matches(&a, &b))
}

// matches counts the equal values of a and b.
func matches(a, b *Fingerprint) int {
	m := 0
	for i := range a {
		if a[i] == b[i] {
			m++
		}
	}
	return m
}

// estimate turns a count of equal values into a Jaccard estimate.
func estimate(m int) float64 {
	const collision = 1.0 / 65536
	j := (float64(m)/Hashes - collision) / (1 - collision)
	return max(0, min(1, j))
}

// Hasher computes a Fingerprint from a page's text as it streams: Write it the text in pieces of any
// size (UTF-8; a rune split between writes is joined) and call Sum. A word is a run of letters and
// digits, compared in lower case; everything else separates words. The Hasher keeps only the hashes
// of the last ShingleWords words and the Hashes current minima (about 300 bytes), never the text, and
// allocates nothing. The zero value is ready to use.
type Hasher struct {
	mins     [Hashes]uint32 // the least hash of each bin, where filled has its bit
	filled   uint64         // the bins a shingle fell in
	last     [ShingleWords]uint64
	words    int
	word     uint64 // FNV-1a state of the word being read
	inWord   bool
	pend     [utf8.UTFMax]byte // the start of a rune split between writes
	npend    int
	shingled bool // at least one shingle was added
}

// binBits is log2(Hashes): a shingle's bin is the top binBits bits of its hash.
const binBits = 6

// densifySeed starts the probe sequence of the bins no shingle fell in: fixed, so every fingerprint of
// every run is comparable.
const densifySeed = 0x5eed_c0fe_2026

// mix is the splitmix64 finaliser: every input bit affects every output bit.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	x ^= x >> 31
	return x
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// Reset clears the Hasher for the next page.
func (h *Hasher) Reset() { *h = Hasher{} }

// Words is the number of words written so far.
func (h *Hasher) Words() int {
	if h.inWord {
		return h.words + 1
	}
	return h.words
}

// Write adds text to the page. It never fails.
func (h *Hasher) Write(p []byte) (int, error) { return write(h, p) }

// WriteString is Write for a string, without a copy.
func (h *Hasher) WriteString(s string) (int, error) { return write(h, s) }

// asciiLower maps each ASCII byte to itself in lower case when it is a letter or digit, and to 0 when
// it separates words.
var asciiLower = func() (t [utf8.RuneSelf]byte) {
	for c := range byte(utf8.RuneSelf) {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			t[c] = c
		case 'A' <= c && c <= 'Z':
			t[c] = c + 'a' - 'A'
		}
	}
	return t
}()

// write reads p, joining a rune that an earlier write cut off.
func write[T string | []byte](h *Hasher, p T) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if h.npend > 0 {
			k := copy(h.pend[h.npend:], p)
			b := h.pend[:h.npend+k]
			if !utf8.FullRune(b) {
				h.npend += k // p is used up: only then is the rune still short
				return n, nil
			}
			r, size := utf8.DecodeRune(b)
			h.rune(r)
			if size <= h.npend {
				// An invalid start byte: the bytes after it are read again.
				copy(h.pend[:], h.pend[size:h.npend])
				h.npend -= size
				continue
			}
			p = p[size-h.npend:]
			h.npend = 0
			continue
		}
		if p[0] < utf8.RuneSelf {
			p = p[asciiRun(h, p):]
			continue
		}
		// At most UTFMax bytes as a string: a conversion the compiler keeps off the heap.
		head := string(p[:min(len(p), utf8.UTFMax)])
		if !utf8.FullRuneInString(head) {
			h.npend = copy(h.pend[:], p)
			return n, nil
		}
		r, size := utf8.DecodeRuneInString(head)
		h.rune(r)
		p = p[size:]
	}
	return n, nil
}

// asciiRun reads the bytes below 0x80 at the start of p, the common case, with the word's state in
// registers and without the unicode tables; it returns how many it read.
func asciiRun[T string | []byte](h *Hasher, p T) int {
	word, inWord := h.word, h.inWord
	i := 0
	for ; i < len(p); i++ {
		c := p[i]
		if c >= utf8.RuneSelf {
			break
		}
		if c = asciiLower[c]; c != 0 {
			if !inWord {
				inWord, word = true, fnvOffset
			}
			word = (word ^ uint64(c)) * fnvPrime
		} else if inWord {
			h.word, h.inWord = word, inWord
			h.endWord()
			inWord = false
		}
	}
	h.word, h.inWord = word, inWord
	return i
}

func (h *Hasher) rune(r rune) {
	if r < utf8.RuneSelf {
		h.ascii(byte(r))
		return
	}
	if unicode.IsLetter(r) || unicode.IsDigit(r) {
		h.letter(unicode.ToLower(r))
		return
	}
	h.endWord()
}

// ascii is rune for a byte below 0x80.
func (h *Hasher) ascii(c byte) {
	if c = asciiLower[c]; c == 0 {
		h.endWord()
		return
	}
	h.letter(rune(c))
}

func (h *Hasher) letter(r rune) {
	if !h.inWord {
		h.inWord = true
		h.word = fnvOffset
	}
	h.word = (h.word ^ uint64(r)) * fnvPrime
}

func (h *Hasher) endWord() {
	if !h.inWord {
		return
	}
	h.inWord = false
	copy(h.last[:], h.last[1:])
	h.last[ShingleWords-1] = mix(h.word)
	h.words++
	if h.words >= ShingleWords {
		h.shingle(h.last[:])
	}
}

// shingle adds the shingle of the word hashes ws (oldest first) to the minima: its hash picks a bin by
// its top bits and competes there with its low 32.
func (h *Hasher) shingle(ws []uint64) {
	var s uint64
	for i, w := range ws {
		s ^= bits.RotateLeft64(w, 21*i)
	}
	s = mix(s ^ uint64(len(ws)))
	bin, v := s>>(64-binBits), uint32(s)
	if h.filled&(1<<bin) == 0 || v < h.mins[bin] {
		h.mins[bin] = v
		h.filled |= 1 << bin
	}
	h.shingled = true
}

// Sum returns the fingerprint of the text written so far; the Hasher can go on. A page of fewer
// than ShingleWords words is one shingle of the words it has.
func (h *Hasher) Sum() Fingerprint {
	c := *h
	for c.npend > 0 { // a rune cut off at the end: each byte is an invalid rune
		r, size := utf8.DecodeRune(c.pend[:c.npend])
		c.rune(r)
		copy(c.pend[:], c.pend[size:c.npend])
		c.npend -= size
	}
	c.endWord()
	if !c.shingled && c.words > 0 {
		c.shingle(c.last[ShingleWords-c.words:])
	}
	var fp Fingerprint
	for i := range fp {
		fp[i] = 0xFFFF
		if c.filled == 0 {
			continue
		}
		j := uint64(i)
		for t := uint64(0); c.filled&(1<<j) == 0; t++ {
			// An empty bin: the first filled bin of its probe sequence, the same for every page.
			if t < 8*Hashes {
				j = mix(densifySeed^uint64(i)<<32^t) >> (64 - binBits)
			} else {
				j = (j + 1) % Hashes // never in practice: the probes have found a filled bin
			}
		}
		fp[i] = uint16(c.mins[j])
	}
	return fp
}

// Of is the Fingerprint of one text, for callers that have it whole.
func Of(text string) Fingerprint {
	var h Hasher
	h.WriteString(text)
	return h.Sum()
}

// FingerprintBytes is the length of Fingerprint.Bytes: two bytes per value.
const FingerprintBytes = 2 * Hashes

// Bytes encodes the fingerprint as its values in little-endian order, FingerprintBytes long: the form
// the audit's database stores.
func (fp Fingerprint) Bytes() []byte {
	b := make([]byte, 0, FingerprintBytes)
	for _, v := range fp {
		b = binary.LittleEndian.AppendUint16(b, v)
	}
	return b
}

// FromBytes decodes what Bytes encoded; it reports false, and a zero Fingerprint, when b is not
// FingerprintBytes long.
func FromBytes(b []byte) (Fingerprint, bool) {
	var fp Fingerprint
	if len(b) != FingerprintBytes {
		return fp, false
	}
	for i := range fp {
		fp[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return fp, true
}
