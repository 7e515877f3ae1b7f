package fetch

import (
	"fmt"
	"net/url"

	"github.com/politecrawl/polite/internal/weburl"
)

// resolveLocation resolves a redirect's Location against the URL that sent
// it as a browser does (the WHATWG URL standard: "..//a" keeps its empty
// segment, '\' is '/', "https:/path" is relative, "%2F" stays escaped),
// and returns the URL a browser would request, spelt so that the request
// line and String (what robots.txt is asked about) are both that URL.
func resolveLocation(base *url.URL, status int, loc string) (*url.URL, error) {
	if loc == "" {
		return nil, fmt.Errorf("%w: %d without a Location header", ErrBadRedirect, status)
	}
	if base.User == nil {
		// Most Locations are plain paths or URLs: no parser needed.
		if href, ok := weburl.Fast(weburl.Prefix(base.Scheme, base.Host), loc); ok {
			if u, err := url.Parse(href); err == nil {
				return u, nil
			}
		}
	}
	b, err := weburl.Parse(base.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: base %q of Location %q: %v", ErrBadRedirect, base, loc, err)
	}
	href, r := weburl.Resolve(b, loc)
	switch r {
	case weburl.Skipped:
		return nil, fmt.Errorf("%w: Location %q is not an http(s) URL", ErrBadRedirect, loc)
	case weburl.Invalid:
		return nil, fmt.Errorf("%w: unparseable Location %q", ErrBadRedirect, loc)
	}
	return sendable(href)
}

// sendable turns href, an absolute http(s) URL as a browser spells it, into
// a *url.URL whose String is href, and so whose request line asks for
// href's path and query as written. (net/url keeps a path's escaping when
// it is valid, which weburl.Resolve's is; anything else, such as userinfo
// net/url escapes its own way, is refused rather than sent re-encoded.)
func sendable(href string) (*url.URL, error) {
	u, err := url.Parse(href)
	if err != nil || u.String() != href {
		return nil, fmt.Errorf("%w: Location resolves to %q, which Go cannot send as written", ErrBadRedirect, href)
	}
	return u, nil
}
