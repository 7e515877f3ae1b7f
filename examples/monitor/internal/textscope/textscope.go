// Package textscope decides which text of a page the monitor compares: the
// visible text of the elements an optional CSS selector matches, less the
// elements an optional exclude selector matches, with the parts matching
// optional ignore rules (RE2 regular expressions: dates, counters, ad copy)
// dropped.
//
// The model: Compile checks a page's Rules once and gives a Scope; Scope.Text
// reads one HTML body and returns the text to hash and diff. Visible text
// follows the monitor's rules: not script, style, noscript, template, title
// and other raw-text elements; block elements end a line; runs of white space
// become one space. It is the monitor's one visible-text extraction: the
// whole page (zero Rules) is the text every snapshot stores. Every input is bounded: the selector and each rule by
// length and compiled size, the HTML read by MaxHTMLBytes, the text by
// MaxTextBytes.
//
// This package must not fetch, store or diff: it turns one body into one
// text, and says why a rule is unusable with a typed error.
package textscope

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// Limits on rules and inputs.
const (
	MaxSelectorBytes = 1 << 10 // a CSS selector
	MaxRules         = 32      // ignore rules per page
	MaxRuleBytes     = 512     // one ignore rule's pattern
	MaxRuleInsts     = 2000    // one ignore rule's compiled program (a{1000} is 1000 instructions)
	MaxHTMLBytes     = 8 << 20 // HTML read from a body; the rest is not looked at
	MaxTextBytes     = 100 << 10
)

// Rules are what a person configures for one page. The zero value compares
// the whole visible text.
type Rules struct {
	Selector string   // CSS selector of the part to compare, e.g. "main article"; "": the whole page
	Exclude  string   // CSS selector of elements left out, e.g. ".ad-slot, #cookie-banner"
	Ignore   []string // RE2 patterns whose matches are dropped from the text, e.g. `\d{1,2} \w+ 20\d\d`
}

// ErrTooComplex is wrapped by a RuleError or SelectorError whose input is
// over a limit.
var ErrTooComplex = errors.New("over the size limit")

// ErrUnparsable is wrapped by the error of Text for a body the HTML parser
// refuses (nested more than 512 elements deep).
var ErrUnparsable = errors.New("textscope: HTML not parsable")

// SelectorError says why a selector is unusable.
type SelectorError struct {
	Field    string // "selector" or "exclude"
	Selector string
	Err      error
}

func (e *SelectorError) Error() string {
	return fmt.Sprintf("textscope: %s %q: %v", e.Field, cut(e.Selector, 80), e.Err)
}

func (e *SelectorError) Unwrap() error { return e.Err }

// RuleError says why an ignore rule is unusable.
type RuleError struct {
	Index   int // position in Rules.Ignore
	Pattern string
	Err     error
}

func (e *RuleError) Error() string {
	return fmt.Sprintf("textscope: ignore rule %d %q: %v", e.Index+1, cut(e.Pattern, 80), e.Err)
}

func (e *RuleError) Unwrap() error { return e.Err }

// Scope is a compiled Rules. It is safe for concurrent use.
type Scope struct {
	sel, exclude cascadia.SelectorGroup
	ignore       []*regexp.Regexp
}

// Compile checks rules and compiles them.
func Compile(r Rules) (*Scope, error) {
	s := &Scope{}
	var err error
	if s.sel, err = compileSelector("selector", r.Selector); err != nil {
		return nil, err
	}
	if s.exclude, err = compileSelector("exclude", r.Exclude); err != nil {
		return nil, err
	}
	if len(r.Ignore) > MaxRules {
		return nil, &RuleError{Index: MaxRules, Pattern: r.Ignore[MaxRules],
			Err: fmt.Errorf("%w: at most %d ignore rules", ErrTooComplex, MaxRules)}
	}
	for i, p := range r.Ignore {
		re, err := compileRule(p)
		if err != nil {
			return nil, &RuleError{Index: i, Pattern: p, Err: err}
		}
		s.ignore = append(s.ignore, re)
	}
	return s, nil
}

func compileSelector(field, sel string) (cascadia.SelectorGroup, error) {
	sel = strings.TrimSpace(sel)
	if sel == "" {
		return nil, nil
	}
	if len(sel) > MaxSelectorBytes {
		return nil, &SelectorError{Field: field, Selector: sel, Err: fmt.Errorf("%w: longer than %d bytes", ErrTooComplex, MaxSelectorBytes)}
	}
	g, err := cascadia.ParseGroup(sel)
	if err != nil {
		return nil, &SelectorError{Field: field, Selector: sel, Err: err}
	}
	return g, nil
}

func compileRule(p string) (*regexp.Regexp, error) {
	if p == "" {
		return nil, errors.New("empty pattern")
	}
	if len(p) > MaxRuleBytes {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrTooComplex, MaxRuleBytes)
	}
	// The compiled size, checked before regexp builds it: RE2 is linear
	// in the text, but a{1000}{1000} is a million instructions per byte.
	tree, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return nil, err
	}
	prog, err := syntax.Compile(tree.Simplify())
	if err != nil {
		return nil, err
	}
	if len(prog.Inst) > MaxRuleInsts {
		return nil, fmt.Errorf("%w: compiles to %d instructions, at most %d", ErrTooComplex, len(prog.Inst), MaxRuleInsts)
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	if re.MatchString("") {
		return nil, errors.New("matches the empty text: it would drop nothing and match everywhere")
	}
	return re, nil
}

// Result is the compared text of one body.
type Result struct {
	Text    string
	Matched int  // elements the selector matched (1 without a selector); 0: the part is not on the page
	Cut     bool // the HTML or the text was over its limit and was cut
}

// Text reads an HTML body (UTF-8: decode it first) and returns its compared
// text. HTML is parsed as a browser would; the errors are a read error and
// ErrUnparsable.
func (s *Scope) Text(body io.Reader) (Result, error) {
	lr := &io.LimitedReader{R: body, N: MaxHTMLBytes + 1}
	data, err := io.ReadAll(lr)
	if err != nil {
		return Result{}, fmt.Errorf("textscope: reading HTML: %w", err)
	}
	cut := len(data) > MaxHTMLBytes
	if cut {
		data = data[:MaxHTMLBytes]
	}
	doc, err := html.Parse(bytes.NewReader(data))
	if err != nil {
		// x/net/html refuses documents nested deeper than 512 elements.
		return Result{}, fmt.Errorf("%w: %w", ErrUnparsable, err)
	}
	r := s.TextOf(doc)
	r.Cut = r.Cut || cut
	return r, nil
}

// HTML is Text of a body as it came over the wire: decoded first by its
// Content-Type charset, its BOM or its <meta charset> (the rules a browser
// follows), so a Latin-1 page gives the same text as its UTF-8 copy.
func (s *Scope) HTML(body []byte, contentType string) (Result, error) {
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		r = bytes.NewReader(body)
	}
	return s.Text(r)
}

// TextOf returns the compared text of a parsed document.
func (s *Scope) TextOf(doc *html.Node) Result {
	var excluded map[*html.Node]bool
	if s.exclude != nil {
		excluded = make(map[*html.Node]bool)
		for _, n := range cascadia.QueryAll(doc, s.exclude) {
			excluded[n] = true
		}
	}
	w := &textWriter{excluded: excluded}
	res := Result{Matched: 1}
	if s.sel == nil {
		w.node(doc)
	} else {
		matched := cascadia.QueryAll(doc, s.sel)
		res.Matched = len(matched)
		set := make(map[*html.Node]bool, len(matched))
		for _, n := range matched {
			set[n] = true
		}
		for _, n := range matched {
			if !inside(n, set) {
				w.node(n)
				w.pendingNL = true
			}
		}
	}
	res.Text = s.Filter(string(w.b))
	res.Cut = w.cut
	return res
}

// inside reports whether an ancestor of n is also matched, so nested
// matches are written once.
func inside(n *html.Node, matched map[*html.Node]bool) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if matched[p] {
			return true
		}
	}
	return false
}

// Filter drops the ignore rules' matches from a text, then tidies the
// spaces and empty lines they leave.
func (s *Scope) Filter(text string) string {
	if len(s.ignore) == 0 {
		return text
	}
	for _, re := range s.ignore {
		text = re.ReplaceAllLiteralString(text, " ")
	}
	lines := strings.Split(text, "\n")
	out := lines[:0]
	for _, l := range lines {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// skip are the elements whose content is not visible text.
var skip = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true, "title": true,
	"iframe": true, "noembed": true, "noframes": true, "xmp": true, "head": true,
}

// block are the elements that end a line of text.
var block = map[string]bool{
	"address": true, "article": true, "aside": true, "blockquote": true, "body": true, "br": true,
	"center": true, "dd": true, "details": true, "dialog": true, "div": true, "dl": true, "dt": true,
	"fieldset": true, "figcaption": true, "figure": true, "footer": true, "form": true, "h1": true,
	"h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "header": true, "hr": true, "html": true,
	"legend": true, "li": true, "main": true, "nav": true, "ol": true, "p": true, "pre": true,
	"section": true, "summary": true, "table": true, "td": true, "th": true, "tr": true, "ul": true,
	"caption": true, "tbody": true, "thead": true, "tfoot": true, "option": true, "button": true,
}

// textWriter writes words into lines, up to MaxTextBytes.
type textWriter struct {
	excluded  map[*html.Node]bool
	b         []byte
	lineWords int
	pendingNL bool
	glue      bool // the last word ended its text node: the next text may continue it
	cut       bool
}

func (w *textWriter) node(n *html.Node) {
	// Iterative, so a document nested a million deep cannot exhaust the stack.
	type frame struct {
		n     *html.Node
		leave bool
	}
	stack := []frame{{n: n}}
	for len(stack) > 0 && !w.cut {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := f.n
		if f.leave {
			w.pendingNL = true
			continue
		}
		switch n.Type {
		case html.TextNode:
			w.text(n.Data)
			continue
		case html.ElementNode:
			if skip[n.Data] || w.excluded[n] {
				continue
			}
			if block[n.Data] {
				w.pendingNL = true
				stack = append(stack, frame{n: n, leave: true})
			}
		case html.DocumentNode:
		default:
			continue
		}
		for c := n.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, frame{n: c})
		}
	}
}

// isSpace separates words: white space, the no-break space and a BOM
// (U+FEFF, which a reader does not see).
func isSpace(r rune) bool { return unicode.IsSpace(r) || r == '\u00a0' || r == '\ufeff' }

// notText is what is dropped inside a word: NUL and other control
// characters are not text a reader sees.
func notText(r rune) rune {
	if r == 0 || unicode.IsControl(r) {
		return -1
	}
	return r
}

func (w *textWriter) text(s string) {
	for len(s) > 0 && !w.cut {
		i := strings.IndexFunc(s, func(r rune) bool { return !isSpace(r) })
		if i < 0 {
			w.glue = false
			return
		}
		if i > 0 {
			w.glue = false
		}
		s = s[i:]
		j := strings.IndexFunc(s, isSpace)
		if j < 0 {
			j = len(s)
		}
		w.word(s[:j])
		s = s[j:]
		// A word that runs to the end of its text node goes on in the
		// next one: wo<i>rd</i> is one word.
		w.glue = len(s) == 0
	}
}

func (w *textWriter) word(word string) {
	word = strings.Map(notText, strings.ToValidUTF8(word, string(utf8.RuneError)))
	if word == "" {
		return
	}
	if w.glue && !w.pendingNL && w.lineWords > 0 {
		if len(w.b)+len(word) > MaxTextBytes {
			w.cut = true
			return
		}
		w.b = append(w.b, word...)
		return
	}
	sep := 0
	if w.pendingNL && len(w.b) > 0 || w.lineWords > 0 {
		sep = 1
	}
	if len(w.b)+sep+len(word) > MaxTextBytes {
		w.cut = true
		return
	}
	switch {
	case w.pendingNL && len(w.b) > 0:
		w.b = append(w.b, '\n')
		w.lineWords = 0
	case w.lineWords > 0:
		w.b = append(w.b, ' ')
	}
	w.pendingNL = false
	w.b = append(w.b, word...)
	w.lineWords++
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
