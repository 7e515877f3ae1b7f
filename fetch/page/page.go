package page

import (
	"errors"
	"io"
	"net/url"
	"strconv"

	"github.com/politecrawl/polite/internal/htmlx"
)

// Page is what one HTML page says about itself and where it links. Counts
// tell a missing field (0) from an empty one (1, "") and a repeated one (>1).
// Every string is valid UTF-8 and capped (Options.MaxTextBytes for text,
// 8 KiB for URLs).
type Page struct {
	URL  string // the page URL given to Parse (the final URL, after redirects, for fetch.Result.Page)
	Base string // the URL relative links were resolved against: <base href> or URL

	Title            string // first <title>, white space collapsed
	TitleCount       int
	MetaDescription  string // first <meta name="description"> content, trimmed
	DescriptionCount int
	Canonical        string // first <link rel="canonical"> href, absolute; "" if absent, empty or not http(s)
	CanonicalCount   int
	MetaRobots       string      // every <meta name="robots"> content, joined by ", "
	XRobotsTag       string      // the response's X-Robots-Tag values joined by ", " (fetch.Result.Page only)
	H1               []string    // text of each <h1>, in document order, white space collapsed (at most 100)
	Hreflang         []Alternate // <link rel="alternate" hreflang> annotations
	Lang             string      // <html lang>
	Refresh          string      // absolute URL of a <meta http-equiv="refresh"> redirect, if any
	Generator        string      // first <meta name="generator"> content
	WordPress        bool        // the page is built with WordPress (see the package doc)
	WordPressHint    string      // the first evidence of WordPress, e.g. `generator "WordPress 6.4"`

	WordCount int    // words of visible text
	TextHash  string // hex SHA-256 of the visible words joined by single spaces

	Links []Link // in document order

	Encoding     string // the character encoding the page was read in (WHATWG name: "utf-8", "windows-1252", "shift_jis"...)
	Truncated    bool   // the page was cut: longer than Options.MaxBytes, or fetch.Result.Truncated
	InvalidLinks int    // http(s) or relative URLs that could not be parsed, left out of Links
	LinksDropped int    // links beyond Options.MaxLinks
}

// Link is one URL the page refers to.
type Link struct {
	URL      string // absolute http(s) URL, resolved against Page.Base, without fragment
	Raw      string // the attribute as written (character references decoded)
	Text     string // anchor text: the text of an <a> (with the alt of images in it), the alt of an <area>
	Rel      string // the rel attribute as written ("refresh" for a meta refresh)
	Nofollow bool   // Rel has nofollow, ugc or sponsored: the page does not vouch for the target
	Tag      string // the element: a, area, link, img, script, iframe, frame, or meta (a refresh)
}

// Alternate is a <link rel="alternate" hreflang="..." href="..."> annotation.
type Alternate struct {
	Hreflang string // as written, trimmed
	URL      string // absolute
}

// Options bound the work Parse does. The zero value is ready to use.
type Options struct {
	MaxBytes     int64  // input read at most; 0 means 10 MiB
	MaxLinks     int    // links kept; 0 means 10,000
	MaxTextBytes int    // cap of each text field (title, anchor text, h1...); 0 means 2,048
	ContentType  string // the response's Content-Type header: its charset decides the encoding
}

// Reasons of an *Error, for errors.Is.
var (
	// ErrPageURL: the page URL is not an absolute http or https URL.
	ErrPageURL = errors.New("page URL is not an absolute http(s) URL")
	// ErrRead: reading the page failed; the Page holds what was read.
	ErrRead = errors.New("reading the page failed")
	// ErrNotHTML: fetch.Result.Page was asked for a response whose media
	// type is not HTML (text/html, application/xhtml+xml, or none).
	ErrNotHTML = errors.New("not an HTML page")
	// ErrNoBody: fetch.Result.Page was asked for a result without a body
	// (a HEAD request, a redirect that was not followed, a failed fetch).
	ErrNoBody = errors.New("no body")
)

// Error is the error of Parse and fetch.Result.Page. It names the page and
// wraps a reason (ErrPageURL, ErrRead, ErrNotHTML, ErrNoBody) and, for
// ErrRead, the reader's error.
type Error struct {
	URL    string // the page URL
	Err    error  // the reason
	Cause  error  // the underlying error (for ErrRead), or nil
	Detail string // what was found, e.g. `media type "image/png"`
}

// Error gives the reason, the detail or cause, and the page URL.
func (e *Error) Error() string {
	s := "page: " + e.Err.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	if e.URL != "" {
		s += " (" + strconv.Quote(e.URL) + ")"
	}
	return s
}

// Unwrap returns the reason and the cause, for errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

// Parse reads the HTML page in r with the default Options. pageURL is the
// URL the page was fetched from, after redirects.
func Parse(r io.Reader, pageURL string) (*Page, error) {
	return Options{}.Parse(r, pageURL)
}

// Parse reads the HTML page in r, a stream of at most o.MaxBytes. pageURL is
// the URL the page was fetched from, after redirects: relative links
// resolve against it (or the page's <base href>). With pageURL "" only
// absolute links are kept, and relative ones count as InvalidLinks.
//
// Malformed markup is never an error. Parse fails with an *Error wrapping
// ErrPageURL (and no Page) when pageURL is not an absolute http(s) URL, and
// with one wrapping ErrRead and the reader's error (and the Page read so
// far) when reading fails.
func (o Options) Parse(r io.Reader, pageURL string) (*Page, error) {
	u, err := parsePageURL(pageURL)
	if err != nil {
		return nil, err
	}
	var links []Link
	hp, err := htmlx.ParseInto(htmlx.Options{
		MaxBytes:     o.MaxBytes,
		MaxLinks:     o.MaxLinks,
		MaxTextBytes: o.MaxTextBytes,
		ContentType:  o.ContentType,
	}, r, u, &links)
	p := fromHTMLX(hp, pageURL)
	p.Links = links
	if err != nil {
		return p, &Error{URL: pageURL, Err: ErrRead, Cause: errors.Unwrap(err)}
	}
	return p, nil
}

// parsePageURL parses a page URL: nil for "", else an absolute http(s) URL.
func parsePageURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, &Error{URL: s, Err: ErrPageURL}
	}
	return u, nil
}

// fromHTMLX makes the public Page of the implementation's, but for the
// links, which htmlx.ParseInto writes as page.Links directly (and which
// fail to compile if Link's fields drift from htmlx.Link's).
func fromHTMLX(h *htmlx.Page, pageURL string) *Page {
	p := &Page{
		URL:              pageURL,
		Base:             h.Base,
		Title:            h.Title,
		TitleCount:       h.TitleCount,
		MetaDescription:  h.MetaDescription,
		DescriptionCount: h.DescriptionCount,
		Canonical:        h.Canonical,
		CanonicalCount:   h.CanonicalCount,
		MetaRobots:       h.MetaRobots,
		H1:               h.H1,
		Lang:             h.Lang,
		Refresh:          h.Refresh,
		Generator:        h.Generator,
		WordPress:        h.WordPress,
		WordPressHint:    h.WordPressHint,
		WordCount:        h.WordCount,
		TextHash:         h.TextHash,
		Encoding:         h.Encoding,
		Truncated:        h.Truncated,
		InvalidLinks:     h.InvalidLinks,
		LinksDropped:     h.LinksDropped,
	}
	if len(h.Hreflang) > 0 {
		p.Hreflang = make([]Alternate, len(h.Hreflang))
		for i, a := range h.Hreflang {
			p.Hreflang[i] = Alternate(a)
		}
	}
	return p
}
