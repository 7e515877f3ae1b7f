package localweb_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"

	"github.com/politecrawl/polite/examples/internal/localweb"
)

// A `go tool pprof -http` style command: serve the app on loopback behind
// the token, print the address and open the browser, until Ctrl-C.
func ExampleServer() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	})
	s := &localweb.Server{Addr: "", Handler: mux} // -addr; "" is a random port
	if err := s.Listen(); err != nil {
		fmt.Fprintln(os.Stderr, "audit app:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	s.Announce(os.Stderr, "audit app", true) // false with -no-browser
	if err := s.Serve(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "audit app:", err)
		os.Exit(1)
	}
}

// A server that keeps its own listener (the monitor's serve, which may be
// bound beyond loopback on purpose) puts the Guard alone in front of its
// routes: the Host check, cross-origin refusal, headers and caps, with the
// names it is reached by, and here no token.
func ExampleGuard() {
	mux := http.NewServeMux()
	guard := &localweb.Guard{
		AllowWithoutToken: true,                         // a dashboard for more than the person who started it
		Hosts:             []string{"monitor.internal"}, // names it is reached by, besides loopback
		MaxInFlight:       16,
	}
	srv := &http.Server{Addr: "127.0.0.1:8080", Handler: guard.Handler(mux)}
	_ = srv // srv.ListenAndServe(), with the timeouts of localweb.Server
}
