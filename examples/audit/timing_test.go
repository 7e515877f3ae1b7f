package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/internal/testsite"
)

// Timing promises, exact: each test runs in a synctest bubble against in-memory sites, so the request
// times the server records are fake time and the assertions hold to the nanosecond.

// flatSite serves / linking to n pages /p0../p(n-1), each answering after delay.
func flatSite(s *testsite.Site, n int, delay time.Duration) {
	var links []string
	for i := range n {
		p := fmt.Sprintf("/p%d", i)
		links = append(links, p)
		s.Route(p, testsite.Response{Body: page(fmt.Sprint("P", i)), ContentType: "text/html", Delay: delay})
	}
	s.HTML("/", page("Home", links...))
}

// maxOverlap is the most requests of reqs in flight at once, from the server's start/end times.
func maxOverlap(reqs []testsite.Request) int {
	best := 0
	for _, a := range reqs {
		n := 0
		for _, b := range reqs {
			if !b.Time.After(a.Time) && (b.End.IsZero() || b.End.After(a.Time)) {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}

func TestDefaultsFourInFlightAndGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, e := memNet(t)
		s := n.Add("shop.test")
		s.Robots("User-agent: *\nDisallow:\n")
		flatSite(s, 30, 2*time.Second)
		r := audit(t, e, "http://shop.test/") // every setting at its default
		require.Equal(t, crawl.ExitOK, r.code, r)

		reqs := n.Requests()
		require.Len(t, reqs, 33) // robots.txt, /, 30 pages, llms.txt
		assert.Equal(t, 4, n.MaxInFlight(), "four requests in flight")
		for i := 1; i < len(reqs); i++ {
			assert.GreaterOrEqual(t, reqs[i].Time.Sub(reqs[i-1].Time), 300*time.Millisecond, "gap before %s", reqs[i].Path)
		}
	})
}

func TestCrawlDelayIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, e := memNet(t)
		s := n.Add("shop.test")
		s.Robots("User-agent: *\nCrawl-delay: 10\nDisallow:\n\nUser-agent: CrawlCove-Crawler\nCrawl-delay: 30\nDisallow:\n")
		flatSite(s, 10, 0)
		r := audit(t, e, "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		reqs := n.Requests()
		require.Len(t, reqs, 13)
		// Instant pages: every start is a 300 ms gap (or two, where the www twin's failed robots.txt
		// request took one) after the previous one, never 10 or 30 s.
		for i := 2; i < len(reqs); i++ {
			assert.Equal(t, 300*time.Millisecond, reqs[i].Time.Sub(reqs[i-1].Time), "before %s", reqs[i].Path)
		}
	})
}

func TestGapAndConcurrencyFlags(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, e := memNet(t)
		s := n.Add("shop.test")
		s.Robots("")
		flatSite(s, 40, 4500*time.Millisecond)
		r := audit(t, e, "-concurrency", "16", "-gap", "1s", "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		assert.Equal(t, 5, n.MaxInFlight(), "a 4.5 s answer with 1 s between starts overlaps 5 requests")
		reqs := n.Requests()
		for i := 1; i < len(reqs); i++ {
			assert.GreaterOrEqual(t, reqs[i].Time.Sub(reqs[i-1].Time), time.Second)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		n, e := memNet(t)
		s := n.Add("shop.test")
		s.Robots("")
		flatSite(s, 40, 5*time.Second)
		r := audit(t, e, "-concurrency", "16", "-gap", "0", "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		assert.Equal(t, 16, n.MaxInFlight())
	})
}

func Test429ScheduleAndLastingSlowdown(t *testing.T) {
	cases := []struct {
		name       string
		retryAfter string
		waits      []time.Duration // between the attempts of /p0 as the server saw them
	}{
		// Without Retry-After the waits would be 0.5 s and 1 s, but the slowdown tripped by the first
		// 429 already spaces every start 3 s apart, the retries included.
		{"exponential", "", []time.Duration{3 * time.Second, 3 * time.Second}},
		{"Retry-After", "7", []time.Duration{7 * time.Second, 7 * time.Second}},
		{"capped at 30s", "120", []time.Duration{30 * time.Second, 30 * time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n, e := memNet(t)
				s := n.Add("shop.test")
				s.Robots("")
				flatSite(s, 12, 2*time.Second)
				h := http.Header{}
				if tc.retryAfter != "" {
					h.Set("Retry-After", tc.retryAfter)
				}
				s.Route("/p0", testsite.Response{Status: http.StatusTooManyRequests, Header: h}) // always 429
				var progress bytes.Buffer
				e.Terminal = func(io.Writer) bool { return true }
				var out bytes.Buffer
				code := runEnv(t.Context(), []string{"-db", filepath.Join(t.TempDir(), "a.db"), "http://shop.test/"}, &out, &progress, e)
				require.Equal(t, crawl.ExitOK, code, progress.String())

				var p0 []testsite.Request
				for _, q := range s.Requests() {
					if q.Path == "/p0" {
						p0 = append(p0, q)
					}
				}
				require.Len(t, p0, 3, "a 429 is retried at most twice")
				assert.Equal(t, tc.waits[0], p0[1].Time.Sub(p0[0].End))
				assert.Equal(t, tc.waits[1], p0[2].Time.Sub(p0[1].End))

				// From the first 429 on: one request at a time, starts at least 3 s apart, to the end.
				var after []testsite.Request
				for _, q := range n.Requests() {
					if !q.Time.Before(p0[0].End) {
						after = append(after, q)
					}
				}
				require.Greater(t, len(after), 10)
				assert.Equal(t, 1, maxOverlap(after), "one request at a time after the 429")
				for i := 1; i < len(after); i++ {
					assert.GreaterOrEqual(t, after[i].Time.Sub(after[i-1].Time), 3*time.Second, "before %s", after[i].Path)
				}
				assert.Contains(t, progress.String(), "slowed down after 429")
				assert.Contains(t, out.String(), "Slowed down after 429 from http://shop.test/p0")
			})
		})
	}
}

func Test5xxRetriedWithoutSlowdown(t *testing.T) {
	attempts := func(s *testsite.Site, path string) []testsite.Request {
		var out []testsite.Request
		for _, q := range s.Requests() {
			if q.Path == path {
				out = append(out, q)
			}
		}
		return out
	}
	t.Run("schedule", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			n, e := memNet(t)
			s := n.Add("shop.test")
			s.Robots("")
			flatSite(s, 30, 0)
			s.Route("/p0", testsite.Response{Status: 503}, testsite.Response{Status: 502}, testsite.Response{Status: 504})
			r := audit(t, e, "http://shop.test/")
			require.Equal(t, crawl.ExitOK, r.code, r)
			p0 := attempts(s, "/p0")
			require.Len(t, p0, 3, "503, 502, 504: retried twice")
			// 0.5 s then 1 s, plus at most one 300 ms gap: the gate admits waiting requests in arrival
			// order, so a retry is not overtaken by pages handed out after it began to wait.
			w1, w2 := p0[1].Time.Sub(p0[0].End), p0[2].Time.Sub(p0[1].End)
			t.Logf("waits before the retries: %v, %v", w1, w2)
			assert.GreaterOrEqual(t, w1, 500*time.Millisecond)
			assert.LessOrEqual(t, w1, 800*time.Millisecond)
			assert.GreaterOrEqual(t, w2, time.Second)
			assert.LessOrEqual(t, w2, 1300*time.Millisecond)
			reqs := n.Requests()
			for i := 2; i < len(reqs); i++ {
				assert.LessOrEqual(t, reqs[i].Time.Sub(reqs[i-1].Time), 600*time.Millisecond, "no 3 s gaps: before %s", reqs[i].Path)
			}
			assert.Equal(t, []string{""}, r.strs(t, `SELECT COALESCE(slowed_at, '') FROM crawls`))
			assert.Equal(t, []string{"3"}, r.strs(t, `SELECT attempts FROM pages WHERE url = 'http://shop.test/p0'`))
			assert.Equal(t, 1, r.kinds(t)[findings.KindBrokenLink])
		})
	})
	t.Run("still four in flight", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			n, e := memNet(t)
			s := n.Add("shop.test")
			s.Robots("")
			flatSite(s, 30, 2*time.Second)
			s.Route("/p0", testsite.Response{Status: 503})
			r := audit(t, e, "http://shop.test/")
			require.Equal(t, crawl.ExitOK, r.code, r)
			p0 := attempts(s, "/p0")
			require.Len(t, p0, 3)
			var after []testsite.Request
			for _, q := range n.Requests() {
				if !q.Time.Before(p0[0].End) {
					after = append(after, q)
				}
			}
			assert.Equal(t, 4, maxOverlap(after), "after the 503s: still four in flight")
		})
	})
}

func TestTimeout(t *testing.T) {
	t.Run("default 15s", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			n, e := memNet(t)
			s := n.Add("shop.test")
			s.Robots("")
			s.HTML("/", page("Home", "/slow", "/ok"))
			s.HTML("/ok", page("OK"))
			s.Route("/slow", testsite.Response{Body: "late", Delay: time.Minute})
			r := audit(t, e, "http://shop.test/")
			require.Equal(t, crawl.ExitOK, r.code, r)
			var slow testsite.Request
			for _, q := range s.Requests() {
				if q.Path == "/slow" {
					slow = q
				}
			}
			assert.Equal(t, 15*time.Second, slow.End.Sub(slow.Time), "the request is given up after fifteen seconds")
			assert.Equal(t, 1, s.Count("/slow"), "a timeout is not retried")
			assert.Equal(t, []string{"timeout"}, r.strs(t, `SELECT error_kind FROM pages WHERE url = 'http://shop.test/slow'`))
			assert.Equal(t, 1, r.kinds(t)[findings.KindBrokenLink])
		})
	})
	t.Run("-timeout 2s, body dripping", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			n, e := memNet(t)
			s := n.Add("shop.test")
			s.Robots("")
			s.HTML("/", page("Home", "/drip"))
			s.Route("/drip", testsite.Response{Body: page("Drip"), ContentType: "text/html", Drip: 100 * time.Millisecond})
			r := audit(t, e, "-timeout", "2s", "http://shop.test/")
			require.Equal(t, crawl.ExitOK, r.code, r)
			var drip testsite.Request
			for _, q := range s.Requests() {
				if q.Path == "/drip" {
					drip = q
				}
			}
			assert.Equal(t, 2*time.Second, drip.End.Sub(drip.Time))
			assert.Equal(t, []string{"timeout"}, r.strs(t, `SELECT error_kind FROM pages WHERE url = 'http://shop.test/drip'`))
		})
	})
}

func TestDefaultsPageLimitAndGapBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, e := memNet(t)
		s := n.Add("shop.test")
		s.Robots("")
		flatSite(s, 600, 0)
		start := time.Now()
		r := audit(t, e, "http://shop.test/")
		elapsed := time.Since(start)
		require.Equal(t, crawl.ExitOK, r.code, r)
		pages := 0
		for _, p := range s.Paths() {
			if p != "/robots.txt" && p != "/llms.txt" {
				pages++
			}
		}
		assert.Equal(t, 500, pages, "500 pages by default")
		assert.Equal(t, 500, r.int(t, `SELECT COUNT(*) FROM pages`))
		bound := 500 * 300 * time.Millisecond
		t.Logf("500 instant pages with the defaults took %v of fake time: %.2f%% over 500 x 300 ms", elapsed,
			100*(float64(elapsed)/float64(bound)-1))
		assert.InDelta(t, float64(bound), float64(elapsed), 0.03*float64(bound), "within 3%% of the gap bound")
	})
}

func TestRobotsTimeoutIsOffLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, e := memNet(t)
		s := n.Add("shop.test")
		s.Route("/robots.txt", testsite.Response{Body: "User-agent: *\nDisallow:\n", Delay: time.Minute})
		s.HTML("/", page("Home"))
		start := time.Now()
		r := audit(t, e, "http://shop.test/")
		require.Equal(t, crawl.ExitOffLimits, r.code, r)
		assert.Equal(t, 15*time.Second, time.Since(start), "robots.txt is given up after the timeout too")
		assert.Equal(t, []string{"/robots.txt"}, s.Paths())
		assert.Contains(t, r.stderr, "http://shop.test/robots.txt could not be fetched")
	})
}

// "One 429 anywhere in a run then slows the whole crawl": a 429 on the twin's robots.txt counts too.
func TestTwinRobots429SlowsTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, e := memNet(t)
		s, www := n.Add("shop.test"), n.Add("www.shop.test")
		s.Robots("")
		www.Status("/robots.txt", http.StatusTooManyRequests)
		flatSite(s, 6, 0)
		r := audit(t, e, "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		reqs := n.Requests()
		require.Len(t, reqs, 10, "both robots.txt, /, 6 pages, llms.txt")
		assert.Equal(t, "www.shop.test /robots.txt", reqs[1].Site+" "+reqs[1].Path)
		for i := 2; i < len(reqs); i++ {
			assert.GreaterOrEqual(t, reqs[i].Time.Sub(reqs[i-1].Time), 3*time.Second, "before %s", reqs[i].Path)
		}
		assert.Equal(t, []string{"http://www.shop.test/robots.txt"}, r.strs(t, `SELECT slowed_by FROM crawls`))
		assert.Equal(t, 1, r.kinds(t)[findings.KindSlowedDown])
	})
}

// response_ms is the server's time for a page, what it took to answer the final request: never the time
// the crawler waited at the gate (2 s between requests here), for robots.txt, or between retries.
func TestResponseTimeIsTheServersTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, e := memNet(t)
		s := n.Add("shop.test")
		s.Robots("")
		s.Route("/", testsite.Response{Body: page("Home", "/a", "/b"), ContentType: "text/html", Delay: 150 * time.Millisecond})
		s.Route("/a", testsite.Response{Body: page("A"), ContentType: "text/html", Delay: 40 * time.Millisecond})
		s.Route("/b", testsite.Response{Status: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": {"1"}}},
			testsite.Response{Body: page("B"), ContentType: "text/html", Delay: 70 * time.Millisecond})
		r := audit(t, e, "-gap", "2s", "-concurrency", "1", "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		assert.Equal(t, []string{
			"http://shop.test/ 150.0 150.0",
			"http://shop.test/a 40.0 40.0",
			"http://shop.test/b 70.0 70.0",
		}, r.strs(t, `SELECT url || ' ' || response_ms || ' ' || ttfb_ms FROM pages ORDER BY url`))
		assert.Equal(t, 2, s.Count("/b"), "retried once")
	})
}
