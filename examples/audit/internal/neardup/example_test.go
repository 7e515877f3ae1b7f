package neardup_test

import (
	"fmt"
	"strings"

	"github.com/politecrawl/polite/examples/audit/internal/neardup"
)

// The audit fingerprints each page's content text as it reads it, adds the fingerprint with the
// page's id, and after the crawl writes one finding per group.
func Example() {
	copy := "A sturdy two person tent with a porch, poles of aluminium and a sewn-in groundsheet. " +
		"It pitches in ten minutes, packs down to the size of a loaf and weighs under two kilograms. " +
		"The flysheet is rated to three thousand millimetres of water, the seams are taped, and the " +
		"vents at both ends keep condensation off your sleeping bag on a still night by the lake. " +
		"Comes with pegs, guy lines, a repair sleeve and a stuff sack. Two year guarantee."
	pages := map[uint32]string{
		1: "Tent Explorer 2 in green. " + copy,
		2: "Tent Explorer 2 in blue. " + copy, // a colour variant: a near-duplicate (Jaccard 0.93)
		3: "Lantern with a glass chimney, brass burner and a wick that lasts a season. Refill with lamp oil only.",
	}
	var x neardup.Index
	var h neardup.Hasher
	for _, id := range []uint32{1, 2, 3} {
		h.Reset()
		for _, word := range strings.Fields(pages[id]) { // as a tokenizer hands the text over
			h.WriteString(word + " ")
		}
		x.Add(id, h.Sum())
	}
	for g := range x.Groups() {
		for _, m := range g.Members {
			fmt.Printf("page %d: closest match %.0f%%\n", m.ID, 100*m.Closest)
		}
	}
	// Output:
	// page 1: closest match 95%
	// page 2: closest match 95%
}
