package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/testsite"
)

// page is a small HTML page titled title that links to links.
func page(title string, links ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><html><head><title>%s</title><meta name=\"description\" content=\"About %s\"></head><body><h1>%s</h1><p>Some words about %s.</p>",
		title, title, title, title)
	for _, l := range links {
		fmt.Fprintf(&b, `<a href="%s">%s</a> `, l, l)
	}
	b.WriteString("</body></html>")
	return b.String()
}

// resolveFlags maps every site of n (and each name in twins, to the site
// of the host it is the twin of) with the programs' -resolve flag.
func resolveFlags(n *testsite.Network, twins map[string]string) []string {
	var entries []string
	for k, addr := range n.Resolve() {
		entries = append(entries, k+":"+addr)
	}
	for twin, host := range twins {
		entries = append(entries, twin+":80:"+n.Site(host).Addr())
	}
	slices.Sort(entries) // stable command lines in failure messages
	var args []string
	for _, e := range entries {
		args = append(args, "-resolve", e)
	}
	return args
}

// byArrival returns reqs sorted by kernel arrival time, or skips the test
// where the platform cannot tell it.
func byArrival(t *testing.T, reqs []testsite.Request) []testsite.Request {
	t.Helper()
	for _, r := range reqs {
		if r.Arrived.IsZero() {
			if runtime.GOOS == "linux" {
				t.Fatalf("%s has no kernel arrival time", r.Path)
			}
			t.Skipf("kernel receive times are read on Linux only, not %s", runtime.GOOS)
		}
	}
	out := slices.Clone(reqs)
	slices.SortStableFunc(out, func(a, b testsite.Request) int { return a.Arrived.Compare(b.Arrived) })
	return out
}

// assertGaps checks that requests reached the site at least gap apart,
// less tol (at most gap/5); it returns the smallest gap seen (and logs between which
// requests). Never an upper bound: a loaded machine may only make a
// crawler slower.
func assertGaps(t *testing.T, reqs []testsite.Request, gap, tol time.Duration) time.Duration {
	t.Helper()
	// However loaded the machine, the check keeps most of its teeth: the
	// tolerance is at most a fifth of the gap.
	tol = min(tol, gap/5)
	at := byArrival(t, reqs)
	least, pair := time.Duration(1<<63-1), ""
	for k := 1; k < len(at); k++ {
		d := at[k].Arrived.Sub(at[k-1].Arrived)
		if d < least {
			least, pair = d, at[k-1].Host+at[k-1].Path+" -> "+at[k].Host+at[k].Path
		}
		assert.GreaterOrEqual(t, d, gap-tol, "%s then %s reached the site %v apart, promised at least %v (tolerance %v)",
			at[k-1].Path, at[k].Path, d, gap, tol)
	}
	if len(at) > 1 {
		t.Logf("smallest gap %v (promise %v, tolerance %v): %s", least, gap, tol, pair)
	}
	return least
}

var (
	tolOnce sync.Once
	tolVal  time.Duration
)

// gapTolerance is how much earlier than the gap a request may reach a
// site without the crawler having broken its promise, measured: a
// crawler's gap is between the moments it hands requests to the kernel,
// and a site sees them after the loopback's transit, which varies. It is
// 5 ms plus twice the largest transit of 20 requests this process sends
// on fresh connections (timed from just before the write to the kernel's
// receive stamp) — a few milliseconds on an idle machine, more under load.
func gapTolerance(t *testing.T) time.Duration {
	tolOnce.Do(func() {
		s := testsite.NewNetwork(t, testsite.Loopback).Add("")
		s.HTML("/", "ok")
		var worst time.Duration
		for i := range 20 {
			c, err := net.Dial("tcp", s.Addr())
			if err != nil {
				continue
			}
			req := fmt.Sprintf("GET /?probe=%d HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", i, s.Addr())
			sent := time.Now()
			_, _ = io.WriteString(c, req)
			_, _ = io.Copy(io.Discard, c)
			c.Close()
			for _, r := range s.Requests() {
				if r.Path == fmt.Sprintf("/?probe=%d", i) && !r.Arrived.IsZero() {
					worst = max(worst, r.Arrived.Sub(sent))
				}
			}
		}
		tolVal = 5*time.Millisecond + 2*worst
	})
	t.Logf("gap tolerance %v (measured)", tolVal)
	return tolVal
}

// paths are the request URIs of reqs, in order.
func paths(reqs []testsite.Request) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.Path
	}
	return out
}

// assertNever checks that no request of reqs went to a path with prefix.
func assertNever(t *testing.T, reqs []testsite.Request, prefix string) {
	t.Helper()
	for _, r := range reqs {
		assert.False(t, strings.HasPrefix(r.Path, prefix), "%s was requested (%s %s): robots.txt disallows %s*", r.Path, r.Method, r.Host, prefix)
	}
}

// assertIdentity checks every request's method and user agent, and with
// xAgent set its X-AGENT header.
func assertIdentity(t *testing.T, reqs []testsite.Request, ua, xAgent string) {
	t.Helper()
	require.NotEmpty(t, reqs)
	for _, r := range reqs {
		assert.Contains(t, []string{http.MethodGet, http.MethodHead}, r.Method, r.Path)
		assert.Equal(t, []string{ua}, r.Header.Values("User-Agent"), "User-Agent of %s", r.Path)
		if xAgent != "" {
			assert.Equal(t, []string{xAgent}, r.Header.Values("X-Agent"), "X-AGENT of %s", r.Path)
		}
	}
}

// writeFile writes body to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

// httpClient does not follow redirects and never uses a proxy, so a test
// talks to the server it names.
var httpClient = &http.Client{
	Transport:     &http.Transport{Proxy: nil},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       60 * time.Second,
}

// get fetches u and returns the response with its body read.
func get(t *testing.T, u string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	require.NoError(t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	if h := header.Get("Host"); h != "" {
		req.Host = h
	}
	return do(t, req)
}

// postForm posts form to u.
func postForm(t *testing.T, u string, form url.Values, header http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, u, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header[k] = v
	}
	if h := header.Get("Host"); h != "" {
		req.Host = h
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := httpClient.Do(req)
	require.NoError(t, err, "%s %s", req.Method, req.URL)
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	require.NoError(t, err)
	return resp, string(b)
}
