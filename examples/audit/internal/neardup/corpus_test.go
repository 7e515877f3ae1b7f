package neardup

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// The test corpus is a generated shop: every page has the same header and footer text around its
// own product copy. Pages come in families of familySize: page 0 of a family is an ordinary product
// page; page 1 is a near-copy (one word of the copy changed, as a colour variant would be), page 2
// another (two words changed), page 3 an exact copy. Pages 4 and on of a family are other products,
// none alike. Each page's text is generated again from its number whenever it is needed, so a
// 100,000-page corpus costs no memory.
const familySize = 50

var vocab = func() []string {
	syll := []string{"ka", "lo", "ve", "tri", "mon", "sa", "pel", "dur", "ix", "zo", "ran", "ben", "qu", "et", "or", "ful"}
	r := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 4000)
	for i := range words {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syll[r.IntN(len(syll))])
		}
		b.WriteString(strconv.Itoa(i % 7)) // keeps the words distinct enough
		words[i] = b.String()
	}
	return words
}()

const header = "Cove Outdoor Shop. Home | Tents | Kayaks | Lanterns | Stoves | Sale | About us | Contact | " +
	"Basket | Account | Sign in. Free delivery on orders over fifty pounds, returns within thirty days."

const footer = "Cove Outdoor Shop Ltd, 12 Harbour Road, Falmouth. Opening hours Monday to Saturday nine " +
	"to five. Privacy policy, cookie settings, terms and conditions. Follow us for offers."

// family is the family of page p and its place in it.
func family(p int) (base, off int) { return p - p%familySize, p % familySize }

// pageText writes the text of page p to w in pieces, as an HTML tokenizer would hand it over.
func pageText(p int, w func(string)) {
	base, off := family(p)
	seed := uint64(p)
	if off <= 3 {
		seed = uint64(base)
	}
	r := rand.New(rand.NewPCG(seed, 7))
	n := 120 + r.IntN(100)
	changed := map[int]bool{}
	switch off {
	case 1:
		changed[n/2] = true
	case 2:
		changed[n/3], changed[2*n/3] = true, true
	}
	w(header)
	w(" ")
	w("Product " + vocab[r.IntN(len(vocab))] + " " + vocab[r.IntN(len(vocab))] + ". ")
	for i := range n {
		word := vocab[zipf(r)]
		if changed[i] {
			word = "variant" + strconv.Itoa(off)
		}
		w(word)
		if i%11 == 10 {
			w(". ")
		} else {
			w(" ")
		}
	}
	w("Price " + strconv.Itoa(5+r.IntN(300)) + ".99. ")
	w(footer)
}

// zipf picks a word index with a long tail, as words in real copy are.
func zipf(r *rand.Rand) int {
	x := r.Float64()
	return min(len(vocab)-1, int(float64(len(vocab))*x*x*x))
}

func pageFingerprint(p int) Fingerprint {
	var h Hasher
	pageText(p, func(s string) { h.WriteString(s) })
	return h.Sum()
}

// shingles is the oracle: the set of 3-word shingles of page p by a plain reading of the text.
func shingles(p int) map[string]bool {
	var b strings.Builder
	pageText(p, func(s string) { b.WriteString(s) })
	words := strings.FieldsFunc(strings.ToLower(b.String()), func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9')
	})
	set := map[string]bool{}
	for i := 0; i+ShingleWords <= len(words); i++ {
		set[strings.Join(words[i:i+ShingleWords], " ")] = true
	}
	return set
}

func jaccard(a, b map[string]bool) float64 {
	inter := 0
	for s := range a {
		if b[s] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
