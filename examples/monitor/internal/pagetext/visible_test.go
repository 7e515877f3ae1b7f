package pagetext

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVisibleTextIsWhatAReaderSees(t *testing.T) {
	text, cut := Visible([]byte(`<!doctype html><html><head><title>Not body text</title>
<style>p{color:red}</style><script>var x = "hidden";</script></head>
<body><h1>Pricing</h1><p>Plans   start at <b>10</b>&nbsp;euros.<br>Billed monthly.</p>
<noscript>enable js</noscript><template><p>later</p></template>
<ul><li>One</li><li>Two</li></ul>wo<i>rd</i></body></html>`), "text/html")
	assert.False(t, cut)
	assert.Equal(t, "Pricing\nPlans start at 10 euros.\nBilled monthly.\nOne\nTwo\nword", text)
}

func TestVisibleTextDecodesDeclaredCharset(t *testing.T) {
	latin1 := []byte("<p>caf\xe9</p>")
	text, _ := Visible(latin1, "text/html; charset=iso-8859-1")
	assert.Equal(t, "café", text)
	text, _ = Visible([]byte("\xef\xbb\xbf<p>bom\x00here</p>"), "text/html")
	assert.Equal(t, "bomhere", text, "the BOM is not a word, NUL is not text")
}

func TestVisibleTextIsCapped(t *testing.T) {
	body := "<p>" + strings.Repeat("word ", MaxBytes/4) + "</p>"
	text, cut := Visible([]byte(body), "text/html")
	assert.True(t, cut)
	assert.LessOrEqual(t, len(text), MaxBytes)
	assert.True(t, strings.HasSuffix(text, "word"), "cut at a word boundary")
}

func TestTextCompressionRoundTrip(t *testing.T) {
	s := strings.Repeat("Visible text of a page, repeated. ", 500)
	z := Compress(s)
	assert.Less(t, len(z), len(s)/10)
	back, err := Decompress(z)
	require.NoError(t, err)
	assert.Equal(t, s, back)

	// A row that inflates past the cap is cut there, with an error.
	bomb := Compress(strings.Repeat("a", MaxBytes+1000))
	back, err = Decompress(bomb)
	assert.ErrorIs(t, err, ErrTooLong)
	assert.Len(t, back, MaxBytes)
	_, err = Decompress([]byte("not deflate"))
	assert.Error(t, err)
}

// FuzzVisibleText: any bytes give valid UTF-8 within the cap, one space or
// line break between words, never a panic.
func FuzzVisibleText(f *testing.F) {
	for _, s := range []string{
		"<p>a</p>", "<script>x</script>y", "<template>", "<p>caf\xe9", "\xff\xfe<\x00p>", "<div><div><p>x<br>y",
		"<title>t</title><h1>h</h1>", "<svg><title>s</title></svg>text", "<meta charset=utf-16><p>x",
	} {
		f.Add([]byte(s), "text/html")
	}
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		text, _ := Visible(body, ct)
		if !utf8.ValidString(text) {
			t.Fatalf("invalid UTF-8: %q", text)
		}
		if len(text) > MaxBytes {
			t.Fatalf("%d bytes past the cap", len(text))
		}
		if strings.Contains(text, "  ") || strings.Contains(text, "\n\n") || strings.HasPrefix(text, " ") || strings.HasSuffix(text, " ") {
			t.Fatalf("separators not normalised: %q", text)
		}
	})
}
