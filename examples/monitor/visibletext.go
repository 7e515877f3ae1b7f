package main

import (
	"bytes"
	"compress/flate"
	"errors"
	"io"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// The visible text of a snapshot, kept so that a change of content can be
// shown as a word diff rather than as two hashes. It is the text a reader
// sees: not script, style, noscript, template, title or other raw-text
// elements; block elements end a line, inline ones do not; runs of white
// space become one space. (internal/htmlx computes the hash and word count
// with the same rules but does not expose the text; it is read again here,
// in the monitor, rather than changing a shared package.)

// maxTextBytes caps the stored text of one snapshot; the rest is dropped at
// a word boundary and the snapshot says the text was cut.
const maxTextBytes = 100 << 10

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

// textBuilder collects words into lines, capped.
type textBuilder struct {
	b         strings.Builder
	lineWords int
	pendingNL bool
	cut       bool
}

func (t *textBuilder) newline() {
	if t.lineWords > 0 {
		t.pendingNL = true
		t.lineWords = 0
	}
}

func (t *textBuilder) word(w string) {
	if t.cut {
		return
	}
	sep := ""
	if t.pendingNL {
		sep = "\n"
	} else if t.lineWords > 0 {
		sep = " "
	}
	if t.b.Len()+len(sep)+len(w) > maxTextBytes {
		t.cut = true
		return
	}
	t.b.WriteString(sep)
	t.b.WriteString(w)
	t.pendingNL = false
	t.lineWords++
}

// visibleText reads an HTML document (decoded by its Content-Type charset,
// BOM or <meta charset>) and returns its visible text, one line per block,
// words separated by single spaces, and whether it was cut at maxTextBytes.
// Malformed markup never fails; the input is whatever fetch kept (capped).
func visibleText(body []byte, contentType string) (string, bool) {
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		r = bytes.NewReader(body)
	}
	z := html.NewTokenizer(r)
	var (
		t        textBuilder
		skip     []string // open elements whose content is skipped
		pending  strings.Builder
		inWord   bool
		flushPen = func() {
			if pending.Len() > 0 {
				t.word(pending.String())
				pending.Reset()
			}
			inWord = false
		}
	)
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			flushPen()
			return t.b.String(), t.cut
		case html.TextToken:
			if len(skip) > 0 {
				continue
			}
			for _, r := range string(z.Text()) {
				switch {
				case r == 0: // NUL is not text
				case unicode.IsSpace(r) || r == '\u00a0' || r == '\ufeff':
					if inWord {
						flushPen()
					}
				default:
					if !unicode.IsControl(r) {
						pending.WriteRune(r)
						inWord = true
					}
				}
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			tag := string(name)
			if skipText[tag] && tt == html.StartTagToken {
				skip = append(skip, tag)
				continue
			}
			if len(skip) == 0 && blockElems[tag] {
				flushPen()
				t.newline()
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			tag := string(name)
			if n := len(skip); n > 0 {
				if skip[n-1] == tag {
					skip = skip[:n-1]
				}
				continue
			}
			if blockElems[tag] {
				flushPen()
				t.newline()
			}
		}
	}
}

// compressText deflates text for the snapshots.text column.
func compressText(s string) []byte {
	if s == "" {
		return nil
	}
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	io.WriteString(w, s)
	w.Close()
	return buf.Bytes()
}

// errTextTooLong: a stored text inflates past its cap (a damaged or hostile
// database row); reading stops there.
var errTextTooLong = errors.New("stored text longer than the cap")

// decompressText inflates a snapshots.text value, reading at most
// maxTextBytes+1 bytes whatever the row holds.
func decompressText(z []byte) (string, error) {
	if len(z) == 0 {
		return "", nil
	}
	r := flate.NewReader(bytes.NewReader(z))
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxTextBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxTextBytes {
		return string(b[:maxTextBytes]), errTextTooLong
	}
	return string(b), nil
}
