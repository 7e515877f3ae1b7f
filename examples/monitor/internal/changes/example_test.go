package changes_test

import (
	"fmt"

	"github.com/politecrawl/polite/examples/monitor/internal/changes"
)

// A page gets a noindex and a new title overnight; the alert channel wants
// only what is at least of high severity.
func ExampleCompare() {
	prev := &changes.Snapshot{Status: 200, Title: "Pricing", MetaRobots: "index, follow",
		ContentHash: "a", Text: "Plans start at ten euros", HasText: true}
	next := &changes.Snapshot{Status: 200, Title: "Pricing plans", MetaRobots: "noindex, follow",
		ContentHash: "b", Text: "Plans start at twelve euros", HasText: true}

	all := changes.Compare(prev, next, changes.Options{Text: changes.TextThreshold{Words: 5}})
	for _, c := range all {
		fmt.Printf("%s %s: %q -> %q\n", c.Severity, c.Kind, c.Old, c.New)
	}
	urgent := changes.Filter{MinSeverity: changes.High}.Apply(all)
	fmt.Println(len(urgent), "urgent:", urgent[0].Kind)
	// Output:
	// critical noindex_added: "meta robots \"index, follow\"" -> "meta robots \"noindex, follow\""
	// medium title: "Pricing" -> "Pricing plans"
	// 1 urgent: noindex_added
}
