package sitemap

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Protocol limits from sitemaps.org, used when the Reader's fields are zero.
const (
	// DefaultMaxBytes is the most uncompressed data read from one sitemap.
	DefaultMaxBytes = 50 << 20
	// DefaultMaxEntries is the most entries returned from one sitemap.
	DefaultMaxEntries = 50000
	// MaxURLLength is the length, in characters, from which a URL is rejected.
	MaxURLLength = 2048
	// MaxAlternates bounds the hreflang alternates kept for one entry.
	MaxAlternates = 1000
)

// Kind is the form of a sitemap document, known after the first call to Next.
type Kind int

// The kinds of sitemap a Reader recognises.
const (
	KindUnknown Kind = iota // not yet read, or not a sitemap
	KindURLSet              // <urlset>
	KindIndex               // <sitemapindex>
	KindText                // one URL per line
	KindRSS                 // RSS 2.0 <rss>
	KindAtom                // Atom 1.0 <feed>
)

var kindNames = [...]string{"unknown", "urlset", "sitemapindex", "text", "rss", "atom"}

// String returns the kind's short name ("urlset", "sitemapindex", "text", "rss", "atom").
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return "Kind(" + strconv.Itoa(int(k)) + ")"
	}
	return kindNames[k]
}

// MarshalText encodes the kind as its String form.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Entry is one URL read from a sitemap: a page, or for a sitemap index a
// child sitemap (IsSitemap).
type Entry struct {
	URL        string      // absolute http(s) URL as written, entities decoded, trimmed
	LastMod    time.Time   // in UTC; zero when absent or not a valid date
	ChangeFreq string      // lower-case protocol value ("daily"...); "" when absent or invalid
	Priority   float64     // 0.0 to 1.0; 0 when absent or invalid (the protocol's default is 0.5)
	Alternates []Alternate // xhtml:link rel="alternate" hreflang links of a urlset entry
	IsSitemap  bool        // the entry names a sitemap (it came from a sitemap index)
}

// Alternate is an hreflang alternate of a page (<xhtml:link rel="alternate"
// hreflang="de" href="..."/>). Alternates are never returned as entries.
type Alternate struct {
	Hreflang string
	URL      string
}

// SkipReason says why an entry was not returned.
type SkipReason int

// Reasons an entry is skipped. Skipping is never fatal.
const (
	SkipNoURL      SkipReason = iota // the entry had no loc/link, or it was blank
	SkipRelative                     // not an absolute URL
	SkipInvalid                      // unparseable, not http(s), or without a host
	SkipTooLong                      // 2,048 characters or more
	SkipOutOfScope                   // outside the sitemap's scope
	SkipDuplicate                    // returned earlier from the same sitemap
	numSkipReasons
)

var skipNames = [...]string{"no-url", "relative", "invalid", "too-long", "out-of-scope", "duplicate"}

// String returns the reason's short name ("relative", "out-of-scope", ...).
func (s SkipReason) String() string {
	if s < 0 || s >= numSkipReasons {
		return "SkipReason(" + strconv.Itoa(int(s)) + ")"
	}
	return skipNames[s]
}

// Skips counts skipped entries by reason.
type Skips struct {
	NoURL      int `json:"no_url,omitempty"`
	Relative   int `json:"relative,omitempty"`
	Invalid    int `json:"invalid,omitempty"`
	TooLong    int `json:"too_long,omitempty"`
	OutOfScope int `json:"out_of_scope,omitempty"`
	Duplicate  int `json:"duplicate,omitempty"`
}

// Total is the number of skipped entries.
func (s Skips) Total() int {
	return s.NoURL + s.Relative + s.Invalid + s.TooLong + s.OutOfScope + s.Duplicate
}

// Count returns the count for one reason.
func (s Skips) Count(r SkipReason) int {
	switch r {
	case SkipNoURL:
		return s.NoURL
	case SkipRelative:
		return s.Relative
	case SkipInvalid:
		return s.Invalid
	case SkipTooLong:
		return s.TooLong
	case SkipOutOfScope:
		return s.OutOfScope
	case SkipDuplicate:
		return s.Duplicate
	}
	return 0
}

// String lists the non-zero counts, e.g. "relative=1 duplicate=2", or "none".
func (s Skips) String() string {
	var b strings.Builder
	for r := SkipReason(0); r < numSkipReasons; r++ {
		if n := s.Count(r); n > 0 {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(r.String() + "=" + strconv.Itoa(n))
		}
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

func (s *Skips) add(r SkipReason) {
	switch r {
	case SkipNoURL:
		s.NoURL++
	case SkipRelative:
		s.Relative++
	case SkipInvalid:
		s.Invalid++
	case SkipTooLong:
		s.TooLong++
	case SkipOutOfScope:
		s.OutOfScope++
	case SkipDuplicate:
		s.Duplicate++
	}
}

// Scope says which URLs a sitemap may list.
type Scope int

const (
	// ScopeStrict applies the sitemaps.org rules: a page must share scheme,
	// host and port with the sitemap and sit under its directory; a child of a
	// sitemap index must share host and port with the index.
	ScopeStrict Scope = iota
	// ScopeHost accepts any URL on the sitemap's host and port, whatever the
	// scheme or path.
	ScopeHost
	// ScopeAny accepts any http(s) URL: for a sitemap that robots.txt of
	// another host points to, which the protocol allows to be cross-host.
	ScopeAny
)

// Errors a Reader returns, wrapped in an *Error naming the sitemap; test with errors.Is.
var (
	ErrEmpty          = errors.New("empty document")
	ErrNotSitemap     = errors.New("not a sitemap")
	ErrMalformed      = errors.New("malformed XML")
	ErrTooLarge       = errors.New("uncompressed size limit exceeded")
	ErrTooManyEntries = errors.New("entry limit exceeded")
	ErrEncoding       = errors.New("unsupported character encoding")
	ErrCompression    = errors.New("corrupt gzip data")
)

// Error is a failure to read a sitemap. It matches its reason (ErrMalformed,
// ErrTooLarge...) and, when there is one, the underlying cause with errors.Is.
type Error struct {
	URL    string // the sitemap's URL as given to NewReader
	Offset int64  // uncompressed byte offset at which reading stopped
	Reason error  // one of the Err* values of this package, or nil for a read error
	Detail string // what exactly was found, e.g. "root element <html>"
	Err    error  // underlying cause, e.g. a network or gzip error; may be nil
}

// Error names the sitemap, the reason, the offset and the detail, e.g.
// "sitemap https://example.com/s.xml: malformed XML at byte 812: document ends inside an entry".
func (e *Error) Error() string {
	msg := "sitemap " + e.URL + ": "
	if e.Reason != nil {
		msg += e.Reason.Error()
	} else {
		msg += "read error"
	}
	if e.Offset > 0 {
		msg += fmt.Sprintf(" at byte %d", e.Offset)
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the reason and the cause, for errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 2)
	if e.Reason != nil {
		errs = append(errs, e.Reason)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}
