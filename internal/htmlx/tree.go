package htmlx

import (
	"slices"

	"golang.org/x/net/html/atom"
)

// The parser keeps the HTML standard's stack of open elements, and only
// that: enough of tree construction to end headings, anchors, templates and
// SVG/MathML content where a browser ends them (</h2> closes an open <h1>,
// </div> closes the <h1> inside it, a stray </div> is ignored), without
// building a DOM. Formatting elements closed with an element they were in
// are reopened as the standard's list of active formatting elements would
// (see reopened), as clones that carry no link. What it leaves out (foster
// parenting in tables, the adoption agency's clones, <select> and
// <frameset> modes) is listed in the package documentation.

type namespace uint8

const (
	nsHTML namespace = iota
	nsSVG
	nsMath
)

// Element flags.
const (
	fH1     = 1 << iota // an <h1> outside templates: its text goes to Page.H1
	fHidden             // SVG/MathML script, style, title, desc: its text is not visible
	fHTMLIP             // a MathML annotation-xml whose encoding is HTML: an HTML integration point
	fEnded              // a formatting element ended by its own end tag (or an <a> start): not reopened
)

// reopened is a formatting element that was closed along with an element
// it was in (<h1><a>x</h1>) and so stays in the standard's list of active
// formatting elements: the next text or inline start tag reopens it (the
// standard's "reconstruct the active formatting elements"), and it is the
// current node then, so a heading that follows does not end an open one.
type reopened struct {
	a     atom.Atom
	cl    class
	name  uint32
	level int32 // markers open when it was closed
}

// maxReopened bounds how many formatting elements of one name are kept
// for reopening, as the standard's Noah's Ark clause does (by name only).
const maxReopened = 3

// elem is an open element.
type elem struct {
	a     atom.Atom
	cl    class  // classOf(a) for HTML elements; cSpecial for SVG/MathML integration points
	name  uint32 // hash of the lower-cased name (tagName), which tells elements without an atom apart
	ns    namespace
	flags uint8
	link  int32 // <a>: index of its link in parser.links, or -1
	slot  int32 // <h1>: index in Page.H1, or -1
	text  int32 // <h1>: offset of its text in parser.h1Text
}

// maxDepth bounds the stack; deeper elements are counted in parser.deep and
// their end tags consumed by count, which keeps memory bounded on hostile
// input at the price of accuracy there.
const maxDepth = 512

func (p *parser) top() *elem {
	if len(p.stack) == 0 {
		return nil
	}
	return &p.stack[len(p.stack)-1]
}

func (p *parser) push(e elem) {
	if len(p.stack) >= maxDepth {
		p.deep++
		if e.a == atom.A {
			p.anchor, p.pendingLink = -1, -1
		}
		return
	}
	e.link, e.slot, e.name = -1, -1, p.tag
	switch {
	case e.ns == nsHTML:
		e.cl = p.cl
	case e.ns == nsMath && (mathTextIP(e.a) || e.a == atom.AnnotationXml), e.ns == nsSVG && svgHTMLIP(e.a):
		e.cl = cSpecial
	}
	if e.ns == nsHTML {
		switch e.a {
		case atom.Template:
			p.templates++
		case atom.A:
			if p.pendingLink >= 0 {
				e.link = int32(p.pendingLink)
				p.openAnchor(p.pendingLink)
				p.pendingLink = -1
			} else {
				p.anchor = -1
			}
		case atom.H1:
			if p.templates == 0 {
				e.flags |= fH1
				if p.h1 == 0 {
					p.h1Text = p.h1Text[:0]
				}
				p.h1++
				e.text = int32(len(p.h1Text))
				if len(p.page.H1) < maxH1 {
					e.slot = int32(len(p.page.H1))
					p.page.H1 = append(p.page.H1, "")
				}
			}
		}
	} else if e.a == atom.A && p.pendingLink >= 0 {
		e.link = int32(p.pendingLink)
		p.openAnchor(p.pendingLink)
		p.pendingLink = -1
	}
	if e.flags&fHidden != 0 {
		p.hidden++
	}
	if e.ns == nsHTML && e.cl&cMarker != 0 {
		p.markers++
	}
	p.stack = append(p.stack, e)
}

// reconstruct reopens the formatting elements closed since the last
// marker (see reopened), as clones that carry no link.
func (p *parser) reconstruct() {
	n := len(p.reopen)
	for n > 0 && p.reopen[n-1].level == int32(p.markers) {
		n--
	}
	for _, r := range p.reopen[n:] {
		if len(p.stack) >= maxDepth {
			p.deep++
			continue
		}
		p.stack = append(p.stack, elem{a: r.a, cl: r.cl, name: r.name, link: -1, slot: -1})
	}
	p.reopen = p.reopen[:n]
}

// reopensForText reports whether text here reopens closed formatting
// elements: in HTML content, but not in the raw text of <textarea> or
// <xmp>, which the standard reads in its "text" mode.
func (p *parser) reopensForText() bool {
	e := p.top()
	return e != nil && !p.foreignText() && !(e.ns == nsHTML && (e.a == atom.Textarea || e.a == atom.Xmp))
}

// forget drops the latest reopenable element named a since the last
// marker, reporting whether there was one: its end tag (or, for <a>, a new
// <a>) takes it out of the list of active formatting elements.
func (p *parser) forget(a atom.Atom) bool {
	for i := len(p.reopen) - 1; i >= 0 && p.reopen[i].level == int32(p.markers); i-- {
		if p.reopen[i].a == a {
			p.reopen = append(p.reopen[:i], p.reopen[i+1:]...)
			return true
		}
	}
	return false
}

// keepForReopening records e, a formatting element closed with an element
// it was in.
func (p *parser) keepForReopening(e *elem) {
	r := reopened{a: e.a, cl: e.cl, name: e.name, level: int32(p.markers)}
	same, first := 0, -1
	for i := len(p.reopen) - 1; i >= 0 && p.reopen[i].level == r.level; i-- {
		if p.reopen[i].a == r.a {
			same, first = same+1, i
		}
	}
	if same >= maxReopened {
		p.reopen = append(p.reopen[:first], p.reopen[first+1:]...)
	}
	p.reopen = append(p.reopen, r)
}

// popTo pops the element at index i and every element above it.
func (p *parser) popTo(i int) {
	r := len(p.reopen)
	for j := len(p.stack) - 1; j >= i; j-- {
		p.closed(&p.stack[j])
	}
	p.stack = p.stack[:i]
	if r = min(r, len(p.reopen)); len(p.reopen)-r > 1 {
		slices.Reverse(p.reopen[r:]) // closed innermost first; reopened outermost first
	}
}

// remove takes the element at index i off the stack and leaves the ones
// above it open, as the adoption agency algorithm does with a misnested
// formatting element that has a block inside it.
func (p *parser) remove(i int) {
	p.closed(&p.stack[i])
	p.stack = append(p.stack[:i], p.stack[i+1:]...)
}

// closed does what ending an element means for the extracted fields.
func (p *parser) closed(e *elem) {
	if e.ns == nsHTML && e.a == atom.Template {
		p.templates--
	}
	if e.flags&fHidden != 0 {
		p.hidden--
	}
	if e.link >= 0 && int(e.link) == p.anchor {
		p.anchor = -1
	}
	if e.flags&fH1 != 0 {
		p.closeH1(e)
	}
	if e.ns == nsHTML {
		switch {
		case e.cl&cMarker != 0:
			p.markers--
			n := len(p.reopen)
			for n > 0 && p.reopen[n-1].level > int32(p.markers) {
				n--
			}
			p.reopen = p.reopen[:n]
		case e.cl&cFormatting != 0 && e.flags&fEnded == 0:
			p.keepForReopening(e)
		}
	}
}

func (p *parser) closeH1(e *elem) {
	if e.slot >= 0 {
		p.page.H1[e.slot] = normalise(p.h1Text[e.text:], p.opt.MaxTextBytes)
	}
	p.h1--
	if p.h1 == 0 {
		p.h1Text = p.h1Text[:0]
	}
}

type scope uint8

const (
	scopeDefault scope = iota
	scopeListItem
	scopeButton
	scopeTable
)

// is reports whether e is the element the current tag names: same atom,
// and for elements without one, same name.
func (p *parser) is(e *elem, a atom.Atom) bool {
	return e.a == a && (a != 0 || e.name == p.tag)
}

// limits reports whether e ends a search for an element "in scope".
func (e *elem) limits(s scope) bool {
	switch e.ns {
	case nsHTML:
		switch e.a {
		case atom.Html, atom.Table, atom.Template:
			return true
		case atom.Applet, atom.Caption, atom.Td, atom.Th, atom.Marquee, atom.Object:
			return s != scopeTable
		case atom.Ol, atom.Ul:
			return s == scopeListItem
		case atom.Button:
			return s == scopeButton
		}
		return false
	case nsMath:
		return s != scopeTable && (mathTextIP(e.a) || e.a == atom.AnnotationXml)
	}
	return s != scopeTable && svgHTMLIP(e.a)
}

// inScope returns the index of the topmost HTML element named a (any
// heading for anyHeading) that is in scope s, or -1.
func (p *parser) inScope(s scope, a atom.Atom) int {
	for i := len(p.stack) - 1; i >= 0; i-- {
		e := &p.stack[i]
		if e.ns == nsHTML && (e.a == a || a == anyHeading && e.cl&cHeading != 0) {
			return i
		}
		if e.limits(s) {
			return -1
		}
	}
	return -1
}

// anyHeading asks inScope for any of h1 to h6.
const anyHeading = ^atom.Atom(0) // no atom has this value

func isHeading(a atom.Atom) bool {
	switch a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	}
	return false
}

func mathTextIP(a atom.Atom) bool {
	switch a {
	case atom.Mi, atom.Mo, atom.Mn, atom.Ms, atom.Mtext:
		return true
	}
	return false
}

func svgHTMLIP(a atom.Atom) bool {
	return a == atom.Foreignobject || a == atom.Desc || a == atom.Title
}

// htmlIP reports an HTML integration point (start tags and text in it are HTML).
func (e *elem) htmlIP() bool {
	return e.ns == nsSVG && svgHTMLIP(e.a) || e.ns == nsMath && e.flags&fHTMLIP != 0
}

// foreignStart reports whether a start tag name is read by the rules for
// foreign content (the standard's tree construction dispatcher).
func (p *parser) foreignStart(name atom.Atom) bool {
	e := p.top()
	if e == nil || e.ns == nsHTML {
		return false
	}
	if e.ns == nsMath && mathTextIP(e.a) && name != atom.Mglyph && name != atom.Malignmark {
		return false
	}
	if e.ns == nsMath && e.a == atom.AnnotationXml && name == atom.Svg {
		return false
	}
	return !e.htmlIP()
}

// foreignText reports whether text is foreign content (NUL reads as U+FFFD
// there; in HTML content it is dropped).
func (p *parser) foreignText() bool {
	e := p.top()
	return e != nil && e.ns != nsHTML && !(e.ns == nsMath && mathTextIP(e.a)) && !e.htmlIP()
}

// popToHTML pops foreign elements until the current node is HTML or an
// integration point, as a "breakout" tag in foreign content does.
func (p *parser) popToHTML() {
	for {
		e := p.top()
		if e == nil || e.ns == nsHTML || e.htmlIP() || e.ns == nsMath && mathTextIP(e.a) {
			return
		}
		p.popTo(len(p.stack) - 1)
	}
}

// breakout reports the HTML start tags that end foreign content.
func breakout(a atom.Atom) bool {
	switch a {
	case atom.B, atom.Big, atom.Blockquote, atom.Body, atom.Br, atom.Center, atom.Code, atom.Dd,
		atom.Div, atom.Dl, atom.Dt, atom.Em, atom.Embed, atom.H1, atom.H2, atom.H3, atom.H4,
		atom.H5, atom.H6, atom.Head, atom.Hr, atom.I, atom.Img, atom.Li, atom.Listing, atom.Menu,
		atom.Meta, atom.Nobr, atom.Ol, atom.P, atom.Pre, atom.Ruby, atom.S, atom.Small, atom.Span,
		atom.Strong, atom.Strike, atom.Sub, atom.Sup, atom.Table, atom.Tt, atom.U, atom.Ul, atom.Var:
		return true
	}
	return false
}

// special reports the standard's "special" elements, which stop the
// search of an unmatched end tag.
func (e *elem) special() bool { return e.cl&cSpecial != 0 }

// specialHTML reports the HTML elements of the "special" category.
func specialHTML(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Applet, atom.Area, atom.Article, atom.Aside, atom.Base, atom.Basefont,
		atom.Bgsound, atom.Blockquote, atom.Body, atom.Br, atom.Button, atom.Caption, atom.Center,
		atom.Col, atom.Colgroup, atom.Dd, atom.Details, atom.Dir, atom.Div, atom.Dl, atom.Dt,
		atom.Embed, atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer, atom.Form, atom.Frame,
		atom.Frameset, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Head, atom.Header,
		atom.Hgroup, atom.Hr, atom.Html, atom.Iframe, atom.Img, atom.Input, atom.Keygen, atom.Li,
		atom.Link, atom.Listing, atom.Main, atom.Marquee, atom.Menu, atom.Meta, atom.Nav,
		atom.Noembed, atom.Noframes, atom.Noscript, atom.Object, atom.Ol, atom.P, atom.Param,
		atom.Plaintext, atom.Pre, atom.Script, atom.Search, atom.Section, atom.Select, atom.Source,
		atom.Style, atom.Summary, atom.Table, atom.Tbody, atom.Td, atom.Template, atom.Textarea,
		atom.Tfoot, atom.Th, atom.Thead, atom.Title, atom.Tr, atom.Track, atom.Ul, atom.Wbr, atom.Xmp:
		return true
	}
	return false
}

func void(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Basefont, atom.Bgsound, atom.Br, atom.Col, atom.Embed,
		atom.Frame, atom.Hr, atom.Img, atom.Input, atom.Keygen, atom.Link, atom.Meta, atom.Param,
		atom.Source, atom.Track, atom.Wbr:
		return true
	}
	return false
}

func formatting(a atom.Atom) bool {
	switch a {
	case atom.A, atom.B, atom.Big, atom.Code, atom.Em, atom.Font, atom.I, atom.Nobr, atom.S,
		atom.Small, atom.Strike, atom.Strong, atom.Tt, atom.U:
		return true
	}
	return false
}

// closesP reports the start tags that close an open <p> first.
func closesP(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Center, atom.Details,
		atom.Dialog, atom.Dir, atom.Div, atom.Dl, atom.Fieldset, atom.Figcaption, atom.Figure,
		atom.Footer, atom.Header, atom.Hgroup, atom.Main, atom.Menu, atom.Nav, atom.Ol, atom.P,
		atom.Search, atom.Section, atom.Summary, atom.Ul, atom.Pre, atom.Listing, atom.Form,
		atom.Plaintext, atom.Table, atom.Hr, atom.Xmp:
		return true
	}
	return false
}

// closedInScope reports the end tags that close the element of the same
// name when it is in scope, and everything opened inside it.
func closedInScope(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Button, atom.Center,
		atom.Details, atom.Dialog, atom.Dir, atom.Div, atom.Dl, atom.Fieldset, atom.Figcaption,
		atom.Figure, atom.Footer, atom.Header, atom.Hgroup, atom.Listing, atom.Main, atom.Menu,
		atom.Nav, atom.Ol, atom.Pre, atom.Search, atom.Section, atom.Select, atom.Summary, atom.Ul,
		atom.Dd, atom.Dt, atom.Applet, atom.Marquee, atom.Object:
		return true
	}
	return false
}

func tablePart(a atom.Atom) bool {
	switch a {
	case atom.Caption, atom.Col, atom.Colgroup, atom.Tbody, atom.Td, atom.Tfoot, atom.Th,
		atom.Thead, atom.Tr:
		return true
	}
	return false
}

// closeP closes an open <p> in button scope.
func (p *parser) closeP() {
	if i := p.inScope(scopeButton, atom.P); i >= 0 {
		p.popTo(i)
	}
}

// startStructure updates the stack for an HTML start tag (other than the
// raw-text elements, which the tokenizer ends by itself). It reports false
// for a start tag that tree construction ignores.
func (p *parser) startStructure(name atom.Atom, cl class, selfClosing bool) bool {
	switch {
	case name == atom.Svg || name == atom.Math:
		if !selfClosing {
			ns := nsSVG
			if name == atom.Math {
				ns = nsMath
			}
			p.push(elem{a: name, ns: ns})
		}
		return true
	case name == atom.Html || name == atom.Head || name == atom.Body || name == atom.Frameset || name == atom.Frame:
		return false // merged into the existing element or, in a page with content, ignored
	case cl&cHeading != 0:
		p.closeP()
		if e := p.top(); e != nil && e.ns == nsHTML && e.cl&cHeading != 0 {
			p.popTo(len(p.stack) - 1)
		}
	case name == atom.Li || name == atom.Dd || name == atom.Dt:
		for i := len(p.stack) - 1; i >= 0; i-- {
			e := &p.stack[i]
			if e.ns == nsHTML && (name == atom.Li && e.a == atom.Li || name != atom.Li && (e.a == atom.Dd || e.a == atom.Dt)) {
				p.popTo(i)
				break
			}
			if e.special() && !(e.ns == nsHTML && (e.a == atom.Address || e.a == atom.Div || e.a == atom.P)) {
				break
			}
		}
		p.closeP()
	case name == atom.A:
		if p.forget(atom.A) {
			break // the last <a> was closed already: it is not reopened
		}
		for i := len(p.stack) - 1; i >= 0; i-- {
			e := &p.stack[i]
			if e.ns == nsHTML && e.a == atom.A {
				p.adopt(i)
				break
			}
			if marker(e) {
				break
			}
		}
	case name == atom.Button:
		if i := p.inScope(scopeDefault, atom.Button); i >= 0 {
			p.popTo(i)
		}
	case name == atom.Option || name == atom.Optgroup:
		if e := p.top(); e != nil && e.ns == nsHTML && e.a == atom.Option {
			p.popTo(len(p.stack) - 1)
		}
	case cl&cTablePart != 0:
		t := p.inScope(scopeTable, atom.Table)
		if t < 0 {
			return false // outside a table these start tags are ignored
		}
		// Close what the new part ends: an open cell, row or section.
		for i := t + 1; i < len(p.stack); i++ {
			if e := &p.stack[i]; e.ns == nsHTML && endsTablePart(name, e.a) {
				p.popTo(i)
				break
			}
		}
		if name == atom.Col {
			return true
		}
	case name == atom.Form:
		if p.form && p.templates == 0 {
			return false // a form inside a form is ignored
		}
		p.closeP()
		p.form = p.templates == 0
	case cl&cClosesP != 0:
		p.closeP()
	}
	if reconstructs(name, cl) {
		p.reconstruct()
	}
	if cl&cVoid == 0 {
		p.push(elem{a: name})
	}
	return true
}

// reconstructs reports the start tags before which the standard reopens
// closed formatting elements ("in body": inline and unknown elements, not
// blocks, headings, lists, tables or what belongs in <head>).
func reconstructs(a atom.Atom, cl class) bool {
	switch {
	case a == atom.Xmp:
		return true
	case cl&(cClosesP|cHeading|cTablePart) != 0:
		return false
	}
	switch a {
	case atom.Li, atom.Dd, atom.Dt, atom.Html, atom.Body, atom.Head, atom.Frameset, atom.Frame,
		atom.Base, atom.Basefont, atom.Bgsound, atom.Link, atom.Meta, atom.Noframes, atom.Script,
		atom.Style, atom.Template, atom.Title, atom.Textarea, atom.Iframe, atom.Noembed,
		atom.Noscript, atom.Param, atom.Source, atom.Track, atom.Rb, atom.Rtc, atom.Rp, atom.Rt:
		return false
	}
	return true
}

// endsTablePart reports whether starting the table part name closes the
// open element a: a cell closes a cell, a row a row or cell, a section
// (or caption, colgroup) any of them.
func endsTablePart(name, a atom.Atom) bool {
	switch name {
	case atom.Td, atom.Th:
		return a == atom.Td || a == atom.Th
	case atom.Tr:
		return a == atom.Td || a == atom.Th || a == atom.Tr
	}
	return tablePart(a)
}

func marker(e *elem) bool { return e.ns == nsHTML && e.cl&cMarker != 0 }

func markerHTML(a atom.Atom) bool {
	switch a {
	case atom.Applet, atom.Object, atom.Marquee, atom.Template, atom.Td, atom.Th, atom.Caption:
		return true
	}
	return false
}

// adopt ends the misnested formatting element at index i: with no special
// element opened inside it, it and what it contains are closed; otherwise
// only it is (the adoption agency algorithm then moves the block out, and
// its clones are not counted again).
func (p *parser) adopt(i int) {
	p.stack[i].flags |= fEnded
	for j := i + 1; j < len(p.stack); j++ {
		if p.stack[j].special() {
			p.remove(i)
			return
		}
	}
	p.popTo(i)
}

// endStructure updates the stack for an HTML end tag and reports whether
// it separates words: a block element's end tag that closed something,
// </p> (which, unmatched, makes an empty paragraph) and </br> (read as <br>).
func (p *parser) endStructure(name atom.Atom, cl class) bool {
	switch {
	case name == atom.Body || name == atom.Html || name == atom.Head:
		return false
	case name == atom.Br:
		return true
	case name == atom.P:
		p.closeP()
		return true
	case name == atom.Li:
		return p.closeInScope(scopeListItem, atom.Li)
	case cl&cHeading != 0:
		return p.closeInScope(scopeDefault, anyHeading)
	case cl&cClosedInScope != 0:
		return p.closeInScope(scopeDefault, name)
	case name == atom.Form:
		// The form is taken off the stack; what it contains stays open
		// (and in it, as far as the text goes).
		if p.templates == 0 {
			if !p.form {
				return false
			}
			p.form = false
		}
		i := p.inScope(scopeDefault, atom.Form)
		if i < 0 {
			return false
		}
		if i == len(p.stack)-1 {
			p.popTo(i)
			return true
		}
		p.remove(i)
		return false
	case name == atom.Template:
		for i := len(p.stack) - 1; i >= 0; i-- {
			if e := &p.stack[i]; e.ns == nsHTML && e.a == atom.Template {
				p.popTo(i)
				return false
			}
		}
		return false
	case name == atom.Table || cl&cTablePart != 0:
		return p.closeInScope(scopeTable, name)
	case cl&cFormatting != 0:
		if p.forget(name) {
			return false // closed already: now it is not reopened either
		}
		for i := len(p.stack) - 1; i >= 0; i-- {
			e := &p.stack[i]
			if e.ns == nsHTML && e.a == name {
				p.adopt(i)
				return false
			}
			if e.limits(scopeDefault) {
				return false
			}
		}
		return false
	}
	// Any other end tag closes the nearest element of its name, unless a
	// special element comes first.
	for i := len(p.stack) - 1; i >= 0; i-- {
		e := &p.stack[i]
		if e.ns == nsHTML && p.is(e, name) {
			p.popTo(i)
			return cl&cBlock != 0
		}
		if e.special() {
			return false
		}
	}
	return false
}

func (p *parser) closeInScope(s scope, a atom.Atom) bool {
	if i := p.inScope(s, a); i >= 0 {
		p.popTo(i)
		return true
	}
	return false
}

// endForeign handles an end tag while the current node is SVG or MathML.
func (p *parser) endForeign(name atom.Atom) bool {
	if name == atom.Br || name == atom.P {
		p.popToHTML()
		return p.endStructure(name, classOf(name))
	}
	for i := len(p.stack) - 1; i >= 0; i-- {
		if p.is(&p.stack[i], name) {
			p.popTo(i)
			return false
		}
		if i > 0 && p.stack[i-1].ns == nsHTML {
			break
		}
	}
	return p.endStructure(name, classOf(name))
}
