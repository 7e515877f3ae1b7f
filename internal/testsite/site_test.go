package testsite

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

func get(t *testing.T, c *http.Client, method, url string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

func TestLoopbackRoutesAndRecording(t *testing.T) {
	s := New(t)
	require.True(t, strings.HasPrefix(s.URL(), "http://127.0.0.1:"), s.URL())
	require.Equal(t, strings.TrimPrefix(s.URL(), "http://"), s.Host())
	require.Equal(t, s.Host(), s.Addr())

	s.Robots("User-agent: *\nDisallow: /private/\n")
	s.HTML("/", "<title>home</title>")
	s.Status("/gone", http.StatusGone)
	s.Redirect("/old", "/new", http.StatusMovedPermanently)
	s.Route("/h", Response{Header: http.Header{"X-Robots-Tag": {"noindex"}}, Body: "x"})
	s.Handle("/custom", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, r.URL.Query().Get("q"))
	})

	c := s.Client()
	resp, body := get(t, c, "GET", s.URL()+"/robots.txt", "User-Agent", "TestBot/1.0", "X-Agent", "2-UA")
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
	require.Equal(t, "User-agent: *\nDisallow: /private/\n", body)

	resp, body = get(t, c, "GET", s.URL()+"/")
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "<title>home</title>", body)

	resp, _ = get(t, c, "GET", s.URL()+"/gone")
	require.Equal(t, 410, resp.StatusCode)

	resp, _ = get(t, c, "GET", s.URL()+"/old")
	require.Equal(t, 301, resp.StatusCode)
	require.Equal(t, "/new", resp.Header.Get("Location"))

	resp, _ = get(t, c, "GET", s.URL()+"/h")
	require.Equal(t, "noindex", resp.Header.Get("X-Robots-Tag"))

	resp, body = get(t, c, "GET", s.URL()+"/custom?q=hi")
	require.Equal(t, 418, resp.StatusCode)
	require.Equal(t, "hi", body)

	resp, body = get(t, c, "HEAD", s.URL()+"/")
	require.Equal(t, 200, resp.StatusCode)
	require.Empty(t, body)

	resp, _ = get(t, c, "GET", s.URL()+"/nope")
	require.Equal(t, 404, resp.StatusCode)

	reqs := s.Requests()
	require.Len(t, reqs, 8)
	require.Equal(t, "GET", reqs[0].Method)
	require.Equal(t, "/robots.txt", reqs[0].Path)
	require.Equal(t, s.Host(), reqs[0].Host)
	require.Equal(t, "TestBot/1.0", reqs[0].Header.Get("User-Agent"))
	require.Equal(t, "2-UA", reqs[0].Header.Get("X-Agent"))
	require.False(t, reqs[0].Time.IsZero())
	require.False(t, reqs[0].End.Before(reqs[0].Time))
	require.Equal(t, "/custom?q=hi", reqs[5].Path)
	require.Equal(t, "HEAD", reqs[6].Method)

	require.Equal(t, 2, s.Count("/"))
	require.Equal(t, 1, s.Count("/custom"))
	require.Equal(t, 1, s.Count("/custom?q=hi"))
	require.Equal(t, 0, s.Count("/custom?q=other"))
	require.Equal(t, 1, s.Count("/nope"))
	require.Equal(t, 8, s.Total())
	require.Equal(t, 1, s.MaxInFlight())
	require.Equal(t, 0, s.InFlight())
	require.Equal(t, []string{"/robots.txt", "/", "/gone", "/old", "/h", "/custom?q=hi", "/", "/nope"}, s.Paths())

	// Requests returns copies: mutating them does not change the record.
	reqs[0].Header.Set("User-Agent", "changed")
	require.Equal(t, "TestBot/1.0", s.Requests()[0].Header.Get("User-Agent"))
}

func TestScriptPerAttemptAndQueryAndPrefixRoutes(t *testing.T) {
	s := New(t)
	s.Route("/busy", Response{Status: 429, Header: http.Header{"Retry-After": {"1"}}}, Response{Status: 503}, Response{Body: "ok"})
	s.HTML("/static/*", "prefix")
	s.HTML("/static/special/*", "longer prefix")
	s.HTML("/?p=1", "post one")
	s.HTML("/", "home")
	s.NotFound(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusForbidden) })

	c := s.Client()
	var codes []int
	for range 4 {
		resp, _ := get(t, c, "GET", s.URL()+"/busy")
		codes = append(codes, resp.StatusCode)
	}
	require.Equal(t, []int{429, 503, 200, 200}, codes)

	_, body := get(t, c, "GET", s.URL()+"/static/a.css")
	require.Equal(t, "prefix", body)
	_, body = get(t, c, "GET", s.URL()+"/static/special/b.js")
	require.Equal(t, "longer prefix", body)
	_, body = get(t, c, "GET", s.URL()+"/?p=1")
	require.Equal(t, "post one", body)
	_, body = get(t, c, "GET", s.URL()+"/?p=2")
	require.Equal(t, "home", body)
	resp, _ := get(t, c, "GET", s.URL()+"/other")
	require.Equal(t, 403, resp.StatusCode)

	require.Equal(t, 4, s.Count("/busy"))
	require.Equal(t, 2, s.Count("/"))
	require.Equal(t, 1, s.Count("/?p=1"))
}

func TestRedirectDefaultsToFound(t *testing.T) {
	s := New(t)
	s.Route("/r", Response{Location: "http://elsewhere.test/"})
	resp, _ := get(t, s.Client(), "GET", s.URL()+"/r")
	require.Equal(t, 302, resp.StatusCode)
	require.Equal(t, "http://elsewhere.test/", resp.Header.Get("Location"))
}

func TestInMemoryDelayTakesExactFakeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewInMemory(t)
		require.Equal(t, "http://site.test", s.URL())
		s.Route("/slow", Response{Delay: 300 * time.Millisecond, Body: "done"})

		start := time.Now()
		resp, body := get(t, s.Client(), "GET", s.URL()+"/slow")
		require.Equal(t, 300*time.Millisecond, time.Since(start))
		require.Equal(t, 200, resp.StatusCode)
		require.Equal(t, "done", body)

		r := s.Requests()[0]
		require.Equal(t, start, r.Time)
		require.Equal(t, 300*time.Millisecond, r.End.Sub(r.Time))
		require.Equal(t, "site.test", r.Host)
	})
}

func TestInMemoryClientTimeoutCancelsHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewInMemory(t)
		s.Route("/hang", Response{Delay: time.Hour})
		c := s.Client()
		c.Timeout = 2 * time.Second

		start := time.Now()
		_, err := c.Get(s.URL() + "/hang")
		require.Error(t, err)
		var ne net.Error
		require.ErrorAs(t, err, &ne)
		require.True(t, ne.Timeout())
		require.Equal(t, 2*time.Second, time.Since(start))

		// The server noticed the client went away and the handler returned
		// long before the hour was up.
		synctest.Wait()
		require.Equal(t, 0, s.InFlight())
		r := s.Requests()[0]
		require.False(t, r.End.IsZero())
		require.Less(t, r.End.Sub(r.Time), time.Minute)
	})
}

func TestInMemoryDripFeed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewInMemory(t)
		s.Route("/drip", Response{Body: "abcdef", Drip: 100 * time.Millisecond, DripChunk: 2})

		start := time.Now()
		resp, err := s.Client().Get(s.URL() + "/drip")
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, time.Duration(0), time.Since(start), "headers come at once")

		var got []string
		var at []time.Duration
		buf := make([]byte, 16)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				got = append(got, string(buf[:n]))
				at = append(at, time.Since(start))
			}
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
		}
		require.Equal(t, "abcdef", strings.Join(got, ""))
		require.Equal(t, []string{"ab", "cd", "ef"}, got)
		require.Equal(t, []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond}, at)
	})
}

func TestInMemoryMaxInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewInMemory(t)
		s.Route("/", Response{Delay: time.Second})
		c := s.Client()

		// Sequential: one at a time.
		for range 3 {
			get(t, c, "GET", s.URL()+"/")
		}
		require.Equal(t, 1, s.MaxInFlight())

		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() {
				resp, err := c.Get(s.URL() + "/")
				if err == nil {
					resp.Body.Close()
				}
			})
		}
		synctest.Wait()
		require.Equal(t, 5, s.InFlight())
		wg.Wait()
		require.Equal(t, 5, s.MaxInFlight())
		require.Equal(t, 0, s.InFlight())
		require.Equal(t, 8, s.Count("/"))
	})
}

func TestInMemoryNetworkRoutesByHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := NewNetwork(t, InMemory)
		apex := n.Add("example.com")
		www := n.Add("WWW.example.com")
		alt := n.Add("example.com:8080")
		require.Same(t, apex, n.Add("example.com:80"))
		require.Same(t, www, n.Site("www.example.com"))
		require.Equal(t, "http://example.com:8080", alt.URL())

		apex.Robots("apex")
		www.Robots("www")
		alt.Robots("alt")
		c := n.Client()
		_, b := get(t, c, "GET", "http://example.com/robots.txt")
		require.Equal(t, "apex", b)
		_, b = get(t, c, "GET", "http://www.example.com/robots.txt")
		require.Equal(t, "www", b)
		_, b = get(t, c, "GET", "http://example.com:8080/robots.txt")
		require.Equal(t, "alt", b)

		require.Equal(t, 1, apex.Total())
		require.Equal(t, 1, www.Total())
		all := n.Requests()
		require.Len(t, all, 3)
		require.Equal(t, []string{"example.com", "WWW.example.com", "example.com:8080"}, []string{all[0].Site, all[1].Site, all[2].Site})
		require.Equal(t, "www.example.com", all[1].Host)

		_, err := c.Get("http://unknown.example/")
		var dnsErr *net.DNSError
		require.ErrorAs(t, err, &dnsErr)
		require.True(t, dnsErr.IsNotFound)
		require.Equal(t, "unknown.example", dnsErr.Name)

		www.Close()
		www.Close() // idempotent
		_, err = n.Client().Get("http://www.example.com/robots.txt")
		require.ErrorIs(t, err, syscall.ECONNREFUSED)
		require.Equal(t, 1, www.Total())
	})
}

func TestInMemoryNetworkMaxInFlightAcrossSites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := NewNetwork(t, InMemory)
		a, b := n.Add("a.test"), n.Add("b.test")
		a.Route("/", Response{Delay: time.Second})
		b.Route("/", Response{Delay: 500 * time.Millisecond})
		c := n.Client()
		var wg sync.WaitGroup
		for _, u := range []string{"http://a.test/", "http://b.test/", "http://a.test/"} {
			wg.Go(func() {
				resp, err := c.Get(u)
				if err == nil {
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		require.Equal(t, 3, n.MaxInFlight())
		require.Equal(t, 2, a.MaxInFlight())
		require.Equal(t, 1, b.MaxInFlight())
	})
}

func TestLoopbackNetworkTransportAndResolve(t *testing.T) {
	n := NewNetwork(t, Loopback)
	a := n.Add("shop.test")
	b := n.Add("www.shop.test")
	a.HTML("/", "apex")
	b.HTML("/", "www")
	require.Equal(t, "http://shop.test", a.URL())
	require.True(t, strings.HasPrefix(a.Addr(), "127.0.0.1:"))

	_, body := get(t, n.Client(), "GET", "http://www.shop.test/")
	require.Equal(t, "www", body)
	require.Equal(t, "www.shop.test", b.Requests()[0].Host)

	res := n.Resolve()
	require.Equal(t, map[string]string{"shop.test:80": a.Addr(), "www.shop.test:80": b.Addr()}, res)

	// Dial by the resolve map, as a --resolve style transport would.
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, res[addr])
	}}
	defer tr.CloseIdleConnections()
	_, body = get(t, &http.Client{Transport: tr}, "GET", "http://shop.test/")
	require.Equal(t, "apex", body)
	require.Equal(t, "shop.test", a.Requests()[0].Host)

	a.Close()
	_, err := n.Client().Get("http://shop.test/")
	require.Error(t, err)
	require.True(t, errors.Is(err, syscall.ECONNREFUSED), "%v", err)
}

func TestLoopbackCloseDoesNotWaitForDelayedHandlers(t *testing.T) {
	s := New(t)
	arrived := make(chan struct{})
	s.Handle("/hang", func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		sleep(r.Context(), time.Hour)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL()+"/hang", nil)
		resp, err := s.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-arrived
	s.Close() // would block for an hour if it waited on the handler
	require.Error(t, <-errc)
}
