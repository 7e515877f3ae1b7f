package testsite

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
)

// TB is the part of testing.TB a site needs, so *testing.T, *testing.B and
// *testing.F all work (and an Example can pass its own cleanup list).
type TB interface{ Cleanup(func()) }

// Mode selects how a Network's sites are served.
type Mode int

const (
	// Loopback serves each site from a real httptest.Server on 127.0.0.1.
	Loopback Mode = iota
	// InMemory serves each site over net.Pipe connections, reachable only
	// through the Network's Transport; use it inside testing/synctest.
	InMemory
)

// Network is a set of sites under distinct host names, with one Transport
// that routes every request to the site its host names. Unknown hosts fail
// to dial with a *net.DNSError ("no such host"); closed sites refuse
// connections.
type Network struct {
	mode Mode

	mu         sync.Mutex
	sites      map[string]*Site // key: lower-case host:port
	order      []*Site
	reqs       []*Request
	inFlight   int
	maxIn      int
	transports []*http.Transport
}

// NewNetwork returns an empty network, closed (with all its sites) by
// t.Cleanup. An InMemory network must be created inside the synctest bubble
// that uses it.
func NewNetwork(t TB, mode Mode) *Network {
	n := &Network{mode: mode, sites: map[string]*Site{}}
	t.Cleanup(n.Close)
	return n
}

// New starts a site on a real loopback httptest.Server; URL is its
// "http://127.0.0.1:port" address. It is closed by t.Cleanup.
func New(t TB) *Site { return NewNetwork(t, Loopback).add("") }

// NewInMemory starts a site named "site.test" served in memory, for use
// inside a testing/synctest bubble; reach it through Site.Transport or
// Site.Client. It is closed by t.Cleanup.
func NewInMemory(t TB) *Site { return NewNetwork(t, InMemory).add("site.test") }

// Add starts a site for host ("example.com" or "example.com:8080"; port 80
// when none) whose URL is "http://" + host. A Loopback site listens on a
// random port: reach it through Transport or with Resolve. Adding a host
// twice returns the existing site.
func (n *Network) Add(host string) *Site {
	if host == "" {
		host = "site.test"
	}
	return n.add(host)
}

func (n *Network) add(host string) *Site {
	n.mu.Lock()
	if s := n.sites[key(host)]; host != "" && s != nil {
		n.mu.Unlock()
		return s
	}
	n.mu.Unlock()

	// Every field is set before the server starts: its handlers read them,
	// and a request from another process gives the race detector no
	// happens-before edge to writes made after the start.
	s := &Site{net: n, host: host, routes: map[string]*route{}}
	switch n.mode {
	case InMemory:
		l := &memListener{conns: make(chan net.Conn), done: make(chan struct{})}
		srv := &http.Server{Handler: s}
		s.dial = l.dial
		s.closeFn = func() { _ = srv.Close() }
		s.url = "http://" + host
		go func() { _ = srv.Serve(l) }()
	default:
		ts := httptest.NewUnstartedServer(s)
		addr := ts.Listener.Addr().String()
		if host == "" {
			host = addr
			s.host = addr
		}
		s.addr = addr
		s.url = "http://" + host
		s.dial = func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", addr)
		}
		s.closeFn = func() {
			// Active connections first, so handlers waiting in a Delay see
			// their context end and Close does not wait for them.
			ts.CloseClientConnections()
			ts.Close()
		}
		// Requests carry their arrival time at the kernel (see
		// Request.Arrived) where the platform can tell it.
		ts.Listener = stampListener(ts.Listener)
		ts.Config.ConnContext = withConn
		ts.Start()
	}

	n.mu.Lock()
	n.sites[key(host)] = s
	n.order = append(n.order, s)
	n.mu.Unlock()
	return s
}

// key normalises host[:port] to lower-case host:port with port 80 default.
func key(hostport string) string {
	hostport = strings.ToLower(hostport)
	if _, _, err := net.SplitHostPort(hostport); err != nil {
		return net.JoinHostPort(strings.Trim(hostport, "[]"), "80")
	}
	return hostport
}

// Site returns the site for host, or nil.
func (n *Network) Site(host string) *Site {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.sites[key(host)]
}

// Transport returns a new *http.Transport whose DialContext reaches the
// network's sites by host name and nothing else (no proxy, no real DNS).
// Its idle connections are closed when the network closes.
func (n *Network) Transport() *http.Transport {
	tr := &http.Transport{
		DialContext:         n.DialContext,
		MaxIdleConnsPerHost: 64,
	}
	n.mu.Lock()
	n.transports = append(n.transports, tr)
	n.mu.Unlock()
	return tr
}

// Client returns an *http.Client using a new Transport that does not follow
// redirects, so tests see each hop.
func (n *Network) Client() *http.Client {
	return &http.Client{
		Transport:     n.Transport(),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// DialContext connects to the site named by addr (host:port).
func (n *Network) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	n.mu.Lock()
	s := n.sites[key(addr)]
	n.mu.Unlock()
	if s == nil {
		host, _, _ := net.SplitHostPort(addr)
		return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}}
	}
	if s.isClosed() {
		return nil, refused(network)
	}
	c, err := s.dial(ctx)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func refused(network string) error {
	return &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

// Resolve maps each Loopback site's "host:port" to its real listener
// address, in the form curl --resolve and fetch.NewBaseTransport take.
// It is empty for an InMemory network.
func (n *Network) Resolve() map[string]string {
	n.mu.Lock()
	defer n.mu.Unlock()
	m := map[string]string{}
	for k, s := range n.sites {
		if s.addr != "" {
			m[k] = s.addr
		}
	}
	return m
}

// Requests returns every request recorded by any site, in arrival order.
func (n *Network) Requests() []Request {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]Request, len(n.reqs))
	for i, r := range n.reqs {
		out[i] = *r
		out[i].Header = r.Header.Clone()
	}
	return out
}

// MaxInFlight returns the largest number of requests handled at once across
// all sites.
func (n *Network) MaxInFlight() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.maxIn
}

// Close closes every site and the idle connections of every Transport
// handed out. It is idempotent and registered with t.Cleanup.
func (n *Network) Close() {
	n.mu.Lock()
	sites := append([]*Site(nil), n.order...)
	trs := n.transports
	n.transports = nil
	n.mu.Unlock()
	for _, s := range sites {
		s.Close()
	}
	for _, tr := range trs {
		tr.CloseIdleConnections()
	}
}

// begin records rec network-wide; n.mu is held.
func (n *Network) begin(rec *Request) {
	n.reqs = append(n.reqs, rec)
	n.inFlight++
	n.maxIn = max(n.maxIn, n.inFlight)
}

// memListener is a net.Listener fed by dial with the server ends of
// net.Pipe connections; everything blocks on channels, so goroutines in a
// synctest bubble waiting on it are durably blocked.
type memListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr{} }

func (l *memListener) dial(ctx context.Context) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		client.Close()
		server.Close()
		return nil, refused("tcp")
	case <-ctx.Done():
		client.Close()
		server.Close()
		return nil, ctx.Err()
	}
}

type memAddr struct{}

func (memAddr) Network() string { return "pipe" }
func (memAddr) String() string  { return "pipe" }
