package localweb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"time"
)

// Timeouts of a Server whose fields are zero. A handler that streams (Server-
// Sent Events) extends its own deadlines with http.ResponseController.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	// MaxHeaderBytes caps a request's header.
	MaxHeaderBytes = 32 << 10
	// ShutdownGrace is how long Serve waits for requests in flight once its
	// context ends.
	ShutdownGrace = 5 * time.Second
)

// Server serves one handler, behind a Guard with a fresh token, on a loopback
// address. Set the fields, call Listen, print or open URL, then Serve.
type Server struct {
	// Addr is the listen address a person gave (-addr); "" is 127.0.0.1 on a
	// random port. It must be loopback (see LoopbackAddr).
	Addr string
	// Handler is the app. It is served behind Guard.
	Handler http.Handler
	// Guard is the middleware's settings; its Token is set by Listen.
	Guard Guard
	// Timeouts of the underlying http.Server (0: the Default values).
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// ErrorLog receives the http.Server's errors (nil: the log package's).
	ErrorLog *log.Logger

	ln net.Listener
}

// Listen checks Addr, binds it and makes the run's token.
func (s *Server) Listen() error {
	if s.ln != nil {
		return errors.New("localweb: Listen called twice")
	}
	addr, err := LoopbackAddr(s.Addr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	s.ln = ln
	if s.Guard.Token == "" {
		s.Guard.Token = NewToken()
	}
	return nil
}

// ListenAddr is the address bound by Listen (host:port); call it after Listen.
func (s *Server) ListenAddr() string { return s.ln.Addr().String() }

// URL is the address to open and print, http://127.0.0.1:PORT/?token=…;
// call it after Listen.
func (s *Server) URL() string {
	u := url.URL{Scheme: "http", Host: s.ListenAddr(), Path: "/", RawQuery: url.Values{TokenParam: {s.Guard.Token}}.Encode()}
	return u.String()
}

// Serve serves until ctx ends, then shuts down: request contexts are
// cancelled (so event streams end), and requests in flight get ShutdownGrace
// to finish. It returns nil after a shutdown caused by ctx.
func (s *Server) Serve(ctx context.Context) error {
	if s.ln == nil {
		return errors.New("localweb: Serve before Listen")
	}
	base, cancelRequests := context.WithCancel(context.Background())
	defer cancelRequests()
	srv := s.httpServer(base)
	srv.RegisterOnShutdown(cancelRequests)
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-ctx.Done():
		case <-base.Done():
			return
		}
		sctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
	}()
	err := srv.Serve(s.ln)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	if err != nil {
		cancelRequests()
	}
	<-done
	return err
}

// httpServer is the http.Server of Serve: the guarded handler, the timeouts,
// a header cap, and request contexts derived from base.
func (s *Server) httpServer(base context.Context) *http.Server {
	return &http.Server{
		Handler:           s.Guard.Handler(s.Handler),
		ReadHeaderTimeout: orDefault(s.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		ReadTimeout:       orDefault(s.ReadTimeout, DefaultReadTimeout),
		WriteTimeout:      orDefault(s.WriteTimeout, DefaultWriteTimeout),
		IdleTimeout:       orDefault(s.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    MaxHeaderBytes,
		ErrorLog:          s.ErrorLog,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Announce tells the person where the app is, with the token, and opens
// their default browser on it unless open is false. It never fails: when no
// browser can be started it says so, and the address is printed either way.
func (s *Server) Announce(w io.Writer, name string, open bool) {
	u := s.URL()
	fmt.Fprintf(w, "%s: serving on %s (this computer only)\n", name, s.ListenAddr())
	if !open {
		fmt.Fprintf(w, "Open this address in your browser: %s\n", u)
		return
	}
	if err := OpenBrowser(u); err != nil {
		fmt.Fprintf(w, "Could not open a browser (%v). Open this address in your browser: %s\n", err, u)
		return
	}
	fmt.Fprintf(w, "Opened your browser on %s (if no window appeared, open that address yourself)\n", u)
}

// ErrNoBrowser says this system has no known way to open a browser.
var ErrNoBrowser = errors.New("no browser opener on this system")

// openerWait is how long OpenBrowser waits for the opener to fail; an
// opener still running after it (a browser run in the foreground) is left
// running.
const openerWait = 3 * time.Second

// OpenBrowser opens u in the default browser: xdg-open on Linux and the BSDs
// (only with a graphical session, DISPLAY or WAYLAND_DISPLAY, so a text
// browser never takes over the terminal), open on macOS. Elsewhere, or when
// the opener is missing or fails at once, it returns an error saying why.
func OpenBrowser(u string) error {
	var name string
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			return fmt.Errorf("%w: no graphical session (DISPLAY and WAYLAND_DISPLAY are unset)", ErrNoBrowser)
		}
		name = "xdg-open"
	default:
		return fmt.Errorf("%w (%s)", ErrNoBrowser, runtime.GOOS)
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return fmt.Errorf("%w: %s not found", ErrNoBrowser, name)
	}
	cmd := exec.Command(path, u)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	case <-time.After(openerWait):
	}
	return nil
}
