package localweb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// app is a test app: it counts the requests that reach it, and answers
// "ok <path> <body length>".
type app struct{ calls atomic.Int64 }

func (a *app) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.calls.Add(1)
	b, err := io.ReadAll(r.Body)
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		http.Error(w, "body over "+fmt.Sprint(mbe.Limit), http.StatusRequestEntityTooLarge)
		return
	}
	fmt.Fprintf(w, "ok %s %d", r.URL.Path, len(b))
}

// start serves h on a real loopback port behind the defaults, with tweak
// applied to the Server before Listen, until the test ends.
func start(t *testing.T, h http.Handler, tweak func(*Server)) *Server {
	t.Helper()
	s := &Server{Handler: h}
	if tweak != nil {
		tweak(s)
	}
	require.NoError(t, s.Listen())
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-served)
	})
	return s
}

// noRedirects is a client that shows each response as it is, with no jar.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func base(s *Server) string { return "http://" + s.ListenAddr() }

func get(t *testing.T, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assertSecurityHeaders(t, resp)
	return resp, string(b)
}

func newReq(t *testing.T, method, u string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	require.NoError(t, err)
	return req
}

func authed(t *testing.T, s *Server, method, path string, body io.Reader) *http.Request {
	req := newReq(t, method, base(s)+path, body)
	req.Header.Set("Authorization", "Bearer "+s.Guard.Token)
	return req
}

func assertSecurityHeaders(t *testing.T, resp *http.Response) {
	t.Helper()
	assert.Equal(t, "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
		resp.Header.Get("Content-Security-Policy"), "CSP on %s %s", resp.Request.Method, resp.Request.URL)
	assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
	assert.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"))
	assert.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
}

func TestLoopbackAddr(t *testing.T) {
	ok := map[string]string{
		"":               "127.0.0.1:0",
		"localhost:8080": "127.0.0.1:8080",
		"LocalHost:0":    "127.0.0.1:0",
		"127.0.0.1:9":    "127.0.0.1:9",
		"127.0.0.2:9":    "127.0.0.2:9",
		"[::1]:9":        "[::1]:9",
	}
	for in, want := range ok {
		got, err := LoopbackAddr(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for _, in := range []string{":8080", "0.0.0.0:8080", "[::]:80", "192.168.1.2:80", "example.com:80", "localhost.evil.example:80"} {
		_, err := LoopbackAddr(in)
		assert.ErrorIs(t, err, ErrNotLoopback, in)
		if err != nil {
			assert.Contains(t, err.Error(), "this app serves only this computer", in)
		}
	}
	for _, in := range []string{"nonsense", "127.0.0.1", "127.0.0.1:99999", "127.0.0.1:http"} {
		_, err := LoopbackAddr(in)
		assert.Error(t, err, in)
		assert.NotErrorIs(t, err, ErrNotLoopback, in)
	}
}

func TestListenRefusesNonLoopbackBeforeBinding(t *testing.T) {
	s := &Server{Addr: "0.0.0.0:0", Handler: &app{}}
	err := s.Listen()
	require.ErrorIs(t, err, ErrNotLoopback)
	assert.Contains(t, err.Error(), `"0.0.0.0:0"`)
	assert.Nil(t, s.ln, "nothing was bound")
	assert.ErrorContains(t, s.Serve(context.Background()), "Serve before Listen")
}

func TestRandomPortAndTokenPerRun(t *testing.T) {
	a, b := start(t, &app{}, nil), start(t, &app{}, nil)
	assert.NotEqual(t, a.ListenAddr(), b.ListenAddr())
	assert.NotEqual(t, a.Guard.Token, b.Guard.Token)
	assert.GreaterOrEqual(t, len(a.Guard.Token), 26, "128 bits")
	assert.True(t, strings.HasPrefix(a.ListenAddr(), "127.0.0.1:"), a.ListenAddr())
	assert.Equal(t, "http://"+a.ListenAddr()+"/?token="+a.Guard.Token, a.URL())

	// A given loopback address is used as given.
	port := strings.TrimPrefix(b.ListenAddr(), "127.0.0.1:")
	var bb Server
	bb.Addr = "localhost:" + port
	assert.ErrorContains(t, bb.Listen(), "address already in use", "localhost is 127.0.0.1, the port is the one given")
}

func TestNoOrWrongTokenIsRefused(t *testing.T) {
	a := &app{}
	s := start(t, a, nil)
	port := strings.TrimPrefix(s.ListenAddr(), "127.0.0.1:")

	resp, body := get(t, noRedirects, newReq(t, "GET", base(s)+"/", nil))
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Contains(t, body, "Open the address the program printed")
	assert.Contains(t, body, "?token=")

	resp, _ = get(t, noRedirects, newReq(t, "GET", base(s)+"/?token=wrong", nil))
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Empty(t, resp.Cookies(), "no cookie for a wrong token")

	req := newReq(t, "GET", base(s)+"/", nil)
	req.AddCookie(&http.Cookie{Name: CookieName(port), Value: s.Guard.Token + "x"})
	resp, _ = get(t, noRedirects, req)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)

	// The right token under another port's cookie name is not this server's.
	req = newReq(t, "GET", base(s)+"/", nil)
	req.AddCookie(&http.Cookie{Name: CookieName("1"), Value: s.Guard.Token})
	resp, _ = get(t, noRedirects, req)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)

	req = newReq(t, "GET", base(s)+"/", nil)
	req.Header.Set("Authorization", "Bearer "+strings.ToUpper(s.Guard.Token)+"!")
	resp, _ = get(t, noRedirects, req)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)

	resp, _ = get(t, noRedirects, newReq(t, "POST", base(s)+"/", strings.NewReader("x")))
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)

	assert.Zero(t, a.calls.Load(), "no refused request reached the app")
}

func TestZeroGuardRefusesEverything(t *testing.T) {
	a := &app{}
	var g Guard
	s := start(t, a, nil)
	// Serve the zero guard on the same kind of listener.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: g.Handler(a)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	for _, tok := range []string{"", "?token=", "?token=" + s.Guard.Token} {
		resp, _ := get(t, noRedirects, newReq(t, "GET", "http://"+ln.Addr().String()+"/"+tok, nil))
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, tok)
	}
	assert.Zero(t, a.calls.Load())
}

func TestTokenURLSetsCookieAndRedirects(t *testing.T) {
	a := &app{}
	s := start(t, a, nil)
	port := strings.TrimPrefix(s.ListenAddr(), "127.0.0.1:")

	resp, _ := get(t, noRedirects, newReq(t, "GET", base(s)+"/crawl/3?tab=broken&token="+s.Guard.Token, nil))
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "/crawl/3?tab=broken", resp.Header.Get("Location"), "the token is dropped from the address bar")
	assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	cookies := resp.Cookies()
	require.Len(t, cookies, 1)
	c := cookies[0]
	assert.Equal(t, CookieName(port), c.Name)
	assert.Equal(t, s.Guard.Token, c.Value)
	assert.Equal(t, "/", c.Path)
	assert.True(t, c.HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, c.SameSite)
	assert.Zero(t, a.calls.Load(), "the redirect is answered by the guard")

	// A browser-like client with a jar lands on the page, and stays in.
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar}
	resp, body := get(t, browser, newReq(t, "GET", s.URL(), nil))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "ok / 0", body)
	assert.Equal(t, "/", resp.Request.URL.RequestURI())
	resp, body = get(t, browser, newReq(t, "GET", base(s)+"/next", nil))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "ok /next 0", body)
	resp, body = get(t, browser, newReq(t, "POST", base(s)+"/form", strings.NewReader("a=1")))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "ok /form 3", body)

	// Followed from another site's page: a page that moves on by itself.
	req := newReq(t, "GET", base(s)+"/crawl/3?tab=broken&token="+s.Guard.Token, nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, body = get(t, noRedirects, req)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	require.Len(t, resp.Cookies(), 1)
	assert.Equal(t, http.SameSiteStrictMode, resp.Cookies()[0].SameSite)
	assert.Contains(t, body, `<meta http-equiv="refresh" content="0; url=/crawl/3?tab=broken">`)
	assert.NotContains(t, body, s.Guard.Token)

	// Bearer, and a tokened POST (a script), are served without a redirect.
	resp, body = get(t, noRedirects, authed(t, s, "GET", "/api", nil))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "ok /api 0", body)
	resp, body = get(t, noRedirects, newReq(t, "POST", s.URL(), strings.NewReader("xy")))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "ok / 2", body)
}

func TestWrongHostIsRefused(t *testing.T) {
	a := &app{}
	s := start(t, a, func(s *Server) { s.Guard.Hosts = []string{"cove.internal"} })
	_, port, _ := net.SplitHostPort(s.ListenAddr())
	for host, want := range map[string]int{
		"127.0.0.1:" + port:      http.StatusOK,
		"localhost:" + port:      http.StatusOK,
		"LOCALHOST:" + port:      http.StatusOK,
		"[::1]:" + port:          http.StatusOK,
		"cove.internal:" + port:  http.StatusOK,
		"evil.example:" + port:   http.StatusMisdirectedRequest, // DNS rebinding: evil.example resolved to 127.0.0.1
		"evil.example":           http.StatusMisdirectedRequest,
		"127.0.0.1":              http.StatusMisdirectedRequest, // port 80 is not this server's
		"127.0.0.1:1":            http.StatusMisdirectedRequest,
		"localhost.evil:" + port: http.StatusMisdirectedRequest,
	} {
		req := authed(t, s, "GET", "/", nil)
		req.Host = host
		resp, body := get(t, noRedirects, req)
		assert.Equal(t, want, resp.StatusCode, host)
		if want != http.StatusOK {
			assert.Contains(t, body, "answers only to its own loopback address", host)
		}
	}
	assert.EqualValues(t, 5, a.calls.Load())

	// HTTP/1.0 without any Host header.
	conn, err := net.Dial("tcp", s.ListenAddr())
	require.NoError(t, err)
	defer conn.Close()
	fmt.Fprintf(conn, "GET /?token=%s HTTP/1.0\r\n\r\n", s.Guard.Token)
	status, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "HTTP/1.0 421 Misdirected Request\r\n", status)
}

func TestCrossOriginWritesAreRefused(t *testing.T) {
	a := &app{}
	s := start(t, a, nil)
	refused := []map[string]string{
		{"Origin": "http://evil.example"},
		{"Origin": "http://127.0.0.1:1"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"},
	}
	for _, method := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		for _, hdr := range refused {
			req := authed(t, s, method, "/track", strings.NewReader("url=x"))
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			resp, body := get(t, noRedirects, req)
			assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s %v", method, hdr)
			assert.Contains(t, body, "Cross-origin request refused")
		}
	}
	assert.Zero(t, a.calls.Load())

	for _, hdr := range []map[string]string{
		{"Sec-Fetch-Site": "same-origin"},
		{"Origin": base(s)},
		{}, // curl, a script
	} {
		req := authed(t, s, "POST", "/track", strings.NewReader("url=x"))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, _ := get(t, noRedirects, req)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "%v", hdr)
	}
	// A cross-site GET (a link from elsewhere) is a safe method: served, when it has the token.
	req := authed(t, s, "GET", "/", nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, _ := get(t, noRedirects, req)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestBodyOverCapIsRefused(t *testing.T) {
	a := &app{}
	s := start(t, a, func(s *Server) { s.Guard.MaxBodyBytes = 1000 })
	resp, body := get(t, noRedirects, authed(t, s, "POST", "/", strings.NewReader(strings.Repeat("x", 1000))))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "ok / 1000", body)

	// Declared too large: refused before the app.
	resp, body = get(t, noRedirects, authed(t, s, "POST", "/", strings.NewReader(strings.Repeat("x", 1001))))
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Contains(t, body, "at most 1000 bytes")
	assert.EqualValues(t, 1, a.calls.Load())

	// Chunked, no length: the app's read stops at the cap.
	req := authed(t, s, "POST", "/", io.MultiReader(strings.NewReader(strings.Repeat("x", 5000))))
	req.ContentLength = -1
	resp, body = get(t, noRedirects, req)
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Contains(t, body, "body over 1000")

	// The default applies to the zero value.
	d := start(t, a, nil)
	resp, _ = get(t, noRedirects, authed(t, d, "POST", "/", strings.NewReader(strings.Repeat("x", DefaultMaxBodyBytes+1))))
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
}

func TestConcurrencyOverCapIsRefused(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			entered <- struct{}{}
			<-release
		}
		io.WriteString(w, "done")
	})
	s := start(t, h, func(s *Server) { s.Guard.MaxInFlight = 2 })
	results := make(chan int, 2)
	for range 2 {
		go func() {
			resp, err := noRedirects.Do(authed(t, s, "GET", "/slow", nil))
			if err != nil {
				results <- -1
				return
			}
			resp.Body.Close()
			results <- resp.StatusCode
		}()
	}
	<-entered
	<-entered
	resp, body := get(t, noRedirects, authed(t, s, "GET", "/fast", nil))
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.Contains(t, body, "Try again in a moment")
	// Refusals that need no slot are still given: a wrong Host.
	req := authed(t, s, "GET", "/fast", nil)
	req.Host = "evil.example"
	resp, _ = get(t, noRedirects, req)
	assert.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode)

	close(release)
	assert.Equal(t, http.StatusOK, <-results)
	assert.Equal(t, http.StatusOK, <-results)
	resp, body = get(t, noRedirects, authed(t, s, "GET", "/fast", nil))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "done", body)
}

func TestServeEndsStreamsOnCancel(t *testing.T) {
	streaming := make(chan struct{})
	ended := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		close(streaming)
		<-r.Context().Done()
		ended <- r.Context().Err()
	})
	s := &Server{Handler: h}
	require.NoError(t, s.Listen())
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx) }()
	resp, err := noRedirects.Do(authed(t, s, "GET", "/stream", nil))
	require.NoError(t, err)
	defer resp.Body.Close()
	<-streaming
	cancel()
	assert.ErrorIs(t, <-ended, context.Canceled, "the handler's context ends with the server")
	assert.NoError(t, <-served)
	_, err = net.Dial("tcp", s.ListenAddr())
	assert.Error(t, err, "the port is closed after Serve returns")
}

// fakeOpener puts an xdg-open (or open) first in PATH that records its
// argument and exits with code.
func fakeOpener(t *testing.T, code int) (record string) {
	t.Helper()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("browser openers are xdg-open (Linux) and open (macOS)")
	}
	dir := t.TempDir()
	record = filepath.Join(dir, "opened")
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s' \"$1\" > %s\nexit %d\n", record, code)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755))
	t.Setenv("PATH", dir)
	t.Setenv("DISPLAY", ":99")
	return record
}

func TestAnnounceOpensTheBrowser(t *testing.T) {
	s := start(t, &app{}, nil)
	record := fakeOpener(t, 0)
	var out strings.Builder
	s.Announce(&out, "audit app", true)
	opened, err := os.ReadFile(record)
	require.NoError(t, err)
	assert.Equal(t, s.URL(), string(opened))
	assert.Contains(t, out.String(), "audit app: serving on "+s.ListenAddr())
	assert.Contains(t, out.String(), "Opened your browser on "+s.URL())
}

func TestAnnounceSaysTheURLWhenNoBrowserOpens(t *testing.T) {
	s := start(t, &app{}, nil)
	u, err := url.Parse(s.URL())
	require.NoError(t, err)
	require.Equal(t, s.Guard.Token, u.Query().Get("token"), "the printed address carries the token")

	t.Run("flag says not to", func(t *testing.T) {
		record := fakeOpener(t, 0)
		var out strings.Builder
		s.Announce(&out, "audit app", false)
		assert.Contains(t, out.String(), "Open this address in your browser: "+s.URL())
		assert.NoFileExists(t, record)
	})
	t.Run("opener fails", func(t *testing.T) {
		record := fakeOpener(t, 3)
		var out strings.Builder
		s.Announce(&out, "audit app", true)
		assert.FileExists(t, record)
		assert.Contains(t, out.String(), "Could not open a browser")
		assert.Contains(t, out.String(), "exit status 3")
		assert.Contains(t, out.String(), "Open this address in your browser: "+s.URL())
	})
	t.Run("no opener", func(t *testing.T) {
		fakeOpener(t, 0)
		t.Setenv("PATH", t.TempDir())
		var out strings.Builder
		s.Announce(&out, "audit app", true)
		assert.Contains(t, out.String(), "not found")
		assert.Contains(t, out.String(), "Open this address in your browser: "+s.URL())
	})
	t.Run("no graphical session", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("Linux only")
		}
		record := fakeOpener(t, 0)
		t.Setenv("DISPLAY", "")
		t.Setenv("WAYLAND_DISPLAY", "")
		var out strings.Builder
		s.Announce(&out, "audit app", true)
		assert.Contains(t, out.String(), "no graphical session")
		assert.Contains(t, out.String(), "Open this address in your browser: "+s.URL())
		assert.NoFileExists(t, record)
	})
}

func TestTimeoutsDefaultAndApply(t *testing.T) {
	s := start(t, &app{}, func(s *Server) { s.ReadHeaderTimeout = 200 * time.Millisecond })
	conn, err := net.Dial("tcp", s.ListenAddr())
	require.NoError(t, err)
	defer conn.Close()
	io.WriteString(conn, "GET / HTTP/1.1\r\n")                              // and never finish the headers
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second))) // the default, 10 s, would be too late
	_, err = io.ReadAll(conn)
	assert.NoError(t, err, "the server closed the connection of a client that never finished its headers")
}

func TestZeroServerUsesTheDefaults(t *testing.T) {
	var s Server
	srv := s.httpServer(context.Background())
	assert.Equal(t, DefaultReadHeaderTimeout, srv.ReadHeaderTimeout)
	assert.Equal(t, DefaultReadTimeout, srv.ReadTimeout)
	assert.Equal(t, DefaultWriteTimeout, srv.WriteTimeout)
	assert.Equal(t, DefaultIdleTimeout, srv.IdleTimeout)
	assert.Equal(t, MaxHeaderBytes, srv.MaxHeaderBytes)
	var g Guard
	assert.EqualValues(t, DefaultMaxBodyBytes, g.maxBody())
	assert.Equal(t, DefaultMaxInFlight, g.maxInFlight())
}

func TestAllowWithoutTokenKeepsEveryOtherCheck(t *testing.T) {
	a := &app{}
	s := start(t, a, func(s *Server) { s.Guard.AllowWithoutToken = true })
	resp, body := get(t, noRedirects, newReq(t, "GET", base(s)+"/", nil))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "ok / 0", body)

	resp, _ = get(t, noRedirects, newReq(t, "GET", base(s)+"/?token=stale", nil))
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "a wrong token is still wrong")

	req := newReq(t, "GET", base(s)+"/", nil)
	req.Host = "evil.example"
	resp, _ = get(t, noRedirects, req)
	assert.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode)

	req = newReq(t, "POST", base(s)+"/track", strings.NewReader("x"))
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, _ = get(t, noRedirects, req)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.EqualValues(t, 1, a.calls.Load())
}
