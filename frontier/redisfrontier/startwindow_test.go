package redisfrontier_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier/redisfrontier"
	"github.com/politecrawl/polite/internal/testsite"
)

// windowWorker is a Frontier and a client on base, one site's worth of
// limits (gap, two in flight) applying to any host.
func windowWorker(t *testing.T, crawl string, base *http.Transport, gap, window time.Duration) (*redisfrontier.Frontier, *fetch.Client) {
	t.Helper()
	_, rdb := startRedis(t)
	client := &fetch.Client{UserAgent: ua, Transport: base}
	cfg := redisfrontier.DefaultConfig(crawl)
	cfg.Site = redisfrontier.Limits{MaxDepth: 1, InFlight: 2, Gap: gap}
	cfg.StartWindow = window
	cfg.Client = client
	f, err := redisfrontier.New(t.Context(), rdb, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	return f, client
}

// fetchAll gets each path of site in turn (robots.txt is fetched first).
func fetchAll(t *testing.T, client *fetch.Client, base string, paths ...string) {
	t.Helper()
	ctx := shortCtx(t, 30*time.Second)
	for _, p := range paths {
		res, err := client.Get(ctx, base+p)
		require.NoError(t, err, p)
		require.Equal(t, http.StatusOK, res.Status, p)
	}
}

// assertArrivalGaps checks that requests reached the site at least gap
// apart (less startTolerance), at its kernel.
func assertArrivalGaps(t *testing.T, site *testsite.Site, gap time.Duration) {
	t.Helper()
	at := arrivals(t, site.Requests())
	for k := 1; k < len(at); k++ {
		assert.GreaterOrEqual(t, at[k].Sub(at[k-1]), gap-startTolerance, "requests %d and %d", k-1, k)
	}
}

// TestStartWindowReadmitsASlowConnection: a request (/a) is admitted, but
// its connection takes longer to open than a whole gap; meanwhile the gate
// admits the next request (/b), which goes out at once. /a is admitted
// again before it is sent, so it arrives a gap after /b. Without the
// check /a would arrive after /b by only what its connection took
// (200 ms) less the spacing (110 ms): 90 ms, under the 100 ms gap — too
// late for the late-start record to help, /b having been admitted
// already.
func TestStartWindowReadmitsASlowConnection(t *testing.T) {
	const gap, window, slow = 100 * time.Millisecond, 10 * time.Millisecond, 200 * time.Millisecond
	site := testsite.New(t)
	site.Robots("User-agent: *\nAllow: /\n")
	site.HTML("/", "home")
	site.HTML("/a", "a")
	site.HTML("/b", "b")
	var dials atomic.Int32
	slowDial := make(chan struct{})
	base := &http.Transport{
		DisableKeepAlives: true, // a connection per request
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dials.Add(1) == 3 { // /a's, after robots.txt's and /'s
				close(slowDial)
				time.Sleep(slow)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
	f, client := windowWorker(t, "slowconn", base, gap, window)
	fetchAll(t, client, site.URL(), "/")
	var wg sync.WaitGroup
	wg.Go(func() { fetchAll(t, client, site.URL(), "/a") })
	<-slowDial // /a is admitted and connecting
	fetchAll(t, client, site.URL(), "/b")
	wg.Wait()

	require.Equal(t, []string{"/robots.txt", "/", "/b", "/a"}, site.Paths())
	assertArrivalGaps(t, site, gap)
	st, err := f.FleetStats(t.Context())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, st.Readmitted, 1, "the request on the slow connection was admitted again")
	assert.Equal(t, 4, st.Requests)
}

// stallConn sleeps before its first write, as a worker descheduled
// between its last start check and write(2) would.
type stallConn struct {
	net.Conn
	once  *sync.Once
	stall time.Duration
}

func (c *stallConn) Write(p []byte) (int, error) {
	c.once.Do(func() { time.Sleep(c.stall) })
	return c.Conn.Write(p)
}

// TestStartWindowRecordsAStartThatLeftLate: the request's bytes leave
// 100 ms after the final check passed (the worker stalled in between, out
// of any check's reach); the worker records the start in Redis as soon as
// the write returns, so the next request is admitted a gap plus window
// after that record. Without the record the next request would arrive
// only gap + window − 100 ms after the late one.
func TestStartWindowRecordsAStartThatLeftLate(t *testing.T) {
	const gap, window, stall = 200 * time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond
	site := testsite.New(t)
	site.Robots("User-agent: *\nAllow: /\n")
	site.HTML("/a", "a")
	site.HTML("/b", "b")
	var once sync.Once
	base := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &stallConn{Conn: c, once: &once, stall: stall}, nil
	}}
	f, client := windowWorker(t, "stall", base, gap, window)
	fetchAll(t, client, site.URL(), "/a", "/b")

	require.Equal(t, []string{"/robots.txt", "/a", "/b"}, site.Paths())
	assertArrivalGaps(t, site, gap)
	st, err := f.FleetStats(t.Context())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, st.LateStarts, 1, "the stalled request's start was recorded")
}

// TestStartWindowOverHTTP2: on HTTP/2 the check is made when the shared
// connection is assigned; a request whose connection took longer than
// the window is admitted again there, and every request goes out over
// HTTP/2 and succeeds.
func TestStartWindowOverHTTP2(t *testing.T) {
	const gap, window, slow = 100 * time.Millisecond, 10 * time.Millisecond, 60 * time.Millisecond
	var mu sync.Mutex
	var protos []int
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		protos = append(protos, r.ProtoMajor)
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			_, _ = w.Write([]byte("User-agent: *\nAllow: /\n"))
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("ok"))
	}))
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(ts.Close)
	var dials atomic.Int32
	base := &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: ts.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs},
		ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dials.Add(1) == 1 {
				time.Sleep(slow)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
	f, client := windowWorker(t, "h2", base, gap, window)
	fetchAll(t, client, ts.URL, "/a", "/b")

	mu.Lock()
	assert.Equal(t, []int{2, 2, 2}, protos, "robots.txt and both pages over HTTP/2")
	mu.Unlock()
	st, err := f.FleetStats(t.Context())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, st.Readmitted, 1, "the request on the slow connection was admitted again")
}

// roundTripperFunc is a base transport that is not an *http.Transport.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTransportUsesAFreshAdmissionAndRenewsAStaleOne: wired by hand, a
// request sent through Transport right after Acquire goes out on that
// admission (no Redis call of its own); one sent after the window has
// passed is admitted again first. Both for an *http.Transport base
// (checked in the connection) and any other (checked on entry).
func TestTransportUsesAFreshAdmissionAndRenewsAStaleOne(t *testing.T) {
	const window = 200 * time.Millisecond // "fresh" even on a loaded machine under -race
	site := testsite.New(t)
	site.HTML("/", "home")
	plain := &http.Transport{}
	t.Cleanup(plain.CloseIdleConnections)
	for _, tc := range []struct {
		name string
		base http.RoundTripper
	}{
		{"http.Transport", &http.Transport{}},
		{"other", roundTripperFunc(plain.RoundTrip)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, rdb := startRedis(t)
			cfg := redisfrontier.DefaultConfig("byhand")
			cfg.Site = redisfrontier.Limits{MaxDepth: 1, InFlight: 1, Gap: 20 * time.Millisecond}
			cfg.StartWindow = window
			f, err := redisfrontier.New(t.Context(), rdb, cfg)
			require.NoError(t, err)
			t.Cleanup(func() { _ = f.Close() })
			hc := &http.Client{Transport: f.Transport(tc.base)}
			get := func(stale bool) {
				req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, site.URL()+"/", nil)
				require.NoError(t, err)
				release, err := f.Acquire(t.Context(), req.URL)
				require.NoError(t, err)
				defer release()
				if stale {
					time.Sleep(3 * window)
				}
				before := f.RoundTrips()
				resp, err := hc.Do(req)
				require.NoError(t, err)
				require.NoError(t, resp.Body.Close())
				if !stale {
					assert.Equal(t, before, f.RoundTrips(), "a fresh admission is used as it is")
				}
			}
			get(false)
			get(true)
			st, err := f.FleetStats(t.Context())
			require.NoError(t, err)
			assert.Equal(t, 2, st.Requests)
			assert.Equal(t, 1, st.Readmitted, "the stale admission was renewed")
		})
	}
}

// slowReplies is a TCP proxy to addr that holds every reply back by
// delay: a Redis farther away than a worker's start window.
func slowReplies(t *testing.T, addr string, delay time.Duration) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var conns sync.WaitGroup
	t.Cleanup(func() { _ = l.Close(); conns.Wait() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", addr)
			if err != nil {
				_ = c.Close()
				continue
			}
			closeBoth := func() { _ = c.Close(); _ = s.Close() }
			conns.Go(func() { // requests go straight through
				defer closeBoth()
				_, _ = io.Copy(s, c)
			})
			conns.Go(func() { // replies wait
				defer closeBoth()
				buf := make([]byte, 64<<10)
				for {
					n, err := s.Read(buf)
					if n > 0 {
						time.Sleep(delay)
						if _, werr := c.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			})
			t.Cleanup(closeBoth)
		}
	}()
	return l.Addr().String()
}

// TestStartWindowShorterThanRedisRoundTrip: every admission comes back
// later than the window, so no request can start: it fails with
// ErrLateStart after a bounded number of tries and never reaches the
// site.
func TestStartWindowShorterThanRedisRoundTrip(t *testing.T) {
	srv, _ := startRedis(t)
	rdb := redis.NewClient(&redis.Options{Addr: slowReplies(t, srv.Addr(), 10*time.Millisecond)})
	t.Cleanup(func() { _ = rdb.Close() })
	site := testsite.New(t)
	site.HTML("/", "home")
	cfg := redisfrontier.DefaultConfig("far")
	cfg.Site = redisfrontier.Limits{MaxDepth: 1, InFlight: 1}
	cfg.StartWindow = 2 * time.Millisecond
	f, err := redisfrontier.New(t.Context(), rdb, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	hc := &http.Client{Transport: f.Transport(nil)}
	req, err := http.NewRequestWithContext(shortCtx(t, 30*time.Second), http.MethodGet, site.URL()+"/", nil)
	require.NoError(t, err)
	release, err := f.Acquire(req.Context(), req.URL)
	require.NoError(t, err)
	defer release()
	_, err = hc.Do(req)
	require.ErrorIs(t, err, redisfrontier.ErrLateStart)
	assert.Zero(t, site.Total(), "nothing was sent")
}
