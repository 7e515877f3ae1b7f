package app

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/report"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The app's real handler, served as `audit app` serves it, refuses a request without the token, with
// another Host (DNS rebinding) and a cross-origin POST; none of them starts a crawl.
func TestRefusals(t *testing.T) {
	st := newSite(t, map[string]string{"/": "<title>Home</title>"})
	s := serve(t, nil)
	form := crawlForm(st.URL + "/")

	resp, err := http.Get(s.base + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "no token")

	resp, err = http.PostForm(s.base+"/crawl", form)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "a POST without the token")

	req, _ := http.NewRequest(http.MethodGet, s.url, nil)
	req.Host = "rebound.example:" + strings.Split(s.base, ":")[2]
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode, "another Host, even with the token")

	c := s.client(t)
	req, _ = http.NewRequest(http.MethodPost, s.base+"/crawl", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err = c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "a cross-origin POST with the cookie")

	assert.Nil(t, s.app.runView(), "no crawl was started")
	st.mu.Lock()
	assert.Empty(t, st.paths, "the site saw no request")
	st.mu.Unlock()

	// And every page of the app carries the CSP without inline script.
	resp, err = c.Get(s.base + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self'")
}

// The form refuses what the command line refuses, with the same message (both call Config.Check).
func TestFormValidation(t *testing.T) {
	s := serve(t, nil)
	c := s.client(t)
	for _, tc := range []struct{ field, value string }{
		{"concurrency", "17"}, {"concurrency", "0"}, {"gap", "61s"}, {"max_pages", "0"}, {"max_pages", "1000001"},
		{"max_depth", "1001"}, {"render", "501"}, {"user_agent", " "}, {"url", "notaurl"}, {"url", "ftp://shop.example/"},
		{"gap", "300"}, {"max_pages", "ten"},
	} {
		code, body := s.post(t, c, "/crawl", crawlForm("https://shop.example/", tc.field, tc.value))
		assert.Equal(t, http.StatusBadRequest, code, "%s=%q", tc.field, tc.value)
		cfg := crawl.Defaults()
		want := ""
		switch tc.field {
		case "concurrency", "max_pages", "max_depth", "render", "user_agent", "gap":
			f := crawlForm("https://shop.example/", tc.field, tc.value)
			_, err := s.app.config(form{URL: f.Get("url"), MaxPages: f.Get("max_pages"), MaxDepth: f.Get("max_depth"),
				Concurrency: f.Get("concurrency"), Gap: f.Get("gap"), UserAgent: f.Get("user_agent"), Render: f.Get("render")})
			require.Error(t, err)
			want = err.Error()
		case "url":
			_, err := crawl.StartURL(tc.value)
			require.Error(t, err)
			want = err.Error()
		}
		_ = cfg
		assert.Contains(t, body, `id="form-error"`)
		assert.Contains(t, body, htmlEscape(want), "%s=%q", tc.field, tc.value)
	}
	// The messages are the command line's: "-concurrency 17: must be from 1 to 16".
	_, body := s.post(t, c, "/crawl", crawlForm("https://shop.example/", "concurrency", "17"))
	assert.Contains(t, body, "-concurrency 17: must be from 1 to 16")
	assert.Nil(t, s.app.runView())
}

func htmlEscape(s string) string {
	return strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;", `"`, "&#34;", `'`, "&#39;").Replace(s)
}

// A hostile site's title, URL and anchor text show as text in every view of the app.
func TestHostileSiteEscaped(t *testing.T) {
	st := newSite(t, map[string]string{
		"/":     `<html><head><title><script>window.pwned=1</script></title></head><body><a href="/img?q=%22%3E%3Cscript%3E">&lt;img src=x onerror=window.pwned=2&gt;</a> <a href="/x">x</a></body></html>`,
		"/img":  `<html><head><title>&lt;img src=x onerror=window.pwned=3&gt;</title></head><body></body></html>`,
		"/x":    `<html><head><title>"><script>alert(1)</script></title></head></html>`,
		"/none": ``,
	})
	s := serve(t, nil)
	c := s.client(t)
	code, _ := s.post(t, c, "/crawl", crawlForm(st.URL+"/", "gap", "0s"))
	require.Equal(t, http.StatusOK, code)
	s.app.Wait()
	rv := s.app.runView()
	require.NotNil(t, rv)
	require.Equal(t, "finished", rv.Outcome, rv.Summary)

	views := []string{"/", "/live", "/crawls/1", "/crawls/1?url=" + url.QueryEscape(st.URL+"/"), "/crawls/1?url=" + url.QueryEscape(st.URL+"/img?q=%22%3E%3Cscript%3E"),
		"/crawls/1?q=" + url.QueryEscape("<script>")}
	for _, v := range views {
		code, body := get(t, c, s.base+v)
		require.Equal(t, http.StatusOK, code, v)
		assert.NotContains(t, body, "<script>window", v)
		assert.NotContains(t, body, "<img src=x", v)
		assert.NotContains(t, body, "<script>alert", v)
		assert.NotContains(t, strings.ReplaceAll(body, `<script src="/static/app.js" defer></script>`, ""), "<script", v)
	}
	_, body := get(t, c, s.base+"/crawls/1?url="+url.QueryEscape(st.URL+"/img?q=%22%3E%3Cscript%3E"))
	assert.Contains(t, body, "&lt;img src=x onerror=window.pwned=2&gt;", "the anchor text, as text")
	_, body = get(t, c, s.base+"/crawls/1")
	assert.Contains(t, body, "&lt;script&gt;window.pwned=1&lt;/script&gt;", "the title, as text")
}

// A crawl started from the form runs the crawl package's crawl: robots.txt first, the rows in the
// database, the crawl finished; a second start while it runs is refused with a clear message.
func TestStartCrawlAndOneAtATime(t *testing.T) {
	st := newSite(t, map[string]string{"/": `<title>Home</title><a href="/a">a</a><a href="/b">b</a>`, "/a": `<title>A</title>`, "/b": `<title>B</title>`})
	st.mu.Lock()
	st.delay = 300 * time.Millisecond
	st.mu.Unlock()
	s := serve(t, nil)
	c := s.client(t)
	code, body := s.post(t, c, "/crawl", crawlForm(st.URL+"/", "gap", "0s"))
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `id="live"`)

	code, body = s.post(t, c, "/crawl", crawlForm(st.URL+"/", "gap", "0s"))
	assert.Equal(t, http.StatusConflict, code)
	assert.Contains(t, body, "a crawl is running already")
	assert.Contains(t, body, "one crawl at a time per database")

	s.app.Wait()
	st.mu.Lock()
	assert.Equal(t, "/robots.txt", st.paths[0], "robots.txt first")
	st.mu.Unlock()
	row, err := store.LoadCrawl(t.Context(), s.app.db, 0)
	require.NoError(t, err)
	assert.Equal(t, "finished", row.Outcome)
	assert.Equal(t, 3, row.Pages)
	rows, more, err := store.ListURLs(t.Context(), s.app.db, row.ID, store.URLQuery{})
	require.NoError(t, err)
	assert.False(t, more)
	assert.Len(t, rows, 3)
	assert.Equal(t, st.URL+"/", rows[0].URL)
	assert.Equal(t, "Home", rows[0].Title)
}

// A 429 slows the run down for good, and the live view says so, with since when and which URL.
func TestLiveShowsSlowdown(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the retries and the 3 s gap")
	}
	st := newSite(t, map[string]string{"/": `<title>Home</title><a href="/busy">busy</a><a href="/b">b</a>`, "/b": `<title>B</title>`})
	st.mu.Lock()
	st.status = map[string]int{"/busy": http.StatusTooManyRequests}
	st.mu.Unlock()
	s := serve(t, nil)
	c := s.client(t)
	code, _ := s.post(t, c, "/crawl", crawlForm(st.URL+"/", "gap", "0s"))
	require.Equal(t, http.StatusOK, code)
	s.app.Wait()
	state := s.app.hub.Snapshot().State
	assert.Contains(t, state["slowed"], "after a 429 from "+st.URL+"/busy")
	assert.Equal(t, "1 in flight at most, 3s between request starts", state["limits"])
	assert.Equal(t, "finished", state["outcome"])
	assert.Contains(t, state["robots"], st.URL+"/robots.txt: HTTP 404: no rules, everything allowed")
}

// The report and the comparison are served with their own CSP (their inline style and hashed script,
// nothing that fetches), the exports as downloads.
func TestReportAndExports(t *testing.T) {
	st := newSite(t, map[string]string{"/": `<title>Home</title><a href="/gone">gone</a>`})
	s := serve(t, nil)
	c := s.client(t)
	for range 2 {
		code, _ := s.post(t, c, "/crawl", crawlForm(st.URL+"/", "gap", "0s"))
		require.Equal(t, http.StatusOK, code)
		s.app.Wait()
	}
	for _, path := range []string{"/crawls/1/report", "/compare?a=1&b=2"} {
		resp, err := c.Get(s.base + path)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.Equal(t, report.CSP()+"; frame-ancestors 'none'", resp.Header.Get("Content-Security-Policy"), path)
	}
	code, body := get(t, c, s.base+"/crawls/2/export/pages.csv")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, st.URL+"/gone")
	code, body = get(t, c, s.base+"/crawls/2/export.json")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `"findings"`)
	code, _ = get(t, c, s.base+"/crawls/2/export/queue.csv")
	assert.Equal(t, http.StatusNotFound, code, "only the export's tables")
	code, body = get(t, c, s.base+"/compare?a=1&b=1")
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, body, "cannot be compared with itself")
}

// The explore view has a tab per category of the crawl's findings, with the category's count; a
// category lists its kinds with their counts and its table has the findings of all of them, a kind
// within it only its own. A kind's link alone opens its category.
func TestCategoryTabs(t *testing.T) {
	st := newSite(t, map[string]string{"/": `<title>Home</title><a href="/gone">gone</a><a href="http://elsewhere.test/x">out</a><a href="/untitled">u</a>`,
		"/untitled": `<p>no title</p>`})
	s := serve(t, nil)
	c := s.client(t)
	code, _ := s.post(t, c, "/crawl", crawlForm(st.URL+"/", "gap", "0s"))
	require.Equal(t, http.StatusOK, code)
	s.app.Wait()
	dropPageChecks(t, s)

	_, body := get(t, c, s.base+"/crawls/1")
	assert.Contains(t, body, `data-category="Links">Links <span class="count">2</span>`, "broken_link and external_link")
	assert.Contains(t, body, `data-category="Titles">Titles <span class="count">1</span>`)
	assert.NotContains(t, body, `data-category="Sitemaps"`, "no tab for a category without findings")
	assert.NotContains(t, body, `id="kinds"`)

	_, body = get(t, c, s.base+"/crawls/1?cat=Links")
	assert.Contains(t, body, `data-kind="broken_link">Broken internal link <span class="count">1</span>`)
	assert.Contains(t, body, `data-kind="external_link">External link <span class="count">1</span>`)
	assert.NotContains(t, body, `data-kind="title_missing"`, "only the category's kinds")
	assert.Contains(t, body, st.URL+"/gone")
	assert.Contains(t, body, "http://elsewhere.test/x")
	assert.NotContains(t, body, st.URL+"/untitled</a>", "a Titles finding is not in the Links table")
	assert.NotContains(t, body, `id="advice"`)

	for _, q := range []string{"?cat=Links&kind=broken_link", "?kind=broken_link"} {
		_, body = get(t, c, s.base+"/crawls/1"+q)
		assert.Contains(t, body, `class="tab error active" data-category="Links"`, q)
		assert.Contains(t, body, `id="advice"`, q)
		assert.Contains(t, body, st.URL+"/gone", q)
		assert.NotContains(t, body, "http://elsewhere.test/x</a>", q)
	}
}
