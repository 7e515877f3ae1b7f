package pagetext

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWordDiffReadsAsWords(t *testing.T) {
	wd := Diff("Our plans start at 10 euros a month.", "Our plans start at 12 euros a month, billed yearly.")
	assert.True(t, wd.Changed)
	assert.Equal(t, "Our plans start at [-10-]{+12+} euros a [-month.-]{+month, billed yearly.+}", wd.Plain())
	assert.Equal(t, 4, wd.Added, "12 month, billed yearly.")
	assert.Equal(t, 2, wd.Removed, "10 month.")

	same := Diff("a b", "a b")
	assert.False(t, same.Changed)
	assert.Empty(t, same.Segs)
}

func TestWordDiffKeepsContextAroundChanges(t *testing.T) {
	long := strings.Repeat("filler ", 40)
	wd := Diff("start "+long+"old end", "start "+long+"new end")
	p := wd.Plain()
	assert.True(t, strings.HasPrefix(p, "… "), p)
	assert.Contains(t, p, "[-old-]{+new+} end")
	assert.Equal(t, ContextWords, strings.Count(p, "filler"), "context words before the change")
	assert.NotContains(t, p, "start", "far-away text is left out")
}

func TestWordDiffLineBreaks(t *testing.T) {
	wd := Diff("Title\nFirst paragraph.", "Title\nSecond paragraph.")
	assert.Equal(t, "Title ¶ [-First-]{+Second+} paragraph.", wd.Plain())
}

// FuzzWordDiff: the full diff's segments always spell both texts back, and
// the trimmed diff never panics whatever the input.
func FuzzWordDiff(f *testing.F) {
	for _, s := range [][2]string{
		{"a b c", "a c"}, {"", "x"}, {"x", ""}, {"one\ntwo", "one two"}, {"  spaced  out ", "spaced out"},
		{"ü ß 漢字", "ü 漢字 ß"}, {strings.Repeat("w ", 50), strings.Repeat("w ", 49) + "v"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 4096 || len(b) > 4096 {
			return
		}
		var oldText, newText strings.Builder
		for _, s := range DiffFull(a, b) {
			switch s.Op {
			case OpEqual:
				oldText.WriteString(s.Text)
				newText.WriteString(s.Text)
			case OpDelete:
				oldText.WriteString(s.Text)
			case OpInsert:
				newText.WriteString(s.Text)
			default:
				t.Fatalf("gap in a full diff")
			}
		}
		if a != b && (oldText.String() != a || newText.String() != b) {
			t.Fatalf("diff of %q, %q spells %q, %q", a, b, oldText.String(), newText.String())
		}
		_ = Diff(a, b).Plain()
	})
}
