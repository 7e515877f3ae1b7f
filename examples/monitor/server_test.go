package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/monitor/internal/card"
	"github.com/politecrawl/polite/examples/monitor/internal/store"
	"github.com/politecrawl/polite/examples/monitor/internal/web"
	"github.com/politecrawl/polite/internal/testsite"
)

// newTestServer serves h's database through the handlers the real command
// uses, with h's clock and scripted network.
func newTestServer(t *testing.T, h *harness, mods ...func(*options)) *web.Server {
	t.Helper()
	st, err := store.Open(context.Background(), h.db, store.CreateIfMissing)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	o := options{db: h.db, userAgent: defaultUserAgent, timeout: 5 * time.Second, gap: 0, parallel: 4,
		checkRate: 10, checkBurst: 3, addr: "127.0.0.1:0"}
	for _, m := range mods {
		m(&o)
	}
	m, err := newMonitor(st, o, h.e)
	require.NoError(t, err)
	t.Cleanup(m.close)
	s, err := newServer(m, io.Discard)
	require.NoError(t, err)
	return s
}

type response struct {
	code   int
	header http.Header
	body   string
}

// do sends one request to the handler, from remote (ip:port).
func do(t *testing.T, s *web.Server, method, target string, form url.Values, hdr ...string) response {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequest(method, target, body)
	req.RemoteAddr = "127.0.0.1:40000"
	req.Host = "127.0.0.1:8080"
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "RemoteAddr" {
			req.RemoteAddr = hdr[i+1]
			continue
		}
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	return response{rec.Code, rec.Header(), rec.Body.String()}
}

// demoSites prepares a database by real runs: a page that changes, a page
// robots.txt blocks, a page with a hostile title, a broken page.
func demoSites(t *testing.T, h *harness) *testsite.Site {
	s := h.net.Add("shop.test")
	s.Robots("User-agent: 2-UAcomBot\nDisallow: /private/\n")
	s.Route("/pricing",
		testsite.Response{ContentType: "text/html", Body: htmlPage("Pricing", "Plans start at ten euros a month.")},
		testsite.Response{ContentType: "text/html", Body: htmlPage("Pricing plans", "Plans start at twelve euros a month, billed yearly.")})
	s.HTML("/private/report", htmlPage("Private", "secret"))
	s.HTML("/evil", htmlPage(`<script>alert("x")</script>`, `<img src=x onerror=alert(1)> text`))
	s.Route("/broken", testsite.Response{Status: http.StatusInternalServerError, Body: "oops"})
	v := &validatingSite{}
	v.set(htmlPage("About us", "We sell things. "+strings.Repeat("More about us. ", 300)), `"a1"`, "Sun, 29 Nov 2026 09:00:00 GMT")
	s.Handle("/about", v.handle)
	b := h.net.Add("blog.test")
	b.Robots("User-agent: *\nAllow: /\n")
	b.HTML("/", htmlPage("Blog", "Hello"))
	h.track("http://shop.test/pricing", "http://shop.test/private/report", "http://shop.test/evil", "http://shop.test/broken", "http://shop.test/about", "http://blog.test/")
	h.run()
	h.clk.Advance(6*time.Hour + maxJitter)
	h.run()
	return s
}

func TestSecurityHeadersOnEveryRoute(t *testing.T) {
	h := newHarness(t)
	s := newTestServer(t, h)
	for _, target := range []string{"/", "/check", "/page?url=x", "/api/pages", "/static/style.css", "/nope"} {
		r := do(t, s, "GET", target, nil)
		csp := r.header.Get("Content-Security-Policy")
		assert.Contains(t, csp, "script-src 'self'", target)
		assert.NotContains(t, csp, "unsafe-inline", target)
		assert.Contains(t, csp, "frame-ancestors 'none'", target)
		assert.Equal(t, "nosniff", r.header.Get("X-Content-Type-Options"), target)
	}
}

func TestDashboardShowsPagesBannerAndEscapesTitles(t *testing.T) {
	h := newHarness(t)
	demoSites(t, h)
	s := newTestServer(t, h)
	r := do(t, s, "GET", "/", nil)
	require.Equal(t, http.StatusOK, r.code)
	assert.Equal(t, "text/html; charset=utf-8", r.header.Get("Content-Type"))
	assert.Contains(t, r.body, "Latest check was skipped — robots.txt disallows 2-UAcomBot on this path.")
	assert.Contains(t, r.body, `disallowed by &#34;Disallow: /private/&#34; (line 2, user-agent 2-UAcomBot)`)
	assert.Contains(t, r.body, `<a href="https://2-ua.com/support/robots" rel="noopener">Why? How our bot respects robots.txt</a>`)
	assert.Contains(t, r.body, `[medium] title &#34;Pricing&#34; → &#34;Pricing plans&#34;; meta_description &#34;About Pricing&#34; → &#34;About Pricing plans&#34;; h1 &#34;Pricing&#34; → &#34;Pricing plans&#34;; text &#43;5 −2 words`, "what changed last")
	assert.Contains(t, r.body, `HTTP 500 (server error)`)
	assert.Contains(t, r.body, `href="/page?url=http%3a%2f%2fshop.test%2fpricing"`)
	assert.NotContains(t, r.body, "<script>alert", "a hostile title never becomes markup")
	assert.NotContains(t, r.body, "<img src=x")
	assert.Equal(t, 1, strings.Count(r.body, "<script"), "only the page's own script file")
	assert.Contains(t, r.body, `<script src="/static/app.js" defer></script>`)

	// The hostile title, on the page's history: text, not markup.
	r = do(t, s, "GET", "/page?url="+url.QueryEscape("http://shop.test/evil"), nil)
	require.Equal(t, http.StatusOK, r.code)
	assert.Contains(t, r.body, `“&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;”`)
	assert.NotContains(t, r.body, "<script>alert")
}

func TestDashboardFiltersAndPaginates(t *testing.T) {
	h := newHarness(t)
	demoSites(t, h)
	st := openTestStore(t, h.db)
	var many []string
	for i := range 60 {
		many = append(many, fmt.Sprintf("https://many.test/p%03d", i))
	}
	require.NoError(t, st.Track(context.Background(), many, 6*time.Hour, h.clk.Now()))
	s := newTestServer(t, h)

	r := do(t, s, "GET", "/?outcome=blocked", nil)
	require.Equal(t, http.StatusOK, r.code)
	assert.Contains(t, r.body, "1 matching")
	assert.Contains(t, r.body, "shop.test/private/report")
	assert.NotContains(t, r.body, "shop.test/pricing</a>")

	r = do(t, s, "GET", "/?host="+url.QueryEscape("http://blog.test"), nil)
	assert.Contains(t, r.body, "1 matching")
	assert.Contains(t, r.body, "http://blog.test/</a>")

	r = do(t, s, "GET", "/?host="+url.QueryEscape("https://many.test"), nil)
	assert.Contains(t, r.body, "60 matching · page 1 of 2")
	assert.Contains(t, r.body, "https://many.test/p049</a>")
	assert.NotContains(t, r.body, "https://many.test/p050</a>")
	assert.Contains(t, r.body, `href="/?host=https%3A%2F%2Fmany.test&amp;page=2"`)
	r = do(t, s, "GET", "/?host="+url.QueryEscape("https://many.test")+"&page=2", nil)
	assert.Contains(t, r.body, "https://many.test/p059</a>")
	assert.NotContains(t, r.body, "https://many.test/p049</a>")

	r = do(t, s, "GET", "/?outcome=new", nil)
	assert.Contains(t, r.body, "60 matching")

	r = do(t, s, "GET", "/?outcome=%3Cb%3E", nil)
	assert.Equal(t, http.StatusBadRequest, r.code)
	assert.Contains(t, r.body, "unknown outcome &#34;&lt;b&gt;&#34;")
}

func TestHistoryShowsFieldChangesAndWordDiff(t *testing.T) {
	h := newHarness(t)
	demoSites(t, h)
	s := newTestServer(t, h)
	r := do(t, s, "GET", "/page?url="+url.QueryEscape("http://shop.test/pricing"), nil)
	require.Equal(t, http.StatusOK, r.code)
	assert.Contains(t, r.body, `<th>title <span class="sev">medium</span></th><td><span class="old">Pricing</span> → <span class="new">Pricing plans</span></td>`)
	assert.Contains(t, r.body, `<div class="wd-sum">+5 −2 words</div>`)
	assert.Contains(t, r.body, `Plans start at <del>ten</del><ins>twelve</ins> euros a <del>month.</del><ins>month, billed yearly.</ins>`)
	assert.Contains(t, r.body, "first snapshot")
	assert.NotContains(t, r.body, "content_hash")

	r = do(t, s, "GET", "/page?url="+url.QueryEscape("http://shop.test/private/report"), nil)
	assert.Contains(t, r.body, "Latest check was skipped — robots.txt disallows 2-UAcomBot on this path.")

	r = do(t, s, "GET", "/page?url="+url.QueryEscape("http://nowhere.test/"), nil)
	assert.Equal(t, http.StatusNotFound, r.code)
	assert.Contains(t, r.body, "not tracked: http://nowhere.test/")
}

func TestFreeToolCardAndBanner(t *testing.T) {
	h := newHarness(t)
	site := demoSites(t, h)
	s := newTestServer(t, h)
	r := do(t, s, "GET", "/check", nil)
	require.Equal(t, http.StatusOK, r.code)
	assert.Contains(t, r.body, `<form class="check" method="post" action="/check">`)

	before := site.Count("/pricing")
	r = do(t, s, "POST", "/check", url.Values{"url": {"http://shop.test/pricing"}})
	require.Equal(t, http.StatusOK, r.code)
	assert.Contains(t, r.body, `<article class="card" id="result">`)
	assert.Contains(t, r.body, `<dt>Title</dt><dd class="title">Pricing plans</dd>`)
	assert.Contains(t, r.body, `<dt>Canonical</dt><dd>http://shop.test/canonical</dd>`)
	assert.Contains(t, r.body, `<input type="hidden" name="url" value="http://shop.test/pricing">`, "the Track button")
	assert.Equal(t, before+1, site.Count("/pricing"))

	r = do(t, s, "POST", "/check", url.Values{"url": {"http://shop.test/private/new"}})
	require.Equal(t, http.StatusOK, r.code)
	assert.NotContains(t, r.body, `class="card"`, "the card is replaced by the banner")
	assert.Contains(t, r.body, "Latest check was skipped — robots.txt disallows 2-UAcomBot on this path.")
	assert.Contains(t, r.body, `<a href="https://2-ua.com/support/robots" rel="noopener">Read how our bot respects robots.txt</a>`)
	assert.Equal(t, 0, site.Count("/private/new"))

	pages, err := openTestStore(t, h.db).Pages(context.Background())
	require.NoError(t, err)
	assert.Len(t, pages, 6, "checking tracks nothing")

	r = do(t, s, "POST", "/check", url.Values{"url": {"ftp://x/"}})
	assert.Equal(t, http.StatusBadRequest, r.code)
	assert.Contains(t, r.body, "http:// or https://")
}

func TestFreeToolRefusesInternalAddressOnTheCard(t *testing.T) {
	h := newHarness(t)
	w := newSSRFWorld(t)
	w.set("admin.test", "192.168.0.1")
	h.e = w.env()
	s := newTestServer(t, h)
	r := do(t, s, "POST", "/check", url.Values{"url": {"http://admin.test/"}})
	require.Equal(t, http.StatusOK, r.code)
	assert.Contains(t, r.body, "refused: admin.test resolves to 192.168.0.1, a private address (192.168.0.0/16)")
	assert.Empty(t, w.Attempts())

	r = do(t, s, "POST", "/track", url.Values{"url": {"http://admin.test/"}})
	assert.Equal(t, http.StatusBadRequest, r.code)
	assert.Contains(t, r.body, "refused: admin.test resolves to 192.168.0.1")
}

func TestTrackAndUntrackForms(t *testing.T) {
	h := newHarness(t)
	s := newTestServer(t, h)
	r := do(t, s, "POST", "/track", url.Values{"url": {"HTTPS://Shop.test/a#x"}, "interval": {"24h"}})
	require.Equal(t, http.StatusSeeOther, r.code)
	assert.Equal(t, "/?done=tracked", r.header.Get("Location"))
	r = do(t, s, "GET", r.header.Get("Location"), nil)
	assert.Contains(t, r.body, "Page tracked")
	st := openTestStore(t, h.db)
	p, ok, err := st.Page(context.Background(), "https://shop.test/a")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 24*time.Hour, p.Interval)

	for _, tc := range []struct{ url, interval, want string }{
		{"https://shop.test/b", "5h59m", "interval 5h59m is below the minimum of 6h"},
		{"https://shop.test/b", "soon", "interval &#34;soon&#34;: want a duration"},
		{"/relative", "6h", "bad URL"},
		{"", "6h", "no URL given"},
		{"http://user:pw@shop.test/", "6h", "user name or password"},
	} {
		r = do(t, s, "POST", "/track", url.Values{"url": {tc.url}, "interval": {tc.interval}})
		assert.Equal(t, http.StatusBadRequest, r.code, tc.url)
		assert.Contains(t, r.body, tc.want, tc.url)
	}
	_, ok, _ = st.Page(context.Background(), "https://shop.test/b")
	assert.False(t, ok)

	// Notices come from a fixed set: text in the URL is never shown.
	for _, q := range []string{"msg=" + url.QueryEscape("Re-enter your password at evil.example"), "done=" + url.QueryEscape("Re-enter your password at evil.example"), "msg=tracked"} {
		r = do(t, s, "GET", "/?"+q, nil)
		assert.Equal(t, http.StatusOK, r.code)
		assert.NotContains(t, r.body, "Re-enter", q)
		assert.NotContains(t, r.body, `class="flash ok"`, q)
	}

	r = do(t, s, "POST", "/untrack", url.Values{"url": {"https://shop.test/a"}})
	require.Equal(t, http.StatusSeeOther, r.code)
	_, ok, _ = st.Page(context.Background(), "https://shop.test/a")
	assert.False(t, ok)
	r = do(t, s, "POST", "/untrack", url.Values{"url": {"https://shop.test/a"}})
	assert.Equal(t, http.StatusNotFound, r.code)

	r = do(t, s, "GET", "/track", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, r.code)
}

func TestCrossOriginPostsAreRefused(t *testing.T) {
	h := newHarness(t)
	s := newTestServer(t, h)
	for _, hdr := range [][]string{
		{"Sec-Fetch-Site", "cross-site"},
		{"Origin", "https://evil.example"},
	} {
		for _, target := range []string{"/track", "/untrack", "/check", "/api/check", "/page/rules", "/page/check-now"} {
			r := do(t, s, "POST", target, url.Values{"url": {"https://shop.test/x"}}, hdr...)
			assert.Equal(t, http.StatusForbidden, r.code, "%s %v", target, hdr)
		}
	}
	pages, err := openTestStore(t, h.db).Pages(context.Background())
	require.NoError(t, err)
	assert.Empty(t, pages)
	// Same origin (a browser on the dashboard) and no browser at all (curl)
	// are fine.
	r := do(t, s, "POST", "/track", url.Values{"url": {"https://shop.test/x"}}, "Sec-Fetch-Site", "same-origin")
	assert.Equal(t, http.StatusSeeOther, r.code)
	r = do(t, s, "POST", "/track", url.Values{"url": {"https://shop.test/y"}})
	assert.Equal(t, http.StatusSeeOther, r.code)
}

func TestRequestBodiesAreCapped(t *testing.T) {
	h := newHarness(t)
	s := newTestServer(t, h)
	big := url.Values{"url": {"https://shop.test/" + strings.Repeat("a", web.MaxFormBytes)}}
	r := do(t, s, "POST", "/track", big)
	assert.Equal(t, http.StatusBadRequest, r.code)
	assert.Contains(t, r.body, "too large")
	req := httptest.NewRequest("POST", "/api/check", strings.NewReader(`{"url":"`+strings.Repeat("a", web.MaxFormBytes)+`"}`))
	req.Host = "127.0.0.1:8080"
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "too large")
}

func TestFreeToolIsRateLimitedPerClientIP(t *testing.T) {
	h := newHarness(t)
	site := h.site("a.test", "User-agent: *\nAllow: /\n", "/")
	s := newTestServer(t, h, func(o *options) { o.checkRate, o.checkBurst = 10, 3 })
	form := url.Values{"url": {"http://a.test/"}}
	for i := range 3 {
		r := do(t, s, "POST", "/api/check", form)
		require.Equal(t, http.StatusOK, r.code, "check %d", i+1)
	}
	r := do(t, s, "POST", "/api/check", form)
	assert.Equal(t, http.StatusTooManyRequests, r.code)
	// 10 a minute: a token every 6 s, less the time the three checks took.
	retry, err := strconv.Atoi(r.header.Get("Retry-After"))
	require.NoError(t, err)
	assert.True(t, retry >= 1 && retry <= 6, "Retry-After %d", retry)
	assert.Contains(t, r.body, "too many checks")
	r = do(t, s, "POST", "/check", form)
	assert.Equal(t, http.StatusTooManyRequests, r.code)
	assert.NotEmpty(t, r.header.Get("Retry-After"))
	assert.Equal(t, 3, site.Count("/"), "refused checks fetch nothing")

	// Another client has its own bucket.
	r = do(t, s, "POST", "/api/check", form, "RemoteAddr", "127.0.0.2:5000")
	assert.Equal(t, http.StatusOK, r.code)
}

func TestAPIPagesAndSnapshots(t *testing.T) {
	h := newHarness(t)
	demoSites(t, h)
	s := newTestServer(t, h)
	r := do(t, s, "GET", "/api/pages?outcome=blocked", nil)
	require.Equal(t, http.StatusOK, r.code)
	assert.Equal(t, "application/json; charset=utf-8", r.header.Get("Content-Type"))
	var list web.APIPageList
	require.NoError(t, json.Unmarshal([]byte(r.body), &list))
	require.Equal(t, 1, list.Total)
	p := list.Pages[0]
	assert.Equal(t, "http://shop.test/private/report", p.URL)
	assert.Equal(t, "http://shop.test", p.Host)
	assert.Equal(t, "blocked", p.LastOutcome)
	assert.Equal(t, "Latest check was skipped — robots.txt disallows 2-UAcomBot on this path.", p.Banner)
	assert.Equal(t, int64(21600), p.IntervalSeconds)

	r = do(t, s, "GET", "/api/pages", nil)
	require.NoError(t, json.Unmarshal([]byte(r.body), &list))
	assert.Equal(t, 6, list.Total)

	r = do(t, s, "GET", "/api/pages/"+url.PathEscape("http://shop.test/pricing")+"/snapshots", nil)
	require.Equal(t, http.StatusOK, r.code, r.body)
	var snaps struct {
		URL       string            `json:"url"`
		Total     int               `json:"total"`
		Snapshots []web.APISnapshot `json:"snapshots"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.body), &snaps))
	assert.Equal(t, "http://shop.test/pricing", snaps.URL)
	require.Equal(t, 2, snaps.Total)
	latest := snaps.Snapshots[0]
	assert.Equal(t, "Pricing plans", latest.Title)
	var text *web.APIChange
	for i, c := range latest.Changes {
		if c.Field == "text" {
			text = &latest.Changes[i]
		}
	}
	require.NotNil(t, text)
	assert.Equal(t, 5, text.Added)
	assert.Contains(t, text.Diff, web.APIDiffSeg{Op: "delete", Text: "ten"})
	assert.Contains(t, text.Diff, web.APIDiffSeg{Op: "insert", Text: "twelve"})
	assert.Empty(t, snaps.Snapshots[1].Changes)

	r = do(t, s, "GET", "/api/pages/"+url.PathEscape("http://nope.test/")+"/snapshots", nil)
	assert.Equal(t, http.StatusNotFound, r.code)
	r = do(t, s, "GET", "/api/pages?outcome=weird", nil)
	assert.Equal(t, http.StatusBadRequest, r.code)
}

func TestAPICheck(t *testing.T) {
	h := newHarness(t)
	demoSites(t, h)
	s := newTestServer(t, h)
	req := httptest.NewRequest("POST", "/api/check", strings.NewReader(`{"url": "http://shop.test/pricing"}`))
	req.Host = "127.0.0.1:8080"
	req.Header.Set("Content-Type", "application/json")
	req.RemoteAddr = "127.0.0.1:1"
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var c card.Card
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &c))
	assert.Equal(t, 200, c.Status)
	assert.Equal(t, "Pricing plans", c.Title)
	assert.False(t, c.Blocked)

	r := do(t, s, "POST", "/api/check", url.Values{"url": {"http://shop.test/private/x"}})
	require.Equal(t, http.StatusOK, r.code)
	c = card.Card{}
	require.NoError(t, json.Unmarshal([]byte(r.body), &c))
	assert.True(t, c.Blocked)
	assert.Equal(t, "https://2-ua.com/support/robots", c.PolicyURL)
	assert.Contains(t, c.RobotsRule, "Disallow: /private/")
	assert.Zero(t, c.Status)

	r = do(t, s, "POST", "/api/check", url.Values{"url": {"notaurl"}})
	assert.Equal(t, http.StatusBadRequest, r.code)
	r = do(t, s, "GET", "/api/check?url=http://shop.test/", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, r.code, "a check fetches: POST only")
}

func TestPolicyURLFromUserAgent(t *testing.T) {
	assert.Equal(t, "https://2-ua.com/support/robots", card.PolicyURLOf(defaultUserAgent))
	assert.Equal(t, "https://x.example/bot", card.PolicyURLOf("Mozilla/5.0 (compatible; XBot/2.0; +https://x.example/bot)"))
	assert.Equal(t, "https://2-ua.com/support/robots", card.PolicyURLOf("plain/1.0"))
}

// TestOnlyKnownHostNamesAreServed: a DNS-rebinding page (its name now
// pointing at 127.0.0.1) is refused, whatever route it asks for.
func TestOnlyKnownHostNamesAreServed(t *testing.T) {
	h := newHarness(t)
	s := newTestServer(t, h, func(o *options) { o.addr = "monitor.internal:8080" })
	for _, host := range []string{"rebind.evil.example", "rebind.evil.example:8080", "127.0.0.1.evil.example", "localhost.evil.example", ""} {
		for _, rq := range []struct{ method, target string }{{"GET", "/"}, {"GET", "/api/pages"}, {"POST", "/api/check"}, {"POST", "/track"}} {
			var form url.Values
			if rq.method == "POST" {
				form = url.Values{"url": {"https://shop.test/x"}}
			}
			r := do(t, s, rq.method, rq.target, form, "Host", host)
			assert.Equal(t, http.StatusMisdirectedRequest, r.code, "%s %s Host %q", rq.method, rq.target, host)
		}
	}
	pages, err := openTestStore(t, h.db).Pages(context.Background())
	require.NoError(t, err)
	assert.Empty(t, pages, "nothing was tracked")
	for _, host := range []string{"127.0.0.1:8080", "[::1]:8080", "localhost:8080", "LOCALHOST", "app.localhost", "monitor.internal:8080", "MONITOR.internal"} {
		r := do(t, s, "GET", "/api/pages", nil, "Host", host)
		assert.Equal(t, http.StatusOK, r.code, host)
	}
}

// TestFreeToolBoundsChecksInFlightServerWide: past the server-wide number
// of checks in flight a check is answered 503 with Retry-After, whatever
// the client's address (the per-IP bucket does not bound many clients); a
// refused check fetches nothing and costs no token.
func TestFreeToolBoundsChecksInFlightServerWide(t *testing.T) {
	h := newHarness(t)
	slow := h.net.Add("slow.test")
	slow.Robots("User-agent: *\nAllow: /\n")
	release := make(chan struct{})
	slow.Handle("/", func(w http.ResponseWriter, r *http.Request) {
		<-release
		fmt.Fprint(w, "<title>slow</title>")
	})
	fast := h.site("fast.test", "User-agent: *\nAllow: /\n", "/")
	s := newTestServer(t, h, func(o *options) { o.checksInFlight = 1 })

	done := make(chan response, 1)
	go func() {
		done <- do(t, s, "POST", "/api/check", url.Values{"url": {"http://slow.test/"}}, "RemoteAddr", "127.0.0.2:1")
	}()
	require.Eventually(t, func() bool { return slow.Count("/") == 1 }, 5*time.Second, 5*time.Millisecond)
	for _, target := range []string{"/api/check", "/check"} {
		r := do(t, s, "POST", target, url.Values{"url": {"http://fast.test/"}}, "RemoteAddr", "127.0.0.3:1")
		assert.Equal(t, http.StatusServiceUnavailable, r.code, target)
		assert.NotEmpty(t, r.header.Get("Retry-After"), target)
		assert.Contains(t, r.body, "busy", target)
	}
	assert.Zero(t, fast.Total(), "a refused check fetches nothing")
	close(release)
	assert.Equal(t, http.StatusOK, (<-done).code)
	// The slot is free again, and the refused client's tokens are intact.
	for range 3 {
		r := do(t, s, "POST", "/api/check", url.Values{"url": {"http://fast.test/"}}, "RemoteAddr", "127.0.0.3:1")
		assert.Equal(t, http.StatusOK, r.code)
	}
}

// TestFreeToolKeepsABoundedBody: a stranger's page announcing gigabytes (or
// a gzip bomb) costs a check at most freeToolMaxBody of body.
func TestFreeToolKeepsABoundedBody(t *testing.T) {
	h := newHarness(t)
	big := h.net.Add("big.test")
	big.Robots("User-agent: *\nAllow: /\n")
	big.Handle("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", strconv.Itoa(2<<30))
		word := []byte("word ")
		chunk := bytes.Repeat(word, 1<<14)
		for sent := 0; sent < 8<<20; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	s := newTestServer(t, h)
	r := do(t, s, "POST", "/api/check", url.Values{"url": {"http://big.test/"}})
	require.Equal(t, http.StatusOK, r.code, r.body)
	var c card.Card
	require.NoError(t, json.Unmarshal([]byte(r.body), &c))
	assert.Greater(t, c.WordCount, 1000)
	assert.LessOrEqual(t, c.WordCount, freeToolMaxBody/len("word ")+1, "at most freeToolMaxBody of the body was kept")
}
