package htmlx

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	whatwg "github.com/nlnwa/whatwg-url/url"
	"github.com/politecrawl/polite/internal/weburl"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Link is one URL found in the page.
type Link struct {
	URL      string // absolute http(s) URL, resolved against <base> or the page URL, fragment dropped
	Raw      string // the attribute value as written (entities decoded)
	Text     string // anchor text (or img alt inside the anchor, or area alt), whitespace-normalised
	Rel      string // rel attribute as written ("refresh" for a meta refresh)
	Nofollow bool   // rel has nofollow, ugc or sponsored
	Tag      string // element: a, area, link, img, script, iframe, meta (refresh)
}

// Alternate is a <link rel="alternate" hreflang> annotation.
type Alternate struct {
	Hreflang string // as written, trimmed
	URL      string // absolute
}

// Page holds what one page says about itself. Counts let callers tell a
// missing field (0) from an empty one (1, "") from a duplicated one (>1).
type Page struct {
	Title            string // first <title> outside <svg>, whitespace-normalised
	TitleCount       int
	MetaDescription  string // first <meta name="description">
	DescriptionCount int
	Canonical        string // first <link rel="canonical">, absolute; "" if absent or not http(s)
	CanonicalCount   int
	MetaRobots       string   // all <meta name="robots"> contents joined by ", "
	H1               []string // text of each <h1>, whitespace-normalised
	WordCount        int      // words of visible text
	TextHash         string   // hex SHA-256 of the visible words joined by single spaces
	Links            []Link   // in document order
	Hreflang         []Alternate
	Generator        string // first <meta name="generator">
	WordPress        bool   // generator names WordPress, or wp-content/wp-includes assets, or the api.w.org link
	WordPressHint    string // the first evidence found, e.g. `generator "WordPress 6.4"`
	Lang             string // <html lang>
	Base             string // the base URL links were resolved against
	Refresh          string // absolute URL of a <meta http-equiv="refresh"> redirect, if any
	Encoding         string // the character encoding the page was read in (WHATWG name: "utf-8", "windows-1252", "shift_jis"...)

	Truncated    bool // the input was longer than Options.MaxBytes and the rest was ignored
	InvalidLinks int  // http(s)/relative URLs that could not be parsed and were left out
	LinksDropped int  // links beyond Options.MaxLinks

	facts *Facts // with Options.Facts (Facts)

	text []byte // the visible words joined by spaces, with Options.keepText (tests)
}

// Options bound the work Parse does. The zero value is ready to use.
type Options struct {
	MaxBytes     int64  // input read at most; 0 means 10 MiB
	MaxLinks     int    // links kept; 0 means 10,000
	MaxTextBytes int    // cap of each extracted string (title, anchor text...); 0 means 2,048
	ContentType  string // the response's Content-Type, used with <meta charset> sniffing to decode non-UTF-8 pages

	// Text, if not nil, is written the visible words as they are read, in the same pass: the
	// bytes TextHash is computed over (words joined by single spaces), in pieces. A write error
	// stops the writing and is returned by Parse; parsing goes on.
	Text io.Writer

	// Facts asks for Page.Facts(), gathered in the same pass.
	Facts bool

	keepText bool // tests: keep the visible text in Page.text
}

const (
	defaultMaxBytes = 10 << 20
	defaultMaxLinks = 10_000
	defaultMaxText  = 2048
	maxH1           = 100
)

// Parse reads an HTML page from r with the default Options. pageURL is the
// URL the page was fetched from (after redirects); with nil, only absolute
// links are kept.
func Parse(r io.Reader, pageURL *url.URL) (*Page, error) {
	return Options{}.Parse(r, pageURL)
}

// Parse reads an HTML page from r. It returns an error only when reading
// fails, together with what was extracted before the failure.
func (o Options) Parse(r io.Reader, pageURL *url.URL) (*Page, error) {
	return o.parse(r, pageURL, nil)
}

// ParseInto is Options.Parse for a caller with its own link type L, a
// struct type with Link's fields (fetch/page.Link): the links are appended
// to *links, converted one by one, and Page.Links stays nil. It saves the
// public API a copy of the whole list.
func ParseInto[L ~struct {
	URL      string
	Raw      string
	Text     string
	Rel      string
	Nofollow bool
	Tag      string
}](o Options, r io.Reader, pageURL *url.URL, links *[]L) (*Page, error) {
	return o.parse(r, pageURL, func(n int) func(Link) {
		*links = slices.Grow(*links, n)
		return func(l Link) { *links = append(*links, L(l)) }
	})
}

// parse reads the page; links, if not nil, is given the number of links
// found and returns where to put each one (else they go to Page.Links).
func (o Options) parse(r io.Reader, pageURL *url.URL, links func(n int) func(Link)) (*Page, error) {
	if o.MaxBytes <= 0 {
		o.MaxBytes = defaultMaxBytes
	}
	if o.MaxLinks <= 0 {
		o.MaxLinks = defaultMaxLinks
	}
	if o.MaxTextBytes <= 0 {
		o.MaxTextBytes = defaultMaxText
	}
	lr := &limitReader{r: r, n: o.MaxBytes}
	sc := scratchPool.Get().(*scratch)
	defer sc.put()
	sc.br.Reset(lr)
	sc.hash.Reset()
	in, dec := decodeInput(sc.br, o.ContentType)
	p := &parser{opt: o, page: &Page{}, hash: sc.hash, z: html.NewTokenizer(in), strs: sc.strs, resolved: sc.resolved,
		anchor: -1, pendingLink: -1, links: sc.links, arena: sc.arena, out: sc.out, title: sc.title,
		h1Text: sc.h1Text, stack: sc.stack}
	if o.Facts {
		p.page.facts = &Facts{}
	}
	err := p.run()
	p.finish(pageURL, links)
	sc.keep(p)
	p.page.Truncated = lr.truncated
	p.page.Encoding = dec.Encoding()
	var where string
	if pageURL != nil {
		where = " " + pageURL.Redacted()
	}
	if err != nil {
		return p.page, fmt.Errorf("htmlx: reading%s: %w", where, err)
	}
	if p.textErr != nil {
		return p.page, fmt.Errorf("htmlx: writing the visible text of%s: %w", where, p.textErr)
	}
	return p.page, nil
}

// scratch is what parsing a page needs and nothing keeps afterwards: the input buffer, the hash, the
// links before resolution and the text buffers, reused from one page to the next (scratchPool) so that
// a crawl does not allocate and collect them again for every page.
type scratch struct {
	br                        *bufio.Reader
	hash                      hash.Hash
	strs                      map[string]string
	resolved                  map[string]resolved
	links                     []rawLink
	arena, out, title, h1Text []byte
	stack                     []elem
}

var scratchPool = sync.Pool{New: func() any {
	return &scratch{br: bufio.NewReaderSize(nil, 4096), hash: sha256.New(), strs: map[string]string{}, resolved: map[string]resolved{}}
}}

// maxScratch bounds the buffers a scratch keeps for the next page: a page far larger than most does
// not leave its buffers in the pool.
const maxScratch = 64 << 10

// keep takes back the parser's buffers, emptied (the strings of the links let go).
func (sc *scratch) keep(p *parser) {
	clear(p.links)
	sc.links, sc.arena, sc.out, sc.title, sc.h1Text, sc.stack = p.links[:0], p.arena[:0], p.out[:0], p.title[:0], p.h1Text[:0], p.stack[:0]
	clear(sc.strs)
	if len(sc.resolved) > 512 { // a cleared map keeps its size: a page of thousands of links does not leave it
		sc.resolved = map[string]resolved{}
	} else {
		clear(sc.resolved)
	}
}

// put returns sc to the pool unless it grew too large to keep.
func (sc *scratch) put() {
	sc.br.Reset(nil)
	if cap(sc.links) > maxScratch/16 || cap(sc.arena) > maxScratch || cap(sc.out) > maxScratch ||
		cap(sc.title) > maxScratch || cap(sc.h1Text) > maxScratch || cap(sc.stack) > maxScratch/16 {
		return
	}
	scratchPool.Put(sc)
}

// limitReader reads at most n bytes and notes whether more were available.
type limitReader struct {
	r         io.Reader
	n         int64
	truncated bool
	err       error // a read error (not io.EOF) from r
}

func (l *limitReader) Read(b []byte) (int, error) {
	if l.n <= 0 {
		if !l.truncated && l.err == nil {
			var one [1]byte
			for range 100 { // readers may return 0, nil a few times
				n, err := l.r.Read(one[:])
				if n > 0 {
					l.truncated = true
					break
				}
				if err != nil {
					break
				}
			}
		}
		return 0, io.EOF
	}
	if int64(len(b)) > l.n {
		b = b[:l.n]
	}
	// Fill b as far as the source allows: the tokenizer copies the token
	// in progress on every read, so a source dribbling a few bytes per read
	// would make a long token cost quadratic time.
	var n int
	var err error
	for n < len(b) && err == nil {
		var m int
		m, err = l.r.Read(b[n:])
		n += m
		if m == 0 && err == nil {
			break // let the tokenizer's no-progress guard see it
		}
	}
	l.n -= int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		l.err = err
	}
	if n > 0 && errors.Is(err, io.EOF) {
		err = nil // report EOF on the next call, with no data
	}
	return n, err
}

// rawLink is a link before resolution, which waits for the end of the
// document because <base> applies to links before it too.
type rawLink struct {
	raw, rel, tag string
	alt           string // area alt
	text          [2]int // anchor text: p.arena[text[0]:text[1]]
}

type rawAlt struct{ hreflang, raw string }

const maxAlternates = 1000

type parser struct {
	opt  Options
	page *Page
	z    *html.Tokenizer
	hash hash.Hash

	base       string // first <base href>, raw
	baseSeen   bool
	canonical  string // first <link rel=canonical href>, raw
	refresh    string // first meta refresh URL, raw
	alternates []rawAlt

	stack     []elem    // open elements (tree.go)
	deep      int       // elements opened beyond maxDepth
	templates int       // open <template> elements: their content is inert
	form      bool      // the standard's form element pointer is set: a nested <form> is ignored
	tag       uint32    // hash of the current tag's name (tagName)
	cl        class     // class of the current HTML start tag
	cdata     bool      // the tokenizer reads CDATA sections (in SVG and MathML)
	hidden    int       // open SVG/MathML elements whose text is not visible
	skip      atom.Atom // raw-text element whose content is not visible text
	inTitle   bool
	title     []byte
	titleDone bool
	h1        int // open <h1> elements
	h1Text    []byte
	markers   int        // open markers of the list of active formatting elements (cMarker)
	reopen    []reopened // formatting elements to reopen, outermost first

	anchor      int // index in links of the open <a>'s link, or -1
	pendingLink int // the link of the <a> being pushed, or -1

	links    []rawLink
	arena    []byte // anchor texts, contiguous: only one <a> is open at a time
	strs     map[string]string
	resolved map[string]resolved // for the resolver made at the end (scratch)

	noscript bool   // tokenizing the content of a <noscript>
	inWord   bool   // the last visible character was part of a word
	words    int    //
	out      []byte // scratch for the normalised text written to hash
	robots   []string
	textErr  error // the first error of Options.Text

	// With Options.Facts:
	inBody  bool     // the head has ended (facts.go)
	jsonld  bool     // reading a JSON-LD script's text
	loremAt int      // bytes of lorem matched so far
	forms   []string // form actions as written, resolved at the end
}

func (p *parser) run() error {
	for {
		if !p.noscript {
			// CDATA sections exist only in SVG and MathML.
			if e := p.top(); (e != nil && e.ns != nsHTML) != p.cdata {
				p.cdata = !p.cdata
				p.z.AllowCDATA(p.cdata)
			}
		}
		tt := p.z.Next()
		switch tt {
		case html.ErrorToken:
			err := p.z.Err()
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case html.TextToken:
			if p.skip != 0 {
				if p.inTitle {
					p.title = appendCapped(p.title, p.z.Text(), 4*p.opt.MaxTextBytes)
				} else if p.jsonld {
					p.jsonldText(p.z.Text())
				} else if p.skip == atom.Noscript && !p.noscript && p.templates == 0 {
					p.runNoscript(p.z.Text())
				}
				continue
			}
			p.text(p.z.Text())
		case html.StartTagToken, html.SelfClosingTagToken:
			p.start(tt == html.SelfClosingTagToken)
		case html.EndTagToken:
			var name atom.Atom
			name, p.tag = tagName(p.z.Raw())
			p.end(name)
		}
	}
}

// tagAtom reads the element name from a raw start or end tag ("<A href",
// "</a >") the way the tokenizer does, without the copy TagName makes.
func tagAtom(raw []byte) atom.Atom {
	a, _ := tagName(raw)
	return a
}

// tagName returns the atom of the element name of a raw start or end tag
// and, for names without one (custom elements, most SVG names), an FNV-1a
// hash of the lower-cased name, which tells them apart.
func tagName(raw []byte) (atom.Atom, uint32) {
	var buf [16]byte // longer than any element this package acts on
	i := 1
	if i < len(raw) && raw[i] == '/' {
		i++
	}
	start, n := i, 0
	for ; i < len(raw); i++ {
		c := raw[i]
		if c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '/' || c == '>' {
			break
		}
		if n < len(buf) {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[n] = c
		}
		n++
	}
	if n <= len(buf) {
		if a := atom.Lookup(buf[:n]); a != 0 {
			return a, 0
		}
	}
	h := uint32(2166136261)
	for _, c := range raw[start:i] {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		h = (h ^ uint32(c)) * 16777619
	}
	return 0, h
}

// attrs reads the attributes the parser cares about.
type attrs struct {
	href, src, rel, name, content, hreflang, alt, lang, httpEquiv, encoding string
	property, typ, action                                                   string // for Facts
	font                                                                    bool   // color, face or size: a <font> that ends foreign content
	has                                                                     attrSet
}

// attrSet records attributes whose presence matters more than their value (Facts).
type attrSet uint8

const (
	hasAlt attrSet = 1 << iota
	hasWidth
	hasHeight
	hasCharset
)

func (p *parser) readAttrs() attrs {
	var a attrs
	for {
		k, v, more := p.z.TagAttr()
		switch string(k) {
		case "href":
			a.href = string(v)
		case "src":
			a.src = string(v)
		case "rel":
			a.rel = p.intern(v)
		case "name":
			a.name = p.intern(v)
		case "content":
			a.content = string(v)
		case "hreflang":
			a.hreflang = p.intern(v)
		case "alt":
			a.alt = string(v)
			a.has |= hasAlt
		case "width":
			a.has |= hasWidth
		case "height":
			a.has |= hasHeight
		case "charset":
			a.has |= hasCharset
		case "property":
			a.property = p.intern(v)
		case "type":
			a.typ = p.intern(v)
		case "action":
			a.action = string(v)
		case "lang":
			a.lang = string(v)
		case "http-equiv":
			a.httpEquiv = p.intern(v)
		case "encoding":
			a.encoding = p.intern(v)
		case "color", "face", "size":
			a.font = true
		}
		if !more {
			return a
		}
	}
}

// intern returns short, often repeated attribute values (rel, name) as
// shared strings.
func (p *parser) intern(b []byte) string {
	if s, ok := p.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(b) <= 64 && len(p.strs) < 256 {
		p.strs[s] = s
	}
	return s
}

// runNoscript tokenizes the raw text of a <noscript> for the links and
// assets a browser without JavaScript (and a non-rendering crawler) sees;
// its text stays out of the visible text, since rendering browsers hide it.
func (p *parser) runNoscript(text []byte) {
	outer, anchor := p.z, p.anchor
	p.z, p.noscript, p.anchor, p.skip = html.NewTokenizer(bytes.NewReader(text)), true, -1, 0
	_ = p.run() // reads from memory: no error but EOF
	p.z, p.noscript, p.anchor, p.skip = outer, false, anchor, atom.Noscript
}

func (p *parser) start(selfClosing bool) {
	var name atom.Atom
	name, p.tag = tagName(p.z.Raw()) // name is 0 for unknown elements; the hash tells them apart
	if p.page.facts != nil && !p.noscript && p.templates == 0 {
		p.page.facts.Elements++
	}
	switch {
	case p.noscript:
		p.noscriptStart(name)
	case p.foreignStart(name):
		p.foreignElement(name, selfClosing)
	default:
		p.htmlElement(name, selfClosing)
	}
}

// noscriptStart handles a tag inside <noscript>, read as a browser without
// scripting reads it, for links only.
func (p *parser) noscriptStart(name atom.Atom) {
	switch name {
	case atom.A, atom.Area, atom.Img, atom.Image, atom.Link, atom.Script, atom.Iframe, atom.Frame:
	case atom.Style, atom.Noembed, atom.Noframes, atom.Xmp, atom.Plaintext, atom.Noscript, atom.Title:
		p.skip = name // raw text to its end tag, as the tokenizer reads it
		return
	default:
		return
	}
	a := p.readAttrs()
	switch name {
	case atom.A:
		p.anchor = -1 // an <a> start closes an open one
		if a.href != "" && p.addLink(a.href, a.rel, "a") {
			p.openAnchor(len(p.links) - 1)
		}
	case atom.Link:
		p.link(a)
	default:
		p.element(name, a)
		if name == atom.Script || name == atom.Iframe {
			p.skip = name
		}
	}
}

// foreignElement handles a start tag in SVG or MathML content.
func (p *parser) foreignElement(name atom.Atom, selfClosing bool) {
	var a attrs
	if name == atom.A || name == atom.AnnotationXml || name == atom.Font {
		a = p.readAttrs()
	}
	if classOf(name)&cBreakout != 0 || name == atom.Font && a.font {
		p.popToHTML()
		p.htmlElement(name, selfClosing)
		return
	}
	// Raw-text names (<style>, <title>...) are ordinary elements here.
	p.z.NextIsNotRawText()
	e := elem{a: name, ns: p.top().ns}
	switch name {
	case atom.Script, atom.Style, atom.Title, atom.Desc:
		e.flags |= fHidden
	case atom.AnnotationXml:
		if strings.EqualFold(a.encoding, "text/html") || strings.EqualFold(a.encoding, "application/xhtml+xml") {
			e.flags |= fHTMLIP
		}
	case atom.A:
		if a.href != "" && p.templates == 0 && p.addLink(a.href, a.rel, "a") && !selfClosing {
			p.pendingLink = len(p.links) - 1
		}
	}
	if !selfClosing {
		p.push(e)
	}
}

// htmlElement handles an HTML start tag.
func (p *parser) htmlElement(name atom.Atom, selfClosing bool) {
	if name == atom.Image {
		name = atom.Img // the standard reads <image> as <img>
	}
	p.cl = classOf(name)
	var a attrs
	if wantsAttrs(name) || p.page.facts != nil && name == atom.Form {
		a = p.readAttrs()
	}
	live := p.templates == 0 // template content is inert: not part of the page
	if live && p.page.facts != nil {
		p.factsStart(name, &a)
	}
	switch name {
	case atom.Script, atom.Style, atom.Noscript, atom.Iframe, atom.Noembed, atom.Noframes:
		// The tokenizer reads these as raw text up to the end tag, even
		// when written self-closing; mirror that so the text is skipped.
		p.skip = name
		if live {
			p.element(name, a)
		}
		return
	case atom.Title:
		p.skip = name
		if live {
			p.page.TitleCount++
			if !p.titleDone {
				p.inTitle = true
			}
		}
		return
	case atom.A:
		if live && a.href != "" && p.addLink(a.href, a.rel, "a") {
			p.pendingLink = len(p.links) - 1
		}
	default:
		if live {
			p.element(name, a)
		}
	}
	if p.startStructure(name, p.cl, selfClosing) && p.cl&cBlock != 0 {
		p.boundary()
	}
}

// element extracts what a start tag outside templates says, other than
// the <a> links and the title.
func (p *parser) element(name atom.Atom, a attrs) {
	switch name {
	case atom.Html:
		if p.page.Lang == "" {
			p.page.Lang = capString(strings.TrimSpace(a.lang), 64)
		}
	case atom.Base:
		if !p.baseSeen && a.href != "" {
			p.base, p.baseSeen = capString(a.href, 8192), true
		}
	case atom.Meta:
		p.meta(a)
	case atom.Link:
		p.link(a)
	case atom.Area:
		if a.href != "" && p.addLink(a.href, a.rel, "area") {
			p.links[len(p.links)-1].alt = capString(a.alt, p.opt.MaxTextBytes)
		}
	case atom.Img, atom.Image:
		if a.src != "" {
			p.addLink(a.src, "", "img")
		}
		if p.anchor >= 0 && a.alt != "" {
			anchorText(p, " ")
			anchorText(p, a.alt)
		}
	case atom.Script, atom.Iframe, atom.Frame:
		if a.src != "" {
			p.addLink(a.src, "", name.String())
		}
	}
}

func (p *parser) openAnchor(i int) {
	p.anchor = i
	n := len(p.arena)
	p.links[i].text = [2]int{n, n}
}

func wantsAttrs(name atom.Atom) bool {
	switch name {
	case atom.A, atom.Area, atom.Link, atom.Meta, atom.Base, atom.Img, atom.Script, atom.Iframe, atom.Html, atom.Frame:
		return true
	}
	return false
}

func (p *parser) end(name atom.Atom) {
	if p.skip != 0 {
		if name == p.skip {
			if p.inTitle {
				p.inTitle, p.titleDone = false, true
				p.page.Title = normalise(p.title, p.opt.MaxTextBytes)
			}
			p.skip, p.jsonld = 0, false
		}
		return
	}
	if p.noscript {
		if name == atom.A {
			p.anchor = -1
		} else if isBlock(name) {
			p.boundary()
		}
		return
	}
	var sep bool
	switch e := p.top(); {
	case p.deep > 0:
		p.deep--
		sep = isBlock(name)
	case e != nil && e.ns != nsHTML:
		sep = p.endForeign(name)
	default:
		sep = p.endStructure(name, classOf(name))
	}
	if sep {
		p.boundary()
	}
}

func (p *parser) meta(a attrs) {
	if p.page.facts != nil {
		p.factsMeta(&a)
	}
	if strings.EqualFold(strings.TrimSpace(a.httpEquiv), "refresh") {
		if u, ok := refreshURL(a.content); ok {
			if p.refresh == "" {
				p.refresh = capString(u, 8192)
			}
			p.addLink(u, "refresh", "meta")
		}
		return
	}
	content := capString(strings.TrimSpace(a.content), p.opt.MaxTextBytes)
	switch strings.ToLower(strings.TrimSpace(a.name)) {
	case "description":
		p.page.DescriptionCount++
		if p.page.DescriptionCount == 1 {
			p.page.MetaDescription = content
		}
	case "robots":
		if content != "" && len(p.robots) < 20 {
			p.robots = append(p.robots, content)
		}
	case "generator":
		if p.page.Generator == "" {
			p.page.Generator = content
		}
		if containsFold(content, "wordpress") {
			p.wordpress(fmt.Sprintf("generator %q", content))
		}
	}
}

// refreshURL extracts the URL of a meta refresh content ("5; url=/next").
func refreshURL(content string) (string, bool) {
	_, rest, ok := strings.Cut(content, ";")
	if !ok {
		_, rest, ok = strings.Cut(content, ",")
		if !ok {
			return "", false
		}
	}
	rest = strings.TrimSpace(rest)
	if len(rest) >= 3 && strings.EqualFold(rest[:3], "url") {
		r := strings.TrimSpace(rest[3:])
		if strings.HasPrefix(r, "=") {
			rest = strings.TrimSpace(r[1:])
		}
	}
	rest = strings.Trim(rest, `"'`)
	return rest, rest != ""
}

func (p *parser) link(a attrs) {
	if a.rel == "" && a.href == "" {
		return
	}
	canonical, alternate := false, false
	for _, r := range strings.Fields(a.rel) {
		switch strings.ToLower(r) {
		case "canonical":
			canonical = true
		case "alternate":
			alternate = true
		case "https://api.w.org/":
			p.wordpress(`link rel="https://api.w.org/"`)
		}
	}
	if canonical {
		if p.page.facts != nil && p.inBody {
			p.page.facts.CanonicalsInBody++
		}
		p.page.CanonicalCount++
		if p.canonical == "" && a.href != "" {
			p.canonical = capString(a.href, 8192)
		}
	}
	if a.href == "" {
		return
	}
	p.asset(a.href)
	if alternate && strings.TrimSpace(a.hreflang) != "" && len(p.alternates) < maxAlternates {
		p.alternates = append(p.alternates, rawAlt{hreflang: capString(strings.TrimSpace(a.hreflang), 64), raw: capString(a.href, 8192)})
	}
	p.addLink(a.href, a.rel, "link")
}

// asset notes WordPress paths in URLs of page resources; links (<a>) do not
// count, since any page may link to someone else's WordPress uploads.
func (p *parser) asset(raw string) {
	if p.page.WordPress {
		return
	}
	if strings.Contains(raw, "/wp-content/") || strings.Contains(raw, "/wp-includes/") {
		p.wordpress(fmt.Sprintf("asset %q", capString(raw, 200)))
	}
}

func (p *parser) wordpress(hint string) {
	if !p.page.WordPress {
		p.page.WordPress = true
		p.page.WordPressHint = hint
	}
}

// addLink queues a link for resolution; it reports whether it was kept.
func (p *parser) addLink(raw, rel, tag string) bool {
	if tag == "img" || tag == "script" || tag == "iframe" {
		p.asset(raw)
	}
	if len(p.links) >= p.opt.MaxLinks {
		p.page.LinksDropped++
		return false
	}
	p.links = append(p.links, rawLink{raw: capString(raw, 8192), rel: capString(rel, 256), tag: tag})
	return true
}

// boundary ends the current word: block elements separate words.
func (p *parser) boundary() {
	if p.noscript {
		if p.anchor >= 0 {
			anchorText(p, " ")
		}
		return
	}
	p.inWord = false
	if p.h1 > 0 && len(p.h1Text) > 0 {
		p.h1Text = appendCapped(p.h1Text, []byte{' '}, 4*p.opt.MaxTextBytes)
	}
	if p.anchor >= 0 {
		anchorText(p, " ")
	}
}

// anchorText appends to the open anchor's text, up to a cap.
func anchorText[T string | []byte](p *parser, b T) {
	l := &p.links[p.anchor]
	room := 4*p.opt.MaxTextBytes - (l.text[1] - l.text[0])
	if room <= 0 {
		return
	}
	if len(b) > room {
		b = b[:room]
	}
	p.arena = append(p.arena, b...)
	l.text[1] = len(p.arena)
}

// text handles visible text: word count, hash, h1 and anchor text.
func (p *parser) text(b []byte) {
	if bytes.IndexByte(b, 0) >= 0 {
		// The tokenizer leaves NUL in text; browsers drop it from HTML
		// content and read it as U+FFFD in SVG and MathML.
		if !p.noscript && p.foreignText() {
			b = bytes.ReplaceAll(b, []byte{0}, []byte("\ufffd"))
		} else {
			b = bytes.ReplaceAll(b, []byte{0}, nil)
		}
	}
	if p.noscript {
		if p.anchor >= 0 {
			anchorText(p, b)
		}
		return
	}
	if len(p.reopen) > 0 && len(b) > 0 && p.reopensForText() {
		p.reconstruct()
	}
	if p.templates > 0 || p.hidden > 0 {
		return
	}
	if p.h1 > 0 {
		p.h1Text = appendCapped(p.h1Text, b, 4*p.opt.MaxTextBytes)
	}
	if p.anchor >= 0 {
		anchorText(p, b)
	}
	out := p.out[:0]
	for i := 0; i < len(b); {
		// A run of white space ends the word; a run of anything else is (part of) a word, copied whole.
		c := b[i]
		if c < utf8.RuneSelf {
			if asciiSpace[c] {
				p.inWord = false
				i++
				continue
			}
		} else if r, size := utf8.DecodeRune(b[i:]); unicode.IsSpace(r) {
			p.inWord = false
			i += size
			continue
		}
		j := wordEnd(b, i)
		if !p.inWord {
			p.inWord = true
			if p.words > 0 {
				out = append(out, ' ')
			}
			p.words++
		}
		out = append(out, b[i:j]...)
		i = j
	}
	if len(out) > 0 {
		if p.page.facts != nil {
			p.factsText(out)
		}
		p.hash.Write(out)
		if p.opt.Text != nil && p.textErr == nil {
			_, p.textErr = p.opt.Text.Write(out)
		}
		if p.opt.keepText {
			p.page.text = append(p.page.text, out...)
		}
	}
	p.out = out
}

// wordEnd is the end of the run of characters other than white space that starts at b[i].
func wordEnd(b []byte, i int) int {
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf {
			if asciiSpace[c] {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if unicode.IsSpace(r) {
			return i
		}
		i += size
	}
	return i
}

var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// isBlock reports elements that separate words in visible text.
func isBlock(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Br, atom.Button,
		atom.Caption, atom.Center, atom.Dd, atom.Details, atom.Dialog, atom.Dir, atom.Div,
		atom.Dl, atom.Dt, atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer, atom.Form,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Header, atom.Hgroup, atom.Hr, atom.Img, atom.Input, atom.Label, atom.Legend,
		atom.Li, atom.Listing, atom.Main, atom.Menu, atom.Nav, atom.Ol, atom.Optgroup,
		atom.Option, atom.P, atom.Plaintext, atom.Pre, atom.Search, atom.Section, atom.Select,
		atom.Summary, atom.Table, atom.Tbody, atom.Td, atom.Textarea, atom.Tfoot, atom.Th,
		atom.Thead, atom.Tr, atom.Ul, atom.Xmp:
		return true
	}
	return false
}

func (p *parser) finish(pageURL *url.URL, links func(n int) func(Link)) {
	pg := p.page
	if p.inTitle { // unterminated <title>: it ran to the end of the input
		pg.Title = normalise(p.title, p.opt.MaxTextBytes)
	}
	for i := len(p.stack) - 1; i >= 0; i-- { // the end of the input closes what is open
		if e := &p.stack[i]; e.flags&fH1 != 0 {
			p.closeH1(e)
		}
	}
	pg.WordCount = p.words
	pg.TextHash = hex.EncodeToString(p.hash.Sum(nil))
	pg.MetaRobots = strings.Join(p.robots, ", ")

	base := baseURL(pageURL, p.base)
	if base != nil {
		pg.Base = base.Href(true)
	}
	res := newResolver(base)
	if p.resolved != nil { // the scratch's map, emptied, instead of a new one
		res.seen = p.resolved
	}
	if p.canonical != "" {
		pg.Canonical = res.self(p.canonical)
	}
	if p.refresh != "" {
		pg.Refresh, _ = res.resolve(p.refresh)
	}
	if f := pg.facts; f != nil {
		f.CanonicalRaw = p.canonical
		for _, raw := range p.forms {
			var u string
			if weburl.Clean(raw) != "" {
				u, _ = res.resolve(raw)
			}
			f.Forms = append(f.Forms, u)
		}
	}
	for _, a := range p.alternates {
		if u := res.self(a.raw); u != "" {
			pg.Hreflang = append(pg.Hreflang, Alternate{Hreflang: a.hreflang, URL: u})
		}
	}
	var add func(Link)
	switch {
	case links != nil:
		add = links(len(p.links))
	case len(p.links) > 0:
		pg.Links = make([]Link, 0, len(p.links))
	}
	for i := range p.links {
		rl := &p.links[i]
		u, r := res.resolve(rl.raw)
		switch r {
		case invalid:
			pg.InvalidLinks++
			continue
		case skipped:
			continue
		}
		l := Link{
			URL:      u,
			Raw:      rl.raw,
			Text:     linkText(rl, p.arena, p.opt.MaxTextBytes),
			Rel:      rl.rel,
			Nofollow: nofollow(rl.rel),
			Tag:      rl.tag,
		}
		if add != nil {
			add(l)
		} else {
			pg.Links = append(pg.Links, l)
		}
	}
}

func linkText(rl *rawLink, arena []byte, max int) string {
	if rl.alt != "" {
		return normalise([]byte(rl.alt), max)
	}
	if rl.text[1] <= rl.text[0] {
		return ""
	}
	return normalise(arena[rl.text[0]:rl.text[1]], max)
}

// resolver resolves a page's links against one base, remembering answers
// (menus and cards repeat the same hrefs) and taking a short cut for plain
// root-relative paths, the most common kind.
type resolver struct {
	base   *whatwg.Url
	prefix string // scheme://authority of base, for the short cut
	seen   map[string]resolved
}

type resolved struct {
	url string
	r   resolution
}

func newResolver(base *whatwg.Url) *resolver {
	r := &resolver{base: base, seen: map[string]resolved{}}
	if base != nil && weburl.HTTP(base) {
		// An http(s) URL has a host and a path starting with '/'.
		href := base.Href(true)
		if rest, ok := strings.CutPrefix(href, base.Protocol()+"//"); ok {
			if j := strings.IndexByte(rest, '/'); j >= 0 {
				r.prefix = href[:len(href)-len(rest)+j]
			}
		}
	}
	return r
}

// self resolves the URL of a reference to a document (a canonical or an
// alternate), where a fragment-only reference ("#", "#top") means the base
// document itself, as it does in a browser; "" when it is not http(s).
func (r *resolver) self(raw string) string {
	if s := cleanURL(raw); s != "" && s[0] == '#' {
		if r.base == nil {
			return ""
		}
		return r.base.Href(true)
	}
	u, res := r.resolve(raw)
	if res != kept {
		return ""
	}
	return u
}

func (r *resolver) resolve(raw string) (string, resolution) {
	if v, ok := r.seen[raw]; ok {
		return v.url, v.r
	}
	var v resolved
	if u, ok := r.fast(raw); ok {
		v = resolved{u, kept}
	} else {
		v.url, v.r = resolve(r.base, raw)
	}
	if len(r.seen) < 4096 {
		r.seen[raw] = v
	}
	return v.url, v.r
}

// fast resolves the most common links without the parser (weburl.Fast).
func (r *resolver) fast(raw string) (string, bool) { return weburl.Fast(r.prefix, raw) }

func nofollow(rel string) bool {
	for _, r := range strings.Fields(rel) {
		switch strings.ToLower(r) {
		case "nofollow", "ugc", "sponsored":
			return true
		}
	}
	return false
}

// baseURL is the URL relative links resolve against: <base href> resolved
// against the page URL when it yields http(s), else the page URL (nil when
// that is not an absolute URL).
func baseURL(pageURL *url.URL, baseHref string) *whatwg.Url {
	var page *whatwg.Url
	if pageURL != nil && pageURL.IsAbs() {
		page, _ = weburl.Parse(pageURL.String(), nil)
	}
	if baseHref != "" {
		s, _, _ := strings.Cut(cleanURL(baseHref), "#")
		if b, err := weburl.Parse(s, page); err == nil && weburl.HTTP(b) {
			return b
		}
	}
	return page
}

type resolution = weburl.Resolution

const (
	kept    = weburl.Kept
	skipped = weburl.Skipped // on purpose: fragment-only, or a scheme other than http(s)
	invalid = weburl.Invalid // unparsable, or relative with nothing to resolve against
)

// resolve makes raw absolute against base (which may be nil) as a browser
// does, and drops the fragment; a fragment-only link is skipped.
func resolve(base *whatwg.Url, raw string) (string, resolution) {
	if s := cleanURL(raw); s == "" || s[0] == '#' {
		return "", skipped
	}
	return weburl.Resolve(base, raw)
}

// cleanURL strips what browsers strip from URL attributes.
func cleanURL(s string) string { return weburl.Clean(s) }

// normalise collapses white space runs to one space, trims, and caps the
// result at max bytes on a rune boundary.
func normalise(b []byte, max int) string {
	if len(b) <= max && isNormal(b) {
		return string(b)
	}
	var sb strings.Builder
	for w := range strings.FieldsSeq(string(b)) {
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(w)
		if sb.Len() >= max {
			break
		}
	}
	return capString(sb.String(), max)
}

// isNormal reports ASCII text with single spaces between words and none
// around them, which normalise would return unchanged.
func isNormal(b []byte) bool {
	if len(b) > 0 && (b[0] == ' ' || b[len(b)-1] == ' ') {
		return false
	}
	for i, c := range b {
		if c >= utf8.RuneSelf || c != ' ' && asciiSpace[c] || c == ' ' && b[i-1] == ' ' {
			return false
		}
	}
	return true
}

func capString(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

func appendCapped(dst, src []byte, max int) []byte {
	if room := max - len(dst); room < len(src) {
		if room <= 0 {
			return dst
		}
		src = src[:room]
	}
	return append(dst, src...)
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), sub)
}

// SeparatesWords reports whether the HTML element a separates the words of
// visible text (block-level elements, <br>, <img>...): the rule the fetch/page
// tests apply to a DOM to check the streaming extraction.
func SeparatesWords(a atom.Atom) bool { return isBlock(a) }
