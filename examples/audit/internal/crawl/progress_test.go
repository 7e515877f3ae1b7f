package crawl

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// The terminal output: the progress line and the summary table.

// The progress line was longer than an 80-column terminal once the crawl slowed down (the 429 URL was in
// it): a wrapped line cannot be redrawn in place, so every redraw scrolled a new line.
func TestProgressLineFitsTheTerminal(t *testing.T) {
	c := &counters{}
	c.pages.Store(123)
	c.errors.Store(1)
	c.requests.Store(200)
	start := time.Unix(0, 0)
	for _, cols := range []int{80, 40} {
		p := &progress{c: c, started: start, now: func() time.Time { return start.Add(100 * time.Second) },
			columns: func() int { return cols },
			state: func() (int, string, bool) {
				return 4567, "slowed down after 429: 1 in flight, 3s gap", true
			}}
		line := p.line()
		assert.LessOrEqual(t, utf8.RuneCountInString(line)+progressReserve, cols, "%q", line)
		assert.True(t, strings.HasPrefix(line, "slowed down after 429"), "the slowdown is never cut off: %q", line)
		if cols == 80 {
			assert.True(t, strings.HasPrefix(line, "slowed down after 429: 1 in flight, 3s gap · 123 done"), line)
		}
	}
	p := &progress{c: c, started: start, now: func() time.Time { return start.Add(time.Second) },
		columns: func() int { return 0 }, state: func() (int, string, bool) { return 0, "4 in flight max, 300ms gap", false }}
	assert.Equal(t, "123 done / 0 queued · 200.0 req/s · 1 error · 4 in flight max, 300ms gap", p.line(), "unknown width: whole line")
}

// The summary table is cut to the terminal's width so its rows do not wrap; elsewhere it shows 90 characters.
func TestSummaryExampleWidth(t *testing.T) {
	counts := map[string]int{"sitemap_url_redirected": 1, "broken_link": 12}
	assert.Equal(t, 90, exampleWidth(0, counts), "not a terminal")
	assert.Equal(t, 80-22-5-4-1, exampleWidth(80, counts), "FINDING and COUNT columns, two 2-space gaps, one spare")
	assert.Equal(t, 90, exampleWidth(200, counts))
	assert.Equal(t, 30, exampleWidth(40, counts), "never less than 30")
}
