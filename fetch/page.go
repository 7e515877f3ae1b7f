package fetch

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/politecrawl/polite/fetch/page"
)

// Page reads the HTML fields and links of the fetched page (package page):
// r.Body is decoded by the charset of r.ContentType (else the page's own
// declaration, else sniffing) and its links are resolved against its
// <base href> or r.FinalURL. The whole body is read (it is already capped
// by MaxBodyBytes); Page.Truncated is also true when r.Truncated is.
//
// Page.XRobotsTag holds the response's X-Robots-Tag header values joined
// by ", ", next to the page's own MetaRobots; neither is interpreted, since
// a directive may name a crawler ("googlebot: noindex"). Any status is
// read: check r.Status for what it means.
//
// The error is a *page.Error: ErrNoBody for a nil Result or one without a
// body (HEAD, a redirect not followed), ErrNotHTML when the media type is
// neither text/html nor application/xhtml+xml (a response without a
// Content-Type is read as HTML), ErrPageURL when r.FinalURL is not an
// absolute http(s) URL.
func (r *Result) Page() (*page.Page, error) {
	if r == nil || r.Body == nil {
		var u string
		if r != nil {
			u = r.FinalURL
		}
		return nil, &page.Error{URL: u, Err: page.ErrNoBody}
	}
	switch mt := r.MediaType(); mt {
	case "text/html", "application/xhtml+xml", "":
	default:
		return nil, &page.Error{URL: r.FinalURL, Err: page.ErrNotHTML, Detail: "media type " + strconv.Quote(mt)}
	}
	p, err := page.Options{MaxBytes: int64(len(r.Body)), ContentType: r.ContentType}.Parse(bytes.NewReader(r.Body), r.FinalURL)
	if p != nil {
		p.Truncated = p.Truncated || r.Truncated
		p.XRobotsTag = strings.Join(r.Header.Values("X-Robots-Tag"), ", ")
	}
	return p, err
}
