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
