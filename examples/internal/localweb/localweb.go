// Package localweb makes a program's local web surface (a `go tool pprof
// -http` style app, a dashboard) safe by default. A Server binds loopback only,
// on a random port unless told otherwise, and prints an address carrying a
// random per-run token; its Guard refuses every request that lacks the token
// (or the cookie the tokened address sets), names a Host other than the
// server's own (DNS rebinding), is a cross-origin POST, carries a body over
// the cap or exceeds the server-wide concurrency cap, and it sets a
// Content-Security-Policy without inline script on every response.
//
// It must not know anything of the application it protects: no routes, no
// templates, no database. It never listens on a non-loopback address and never
// lets a request through with a check turned off unless the caller said so by
// name (Guard.AllowWithoutToken).
package localweb

import (
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
)

// Defaults of a Guard whose fields are zero.
const (
	// DefaultMaxBodyBytes caps a request body: forms and small JSON, never uploads.
	DefaultMaxBodyBytes = 64 << 10
	// DefaultMaxInFlight caps the requests being handled at once, server-wide.
	// A long-lived event stream counts while it is open.
	DefaultMaxInFlight = 32
)

// CSP is the Content-Security-Policy of every response: scripts and styles
// only from the server's own files, never inline, no plugins, no <base>, no
// framing, forms only back to the server.
const CSP = "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

// TokenParam is the query parameter of the tokened address the program opens.
const TokenParam = "token"

// NewToken returns a fresh random token (128 bits from crypto/rand).
func NewToken() string { return rand.Text() }

// Guard is the middleware in front of a local web app. It refuses, in this
// order: a Host that is not the server's own (421), a request without the
// token or its cookie (403), a cross-origin POST, PUT, PATCH or DELETE (403),
// a body over MaxBodyBytes (413) and a request beyond MaxInFlight (503 with
// Retry-After). Every response, refusals included, carries CSP and the other
// security headers.
//
// The token is accepted from the cookie a tokened address sets, from
// ?token=… and from an "Authorization: Bearer …" header, always compared in
// constant time. A GET or HEAD with ?token=… is answered with a redirect to
// the same address without it, setting an HttpOnly, SameSite=Strict cookie
// named for the port (cookies are not port-scoped, so two local apps never
// overwrite each other's). When the tokened address was followed from another
// site's page the redirect is a page that moves on by itself (meta refresh),
// because a browser withholds a Strict cookie from a redirect of a navigation
// another site started.
//
// The zero Guard refuses every request: it has no token. Use a Guard by
// pointer, as one value in front of the whole server.
type Guard struct {
	// Token is the per-run secret, from NewToken. Empty refuses every
	// request unless AllowWithoutToken is set.
	Token string
	// AllowWithoutToken serves requests without the token: only for a
	// server deliberately meant for more than the person who started it.
	// Every other check stays.
	AllowWithoutToken bool
	// Hosts are Host header values accepted besides the loopback names
	// (127.0.0.1, localhost, [::1]) and the connection's local address, each
	// with the port the connection was accepted on. A value is a host name
	// or IP literal without port ("dashboard.internal"), compared ignoring
	// case.
	Hosts []string
	// MaxBodyBytes caps each request body (0: DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// MaxInFlight caps requests handled at once (0: DefaultMaxInFlight).
	MaxInFlight int

	inFlight atomic.Int64
}

// Handler returns next behind the guard.
func (g *Guard) Handler(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		SetHeaders(w.Header())
		port, ok := g.checkHost(r)
		if !ok {
			refuse(w, http.StatusMisdirectedRequest, "Wrong address",
				"This server answers only to its own loopback address (127.0.0.1, localhost or [::1] with its port), so a web page cannot reach it through a name of its own. Open the address the program printed.")
			return
		}
		fromQuery, authorized := g.authorize(r, port)
		if !authorized {
			refuse(w, http.StatusForbidden, "Open the address the program printed",
				"This local app needs the address with the token that the program printed when it started (http://127.0.0.1:…/?token=…). Open that address; it sets a cookie, and the app works in this browser until the program stops. Another run prints another token.")
			return
		}
		if err := cop.Check(r); err != nil {
			refuse(w, http.StatusForbidden, "Cross-origin request refused",
				"A page of another site tried to send this request. Use the app's own pages.")
			return
		}
		if fromQuery && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			g.setCookieAndRedirect(w, r, port)
			return
		}
		limit := g.maxBody()
		if r.ContentLength > limit {
			refuse(w, http.StatusRequestEntityTooLarge, "Request too large",
				fmt.Sprintf("A request body may have at most %d bytes.", limit))
			return
		}
		if n := g.inFlight.Add(1); n > int64(g.maxInFlight()) {
			g.inFlight.Add(-1)
			w.Header().Set("Retry-After", "1")
			refuse(w, http.StatusServiceUnavailable, "Busy",
				"The app is handling as many requests as it allows at once. Try again in a moment.")
			return
		}
		defer g.inFlight.Add(-1)
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		next.ServeHTTP(w, r)
	})
}

// SetHeaders sets the security headers every response of a local app
// carries: CSP, no MIME sniffing, no referrer, no framing, no cross-origin
// embedding or window sharing.
func SetHeaders(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

func (g *Guard) maxBody() int64 {
	if g.MaxBodyBytes > 0 {
		return g.MaxBodyBytes
	}
	return DefaultMaxBodyBytes
}

func (g *Guard) maxInFlight() int {
	if g.MaxInFlight > 0 {
		return g.MaxInFlight
	}
	return DefaultMaxInFlight
}

// checkHost reports whether r's Host names this server, and the port the
// connection was accepted on. Without the local address (a handler called
// outside net/http's server) nothing is accepted.
func (g *Guard) checkHost(r *http.Request) (port string, ok bool) {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local == nil {
		return "", false
	}
	localHost, port, err := net.SplitHostPort(local.String())
	if err != nil {
		return "", false
	}
	host, hostPort, err := net.SplitHostPort(r.Host)
	if err != nil {
		// No port in Host: only right when the server is on the scheme's default port.
		host, hostPort = r.Host, "80"
		if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
			host = host[1 : len(host)-1]
		}
	}
	if hostPort != port || host == "" {
		return port, false
	}
	host = strings.ToLower(host)
	switch host {
	case "127.0.0.1", "localhost", "::1", localHost:
		return port, true
	}
	for _, h := range g.Hosts {
		if strings.EqualFold(strings.Trim(h, "[]"), host) {
			return port, true
		}
	}
	return port, false
}

// authorize reports whether r carries the token, and whether it came in the
// query (to be moved into the cookie).
func (g *Guard) authorize(r *http.Request, port string) (fromQuery, ok bool) {
	q := r.URL.Query()
	_, inQuery := q[TokenParam]
	valid := false
	if inQuery {
		valid = g.match(q.Get(TokenParam))
		fromQuery = valid
	}
	if !valid {
		if c, err := r.Cookie(CookieName(port)); err == nil && g.match(c.Value) {
			valid = true
		}
	}
	if !valid {
		if v, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); found && g.match(v) {
			valid = true
		}
	}
	if !valid && g.AllowWithoutToken && !inQuery {
		return false, true
	}
	return fromQuery, valid
}

func (g *Guard) match(v string) bool {
	if g.Token == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(v), []byte(g.Token)) == 1
}

// CookieName is the name of the token cookie of a server on port: one name
// per port, because browsers share cookies between the ports of a host.
func CookieName(port string) string { return "localweb_" + port }

func (g *Guard) setCookieAndRedirect(w http.ResponseWriter, r *http.Request, port string) {
	http.SetCookie(w, &http.Cookie{
		Name:     CookieName(port),
		Value:    g.Token,
		Path:     "/",
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
	})
	q := r.URL.Query()
	q.Del(TokenParam)
	to := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	if to.Path == "" {
		to.Path = "/"
	}
	w.Header().Set("Cache-Control", "no-store")
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		// Followed from another site's page: a browser does not send a
		// SameSite=Strict cookie on a redirect of a navigation another site
		// started, so the page moves on itself, a navigation of this origin.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		movePage.Execute(w, to.RequestURI())
		return
	}
	http.Redirect(w, r, to.RequestURI(), http.StatusSeeOther)
}

var movePage = template.Must(template.New("move").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0; url={{.}}"><title>Opening the app</title></head>
<body><p><a href="{{.}}">Open the app</a></p></body></html>
`))

var refusalPage = template.Must(template.New("refusal").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title></head>
<body><h1>{{.Title}}</h1><p>{{.Text}}</p><p><small>HTTP {{.Status}}</small></p></body></html>
`))

// refuse writes a short page that says what to do.
func refuse(w http.ResponseWriter, status int, title, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	refusalPage.Execute(w, struct {
		Title, Text string
		Status      int
	}{title, text, status})
}

// ErrNotLoopback is returned for a listen address that is not loopback.
var ErrNotLoopback = errors.New("not a loopback address")

// LoopbackAddr checks a listen address given by a person (-addr) and returns
// the one to listen on: "" is 127.0.0.1:0 (a random port), "localhost:P" is
// 127.0.0.1:P (the name is never looked up), and an IP literal must be a
// loopback one. Anything else (":8080", "0.0.0.0:8080", a host name) is an
// error wrapping ErrNotLoopback that says why.
func LoopbackAddr(addr string) (string, error) {
	if addr == "" {
		return "127.0.0.1:0", nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("listen address %q: %w (want 127.0.0.1:PORT)", addr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("listen address %q: port %q is not a number from 0 to 65535", addr, port)
	}
	if strings.EqualFold(host, "localhost") {
		return net.JoinHostPort("127.0.0.1", port), nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return net.JoinHostPort(ip.String(), port), nil
	}
	if host == "" {
		host = "every interface"
	}
	return "", fmt.Errorf("listen address %q: %s is %w: this app serves only this computer (127.0.0.1, localhost or ::1), so nobody else on the network can reach it", addr, host, ErrNotLoopback)
}
