package sitemap

import (
	"bytes"
	"errors"
	"io"
)

const bufSize = 64 << 10

// scanner is a fixed-size window over the uncompressed document. Markup
// (tags, the XML declaration) must fit in the window; text, comments, CDATA
// and DOCTYPE are streamed through it.
type scanner struct {
	rd   io.Reader
	buf  []byte
	r, w int
	off  int64 // stream offset of buf[0]
	err  error // sticky read error, io.EOF at the end
}

// pos is the stream offset of the next unread byte.
func (s *scanner) pos() int64 { return s.off + int64(s.r) }

// fill moves unread bytes to the front and reads more. It reports whether
// new bytes arrived; when it returns false either s.err is set or the window
// is full of unread bytes.
func (s *scanner) fill() bool {
	if s.r > 0 {
		n := copy(s.buf, s.buf[s.r:s.w])
		s.off += int64(s.r)
		s.w, s.r = n, 0
	}
	if s.err != nil || s.w == len(s.buf) {
		return false
	}
	for range 100 {
		n, err := s.rd.Read(s.buf[s.w:])
		s.w += n
		if err != nil {
			s.err = err
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	s.err = io.ErrNoProgress
	return false
}

// ensure makes at least n unread bytes available if the stream has them.
func (s *scanner) ensure(n int) bool {
	for s.w-s.r < n {
		if !s.fill() {
			return false
		}
	}
	return true
}

// skipTo advances to the next occurrence of c (left unread), passing every
// byte before it to sink when sink is not nil. It returns false at the end
// of the stream.
func (s *scanner) skipTo(c byte, sink func([]byte)) bool {
	for {
		if i := bytes.IndexByte(s.buf[s.r:s.w], c); i >= 0 {
			if sink != nil && i > 0 {
				sink(s.buf[s.r : s.r+i])
			}
			s.r += i
			return true
		}
		if sink != nil && s.w > s.r {
			sink(s.buf[s.r:s.w])
		}
		s.r = s.w
		if !s.fill() {
			return false
		}
	}
}

// skipPast consumes bytes up to and including term, passing the bytes before
// term to sink when sink is not nil. It returns false at the end of the stream.
func (s *scanner) skipPast(term string, sink func([]byte)) bool {
	keep := len(term) - 1
	for {
		if i := bytes.Index(s.buf[s.r:s.w], []byte(term)); i >= 0 {
			if sink != nil && i > 0 {
				sink(s.buf[s.r : s.r+i])
			}
			s.r += i + len(term)
			return true
		}
		// Keep a possible partial terminator at the end of the window.
		if n := s.w - s.r - keep; n > 0 {
			if sink != nil {
				sink(s.buf[s.r : s.r+n])
			}
			s.r += n
		}
		if !s.fill() {
			return false
		}
	}
}

type tagStatus int

const (
	tagOK      tagStatus = iota
	tagEOF               // the stream ended inside the tag
	tagTooLong           // the tag does not fit in the window
	tagLT                // a '<' outside quotes: the tag was never closed
)

// tagEnd finds the '>' ending the markup that starts at s.r, skipping quoted
// attribute values. The whole tag is in the window when it returns tagOK.
func (s *scanner) tagEnd() (int, tagStatus) {
	i := s.r + 1
	var q byte
	for {
		for ; i < s.w; i++ {
			c := s.buf[i]
			if q != 0 {
				if c == q {
					q = 0
				}
				continue
			}
			switch c {
			case '"', '\'':
				q = c
			case '>':
				return i, tagOK
			case '<':
				return i, tagLT
			}
		}
		rel := i - s.r
		if !s.fill() {
			if s.err != nil {
				return 0, tagEOF
			}
			return 0, tagTooLong
		}
		i = s.r + rel
	}
}

// readErr is the read error that stopped the scanner, nil at a clean end.
func (s *scanner) readErr() error {
	if s.err == nil || errors.Is(s.err, io.EOF) {
		return nil
	}
	return s.err
}

// limitReader returns errTooLarge when more than n bytes are available.
type limitReader struct {
	r io.Reader
	n int64
}

var errTooLarge = errors.New("size limit exceeded")

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			return 0, errTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}
