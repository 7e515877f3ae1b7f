package page_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/fetch/page"
)

// site serves a small site over loopback: a redirect to an HTML page in
// windows-1252 with an X-Robots-Tag, an image, and a large page.
func site(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	mux.Handle("/old", http.RedirectHandler("/shop/new", http.StatusMovedPermanently))
	mux.HandleFunc("/shop/new", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=windows-1252")
		w.Header().Add("X-Robots-Tag", "noarchive")
		w.Header().Add("X-Robots-Tag", "googlebot: nofollow")
		_, _ = w.Write([]byte(`<title>Caf` + "\xe9" + `</title><meta name=robots content=noindex>
<a href="item?id=1">Item</a><a href="/about" rel="nofollow">About</a><link rel=canonical href="#">`))
	})
	mux.HandleFunc("/logo.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n<a href=/not-a-link>"))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<title>Big</title>" + strings.Repeat("<p>word</p>", 1000) + `<a href="/late">late</a>`))
	})
	mux.HandleFunc("/untyped", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // no Content-Type at all
		_, _ = w.Write([]byte(`<a href="/x">x</a>`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestResultPage(t *testing.T) {
	srv := site(t)
	c := &fetch.Client{UserAgent: "PageTest/1.0", Gate: fetch.NoLimits{}}
	res, err := c.Get(context.Background(), srv.URL+"/old")
	require.NoError(t, err)
	p, err := res.Page()
	require.NoError(t, err)

	assert.Equal(t, srv.URL+"/shop/new", p.URL, "the final URL")
	assert.Equal(t, "Café", p.Title, "decoded by the Content-Type charset")
	assert.Equal(t, "windows-1252", p.Encoding)
	assert.Equal(t, "noindex", p.MetaRobots)
	assert.Equal(t, "noarchive, googlebot: nofollow", p.XRobotsTag)
	assert.Equal(t, srv.URL+"/shop/new", p.Canonical)
	require.Len(t, p.Links, 2, "the canonical \"#\" is the page, not a link")
	assert.Equal(t, page.Link{URL: srv.URL + "/shop/item?id=1", Raw: "item?id=1", Text: "Item", Tag: "a"}, p.Links[0],
		"resolved against the final URL, not the one asked for")
	assert.True(t, p.Links[1].Nofollow)
	assert.False(t, p.Truncated)
}

func TestResultPageTruncatedBody(t *testing.T) {
	srv := site(t)
	c := &fetch.Client{UserAgent: "PageTest/1.0", MaxBodyBytes: 2000, Gate: fetch.NoLimits{}}
	res, err := c.Get(context.Background(), srv.URL+"/big")
	require.NoError(t, err)
	require.True(t, res.Truncated)
	p, err := res.Page()
	require.NoError(t, err)
	assert.True(t, p.Truncated, "the body was cut by the client")
	assert.Equal(t, "Big", p.Title)
	assert.Empty(t, p.Links)
}

func TestResultPageErrors(t *testing.T) {
	srv := site(t)
	c := &fetch.Client{UserAgent: "PageTest/1.0", Gate: fetch.NoLimits{}}
	ctx := context.Background()

	res, err := c.Get(ctx, srv.URL+"/logo.png")
	require.NoError(t, err)
	p, err := res.Page()
	assert.Nil(t, p)
	require.ErrorIs(t, err, page.ErrNotHTML)
	var pe *page.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, srv.URL+"/logo.png", pe.URL)
	assert.Contains(t, err.Error(), `media type "image/png"`)

	res, err = c.Head(ctx, srv.URL+"/shop/new")
	require.NoError(t, err)
	_, err = res.Page()
	assert.ErrorIs(t, err, page.ErrNoBody)

	var nilResult *fetch.Result
	_, err = nilResult.Page()
	assert.ErrorIs(t, err, page.ErrNoBody)

	res, err = c.Get(ctx, srv.URL+"/untyped")
	require.NoError(t, err)
	p, err = res.Page()
	require.NoError(t, err, "a response without a Content-Type is read as HTML")
	require.Len(t, p.Links, 1)
	assert.Equal(t, srv.URL+"/x", p.Links[0].URL)

	_, err = (&fetch.Result{FinalURL: "/relative", Body: []byte("<p>")}).Page()
	assert.ErrorIs(t, err, page.ErrPageURL)
	assert.False(t, errors.Is(err, page.ErrRead))
}
