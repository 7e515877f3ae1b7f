// Command shop serves the generated shop of the scale benchmark (bench/scale.sh, internal/benchshop) on
// loopback until it is killed, after printing its URL:
//
//	go run ./examples/audit/bench/shop -pages 100000     # prints http://127.0.0.1:PORT/
//
// It binds a loopback address only: it is a benchmark target, never a public server.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/politecrawl/polite/examples/audit/internal/benchshop"
)

func main() {
	n := flag.Int("pages", 500, "how many pages the shop has")
	addr := flag.String("addr", "127.0.0.1:0", "loopback `address` to listen on")
	flag.Parse()
	if *n < 1 {
		fmt.Fprintln(os.Stderr, "shop: -pages must be at least 1")
		os.Exit(2)
	}
	host, _, err := net.SplitHostPort(*addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		fmt.Fprintln(os.Stderr, "shop: -addr must be a loopback address")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "shop:", err)
		os.Exit(1)
	}
	fmt.Printf("http://%s/\n", ln.Addr())
	srv := &http.Server{Handler: benchshop.Handler(*n)}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "shop:", err)
		os.Exit(1)
	}
}
