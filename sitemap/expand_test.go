package sitemap

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/testsite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testUA = "SitemapTestBot/1.0"

func newClient() *fetch.Client {
	return &fetch.Client{UserAgent: testUA, Gate: fetch.NoLimits{}} // the tests are about sitemaps, not pacing
}

func index(children ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, c := range children {
		b.WriteString("<sitemap><loc>" + c + "</loc></sitemap>")
	}
	b.WriteString("</sitemapindex>")
	return b.String()
}

type collected struct {
	pages []string
	srcs  []Source
}

func (c *collected) page(e Entry, s Source) error {
	c.pages = append(c.pages, e.URL)
	c.srcs = append(c.srcs, s)
	return nil
}

func byURL(reps []Report) map[string]Report {
	m := make(map[string]Report, len(reps))
	for _, r := range reps {
		m[r.URL] = r
	}
	return m
}

// depthSite serves a chain of indexes: root -> l1 -> l2 -> l3, each with a
// urlset beside it.
func depthSite(t *testing.T) *testsite.Site {
	s := testsite.New(t)
	u := s.URL()
	s.Page("/root.xml", "application/xml", index(u+"/l1.xml", u+"/pages0.xml"))
	s.Page("/l1.xml", "application/xml", index(u+"/l2.xml", u+"/pages1.xml"))
	s.Page("/l2.xml", "application/xml", index(u+"/l3.xml", u+"/pages2.xml"))
	s.Page("/l3.xml", "application/xml", index(u+"/pages3.xml"))
	for i := range 4 {
		s.Page(fmt.Sprintf("/pages%d.xml", i), "application/xml", urlset(fmt.Sprintf("%s/p%d", u, i)))
	}
	return s
}

func TestExpandDepth(t *testing.T) {
	tests := []struct {
		name     string
		maxDepth int
		fetched  []string // sitemaps requested, in order
		pages    []string
	}{
		{"default: two levels followed, third fetched not followed", 0,
			[]string{"/root.xml", "/l1.xml", "/pages0.xml", "/l2.xml", "/pages1.xml"}, []string{"/p0", "/p1"}},
		{"one level", 1, []string{"/root.xml", "/l1.xml", "/pages0.xml"}, []string{"/p0"}},
		{"three levels", 3, []string{"/root.xml", "/l1.xml", "/pages0.xml", "/l2.xml", "/pages1.xml", "/l3.xml", "/pages2.xml"}, []string{"/p0", "/p1", "/p2"}},
		{"none", -1, []string{"/root.xml"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := depthSite(t)
			var c collected
			e := &Expander{Fetcher: newClient(), MaxDepth: tc.maxDepth}
			reps, err := e.Expand(context.Background(), []string{s.URL() + "/root.xml"}, c.page)
			require.NoError(t, err)

			var got []string
			for _, r := range s.Requests() {
				if r.Path == "/robots.txt" {
					continue
				}
				got = append(got, r.Path)
				assert.Equal(t, testUA, r.Header.Get("User-Agent"))
			}
			assert.Equal(t, tc.fetched, got, "what the server saw")
			var pages []string
			for _, p := range c.pages {
				pages = append(pages, strings.TrimPrefix(p, s.URL()))
			}
			assert.Equal(t, tc.pages, pages)
			require.Len(t, reps, len(tc.fetched))
			for i, r := range reps {
				assert.Equal(t, s.URL()+tc.fetched[i], r.URL)
				assert.Equal(t, 200, r.Status)
				assert.NoError(t, r.Err)
			}
		})
	}

	// The report of the default run, sitemap by sitemap.
	s := depthSite(t)
	u := s.URL()
	var c collected
	reps, err := (&Expander{Fetcher: newClient()}).Expand(context.Background(), []string{u + "/root.xml"}, c.page)
	require.NoError(t, err)
	m := byURL(reps)
	assert.Equal(t, Report{URL: u + "/root.xml", Level: 0, Status: 200, Kind: KindIndex, Bytes: m[u+"/root.xml"].Bytes, Entries: 2, Queued: 2, Followed: true}, m[u+"/root.xml"])
	l2 := m[u+"/l2.xml"]
	assert.Equal(t, u+"/l1.xml", l2.Parent)
	assert.Equal(t, 2, l2.Level)
	assert.Equal(t, KindIndex, l2.Kind)
	assert.False(t, l2.Followed)
	assert.Equal(t, 2, l2.NotFollowed)
	assert.Equal(t, 0, l2.Queued)
	p1 := m[u+"/pages1.xml"]
	assert.Equal(t, KindURLSet, p1.Kind)
	assert.Equal(t, 1, p1.Entries)
	assert.Equal(t, []Source{{Sitemap: u + "/pages0.xml", Parent: u + "/root.xml", Level: 1}, {Sitemap: u + "/pages1.xml", Parent: u + "/l1.xml", Level: 2}}, c.srcs)
}

func TestExpandCycles(t *testing.T) {
	s := testsite.New(t)
	u := s.URL()
	s.Page("/a.xml", "application/xml", index(u+"/a.xml", u+"/b.xml", u+"/B.xml#frag", u+"/pages.xml"))
	s.Page("/b.xml", "application/xml", index(u+"/a.xml", u+"/b.xml", u+"/pages.xml"))
	s.Page("/B.xml", "application/xml", index())
	s.Page("/pages.xml", "application/xml", urlset(u+"/p"))
	var c collected
	reps, err := (&Expander{Fetcher: newClient(), MaxDepth: 10}).Expand(context.Background(), []string{u + "/a.xml", u + "/a.xml", strings.Replace(u, "http://", "HTTP://", 1) + "/a.xml"}, c.page)
	require.NoError(t, err)
	for _, p := range []string{"/a.xml", "/b.xml", "/pages.xml", "/B.xml"} {
		assert.Equal(t, 1, s.Count(p), p)
	}
	assert.Len(t, reps, 4)
	m := byURL(reps)
	assert.Equal(t, 1, m[u+"/a.xml"].Repeated, "a lists itself")
	assert.Equal(t, 3, m[u+"/b.xml"].Repeated)
	assert.Equal(t, []string{u + "/p"}, c.pages)
}

func TestExpandFailingChildren(t *testing.T) {
	s := testsite.New(t)
	u := s.URL()
	s.Robots("User-agent: *\nDisallow: /private/\n")
	s.Page("/index.xml", "application/xml", index(u+"/missing.xml", u+"/broken.xml", u+"/private/s.xml", u+"/html.xml", u+"/truncated.xml", u+"/ok.xml"))
	s.Status("/missing.xml", http.StatusNotFound)
	s.Status("/broken.xml", http.StatusInternalServerError)
	s.Page("/private/s.xml", "application/xml", urlset(u+"/secret"))
	s.HTML("/html.xml", "<!doctype html><html><body>Soft 404</body></html>")
	s.Page("/truncated.xml", "application/xml", urlset(u+"/t1", u+"/t2")[:90])
	s.Page("/ok.xml", "application/xml", urlset(u+"/ok1", u+"/ok2"))

	var c collected
	reps, err := (&Expander{Fetcher: newClient()}).Expand(context.Background(), []string{u + "/index.xml"}, c.page)
	require.NoError(t, err)
	assert.Equal(t, []string{u + "/ok1", u + "/ok2"}, c.pages)
	m := byURL(reps)
	require.Len(t, reps, 7)

	assert.Equal(t, 404, m[u+"/missing.xml"].Status)
	assert.ErrorIs(t, m[u+"/missing.xml"].Err, ErrStatus)
	assert.Contains(t, m[u+"/missing.xml"].Err.Error(), "HTTP 404")
	assert.Equal(t, 500, m[u+"/broken.xml"].Status)
	assert.ErrorIs(t, m[u+"/broken.xml"].Err, ErrStatus)
	assert.ErrorIs(t, m[u+"/private/s.xml"].Err, fetch.ErrDisallowed)
	assert.Equal(t, 0, s.Count("/private/s.xml"), "a disallowed sitemap is never requested")
	assert.ErrorIs(t, m[u+"/html.xml"].Err, ErrNotSitemap)
	assert.ErrorIs(t, m[u+"/truncated.xml"].Err, ErrMalformed)
	assert.Equal(t, 1, s.Count("/broken.xml"))
	assert.NoError(t, m[u+"/ok.xml"].Err)
}

func TestExpandFetchCap(t *testing.T) {
	s := testsite.New(t)
	u := s.URL()
	var children []string
	for i := range 10 {
		p := fmt.Sprintf("/s%d.xml", i)
		children = append(children, u+p)
		s.Page(p, "application/xml", urlset(fmt.Sprintf("%s/p%d", u, i)))
	}
	s.Page("/index.xml", "application/xml", index(children...))
	s.Page("/other.xml", "application/xml", urlset(u+"/other"))
	var c collected
	reps, err := (&Expander{Fetcher: newClient(), MaxFetches: 4}).Expand(context.Background(), []string{u + "/index.xml", u + "/other.xml"}, c.page)
	require.NoError(t, err)
	sitemapRequests := s.Total() - s.Count("/robots.txt")
	assert.Equal(t, 4, sitemapRequests, "what the server saw")
	require.Len(t, reps, 4)
	m := byURL(reps)
	assert.Equal(t, 2, m[u+"/index.xml"].Queued)
	assert.Equal(t, 8, m[u+"/index.xml"].OverCap)
	assert.Equal(t, []string{u + "/other", u + "/p0", u + "/p1"}, c.pages)

	// Roots beyond the cap are reported, not fetched.
	reps, err = (&Expander{Fetcher: newClient(), MaxFetches: 1}).Expand(context.Background(), []string{u + "/other.xml", u + "/s0.xml"}, c.page)
	require.NoError(t, err)
	require.Len(t, reps, 2)
	assert.ErrorIs(t, reps[0].Err, ErrFetchLimit)
	assert.Equal(t, u+"/s0.xml", reps[0].URL)
	assert.NoError(t, reps[1].Err)
	assert.Equal(t, 1, s.Count("/s0.xml"), "only the earlier run fetched it")
}

func TestExpandGzip(t *testing.T) {
	s := testsite.New(t)
	u := s.URL()
	xml := urlset(u+"/g1", u+"/g2")
	// A .gz file served as a file: no Content-Encoding.
	s.Route("/plain.xml.gz", testsite.Response{Body: string(gz(t, []byte(xml))), ContentType: "application/x-gzip"})
	// XML compressed in transit: the HTTP client decodes it.
	s.Route("/encoded.xml", testsite.Response{Body: string(gz(t, []byte(xml))), ContentType: "application/xml", Header: http.Header{"Content-Encoding": {"gzip"}}})
	// A .gz file served with Content-Encoding: gzip (compressed twice on the wire).
	s.Route("/double.xml.gz", testsite.Response{Body: string(gz(t, gz(t, []byte(xml)))), ContentType: "application/x-gzip", Header: http.Header{"Content-Encoding": {"gzip"}}})
	// Plain bytes behind a .gz name.
	s.Page("/liar.xml.gz", "application/x-gzip", xml)
	for _, p := range []string{"/plain.xml.gz", "/encoded.xml", "/double.xml.gz", "/liar.xml.gz"} {
		t.Run(p, func(t *testing.T) {
			var c collected
			reps, err := (&Expander{Fetcher: newClient()}).Expand(context.Background(), []string{u + p}, c.page)
			require.NoError(t, err)
			require.Len(t, reps, 1)
			assert.NoError(t, reps[0].Err)
			assert.Equal(t, []string{u + "/g1", u + "/g2"}, c.pages)
			assert.Equal(t, p != "/liar.xml.gz" && p != "/encoded.xml", reps[0].Gzip)
		})
	}
}

func TestExpandRedirectAndScope(t *testing.T) {
	s := testsite.New(t)
	u := s.URL()
	s.Redirect("/sitemap.xml", "/maps/sitemap.xml", http.StatusMovedPermanently)
	s.Page("/maps/sitemap.xml", "application/xml", urlset(u+"/maps/a", u+"/b", "https://elsewhere.example/c"))
	var c collected
	reps, err := (&Expander{Fetcher: newClient()}).Expand(context.Background(), []string{u + "/sitemap.xml"}, c.page)
	require.NoError(t, err)
	require.Len(t, reps, 1)
	assert.Equal(t, u+"/maps/sitemap.xml", reps[0].FinalURL)
	assert.Equal(t, []string{u + "/maps/a"}, c.pages, "scope is the final URL's directory")
	assert.Equal(t, 2, reps[0].Skipped.OutOfScope)

	c = collected{}
	_, err = (&Expander{Fetcher: newClient(), Scope: ScopeAny}).Expand(context.Background(), []string{u + "/maps/sitemap.xml"}, c.page)
	require.NoError(t, err)
	assert.Len(t, c.pages, 3)
}

func TestExpandStreamsAndStops(t *testing.T) {
	s := testsite.New(t)
	u := s.URL()
	s.Page("/a.xml", "application/xml", urlset(u+"/a1", u+"/a2", u+"/a3"))
	s.Page("/b.xml", "application/xml", urlset(u+"/b1"))
	stop := errors.New("enough")
	n := 0
	reps, err := (&Expander{Fetcher: newClient()}).Expand(context.Background(), []string{u + "/a.xml", u + "/b.xml"}, func(e Entry, _ Source) error {
		n++
		assert.Equal(t, 0, s.Count("/b.xml"), "entries arrive before the next sitemap is fetched")
		if n == 2 {
			return stop
		}
		return nil
	})
	require.ErrorIs(t, err, stop)
	assert.Len(t, reps, 1)
	assert.Equal(t, 0, s.Count("/b.xml"))

	ctx, cancel := context.WithCancel(context.Background())
	_, err = (&Expander{Fetcher: newClient()}).Expand(ctx, []string{u + "/a.xml", u + "/b.xml"}, func(Entry, Source) error {
		cancel()
		return nil
	})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 0, s.Count("/b.xml"))
}

func TestExpandTruncatedBody(t *testing.T) {
	s := testsite.New(t)
	u := s.URL()
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "%s/page-%04d\n", u, i)
	}
	s.Page("/sitemap.txt", "text/plain", b.String())
	var c collected
	client := newClient()
	client.MaxBodyBytes = 1000
	reps, err := (&Expander{Fetcher: client}).Expand(context.Background(), []string{u + "/sitemap.txt"}, c.page)
	require.NoError(t, err)
	require.Len(t, reps, 1)
	assert.True(t, reps[0].Truncated)
	assert.ErrorIs(t, reps[0].Err, ErrTruncated)
	require.NotEmpty(t, c.pages)
	for _, p := range c.pages {
		assert.Len(t, p, len(u)+len("/page-0000"), "no partial last line")
	}
}

// A Sitemap: line that leads to a plain-text page without a single URL (a
// soft 404, a notice) is reported as not a sitemap, not as an empty one.
func TestExpandTextWithoutURLsIsNotASitemap(t *testing.T) {
	s := testsite.New(t)
	u := s.URL()
	s.Page("/sitemap.txt", "text/plain", "Sitemap moved. Please contact the webmaster.\n")
	s.Page("/empty.xml", "application/xml", urlset())
	reps, err := (&Expander{Fetcher: newClient()}).Expand(context.Background(), []string{u + "/sitemap.txt", u + "/empty.xml"}, nil)
	require.NoError(t, err)
	require.Len(t, reps, 2)
	assert.ErrorIs(t, reps[0].Err, ErrNotSitemap)
	assert.Contains(t, reps[0].Err.Error(), u+"/sitemap.txt")
	assert.Contains(t, reps[0].Err.Error(), "Sitemap moved.")
	assert.Equal(t, KindUnknown, reps[0].Kind)
	assert.Equal(t, 200, reps[0].Status)
	assert.NoError(t, reps[1].Err, "an empty urlset is a valid, empty sitemap")
	assert.Equal(t, KindURLSet, reps[1].Kind)
	assert.Equal(t, 0, reps[1].Entries)
}
