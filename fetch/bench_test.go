package fetch_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/politecrawl/polite/backoff"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/robots"
)

// openGate admits everything at once: the benchmark measures fetch's own
// overhead, not a limiter.
type openGate struct{}

func releaseNothing() {}

func (openGate) Acquire(context.Context, *url.URL) (func(), error) { return releaseNothing, nil }

var benchPage = strings.Repeat("<p>polite crawling</p>\n", 100) // ~2.3 KB

func benchServer(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, benchPage)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkGet compares Client.Get (robots allow-all, cached; gate without
// limits) with a plain http.Client sending the same request with the same
// headers and reading the body the same way.
//
// impl=fetch-pacer is Client.Get through a HostGate without a gap: what a
// Pacer gate's start check (fetch.Pacer) costs per request.
func BenchmarkGet(b *testing.B) {
	b.Run("impl=fetch", func(b *testing.B) { benchGet(b, openGate{}) })
	b.Run("impl=fetch-pacer", func(b *testing.B) { benchGet(b, &fetch.HostGate{Gap: -1}) })
	b.Run("impl=plain", func(b *testing.B) {
		srv := benchServer(b)
		base := &http.Transport{MaxIdleConnsPerHost: 4}
		b.Cleanup(base.CloseIdleConnections)
		hc := &http.Client{Transport: base}
		ctx := context.Background()
		target := srv.URL + "/page"
		get := func() ([]byte, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
			if err != nil {
				return nil, err
			}
			req.Header.Set("User-Agent", testUA)
			req.Header.Set("X-AGENT", "2-UA")
			resp, err := hc.Do(req)
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			return io.ReadAll(io.LimitReader(resp.Body, fetch.DefaultMaxBodyBytes+1))
		}
		if _, err := get(); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			body, err := get()
			if err != nil || len(body) != len(benchPage) {
				b.Fatal(err)
			}
		}
	})
}

func benchGet(b *testing.B, gate fetch.Gate) {
	srv := benchServer(b)
	base := &http.Transport{MaxIdleConnsPerHost: 4}
	b.Cleanup(base.CloseIdleConnections)
	c := &fetch.Client{
		UserAgent: testUA,
		Header:    http.Header{"X-AGENT": {"2-UA"}},
		Gate:      gate,
		Transport: base,
	}
	c.Robots = &robots.Cache{Client: &http.Client{Transport: c.PoliteTransport()}}
	ctx := context.Background()
	target := srv.URL + "/page"
	if _, err := c.Get(ctx, target); err != nil { // warm robots.txt and the connection
		b.Fatal(err)
	}
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		res, err := c.Get(ctx, target)
		if err != nil || len(res.Body) != len(benchPage) {
			b.Fatal(err)
		}
	}
}

// cannedTransport answers every request in memory, so BenchmarkOverhead
// measures the clients' own CPU and allocations without a network stack.
type cannedTransport struct{}

func (cannedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	body := benchPage
	if req.URL.Path == "/robots.txt" {
		body = "User-agent: *\nAllow: /\n"
	}
	return &http.Response{
		StatusCode:    200,
		Header:        http.Header{"Content-Type": {"text/html; charset=utf-8"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}

func BenchmarkOverhead(b *testing.B) {
	const target = "http://bench.test/page"
	b.Run("impl=fetch", func(b *testing.B) {
		c := &fetch.Client{UserAgent: testUA, Header: http.Header{"X-AGENT": {"2-UA"}}, Gate: openGate{}, Transport: cannedTransport{}}
		ctx := context.Background()
		if _, err := c.Get(ctx, target); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			if _, err := c.Get(ctx, target); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=plain", func(b *testing.B) {
		hc := &http.Client{Transport: cannedTransport{}}
		ctx := context.Background()
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set("User-Agent", testUA)
			req.Header.Set("X-AGENT", "2-UA")
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadAll(io.LimitReader(resp.Body, fetch.DefaultMaxBodyBytes+1)); err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
	})
}

// reportCPU starts measuring process CPU time; the returned func reports it
// per op as cpu-ns/op.
func reportCPU(b *testing.B) func() {
	start, ok := cpuTime()
	return func() {
		if end, ok2 := cpuTime(); ok && ok2 && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// BenchmarkGetLogger measures Get with no Logger and with one whose handler
// is disabled, on a plain page (path=page) and on calls that reach every
// event (path=events: a retry, a robots.txt refusal, a redirect loop), with
// an in-memory transport so only fetch's own work is measured.
func BenchmarkGetLogger(b *testing.B) {
	loggers := []struct {
		name string
		l    *slog.Logger
	}{{"nil", nil}, {"disabled", slog.New(slog.DiscardHandler)}}
	for _, lg := range loggers {
		b.Run("path=page/log="+lg.name, func(b *testing.B) {
			c := &fetch.Client{UserAgent: testUA, Gate: openGate{}, Transport: cannedTransport{}, Logger: lg.l}
			ctx := context.Background()
			if _, err := c.Get(ctx, "http://bench.test/page"); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Get(ctx, "http://bench.test/page"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, lg := range loggers {
		b.Run("path=events/log="+lg.name, func(b *testing.B) {
			c := &fetch.Client{UserAgent: testUA, Gate: openGate{}, Transport: &scriptedTransport{},
				Slowdown: &backoff.Slowdown{}, Logger: lg.l}
			eventfulGets(c)
			b.ReportAllocs()
			for b.Loop() {
				eventfulGets(c)
			}
		})
	}
}
