package textscope_test

import (
	"fmt"
	"strings"

	"github.com/politecrawl/polite/examples/monitor/internal/textscope"
)

// Compare only the article of a news page, without its "updated" date.
func ExampleCompile() {
	scope, err := textscope.Compile(textscope.Rules{
		Selector: "article",
		Exclude:  ".share",
		Ignore:   []string{`Updated \d{4}-\d{2}-\d{2}`},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	page := `<nav>Home</nav><article><h1>Bridge approved</h1><p>Updated 2026-12-01 by Ann</p>
		<p>Work starts in spring.</p><div class="share">Share on …</div></article>`
	res, _ := scope.Text(strings.NewReader(page))
	fmt.Println(res.Text)

	_, err = textscope.Compile(textscope.Rules{Ignore: []string{`(\d+`}})
	fmt.Println(err)
	// Output:
	// Bridge approved
	// by Ann
	// Work starts in spring.
	// textscope: ignore rule 1 "(\\d+": error parsing regexp: missing closing ): `(\d+`
}
