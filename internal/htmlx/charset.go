package htmlx

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"mime"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// The prescan for a <meta charset> always reads prescanMin bytes (the HTML
// standard's figure) and, like Chrome, goes on while the markup is still
// head content, up to prescanMax bytes.
const (
	prescanMin = 1024
	prescanMax = 64 << 10
)

// decodeInput returns the page as valid UTF-8 text and the decoder that
// knows, at the end, which encoding it was read in. It follows the HTML
// standard's "determining the character encoding": byte order mark, then the
// Content-Type charset, then a <meta charset> prescan, then sniffing.
func decodeInput(br *bufio.Reader, contentType string) (io.Reader, *textReader) {
	head, _ := br.Peek(prescanMin)

	// 1. A byte order mark wins, and is not part of the text.
	for _, b := range boms {
		if bytes.HasPrefix(head, b.bom) {
			_, _ = br.Discard(len(b.bom))
			return forEncoding(br, b.name)
		}
	}
	// 2. The transport layer.
	if _, params, err := mime.ParseMediaType(contentType); err == nil {
		if _, name := charset.Lookup(params["charset"]); name != "" {
			return forEncoding(br, name)
		}
	}
	// 3. The prescan, past the first KiB while still in the head.
	var src io.Reader = br
	window := head
	name, inHead := prescan(head)
	if name == "" && inHead && len(head) == prescanMin {
		big := bufio.NewReaderSize(br, prescanMax)
		window, _ = big.Peek(prescanMax)
		name, _ = prescan(window)
		src = big
	}
	if name != "" {
		return forEncoding(src, name)
	}
	// 4. Sniffing. Non-ASCII bytes seen so far decide: UTF-8 if they are
	// valid UTF-8, else windows-1252 (the standard's default for most
	// locales, and x/net/html/charset's). With ASCII only so far, the first
	// non-ASCII byte decides later: ASCII reads the same either way.
	window = trimPartialRune(window)
	if !isASCII(window) {
		if utf8.Valid(window) {
			return forEncoding(src, "utf-8")
		}
		return forEncoding(src, "windows-1252")
	}
	t := &textReader{r: src, name: "utf-8", tentative: true}
	return t, t
}

var boms = []struct {
	bom  []byte
	name string
}{
	{[]byte{0xef, 0xbb, 0xbf}, "utf-8"},
	{[]byte{0xfe, 0xff}, "utf-16be"},
	{[]byte{0xff, 0xfe}, "utf-16le"},
}

// forEncoding reads src, in the encoding called name (a WHATWG name that
// charset.Lookup knows), as valid UTF-8.
func forEncoding(src io.Reader, name string) (io.Reader, *textReader) {
	t := &textReader{r: src, name: name}
	if name != "utf-8" {
		enc, _ := charset.Lookup(name)
		if enc == nil { // cannot happen for names Lookup returned
			enc = charmap.Windows1252
		}
		t.rest = transform.NewReader(src, enc.NewDecoder())
	}
	return t, t
}

// prescan looks for the encoding a <meta charset> or <meta
// http-equiv="content-type" content="...; charset=..."> declares in b, as
// the HTML standard's prescan does, using the tokenizer the way Chrome does
// (so markup inside comments and scripts is not mistaken for a declaration).
// It reads at least prescanMin bytes and after them stops at the first tag
// that does not belong in <head>. It returns the WHATWG name of the encoding
// ("" if none) and whether b ended while still in the head.
func prescan(b []byte) (name string, inHead bool) {
	z := html.NewTokenizer(bytes.NewReader(b))
	inHead = true
	read := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return "", inHead
		}
		raw := z.Raw()
		read += len(raw)
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			a := tagAtom(raw)
			if a == atom.Meta {
				if name := metaCharset(z); name != "" {
					return name, false
				}
			}
			switch a {
			case atom.Script, atom.Noscript, atom.Style, atom.Link, atom.Meta, atom.Object,
				atom.Title, atom.Base, atom.Html, atom.Head:
			default:
				inHead = false
			}
		case html.EndTagToken:
			switch tagAtom(raw) {
			case atom.Script, atom.Noscript, atom.Style, atom.Link, atom.Meta, atom.Object,
				atom.Title, atom.Base:
			default:
				inHead = false
			}
		}
		if !inHead && read >= prescanMin {
			return "", false
		}
	}
}

// metaCharset returns the encoding a <meta> declares, or "".
func metaCharset(z *html.Tokenizer) string {
	var cs, content string
	var hasCharset, hasContent, pragma bool
	for {
		k, v, more := z.TagAttr()
		switch string(k) {
		case "charset":
			if !hasCharset {
				cs, hasCharset = string(v), true
			}
		case "content":
			if !hasContent {
				content, hasContent = string(v), true
			}
		case "http-equiv":
			pragma = pragma || strings.EqualFold(string(v), "content-type")
		}
		if !more {
			break
		}
	}
	label := cs
	if !hasCharset {
		if !pragma || !hasContent {
			return ""
		}
		label = charsetFromContent(content)
	}
	_, name := charset.Lookup(label)
	switch {
	case name == "":
		return ""
	case strings.HasPrefix(name, "utf-16"): // a page that can declare this in ASCII is not UTF-16
		return "utf-8"
	case name == "x-user-defined":
		return "windows-1252"
	}
	return name
}

// charsetFromContent is the HTML standard's "algorithm for extracting a
// character encoding from a meta element".
func charsetFromContent(s string) string {
	for {
		i := indexFold(s, "charset")
		if i < 0 {
			return ""
		}
		s = strings.TrimLeft(s[i+len("charset"):], "\t\n\f\r ")
		if !strings.HasPrefix(s, "=") {
			continue
		}
		s = strings.TrimLeft(s[1:], "\t\n\f\r ")
		if s == "" {
			return ""
		}
		if q := s[0]; q == '"' || q == '\'' {
			end := strings.IndexByte(s[1:], q)
			if end < 0 {
				return ""
			}
			return s[1 : 1+end]
		}
		if end := strings.IndexAny(s, "\t\n\f\r ;"); end >= 0 {
			return s[:end]
		}
		return s
	}
}

func indexFold(s, lowerSub string) int {
	for i := 0; i+len(lowerSub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(lowerSub)], lowerSub) {
			return i
		}
	}
	return -1
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b, where
// a window cut a character in two.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

func isASCII(b []byte) bool { return nonASCII(b) == len(b) }

// nonASCII returns the index of the first byte of b over 0x7f, or len(b).
func nonASCII(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= utf8.RuneSelf {
			return i
		}
	}
	return len(b)
}

// textReader turns the input into valid UTF-8. In UTF-8 mode it passes
// valid input through without copying and, from the first invalid byte on,
// replaces invalid sequences with U+FFFD as browsers do. In tentative mode
// (no declaration, ASCII so far) the first non-ASCII byte decides: valid
// UTF-8 keeps UTF-8 mode, anything else switches to windows-1252. For other
// encodings it is the x/text decoder (rest) throughout.
type textReader struct {
	r         io.Reader
	name      string // the encoding: WHATWG name
	tentative bool
	rest      io.Reader // once set, everything else is read through it

	pend  [utf8.UTFMax - 1]byte // the start of a character cut by a read
	npend int
	out   []byte // output that did not fit into a short read
	small [64]byte
}

// Encoding returns the name of the encoding the input was read in.
func (t *textReader) Encoding() string { return t.name }

func (t *textReader) Read(p []byte) (int, error) {
	if len(t.out) > 0 {
		n := copy(p, t.out)
		t.out = t.out[n:]
		return n, nil
	}
	if t.rest != nil {
		return t.rest.Read(p)
	}
	if len(p) < len(t.small) { // not from the tokenizer, but keep it correct
		n, err := t.Read(t.small[:])
		t.out = t.small[:n]
		m := copy(p, t.out)
		t.out = t.out[m:]
		if len(t.out) > 0 {
			err = nil // report it once the output is delivered
		}
		return m, err
	}
	for {
		n := copy(p, t.pend[:t.npend])
		t.npend = 0
		m, err := t.r.Read(p[n:])
		n += m
		if m == 0 && err == nil {
			if n > 0 { // keep the cut character waiting
				t.npend = copy(t.pend[:], p[:n])
			}
			return 0, nil
		}
		good, wait := t.check(p[:n], err != nil)
		if wait {
			t.npend = copy(t.pend[:], p[good:n])
		} else if good < n {
			t.switchTo(p[good:n], err)
			err = nil
		}
		if good > 0 || err != nil || t.rest != nil {
			if good == 0 && t.rest != nil {
				return t.rest.Read(p)
			}
			return good, err
		}
	}
}

// check returns how many bytes of b can be passed on as they are, and
// whether the rest is a character cut by the read, to wait for.
func (t *textReader) check(b []byte, final bool) (good int, wait bool) {
	if !t.tentative && utf8.Valid(b) {
		return len(b), false
	}
	i := 0
	for i < len(b) {
		if b[i] < utf8.RuneSelf {
			i += nonASCII(b[i:])
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			if !final && !utf8.FullRune(b[i:]) {
				return i, true
			}
			if t.tentative {
				t.tentative, t.name = false, "windows-1252"
			}
			return i, false
		}
		t.tentative = false // valid UTF-8 outside ASCII: the page is UTF-8
		i += size
	}
	return len(b), false
}

// switchTo reads bad (which does not start with valid UTF-8) and the rest of
// the input through the decoder the mode calls for.
func (t *textReader) switchTo(bad []byte, err error) {
	var next io.Reader = t.r
	if err != nil {
		next = errReader{err}
	}
	src := io.MultiReader(bytes.NewReader(append([]byte(nil), bad...)), next)
	var dec *encoding.Decoder
	if t.name == "windows-1252" {
		dec = charmap.Windows1252.NewDecoder()
	} else {
		dec = unicode.UTF8.NewDecoder() // replaces invalid sequences with U+FFFD
	}
	t.rest = transform.NewReader(src, dec)
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err == nil {
		return 0, io.EOF
	}
	return 0, e.err
}
