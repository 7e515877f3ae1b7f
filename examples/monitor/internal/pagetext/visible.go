package pagetext

import (
	"bytes"
	"compress/flate"
	"errors"
	"io"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// The visible text of a snapshot, kept so that a change of content can be
// shown as a word diff rather than as two hashes. It is the text a reader
// sees: not script, style, noscript, template, title or other raw-text
// elements; block elements end a line, inline ones do not; runs of white
// space become one space. (fetch/page computes the hash and word count with
// the same rules but does not expose the text; it is read again here, in the
// monitor, in the encoding fetch/page settled on, rather than changing a
// shared package.)

// MaxBytes caps the stored text of one snapshot; the rest is dropped at
// a word boundary and the snapshot says the text was cut.
const MaxBytes = 100 << 10

// skipText are the elements whose content is not visible text.
var skipText = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true, "title": true,
	"iframe": true, "noembed": true, "noframes": true, "xmp": true,
}

// blockElems end a line of text.
var blockElems = map[string]bool{
	"address": true, "article": true, "aside": true, "blockquote": true, "body": true, "br": true,
	"center": true, "dd": true, "details": true, "dialog": true, "div": true, "dl": true, "dt": true,
	"fieldset": true, "figcaption": true, "figure": true, "footer": true, "form": true, "h1": true,
	"h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "header": true, "hr": true, "html": true,
	"legend": true, "li": true, "main": true, "nav": true, "ol": true, "p": true, "pre": true,
	"section": true, "summary": true, "table": true, "td": true, "th": true, "tr": true, "ul": true,
	"caption": true, "tbody": true, "thead": true, "tfoot": true, "option": true, "button": true,
}

// textBuilder collects words into lines, capped, writing runes straight
// into one buffer (a page has thousands of words: no string per word).
type textBuilder struct {
	b         []byte
	lineWords int
	pendingNL bool
	inWord    bool
	wordStart int // where the current word (with its separator) starts in b
	cut       bool
}

func (t *textBuilder) rune(r rune) {
	if t.cut {
		return
	}
	if !t.inWord {
		t.wordStart = len(t.b)
		switch {
		case t.pendingNL:
			t.b = append(t.b, '\n')
		case t.lineWords > 0:
			t.b = append(t.b, ' ')
		}
		t.inWord, t.pendingNL = true, false
	}
	t.b = utf8.AppendRune(t.b, r)
	if len(t.b) > MaxBytes {
		// Drop the word being written: the text ends at a word boundary.
		t.b = t.b[:t.wordStart]
		t.cut, t.inWord = true, false
	}
}

// endWord closes the word being written, if any.
func (t *textBuilder) endWord() {
	if t.inWord {
		t.inWord = false
		t.lineWords++
	}
}

func (t *textBuilder) newline() {
	t.endWord()
	if t.lineWords > 0 {
		t.pendingNL = true
		t.lineWords = 0
	}
}

// Visible reads an HTML document (decoded by its Content-Type charset,
// BOM or <meta charset>) and returns its visible text, one line per block,
// words separated by single spaces, and whether it was cut at MaxBytes.
// Malformed markup never fails; the input is whatever fetch kept (capped).
func Visible(body []byte, contentType string) (string, bool) {
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		r = bytes.NewReader(body)
	}
	z := html.NewTokenizer(r)
	var (
		t       textBuilder
		skip    []string // open elements whose content is skipped
		nameBuf [16]byte
	)
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			t.endWord()
			return string(t.b), t.cut
		case html.TextToken:
			if len(skip) > 0 {
				continue
			}
			for _, r := range string(z.Text()) {
				switch {
				case r == 0: // NUL is not text
				case unicode.IsSpace(r) || r == '\u00a0' || r == '\ufeff':
					t.endWord()
				case !unicode.IsControl(r):
					t.rune(r)
				}
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name := rawTagName(&nameBuf, z.Raw())
			if skipText[string(name)] && tt == html.StartTagToken {
				skip = append(skip, string(name))
				continue
			}
			if len(skip) == 0 && blockElems[string(name)] {
				t.newline()
			}
		case html.EndTagToken:
			name := rawTagName(&nameBuf, z.Raw())
			if n := len(skip); n > 0 {
				if skip[n-1] == string(name) {
					skip = skip[:n-1]
				}
				continue
			}
			if blockElems[string(name)] {
				t.newline()
			}
		}
	}
}

// flateWriters are reused: a flate.Writer holds about 1 MB of tables, and
// a run compresses one text per snapshot.
var flateWriters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.DefaultCompression)
	return w
}}

// rawTagName returns the lower-cased name of the tag whose raw bytes are
// raw ("<Name ...>" or "</Name>") in buf, without allocating (the
// tokenizer's TagName copies every name). Names longer than buf cannot be one
// of the elements looked up and are returned cut.
func rawTagName(buf *[16]byte, raw []byte) []byte {
	i := 1
	if len(raw) > 1 && raw[1] == '/' {
		i = 2
	}
	n := 0
	for ; i < len(raw) && n < len(buf); i++ {
		c := raw[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		default:
			return buf[:n]
		}
		buf[n] = c
		n++
	}
	return buf[:n]
}

// Compress deflates text for the snapshots.text column.
func Compress(s string) []byte {
	if s == "" {
		return nil
	}
	var buf bytes.Buffer
	w := flateWriters.Get().(*flate.Writer)
	w.Reset(&buf)
	io.WriteString(w, s)
	w.Close()
	flateWriters.Put(w)
	return buf.Bytes()
}

// ErrTooLong: a stored text inflates past its cap (a damaged or hostile
// database row); reading stops there.
var ErrTooLong = errors.New("stored text longer than the cap")

// Decompress inflates a snapshots.text value, reading at most
// MaxBytes+1 bytes whatever the row holds.
func Decompress(z []byte) (string, error) {
	if len(z) == 0 {
		return "", nil
	}
	r := flate.NewReader(bytes.NewReader(z))
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > MaxBytes {
		return string(b[:MaxBytes]), ErrTooLong
	}
	return string(b), nil
}
