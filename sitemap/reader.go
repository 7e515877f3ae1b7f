package sitemap

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"hash/maphash"
	"io"
	"iter"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

const (
	maxText  = 16 << 10 // raw bytes kept of one field's text; longer is TooLong
	maxDepth = 256      // element nesting accepted
	maxExt   = 32       // extension prefixes remembered
)

// Reader reads entries from one sitemap document as a stream, like
// encoding/csv: its memory does not grow with the document's size, only by
// ~20 bytes per returned entry (duplicate detection). Set the exported
// fields before the first call to Next.
type Reader struct {
	// MaxBytes limits the uncompressed bytes read; 0 (or less) means DefaultMaxBytes
	// (50 MiB). Entries completed before the limit are returned, then an
	// error matching ErrTooLarge.
	MaxBytes int64
	// MaxEntries limits the entries returned; 0 (or less) means DefaultMaxEntries
	// (50,000). The first MaxEntries are returned, then an error matching
	// ErrTooManyEntries if the document holds more.
	MaxEntries int
	// Scope says which URLs are accepted; the zero value applies the
	// sitemaps.org rules relative to the source URL.
	Scope Scope
	// OnSkip, if set, is called for every skipped entry with the URL as
	// written ("" when there was none) and the reason.
	OnSkip func(rawURL string, reason SkipReason)

	src       io.Reader
	sourceURL string
	base      base

	started bool
	err     error // sticky: returned by every later Next
	s       scanner
	kind    Kind
	text    bool
	gz      bool
	latin1  bool
	first   string // text: the start of the first non-blank line, for the ErrNotSitemap detail

	// XML state.
	stack      []frame
	rootSeen   bool
	entryDepth int // depth of the open entry element, 0 outside one
	field      field
	fieldDepth int
	txt        []byte // text of the open field
	txtOver    bool
	mark       int // txt[:mark] has had its entities decoded
	sinkText   func([]byte)
	ext        []string // namespace prefixes bound to extension namespaces

	// Current entry.
	cur     Entry
	loc     []byte
	locOver bool
	haveLoc bool
	updated bool // cur.LastMod came from <updated> or <pubDate>

	seed   maphash.Seed
	seen   hashSet
	hash   uint64 // of the URL check accepted last
	count  int
	skips  Skips
	maxEnt int
}

type frame struct {
	hash uint64
	el   elem
}

// NewReader returns a Reader of the sitemap in r, which was fetched from
// sourceURL (after redirects). sourceURL decides the scope of the entries; ""
// disables scope checks. The content decides the form: gzip, XML or text.
func NewReader(r io.Reader, sourceURL string) *Reader {
	return &Reader{src: r, sourceURL: sourceURL, base: newBase(sourceURL)}
}

// Kind returns the form of the document, known after the first call to Next.
func (r *Reader) Kind() Kind { return r.kind }

// Gzip reports whether the document was gzip-compressed.
func (r *Reader) Gzip() bool { return r.gz }

// Count returns the number of entries returned so far.
func (r *Reader) Count() int { return r.count }

// Skipped returns the entries skipped so far, by reason.
func (r *Reader) Skipped() Skips { return r.skips }

// BytesRead returns the uncompressed bytes consumed so far.
func (r *Reader) BytesRead() int64 { return r.s.pos() }

// All returns an iterator over the entries. It yields a non-nil error at
// most once, last, and never io.EOF.
func (r *Reader) All() iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		for {
			e, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(Entry{}, err)
				return
			}
			if !yield(e, nil) {
				return
			}
		}
	}
}

// Next returns the next entry, or io.EOF after the last one. Any other
// error is an *Error; entries returned before it are valid. After an error,
// Next keeps returning it.
func (r *Reader) Next() (Entry, error) {
	if r.err != nil {
		return Entry{}, r.err
	}
	if !r.started {
		r.started = true
		if err := r.start(); err != nil {
			r.err = err
			return Entry{}, err
		}
	}
	var e Entry
	var err error
	if r.text {
		e, err = r.nextText()
	} else {
		e, err = r.nextXML()
	}
	if err != nil {
		r.err = err
	}
	return e, err
}

func (r *Reader) fail(reason error, detail string, cause error) error {
	return &Error{URL: r.sourceURL, Offset: r.s.pos(), Reason: reason, Detail: detail, Err: cause}
}

func (r *Reader) start() error {
	r.maxEnt = r.MaxEntries
	if r.maxEnt <= 0 {
		r.maxEnt = DefaultMaxEntries
	}
	maxBytes := r.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	r.seed = maphash.MakeSeed()
	r.sinkText = r.appendText

	// The compressed input is capped too: a stream of empty gzip members
	// produces nothing, so only its own size bounds it.
	br := bufio.NewReaderSize(&limitReader{r: r.src, n: maxBytes}, 4096)
	var in io.Reader = br
	// Two layers: a .gz file served with Content-Encoding: gzip by a client
	// that does not decode it.
	for range 2 {
		magic, _ := br.Peek(2)
		if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
			break
		}
		gz, err := gzip.NewReader(br)
		if err != nil {
			if errors.Is(err, errTooLarge) {
				return r.fail(ErrTooLarge, "", nil)
			}
			return r.fail(ErrCompression, "", err)
		}
		r.gz = true
		br = bufio.NewReaderSize(&limitReader{r: gz, n: maxBytes}, 4096)
		in = br
	}
	r.s = scanner{rd: in, buf: make([]byte, bufSize)}
	s := &r.s
	s.ensure(3)
	b := s.buf[s.r:s.w]
	switch {
	case bytes.HasPrefix(b, []byte("\xef\xbb\xbf")):
		s.r += 3
	case bytes.HasPrefix(b, []byte("\xfe\xff")), bytes.HasPrefix(b, []byte("\xff\xfe")):
		r.kind = KindUnknown
		return r.fail(ErrEncoding, "UTF-16 byte order mark", nil)
	}
	for {
		for s.r < s.w && isSpace(s.buf[s.r]) {
			s.r++
		}
		if s.r < s.w || !s.fill() {
			break
		}
	}
	if s.r == s.w {
		if err := r.readError(); err != nil {
			return err
		}
		return r.fail(ErrEmpty, "", nil)
	}
	if s.buf[s.r] == '<' {
		r.stack = make([]frame, 0, 16)
		return nil
	}
	r.text = true
	r.kind = KindText
	return nil
}

// readError maps the scanner's read error, nil at a clean end of stream.
func (r *Reader) readError() error {
	err := r.s.readErr()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errTooLarge):
		max := r.MaxBytes
		if max <= 0 {
			max = DefaultMaxBytes
		}
		return r.fail(ErrTooLarge, "more than "+strconv.FormatInt(max, 10)+" bytes", nil)
	case r.gz && isGzipError(err):
		return r.fail(ErrCompression, "", err)
	}
	return r.fail(nil, "", err)
}

func isGzipError(err error) bool {
	var ce flate.CorruptInputError
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gzip.ErrChecksum) ||
		errors.Is(err, gzip.ErrHeader) || errors.As(err, &ce)
}

// endOfStream is the outcome of the stream ending while reading `what`.
func (r *Reader) endOfStream(what string) error {
	if err := r.readError(); err != nil {
		return err
	}
	if !r.rootSeen {
		if what == "" {
			return r.fail(ErrEmpty, "no root element", nil)
		}
		return r.fail(ErrMalformed, "document ends inside "+what, nil)
	}
	if len(r.stack) == 0 && what == "" {
		return io.EOF
	}
	if what == "" {
		what = "an element"
		if r.entryDepth > 0 {
			what = "an entry"
		}
	}
	return r.fail(ErrMalformed, "document ends inside "+what, nil)
}

// ---- text sitemaps ----

func (r *Reader) nextText() (Entry, error) {
	for {
		line, over, ok := r.readLine()
		if !ok {
			if err := r.readError(); err != nil {
				return Entry{}, err
			}
			if r.count == 0 && r.skips.OutOfScope == 0 && r.skips.Duplicate == 0 {
				// Not one line was an http(s) URL: a soft-404 page, a
				// notice, JSON... not a sitemap, whatever its name says.
				r.kind = KindUnknown
				return Entry{}, r.fail(ErrNotSitemap, "no http(s) URL in a non-XML document (first line "+strconv.Quote(r.first)+")", nil)
			}
			return Entry{}, io.EOF
		}
		line = trimSpace(line)
		if r.first == "" && (len(line) > 0 || over) {
			r.first = firstLine(line, over)
		}
		if !over && (len(line) == 0 || line[0] == '#') {
			continue
		}
		e, ok, err := r.emit(line, over)
		if ok || err != nil {
			return e, err
		}
	}
}

// firstLine keeps the start of a line for an error message: at most 60
// bytes, cut at a character boundary.
func firstLine(line []byte, over bool) string {
	if over {
		return "(a line longer than " + strconv.Itoa(maxText) + " bytes)"
	}
	if n := 60; len(line) > n {
		for k := 0; k < utf8.UTFMax-1 && !utf8.RuneStart(line[n]); k++ {
			n--
		}
		return string(line[:n]) + "..."
	}
	return string(line)
}

// readLine returns the next line (without '\n'), valid until the next read.
// A line longer than maxText is reported as over and not returned.
func (r *Reader) readLine() (line []byte, over, ok bool) {
	s := &r.s
	for {
		if i := bytes.IndexByte(s.buf[s.r:s.w], '\n'); i >= 0 {
			line = s.buf[s.r : s.r+i]
			s.r += i + 1
			if over {
				line = nil
			}
			return line, over, true
		}
		if s.w-s.r >= maxText {
			over = true
			s.r = s.w
		}
		if !s.fill() {
			// The last line only counts if the stream really ended there:
			// a line cut by the size limit would be a truncated URL.
			if s.w > s.r && s.readErr() == nil {
				line = s.buf[s.r:s.w]
				s.r = s.w
				if over {
					line = nil
				}
				return line, over, true
			}
			if over && s.readErr() == nil {
				return nil, true, true
			}
			return nil, false, false
		}
	}
}

// ---- XML ----

func (r *Reader) nextXML() (Entry, error) {
	s := &r.s
	for {
		var sink func([]byte)
		if r.field != fNone {
			sink = r.sinkText
		}
		if !s.skipTo('<', sink) {
			return Entry{}, r.endOfStream("")
		}
		if !s.ensure(2) {
			s.r = s.w
			return Entry{}, r.endOfStream("a tag")
		}
		var (
			e   Entry
			ok  bool
			err error
		)
		switch s.buf[s.r+1] {
		case '?':
			err = r.procInst()
		case '!':
			err = r.bang()
		case '/':
			e, ok, err = r.endTag()
		default:
			e, ok, err = r.startTag()
		}
		if err != nil || ok {
			return e, err
		}
		if r.rootSeen && len(r.stack) == 0 {
			// Whatever follows the root element is not read.
			return Entry{}, io.EOF
		}
	}
}

func (r *Reader) procInst() error {
	s := &r.s
	s.ensure(6)
	if !r.rootSeen && s.w-s.r >= 6 && string(s.buf[s.r+2:s.r+5]) == "xml" && isSpace(s.buf[s.r+5]) {
		end, st := s.tagEnd()
		if st != tagOK {
			return r.badTag(st, "the XML declaration")
		}
		decl := s.buf[s.r+5 : end]
		for len(decl) > 0 {
			var name, val []byte
			var ok bool
			name, val, decl, ok = nextAttr(decl)
			if !ok {
				break
			}
			if string(name) == "encoding" {
				latin1, known := encodingLatin1(val)
				if !known {
					return r.fail(ErrEncoding, strconv.Quote(string(val)), nil)
				}
				r.latin1 = latin1
			}
		}
		s.r = end + 1
		return nil
	}
	s.r += 2
	if !s.skipPast("?>", nil) {
		return r.endOfStream("a processing instruction")
	}
	return nil
}

func (r *Reader) bang() error {
	s := &r.s
	s.ensure(9)
	b := s.buf[s.r:s.w]
	switch {
	case bytes.HasPrefix(b, []byte("<!--")):
		s.r += 4
		if !s.skipPast("-->", nil) {
			return r.endOfStream("a comment")
		}
	case bytes.HasPrefix(b, []byte("<![CDATA[")):
		s.r += 9
		var sink func([]byte)
		if r.field != fNone {
			r.flushEntities()
			sink = r.sinkText
		}
		if !s.skipPast("]]>", sink) {
			return r.endOfStream("a CDATA section")
		}
		if r.field != fNone {
			r.mark = len(r.txt)
		}
	case len(b) >= 9 && bytes.EqualFold(b[:9], []byte("<!DOCTYPE")):
		s.r += 9
		return r.skipDoctype()
	default:
		end, st := s.tagEnd()
		if st != tagOK {
			return r.badTag(st, "a declaration")
		}
		s.r = end + 1
	}
	return nil
}

// skipDoctype skips a DOCTYPE with its internal subset. Nothing in it is
// used: entities declared there are never expanded.
func (r *Reader) skipDoctype() error {
	s := &r.s
	depth := 0
	var q byte
	for {
		if s.r >= s.w && !s.fill() {
			return r.endOfStream("the DOCTYPE")
		}
		c := s.buf[s.r]
		if q != 0 {
			if c == q {
				q = 0
			}
			s.r++
			continue
		}
		switch c {
		case '"', '\'':
			q = c
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case '<':
			if s.ensure(4) && bytes.HasPrefix(s.buf[s.r:s.w], []byte("<!--")) {
				s.r += 4
				if !s.skipPast("-->", nil) {
					return r.endOfStream("the DOCTYPE")
				}
				continue
			}
		case '>':
			if depth == 0 {
				s.r++
				return nil
			}
		}
		s.r++
	}
}

func (r *Reader) badTag(st tagStatus, what string) error {
	switch st {
	case tagEOF:
		r.s.r = r.s.w
		return r.endOfStream(what)
	case tagTooLong:
		return r.fail(ErrMalformed, what+" longer than "+strconv.Itoa(bufSize)+" bytes", nil)
	}
	return r.fail(ErrMalformed, "unclosed tag", nil)
}

func (r *Reader) startTag() (Entry, bool, error) {
	s := &r.s
	c := s.buf[s.r+1]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':' || c >= 0x80) {
		return Entry{}, false, r.fail(ErrMalformed, "'<' not starting a tag", nil)
	}
	end, st := s.tagEnd()
	if st != tagOK {
		return Entry{}, false, r.badTag(st, "a tag")
	}
	tag := s.buf[s.r+1 : end]
	self := tag[len(tag)-1] == '/'
	if self {
		tag = tag[:len(tag)-1]
	}
	n := 0
	for n < len(tag) && !isSpace(tag[n]) {
		n++
	}
	qname, attrs := tag[:n], tag[n:]
	hash, el, prefix := classify(qname)
	// tag stays valid: nothing below reads from the stream.
	if len(r.stack) >= maxDepth {
		return Entry{}, false, r.fail(ErrMalformed, "elements nested deeper than "+strconv.Itoa(maxDepth), nil)
	}
	r.stack = append(r.stack, frame{hash: hash, el: el})
	depth := len(r.stack)
	switch {
	case depth == 1:
		r.rootSeen = true
		switch el {
		case eURLSet:
			r.kind = KindURLSet
		case eSitemapIndex:
			r.kind = KindIndex
		case eRSS:
			r.kind = KindRSS
		case eFeed:
			r.kind = KindAtom
		default:
			s.r = end + 1
			return Entry{}, false, r.fail(ErrNotSitemap, "root element <"+string(qname)+">", nil)
		}
		r.scanNS(attrs)
	case r.entryDepth == 0:
		if r.isEntry(el, depth) {
			r.entryDepth = depth
			r.cur = Entry{}
			r.haveLoc, r.locOver, r.updated = false, false, false
		}
	case depth == r.entryDepth+1 && r.field == fNone:
		r.startField(el, prefix, attrs)
	}
	s.r = end + 1
	if self {
		return r.closeElem()
	}
	return Entry{}, false, nil
}

func (r *Reader) endTag() (Entry, bool, error) {
	s := &r.s
	end, st := s.tagEnd()
	if st != tagOK {
		return Entry{}, false, r.badTag(st, "an end tag")
	}
	qname := trimSpace(s.buf[s.r+2 : end])
	hash, _, _ := classify(qname)
	if len(r.stack) == 0 || r.stack[len(r.stack)-1].hash != hash {
		detail := "unexpected end tag </" + string(qname) + ">"
		return Entry{}, false, r.fail(ErrMalformed, detail, nil)
	}
	s.r = end + 1
	return r.closeElem()
}

func (r *Reader) closeElem() (Entry, bool, error) {
	depth := len(r.stack)
	r.stack = r.stack[:depth-1]
	if r.field != fNone && depth == r.fieldDepth {
		r.endField()
	}
	if r.entryDepth != 0 && depth == r.entryDepth {
		r.entryDepth = 0
		return r.finishEntry()
	}
	return Entry{}, false, nil
}

func (r *Reader) isEntry(el elem, depth int) bool {
	switch r.kind {
	case KindURLSet:
		return el == eURL && depth == 2
	case KindIndex:
		return el == eSitemap && depth == 2
	case KindRSS:
		// rss > channel > item (2.0); rss > item as some 0.9x feeds do.
		return el == eItem && (depth == 2 || depth == 3 && r.stack[1].el == eChannel)
	case KindAtom:
		return el == eEntry && depth == 2
	}
	return false
}

func (r *Reader) startField(el elem, prefix, attrs []byte) {
	if len(prefix) > 0 {
		if bytes.Contains(attrs, []byte("xmlns")) {
			r.scanNS(attrs)
		}
		if el != eLink && r.isExt(prefix) {
			return // <image:loc> and the like never name a page
		}
	}
	f := fNone
	switch r.kind {
	case KindURLSet:
		switch el {
		case eLoc:
			f = fLoc
		case eLastmod:
			f = fLastmod
		case eChangefreq:
			f = fChangefreq
		case ePriority:
			f = fPriority
		case eLink:
			r.alternate(attrs)
		}
	case KindIndex:
		switch el {
		case eLoc:
			f = fLoc
		case eLastmod:
			f = fLastmod
		}
	case KindRSS:
		switch el {
		case eLink:
			if len(prefix) == 0 || !r.isExt(prefix) {
				f = fLoc
			}
		case ePubDate:
			f = fDate
		}
	case KindAtom:
		switch el {
		case eLink:
			r.atomLink(attrs)
		case eUpdated:
			f = fDate
		case ePublished:
			f = fPublished
		}
	}
	if f != fNone {
		r.field, r.fieldDepth = f, len(r.stack)
		r.txt, r.txtOver, r.mark = r.txt[:0], false, 0
	}
}

func (r *Reader) appendText(b []byte) {
	if r.txtOver {
		return
	}
	if len(r.txt)+len(b) > maxText {
		r.txtOver = true
		return
	}
	if r.latin1 {
		r.txt = appendLatin1(r.txt, b)
	} else {
		r.txt = append(r.txt, b...)
	}
}

// flushEntities decodes the entities of the text collected since the last
// CDATA section, whose content must stay literal.
func (r *Reader) flushEntities() {
	d := decodeEntities(r.txt[r.mark:])
	r.txt = r.txt[:r.mark+len(d)]
	r.mark = len(r.txt)
}

func (r *Reader) endField() {
	r.flushEntities()
	v := trimSpace(r.txt)
	switch r.field {
	case fLoc:
		if !r.haveLoc && (len(v) > 0 || r.txtOver) {
			r.loc = append(r.loc[:0], v...)
			r.locOver, r.haveLoc = r.txtOver, true
		}
	case fLastmod:
		r.cur.LastMod, _ = parseW3C(v)
	case fDate:
		parse := parseW3C
		if r.kind == KindRSS {
			parse = parseRSSDate
		}
		if t, ok := parse(v); ok {
			r.cur.LastMod, r.updated = t, true
		}
	case fPublished:
		// Atom <updated> wins over <published>, in whichever order they come.
		if t, ok := parseW3C(v); ok && !r.updated {
			r.cur.LastMod = t
		}
	case fChangefreq:
		r.cur.ChangeFreq = changeFreq(v)
	case fPriority:
		r.cur.Priority = priority(v)
	}
	r.field = fNone
}

// attrValue decodes an attribute value into a string.
func (r *Reader) attrValue(v []byte) string {
	r.txt = r.txt[:0]
	if r.latin1 {
		r.txt = appendLatin1(r.txt, v)
	} else {
		r.txt = append(r.txt, v...)
	}
	return string(trimSpace(decodeEntities(r.txt)))
}

// alternate records <xhtml:link rel="alternate" hreflang="x" href="y"/>.
func (r *Reader) alternate(attrs []byte) {
	var rel, lang, href []byte
	for len(attrs) > 0 {
		name, val, rest, ok := nextAttr(attrs)
		if !ok {
			break
		}
		attrs = rest
		switch {
		case asciiEqualFold(name, "rel"):
			rel = val
		case asciiEqualFold(name, "hreflang"):
			lang = val
		case asciiEqualFold(name, "href"):
			href = val
		}
	}
	if !asciiEqualFold(trimSpace(rel), "alternate") || len(lang) == 0 || len(href) == 0 || len(r.cur.Alternates) >= MaxAlternates {
		return
	}
	u := r.attrValue(href)
	if len(u) >= MaxURLLength || !hasHTTPScheme([]byte(u)) {
		return
	}
	if p, err := url.Parse(u); err != nil || p.Host == "" {
		return
	}
	r.cur.Alternates = append(r.cur.Alternates, Alternate{Hreflang: r.attrValue(lang), URL: u})
}

// atomLink takes the entry's first alternate link (rel absent or "alternate").
func (r *Reader) atomLink(attrs []byte) {
	if r.haveLoc {
		return
	}
	var href []byte
	alt := true
	for len(attrs) > 0 {
		name, val, rest, ok := nextAttr(attrs)
		if !ok {
			break
		}
		attrs = rest
		switch {
		case asciiEqualFold(name, "rel"):
			alt = asciiEqualFold(trimSpace(val), "alternate")
		case asciiEqualFold(name, "href"):
			href = val
		}
	}
	if !alt || href == nil {
		return
	}
	r.txt = r.txt[:0]
	if r.latin1 {
		r.txt = appendLatin1(r.txt, href)
	} else {
		r.txt = append(r.txt, href...)
	}
	v := trimSpace(decodeEntities(r.txt))
	if len(v) == 0 {
		return
	}
	r.loc = append(r.loc[:0], v...)
	r.locOver, r.haveLoc = false, true
}

// scanNS remembers prefixes bound to extension namespaces (image, video,
// news, xhtml...), whose elements never name pages even if called <loc>.
func (r *Reader) scanNS(attrs []byte) {
	for len(attrs) > 0 {
		name, val, rest, ok := nextAttr(attrs)
		if !ok {
			return
		}
		attrs = rest
		if len(name) <= 6 || !bytes.HasPrefix(name, []byte("xmlns:")) || len(r.ext) >= maxExt {
			continue
		}
		v := strings.ToLower(string(val))
		if strings.Contains(v, "schemas/sitemap-") || strings.Contains(v, "/1999/xhtml") || strings.Contains(v, "pagemap") {
			r.ext = append(r.ext, string(name[6:]))
		}
	}
}

func (r *Reader) isExt(prefix []byte) bool {
	for _, p := range r.ext {
		if string(prefix) == p {
			return true
		}
	}
	return false
}

func (r *Reader) finishEntry() (Entry, bool, error) {
	if !r.haveLoc {
		r.skip(SkipNoURL, nil)
		return Entry{}, false, nil
	}
	return r.emit(r.loc, r.locOver)
}

// emit validates a URL and returns the current entry with it, or counts it
// as skipped.
func (r *Reader) emit(raw []byte, over bool) (Entry, bool, error) {
	index := r.kind == KindIndex
	u, reason, ok := r.check(raw, over, index)
	if !ok {
		r.skip(reason, raw)
		return Entry{}, false, nil
	}
	if r.count >= r.maxEnt {
		return Entry{}, false, r.fail(ErrTooManyEntries, "more than "+strconv.Itoa(r.maxEnt)+" entries", nil)
	}
	r.seen.add(r.hash)
	r.count++
	e := r.cur
	e.URL = u
	e.IsSitemap = index
	return e, true, nil
}

func (r *Reader) skip(reason SkipReason, raw []byte) {
	r.skips.add(reason)
	if r.OnSkip != nil {
		r.OnSkip(string(raw), reason)
	}
}

// check validates an entry's URL: absolute http(s) with a host, parseable,
// under MaxURLLength characters, in scope, not seen before.
func (r *Reader) check(raw []byte, over, index bool) (string, SkipReason, bool) {
	if len(raw) == 0 && !over {
		return "", SkipNoURL, false
	}
	if over || len(raw) >= MaxURLLength && utf8.RuneCount(raw) >= MaxURLLength {
		return "", SkipTooLong, false
	}
	if !hasHTTPScheme(raw) {
		if hasScheme(raw) {
			return "", SkipInvalid, false
		}
		return "", SkipRelative, false
	}
	// A 64-bit hash stands for the URL: 50,000 URLs cost ~1 MiB, not ~5 MiB.
	h := maphash.Bytes(r.seed, raw)
	if r.seen.has(h) {
		return "", SkipDuplicate, false
	}
	if scheme, host, port, path, ok := splitSimple(raw); ok {
		if !r.base.inScopeSimple(scheme, host, port, path, index, r.Scope) {
			return "", SkipOutOfScope, false
		}
		r.hash = h
		return string(raw), 0, true
	}
	s := string(raw)
	u, ok := parseURL(s)
	if !ok {
		return "", SkipInvalid, false
	}
	if !r.base.inScope(u, index, r.Scope) {
		return "", SkipOutOfScope, false
	}
	r.hash = h
	return s, 0, true
}

// ---- names ----

type elem uint8

const (
	eOther elem = iota
	eURLSet
	eSitemapIndex
	eRSS
	eFeed
	eURL
	eSitemap
	eChannel
	eItem
	eEntry
	eLoc
	eLastmod
	eChangefreq
	ePriority
	eLink
	ePubDate
	eUpdated
	ePublished
)

type field uint8

const (
	fNone field = iota
	fLoc
	fLastmod
	fChangefreq
	fPriority
	fDate
	fPublished
)

// classify returns a hash of the lower-cased qualified name (to match end
// tags), the element the local name stands for, and the prefix.
func classify(qname []byte) (uint64, elem, []byte) {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	colon := -1
	for i, c := range qname {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c == ':' {
			colon = i
		}
		h = (h ^ uint64(c)) * prime
	}
	local := qname[colon+1:]
	var prefix []byte
	if colon > 0 {
		prefix = qname[:colon]
	}
	if len(local) > 16 {
		return h, eOther, prefix
	}
	var buf [16]byte
	for i, c := range local {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	el := eOther
	switch string(buf[:len(local)]) {
	case "urlset":
		el = eURLSet
	case "sitemapindex":
		el = eSitemapIndex
	case "rss":
		el = eRSS
	case "feed":
		el = eFeed
	case "url":
		el = eURL
	case "sitemap":
		el = eSitemap
	case "channel":
		el = eChannel
	case "item":
		el = eItem
	case "entry":
		el = eEntry
	case "loc":
		el = eLoc
	case "lastmod":
		el = eLastmod
	case "changefreq":
		el = eChangefreq
	case "priority":
		el = ePriority
	case "link":
		el = eLink
	case "pubdate":
		el = ePubDate
	case "updated":
		el = eUpdated
	case "published":
		el = ePublished
	}
	return h, el, prefix
}

// nextAttr parses one name="value" pair from b. Values are returned raw.
func nextAttr(b []byte) (name, val, rest []byte, ok bool) {
	b = trimSpace(b)
	i := 0
	for i < len(b) && b[i] != '=' && !isSpace(b[i]) {
		i++
	}
	if i == 0 {
		return nil, nil, nil, false
	}
	name = b[:i]
	b = trimSpace(b[i:])
	if len(b) == 0 || b[0] != '=' {
		// An attribute without a value: tolerate and move on.
		return name, nil, b, true
	}
	b = trimSpace(b[1:])
	if len(b) == 0 {
		return name, nil, nil, true
	}
	if q := b[0]; q == '"' || q == '\'' {
		j := bytes.IndexByte(b[1:], q)
		if j < 0 {
			return name, b[1:], nil, true
		}
		return name, b[1 : 1+j], b[j+2:], true
	}
	j := 0
	for j < len(b) && !isSpace(b[j]) {
		j++
	}
	return name, b[:j], b[j:], true
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

func hasHTTPScheme(b []byte) bool {
	return len(b) > 7 && asciiEqualFold(b[:7], "http://") || len(b) > 8 && asciiEqualFold(b[:8], "https://")
}

// hasScheme reports whether b starts with an RFC 3986 scheme and ':'.
func hasScheme(b []byte) bool {
	for i, c := range b {
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case c == ':':
			return i > 0
		default:
			return false
		}
	}
	return false
}

func changeFreq(b []byte) string {
	for _, f := range [...]string{"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"} {
		if asciiEqualFold(b, f) {
			return f
		}
	}
	return ""
}

func priority(b []byte) float64 {
	if len(b) == 0 || len(b) > 16 {
		return 0
	}
	// Fast path for the usual "0.8" / "1.0" / "0.25": n / 10^k is exact
	// to the nearest float, like ParseFloat.
	if (b[0] == '0' || b[0] == '1') && len(b) <= 6 && (len(b) == 1 || len(b) > 2 && b[1] == '.') {
		n, div, ok := int(b[0]-'0'), 1, true
		for _, c := range b[min(len(b), 2):] {
			if c < '0' || c > '9' {
				ok = false
				break
			}
			n, div = n*10+int(c-'0'), div*10
		}
		if ok {
			if n > div {
				return 0
			}
			return float64(n) / float64(div)
		}
	}
	p, err := strconv.ParseFloat(string(b), 64)
	if err != nil || p < 0 || p > 1 || p != p {
		return 0
	}
	return p
}

// ---- scope ----

type base struct {
	ok                bool
	scheme, host, dir string
	port              string // "" for the scheme's default port
}

func newBase(src string) base {
	u, err := url.Parse(src)
	if err != nil || u.Hostname() == "" {
		return base{}
	}
	scheme := strings.ToLower(u.Scheme)
	dir := u.EscapedPath()
	if i := strings.LastIndexByte(dir, '/'); i >= 0 {
		dir = dir[:i+1]
	} else {
		dir = "/"
	}
	return base{ok: true, scheme: scheme, host: strings.ToLower(u.Hostname()), dir: dir, port: normPort(scheme, u.Port())}
}

func normPort(scheme, port string) string {
	if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		return ""
	}
	return port
}

func (b *base) inScope(u *url.URL, index bool, scope Scope) bool {
	if !b.ok || scope == ScopeAny {
		return true
	}
	scheme := strings.ToLower(u.Scheme)
	if !strings.EqualFold(u.Hostname(), b.host) || normPort(scheme, u.Port()) != b.port {
		return false
	}
	if index || scope == ScopeHost {
		return true
	}
	if scheme != b.scheme {
		return false
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	return strings.HasPrefix(p, b.dir)
}
