package testsite

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Request is one request as the server saw it, recorded when it arrived.
type Request struct {
	Method string
	Path   string // path and query as sent (the request URI), e.g. "/?p=1"
	Host   string // Host header
	Header http.Header
	Time   time.Time // when the handler started (fake time inside a synctest bubble)
	End    time.Time // when the handler returned; zero while in flight
	Site   string    // host name of the site that served it (useful on a Network)
	// Arrived is when the request's first bytes reached the server's
	// kernel (its receive timestamp), what a packet capture on the site's
	// host shows: unlike Time it leaves out how long the server's own
	// goroutines took to run, which a loaded machine stretches by
	// milliseconds. Loopback sites on Linux only; zero elsewhere.
	Arrived time.Time
}

// Response scripts one answer. The zero value is an empty 200.
type Response struct {
	Status      int         // 0 means 200 (or 302 when Location is set)
	Body        string      //
	ContentType string      // sets Content-Type when not empty
	Header      http.Header // extra response headers
	Location    string      // sets Location (a redirect when Status is 3xx or 0)
	Delay       time.Duration
	// Drip, when > 0, sends the body in DripChunk-byte pieces (default 1),
	// flushing each and pausing Drip before the next, so a slow body can be
	// tested against read timeouts.
	Drip      time.Duration
	DripChunk int
	// Handler, when set, answers instead of the fields above (after Delay).
	Handler http.HandlerFunc
}

type route struct {
	script []Response // answer i goes to the i-th request; the last one repeats
	n      int
}

// Site is one scripted host. Its methods are safe for concurrent use.
type Site struct {
	net  *Network
	host string // host[:port] as seen in URLs
	url  string

	// guarded by net.mu: one lock for all sites of a network keeps the
	// network-wide request order and in-flight counts exact.
	routes   map[string]*route
	fallback http.HandlerFunc
	reqs     []*Request
	inFlight int
	maxIn    int
	closed   bool
	closeFn  func()

	addr string // real listener address (Loopback only)
	dial func(ctx context.Context) (net.Conn, error)
}

func (s *Site) isClosed() bool {
	s.net.mu.Lock()
	defer s.net.mu.Unlock()
	return s.closed
}

// Addr returns the real listener address ("127.0.0.1:port") of a Loopback
// site, or "" for an in-memory one.
func (s *Site) Addr() string { return s.addr }

// URL returns the site's base URL without a trailing slash, e.g.
// "http://127.0.0.1:34567" or "http://site.test".
func (s *Site) URL() string { return s.url }

// Host returns the host[:port] of URL.
func (s *Site) Host() string { return s.host }

// Transport returns an HTTP transport that reaches this site (and the other
// sites of its Network). In-memory sites are reachable only through it.
func (s *Site) Transport() *http.Transport { return s.net.Transport() }

// Client returns an *http.Client using Transport that does not follow
// redirects, so tests see each hop.
func (s *Site) Client() *http.Client {
	return &http.Client{
		Transport:     s.Transport(),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Route sets the answers for path. With several responses, the n-th request
// to path gets the n-th response and later ones get the last (429 then 200).
// A path ending in "*" matches by prefix; a path with "?" matches the exact
// path and query, before any path-only route.
func (s *Site) Route(path string, responses ...Response) {
	if len(responses) == 0 {
		responses = []Response{{}}
	}
	s.net.mu.Lock()
	defer s.net.mu.Unlock()
	s.routes[path] = &route{script: append([]Response(nil), responses...)}
}

// Handle routes path to h.
func (s *Site) Handle(path string, h http.HandlerFunc) { s.Route(path, Response{Handler: h}) }

// Page serves body with a 200 and contentType at path.
func (s *Site) Page(path, contentType, body string) {
	s.Route(path, Response{ContentType: contentType, Body: body})
}

// HTML serves body as text/html at path.
func (s *Site) HTML(path, body string) { s.Page(path, "text/html; charset=utf-8", body) }

// Robots serves body as /robots.txt.
func (s *Site) Robots(body string) { s.Page("/robots.txt", "text/plain; charset=utf-8", body) }

// Status answers path with an empty body and code.
func (s *Site) Status(path string, code int) { s.Route(path, Response{Status: code}) }

// Redirect answers path with code and a Location header.
func (s *Site) Redirect(path, location string, code int) {
	s.Route(path, Response{Status: code, Location: location})
}

// NotFound sets the handler for paths without a route (default: empty 404).
func (s *Site) NotFound(h http.HandlerFunc) {
	s.net.mu.Lock()
	s.fallback = h
	s.net.mu.Unlock()
}

// Requests returns a copy of every request recorded so far, in arrival order.
func (s *Site) Requests() []Request {
	s.net.mu.Lock()
	defer s.net.mu.Unlock()
	out := make([]Request, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = *r
		out[i].Header = r.Header.Clone()
	}
	return out
}

// Paths returns the request URIs recorded so far, in arrival order.
func (s *Site) Paths() []string {
	s.net.mu.Lock()
	defer s.net.mu.Unlock()
	out := make([]string, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = r.Path
	}
	return out
}

// Count returns how many requests arrived for path. A path with "?" is
// compared with the whole request URI, otherwise only the path is compared.
func (s *Site) Count(path string) int {
	s.net.mu.Lock()
	defer s.net.mu.Unlock()
	n := 0
	for _, r := range s.reqs {
		if matchCount(path, r.Path) {
			n++
		}
	}
	return n
}

func matchCount(want, uri string) bool {
	if strings.Contains(want, "?") {
		return want == uri
	}
	p, _, _ := strings.Cut(uri, "?")
	return p == want
}

// Total returns the number of requests recorded so far.
func (s *Site) Total() int {
	s.net.mu.Lock()
	defer s.net.mu.Unlock()
	return len(s.reqs)
}

// InFlight returns how many requests are being handled now.
func (s *Site) InFlight() int {
	s.net.mu.Lock()
	defer s.net.mu.Unlock()
	return s.inFlight
}

// MaxInFlight returns the largest number of requests handled at once.
func (s *Site) MaxInFlight() int {
	s.net.mu.Lock()
	defer s.net.mu.Unlock()
	return s.maxIn
}

// Close stops the site; later connections are refused. It is idempotent and
// registered with t.Cleanup, so tests call it only to make a host unreachable.
func (s *Site) Close() {
	s.net.mu.Lock()
	fn := s.closeFn
	s.closeFn = nil
	s.closed = true
	s.net.mu.Unlock()
	if fn != nil {
		fn()
	}
}

// ServeHTTP records the request and answers it from the script.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &Request{
		Method: r.Method,
		Path:   r.URL.RequestURI(),
		Host:   r.Host,
		Header: r.Header.Clone(),
		Time:   time.Now(),
		Site:   s.host,
	}
	rec.Arrived = arrivalOf(r)
	s.net.mu.Lock()
	s.reqs = append(s.reqs, rec)
	s.inFlight++
	s.maxIn = max(s.maxIn, s.inFlight)
	s.net.begin(rec)
	resp, h, ok := s.pick(rec.Path, r.URL.Path)
	s.net.mu.Unlock()
	defer func() {
		s.net.mu.Lock()
		s.inFlight--
		rec.End = time.Now()
		s.net.inFlight--
		s.net.mu.Unlock()
	}()

	if !ok {
		if h != nil {
			h(w, r)
		} else {
			w.WriteHeader(http.StatusNotFound)
		}
		return
	}
	if !sleep(r.Context(), resp.Delay) {
		return
	}
	if resp.Handler != nil {
		resp.Handler(w, r)
		return
	}
	writeResponse(w, r, resp)
}

// pick finds the scripted response for a request; s.mu is held.
func (s *Site) pick(uri, path string) (Response, http.HandlerFunc, bool) {
	rt := s.routes[uri]
	if rt == nil {
		rt = s.routes[path]
	}
	if rt == nil {
		best := -1
		for k, v := range s.routes {
			if p, ok := strings.CutSuffix(k, "*"); ok && strings.HasPrefix(path, p) && len(p) > best {
				best, rt = len(p), v
			}
		}
	}
	if rt == nil {
		return Response{}, s.fallback, false
	}
	i := min(rt.n, len(rt.script)-1)
	rt.n++
	return rt.script[i], nil, true
}

func writeResponse(w http.ResponseWriter, r *http.Request, resp Response) {
	h := w.Header()
	for k, vs := range resp.Header {
		h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	if resp.ContentType != "" {
		h.Set("Content-Type", resp.ContentType)
	}
	status := resp.Status
	if resp.Location != "" {
		h.Set("Location", resp.Location)
		if status == 0 {
			status = http.StatusFound
		}
	}
	if status == 0 {
		status = http.StatusOK
	}
	if resp.Drip <= 0 {
		h.Set("Content-Length", strconv.Itoa(len(resp.Body)))
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			_, _ = w.Write([]byte(resp.Body))
		}
		return
	}
	w.WriteHeader(status)
	flush(w)
	if r.Method == http.MethodHead {
		return
	}
	chunk := max(resp.DripChunk, 1)
	body := resp.Body
	for len(body) > 0 {
		n := min(chunk, len(body))
		if _, err := w.Write([]byte(body[:n])); err != nil {
			return
		}
		flush(w)
		body = body[n:]
		if len(body) > 0 && !sleep(r.Context(), resp.Drip) {
			return
		}
	}
}

func flush(w http.ResponseWriter) {
	_ = http.NewResponseController(w).Flush()
}

// sleep waits d or until ctx ends; it reports whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
