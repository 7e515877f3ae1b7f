package htmlx

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func utf16Bytes(s string, bigEndian bool) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		if bigEndian {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return b
}

// A byte order mark says how the page is encoded; it is not text.
func TestByteOrderMarkIsNotAWord(t *testing.T) {
	doc := "<title>Hi</title><p>Hello world</p>"
	for _, tc := range []struct {
		name, in, enc string
	}{
		{"utf-8", "\xef\xbb\xbf" + doc, "utf-8"},
		{"utf-8, text first", "\xef\xbb\xbfHello <p>world</p><title>Hi</title>", "utf-8"},
		{"utf-16le", "\xff\xfe" + string(utf16Bytes(doc, false)), "utf-16le"},
		{"utf-16be", "\xfe\xff" + string(utf16Bytes(doc, true)), "utf-16be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The BOM wins over the Content-Type.
			p, err := Options{ContentType: "text/html; charset=iso-8859-1"}.Parse(strings.NewReader(tc.in), nil)
			require.NoError(t, err)
			assert.Equal(t, "Hi", p.Title)
			assert.Equal(t, 2, p.WordCount)
			assert.Equal(t, sum("Hello world"), p.TextHash)
			assert.Equal(t, tc.enc, p.Encoding)
		})
	}
}

// A page that declares no encoding and is not UTF-8 is decoded with the
// sniffed encoding (windows-1252, the standard's default), not passed on
// as invalid UTF-8.
func TestUndeclaredLegacyEncodingIsDecoded(t *testing.T) {
	for _, tc := range []struct {
		name, doc, title, text string
	}{
		{"non-UTF-8 in the first KiB", "<title>Caf\xe9</title><p>na\xefve</p>", "Café", "naïve"},
		{"non-UTF-8 only after the first KiB", "<title>Plain</title>" + strings.Repeat(" ", 2000) + "<p>Caf\xe9 cr\xe8me</p>",
			"Plain", "Café crème"},
		{"non-UTF-8 far into the body", "<title>Plain</title><p>" + strings.Repeat("word ", 20000) + "</p><p>\x93quoted\x94</p>",
			"Plain", strings.Repeat("word ", 20000) + "“quoted”"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tc.doc), iotest.OneByteReader(strings.NewReader(tc.doc))} {
				p, err := Parse(r, nil)
				require.NoError(t, err)
				assert.Equal(t, tc.title, p.Title)
				assert.Equal(t, "windows-1252", p.Encoding)
				assert.Equal(t, sum(tc.text), p.TextHash)
			}
		})
	}
}

// "charset" in the first KiB is not a declaration: the <meta charset> that
// comes later, still in the head, decides, as in Chrome.
func TestLateMetaCharsetInTheHead(t *testing.T) {
	head := `<!doctype html><html><head><!-- the charset is declared below, after the scripts -->
<script>` + strings.Repeat("var charset = 'utf-8'; ", 60) + `</script>`
	require.Greater(t, len(head), 1024)

	p, err := Parse(strings.NewReader(head+`<meta charset="utf-8"><title>Café ☕</title></head><body>crème</body>`), nil)
	require.NoError(t, err)
	assert.Equal(t, "Café ☕", p.Title)
	assert.Equal(t, "utf-8", p.Encoding)
	assert.Equal(t, sum("crème"), p.TextHash)

	p, err = Parse(strings.NewReader(head+`<meta http-equiv="Content-Type" content="text/html; charset=windows-1252"><title>Caf`+"\xe9"+`</title>`), nil)
	require.NoError(t, err)
	assert.Equal(t, "Café", p.Title)
	assert.Equal(t, "windows-1252", p.Encoding)

	// A declaration after the head has ended does not count (Chrome stops
	// at the first tag that does not belong in <head>); the bytes decide.
	body := "<title>T</title><body><p>" + strings.Repeat("x ", 600) + `</p><meta charset="shift_jis"><p>Caf` + "\xc3\xa9</p>"
	p, err = Parse(strings.NewReader(body), nil)
	require.NoError(t, err)
	assert.Equal(t, "utf-8", p.Encoding)
}

// Invalid UTF-8 in a UTF-8 page reads as U+FFFD, as in browsers: every
// extracted string is valid UTF-8.
func TestInvalidUTF8IsReplaced(t *testing.T) {
	for _, ct := range []string{"", "text/html; charset=utf-8"} {
		doc := "<meta charset=utf-8><title>a\xffb</title><h1>x\xc3(</h1><a href=/l>ca\xe9</a>"
		p, err := Options{ContentType: ct}.Parse(strings.NewReader(doc), mustURL(t, "https://s.example/"))
		require.NoError(t, err)
		assert.Equal(t, "a\ufffdb", p.Title)
		assert.Equal(t, []string{"x\ufffd("}, p.H1)
		require.Len(t, p.Links, 1)
		assert.Equal(t, "ca\ufffd", p.Links[0].Text)
		assert.Equal(t, "utf-8", p.Encoding)
	}
	// A character cut by the end of the input.
	p, err := Parse(strings.NewReader("<meta charset=utf-8><h1>é\xe2\x82"), nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"é\ufffd"}, p.H1, "one U+FFFD for the cut character")
	assert.True(t, utf8.ValidString(p.H1[0]))
}

// Characters cut across reads are put back together, whatever the chunking.
func TestUTF8AcrossReads(t *testing.T) {
	doc := "<meta charset=utf-8><title>" + strings.Repeat("日本語 ", 2000) + "</title>"
	a, err := Parse(strings.NewReader(doc), nil)
	require.NoError(t, err)
	b, err := Parse(iotest.HalfReader(strings.NewReader(doc)), nil)
	require.NoError(t, err)
	c, err := Parse(iotest.OneByteReader(strings.NewReader(doc)), nil)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.Equal(t, a, c)
	assert.True(t, strings.HasPrefix(a.Title, "日本語 日本語"))
	assert.NotContains(t, a.Title, "\ufffd")
}

func TestDeclaredEncodings(t *testing.T) {
	for _, tc := range []struct {
		name, ct, doc, title, enc string
	}{
		{"meta charset", "", "<meta charset=windows-1252><title>Caf\xe9</title>", "Café", "windows-1252"},
		{"latin1 label is windows-1252", "", "<meta charset=latin1><title>\x93q\x94</title>", "“q”", "windows-1252"},
		{"http-equiv", "", `<meta http-equiv=content-type content='text/html;charset="iso-8859-2"'><title>` + "\xb1</title>", "ą", "iso-8859-2"},
		{"content without http-equiv is no declaration", "", `<meta content="text/html; charset=iso-8859-2"><title>Caf` + "\xc3\xa9</title>", "Café", "utf-8"},
		{"utf-16 in a meta means utf-8", "", "<meta charset=utf-16><title>Caf\xc3\xa9</title>", "Café", "utf-8"},
		{"Content-Type wins over meta", "text/html; charset=ISO-8859-1", "<meta charset=utf-8><title>Caf\xe9</title>", "Café", "windows-1252"},
		{"unknown Content-Type label is ignored", "text/html; charset=bogus", "<meta charset=windows-1252><title>Caf\xe9</title>", "Café", "windows-1252"},
		{"shift_jis", "", "<meta charset=shift_jis><title>\x82\xa0</title>", "あ", "shift_jis"},
		{"meta in a comment is no declaration", "", "<!-- <meta charset=shift_jis> --><title>Caf\xc3\xa9</title>", "Café", "utf-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Options{ContentType: tc.ct}.Parse(strings.NewReader(tc.doc), nil)
			require.NoError(t, err)
			assert.Equal(t, tc.title, p.Title)
			assert.Equal(t, tc.enc, p.Encoding)
		})
	}
}
