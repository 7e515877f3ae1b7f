package htmlx

import (
	"strings"

	"golang.org/x/net/html/atom"
)

// class is what tree construction and text extraction need to know about an
// HTML element name, as bits: looked up once per tag instead of asking a
// switch per rule.
type class uint16

const (
	cBlock         class = 1 << iota // separates words (isBlock)
	cSpecial                         // the standard's "special" category
	cVoid                            // no end tag, never on the stack
	cHeading                         // h1 to h6
	cClosesP                         // its start tag closes an open <p>
	cClosedInScope                   // its end tag closes it when in scope
	cTablePart                       // caption, col, colgroup, tbody, td, tfoot, th, thead, tr
	cFormatting                      // a, b, big, code, em, font, i, nobr, s, small, strike, strong, tt, u
	cBreakout                        // its start tag ends SVG/MathML content
	cMarker                          // a scope marker for formatting elements
)

// classOf returns the class of the HTML element a: from a small
// open-addressing table for the names of HTML, else computed.
func classOf(a atom.Atom) class {
	for i := slot(a); ; i = (i + 1) & (len(classTable) - 1) {
		e := &classTable[i]
		if e.a == a {
			return e.c
		}
		if e.a == 0 {
			return computeClass(a)
		}
	}
}

var classTable = func() (t [512]struct {
	a atom.Atom
	c class
}) {
	for name := range strings.FieldsSeq(elementNames) {
		a := atom.Lookup([]byte(name))
		if a == 0 {
			continue
		}
		i := slot(a)
		for t[i].a != 0 && t[i].a != a {
			i = (i + 1) & (len(t) - 1)
		}
		t[i].a, t[i].c = a, computeClass(a)
	}
	return t
}()

func slot(a atom.Atom) int { return int(uint32(a)*0x9e3779b1>>23) & 511 }

// elementNames names the elements of HTML, obsolete ones included.
const elementNames = `a abbr acronym address applet area article aside audio b base basefont bdi bdo bgsound big blink
blockquote body br button canvas caption center cite code col colgroup data datalist dd del details dfn dialog dir div
dl dt em embed fieldset figcaption figure font footer form frame frameset h1 h2 h3 h4 h5 h6 head header hgroup hr html
i iframe image img input ins kbd keygen label legend li link listing main map mark marquee menu meta meter nav nobr
noembed noframes noscript object ol optgroup option output p param picture plaintext pre progress q rb rp rt rtc ruby
s samp script search section select slot small source span strike strong style sub summary sup svg math table tbody td
template textarea tfoot th thead time title tr track tt u ul var video wbr xmp`

func computeClass(a atom.Atom) class {
	var c class
	for _, r := range []struct {
		is  func(atom.Atom) bool
		bit class
	}{
		{isBlock, cBlock}, {specialHTML, cSpecial}, {void, cVoid}, {isHeading, cHeading}, {closesP, cClosesP},
		{closedInScope, cClosedInScope}, {tablePart, cTablePart}, {formatting, cFormatting}, {breakout, cBreakout},
		{markerHTML, cMarker},
	} {
		if r.is(a) {
			c |= r.bit
		}
	}
	return c
}
