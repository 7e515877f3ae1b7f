package main

import "net/http"

// agentHeader is the extra header's name exactly as the 2-UAcomBot page
// prints it. Header names are case-insensitive, but log parsers that grep
// for "X-AGENT: 2-UA" are not.
const agentHeader = "X-AGENT"

// agentSpelling is the base transport under fetch's polite one. fetch
// canonicalises header names (X-Agent); net/http writes a header map key
// verbatim on HTTP/1.1, so re-keying the header here puts X-AGENT on the
// wire for every request: robots.txt, pages, redirect hops and retries.
type agentSpelling struct{ base http.RoundTripper }

func (t agentSpelling) RoundTrip(req *http.Request) (*http.Response, error) {
	canon := http.CanonicalHeaderKey(agentHeader)
	vs, ok := req.Header[canon]
	if !ok || canon == agentHeader {
		return t.base.RoundTrip(req)
	}
	// A RoundTripper must not modify its request, and fetch shares one
	// header map between requests: copy the request and its header.
	r2 := *req
	r2.Header = req.Header.Clone()
	delete(r2.Header, canon)
	r2.Header[agentHeader] = vs
	return t.base.RoundTrip(&r2)
}

// CloseIdleConnections passes on to the base transport.
func (t agentSpelling) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
