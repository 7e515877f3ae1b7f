package textscope

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The whole page (zero Rules) is what every snapshot stores: the text a
// reader sees.
func whole(t *testing.T, body, contentType string) Result {
	t.Helper()
	s, err := Compile(Rules{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.HTML([]byte(body), contentType)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestVisibleTextIsWhatAReaderSees(t *testing.T) {
	r := whole(t, `<!doctype html><html><head><title>Not body text</title>
<style>p{color:red}</style><script>var x = "hidden";</script></head>
<body><h1>Pricing</h1><p>Plans   start at <b>10</b>&nbsp;euros.<br>Billed monthly.</p>
<noscript>enable js</noscript><template><p>later</p></template>
<ul><li>One</li><li>Two</li></ul>wo<i>rd</i></body></html>`, "text/html")
	if r.Cut || r.Text != "Pricing\nPlans start at 10 euros.\nBilled monthly.\nOne\nTwo\nword" {
		t.Fatalf("cut=%v text=%q", r.Cut, r.Text)
	}
}

func TestVisibleTextDecodesDeclaredCharset(t *testing.T) {
	if r := whole(t, "<p>caf\xe9</p>", "text/html; charset=iso-8859-1"); r.Text != "café" {
		t.Fatalf("latin-1: %q", r.Text)
	}
	if r := whole(t, `<meta charset="windows-1252"><p>caf`+"\xe9</p>", "text/html"); r.Text != "café" {
		t.Fatalf("meta charset: %q", r.Text)
	}
	if r := whole(t, "\xef\xbb\xbf<p>bom\x00here\x07</p>", "text/html"); r.Text != "bomhere" {
		t.Fatalf("the BOM is not a word, NUL and BEL are not text: %q", r.Text)
	}
	if r := whole(t, "<p>a\ufeffb\u00a0c</p>", "text/html; charset=utf-8"); r.Text != "a b c" {
		t.Fatalf("a BOM or no-break space inside the text separates words: %q", r.Text)
	}
}

// FuzzVisibleText: any bytes and Content-Type give valid UTF-8 within the
// cap, one space or one line break between words, no control characters,
// never a panic.
func FuzzVisibleText(f *testing.F) {
	for _, s := range []string{
		"<p>a</p>", "<script>x</script>y", "<template>", "<p>caf\xe9", "\xff\xfe<\x00p>", "<div><div><p>x<br>y",
		"<title>t</title><h1>h</h1>", "<svg><title>s</title></svg>text", "<meta charset=utf-16><p>x",
		"wo<i>rd</i> <b> </b>x", "a\u00a0\ufeffb\x00\x07c",
	} {
		f.Add([]byte(s), "text/html")
	}
	s, err := Compile(Rules{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		r, err := s.HTML(body, ct)
		if err != nil {
			return // nested deeper than the parser goes: ErrUnparsable
		}
		text := r.Text
		if !utf8.ValidString(text) || len(text) > MaxTextBytes {
			t.Fatalf("%d bytes, valid UTF-8 %v", len(text), utf8.ValidString(text))
		}
		if strings.Contains(text, "  ") || strings.Contains(text, "\n\n") || strings.HasPrefix(text, " ") ||
			strings.HasSuffix(text, " ") || strings.HasPrefix(text, "\n") || strings.Contains(text, " \n") || strings.Contains(text, "\n ") {
			t.Fatalf("separators not normalised: %q", text)
		}
		for _, c := range text {
			if c != '\n' && unicode.IsControl(c) {
				t.Fatalf("control character %U in %q", c, text)
			}
		}
	})
}
