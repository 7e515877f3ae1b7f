package htmlx

import (
	"bytes"
	"strings"

	"golang.org/x/net/html/atom"
)

// Facts are what a page says beyond Page's fields, for the checks an SEO audit runs on one page
// (headings, images, where the canonical and the robots meta are, social and structured data...).
// Parse gathers them in its one pass when Options.Facts is set; every list is capped, so their size
// is bounded whatever the page.
type Facts struct {
	Elements  int // start tags of elements outside templates: the size of the DOM
	TextBytes int // bytes of visible text, as streamed to Options.Text (words and single spaces)

	Headings []uint8 // the level (1 to 6) of each h1...h6 outside templates, in document order, at most MaxFactItems
	Images   []Image // each <img> outside templates, at most MaxFactItems
	ImagesN  int     // all <img> elements, counted past the cap too

	CanonicalRaw     string // the first rel=canonical href as written ("" when absent)
	CanonicalsInBody int    // rel=canonical links after the head ended (ignored by search engines)
	MetaRobotsInBody int    // <meta name=robots> after the head ended
	Viewport         string // the first <meta name=viewport> content
	ViewportCount    int
	CharsetMeta      bool   // <meta charset> or <meta http-equiv=content-type> with a charset
	OGTitle          string // <meta property="og:title"> content
	OGDescription    string // <meta property="og:description"> content
	OGImage          string // <meta property="og:image"> content, as written
	JSONLD           []JSONLD
	Forms            []string // the action of each <form>, resolved; "" when absent (the form posts to the page)
	Lorem            bool     // the visible text has "lorem ipsum", placeholder text
}

// Facts returns what the page says for an SEO audit's checks, gathered when it was parsed with
// Options.Facts; nil without. It is a method, not a field, because the public fetch/page.Page carries
// every field of Page and these facts are the audit's, not the library's.
func (p *Page) Facts() *Facts { return p.facts }

// Image is one <img> element.
type Image struct {
	Src       string // src as written, capped
	Alt       string // alt, capped at Options.MaxTextBytes
	HasAlt    bool   // an alt attribute is present (alt="" marks a decorative image)
	HasWidth  bool   // a width attribute is present
	HasHeight bool   // a height attribute is present
}

// JSONLD is one <script type="application/ld+json">.
type JSONLD struct {
	Body      []byte // the script's text, at most MaxJSONLDBytes
	Truncated bool   // the script was longer than MaxJSONLDBytes
}

const (
	// MaxFactItems caps each list of Facts (headings, images, forms).
	MaxFactItems = 500
	// MaxJSONLDBytes caps the text kept of each JSON-LD script.
	MaxJSONLDBytes = 256 << 10
	// maxJSONLD caps the JSON-LD scripts kept.
	maxJSONLD = 20
)

// lorem is the placeholder text Facts.Lorem looks for, lower case.
const lorem = "lorem ipsum"

// headElement reports the elements a page's head may hold: any other start tag, or visible text,
// ends the head (the standard's "in head" insertion mode), so a canonical or robots meta after it is
// in the body.
func headElement(a atom.Atom) bool {
	switch a {
	case atom.Html, atom.Head, atom.Title, atom.Meta, atom.Link, atom.Base, atom.Script, atom.Style,
		atom.Noscript, atom.Template, atom.Basefont, atom.Bgsound:
		return true
	}
	return false
}

// factsStart notes what an HTML start tag outside templates tells Facts.
func (p *parser) factsStart(name atom.Atom, a *attrs) {
	f := p.page.facts
	if !headElement(name) {
		p.inBody = true
	}
	switch name {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		if len(f.Headings) < MaxFactItems {
			f.Headings = append(f.Headings, uint8(name.String()[1]-'0'))
		}
	case atom.Img:
		f.ImagesN++
		if len(f.Images) < MaxFactItems {
			f.Images = append(f.Images, Image{Src: capString(a.src, 512), Alt: capString(a.alt, p.opt.MaxTextBytes),
				HasAlt: a.has&hasAlt != 0, HasWidth: a.has&hasWidth != 0, HasHeight: a.has&hasHeight != 0})
		}
	case atom.Form:
		if len(p.forms) < MaxFactItems {
			p.forms = append(p.forms, capString(a.action, 8192))
		}
	case atom.Script:
		if mt, _, _ := strings.Cut(a.typ, ";"); strings.EqualFold(strings.TrimSpace(mt), "application/ld+json") && len(f.JSONLD) < maxJSONLD {
			f.JSONLD = append(f.JSONLD, JSONLD{})
			p.jsonld = true
		}
	}
}

// factsMeta notes what a <meta> tells Facts.
func (p *parser) factsMeta(a *attrs) {
	f := p.page.facts
	if a.has&hasCharset != 0 {
		f.CharsetMeta = true
	}
	if strings.EqualFold(strings.TrimSpace(a.httpEquiv), "content-type") && containsFold(a.content, "charset=") {
		f.CharsetMeta = true
	}
	switch strings.ToLower(strings.TrimSpace(a.name)) {
	case "viewport":
		f.ViewportCount++
		if f.ViewportCount == 1 {
			f.Viewport = capString(strings.TrimSpace(a.content), p.opt.MaxTextBytes)
		}
	case "robots":
		if p.inBody {
			f.MetaRobotsInBody++
		}
	}
	var dst *string
	switch strings.ToLower(strings.TrimSpace(a.property)) {
	case "og:title":
		dst = &f.OGTitle
	case "og:description":
		dst = &f.OGDescription
	case "og:image":
		dst = &f.OGImage
	default:
		return
	}
	if *dst == "" {
		*dst = capString(strings.TrimSpace(a.content), p.opt.MaxTextBytes)
	}
}

// jsonldText appends a JSON-LD script's text, up to the cap.
func (p *parser) jsonldText(b []byte) {
	j := &p.page.facts.JSONLD[len(p.page.facts.JSONLD)-1]
	room := MaxJSONLDBytes - len(j.Body)
	if len(b) > room {
		b, j.Truncated = b[:max(room, 0)], true
	}
	j.Body = append(j.Body, b...)
}

// factsText notes the visible text just written: its size, the end of the head, placeholder text.
func (p *parser) factsText(out []byte) {
	f := p.page.facts
	f.TextBytes += len(out)
	p.inBody = true
	if f.Lorem {
		return
	}
	// The text arrives in pieces: a match may start in an earlier one (loremAt bytes of it matched).
	// The pattern's first byte appears nowhere else in it, so after a mismatch the search goes on from
	// the mismatched byte.
	i := 0
	for {
		if p.loremAt > 0 {
			n := matchFold(out[i:], lorem[p.loremAt:])
			if n == len(lorem)-p.loremAt {
				f.Lorem = true
				return
			}
			if i+n == len(out) {
				p.loremAt += n // the piece ended inside a match
				return
			}
			p.loremAt, i = 0, i+n
		}
		j := indexFoldL(out[i:])
		if j < 0 {
			return
		}
		i += j + 1
		p.loremAt = 1
	}
}

// matchFold is how many bytes at the start of b equal those of lower, a lower-case pattern, ASCII
// letters compared without case.
func matchFold(b []byte, lower string) int {
	n := 0
	for n < len(b) && n < len(lower) {
		c := b[n]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[n] {
			break
		}
		n++
	}
	return n
}

// indexFoldL is the index of the first "l" or "L" in b, or -1: where "lorem ipsum" may start.
func indexFoldL(b []byte) int {
	i := bytes.IndexByte(b, 'l')
	if i < 0 {
		i = len(b)
	}
	if j := bytes.IndexByte(b[:i], 'L'); j >= 0 {
		i = j
	}
	if i == len(b) {
		return -1
	}
	return i
}
