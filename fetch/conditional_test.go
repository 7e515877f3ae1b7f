package fetch_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
)

// validatingSite is a loopback site answering conditional requests the way
// a real server does: 304 when If-None-Match matches the ETag or
// If-Modified-Since equals Last-Modified, and recording what it was sent.
type validatingSite struct {
	mu            sync.Mutex
	etag, lastMod string
	cacheControl  string
	body          string
	got           []http.Header // request headers of page requests
}

func (s *validatingSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, r.Header.Clone())
	if s.cacheControl != "" {
		w.Header().Set("Cache-Control", s.cacheControl)
	}
	if s.etag != "" {
		w.Header().Set("ETag", s.etag)
	}
	if s.lastMod != "" {
		w.Header().Set("Last-Modified", s.lastMod)
	}
	if (s.etag != "" && r.Header.Get("If-None-Match") == s.etag) || (s.etag == "" && s.lastMod != "" && r.Header.Get("If-Modified-Since") == s.lastMod) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write([]byte(s.body))
}

func (s *validatingSite) last() http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[len(s.got)-1]
}

func (s *validatingSite) set(f func(*validatingSite)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func TestConditionalETag(t *testing.T) {
	site := &validatingSite{etag: `"v1"`, body: "<html>hello, world</html>"}
	srv := httptest.NewServer(site)
	defer srv.Close()
	store := &fetch.MemoryValidators{}
	c := &fetch.Client{Gate: fetch.NoLimits{}, Validators: store}
	ctx := context.Background()

	res, err := c.Get(ctx, srv.URL+"/p")
	require.NoError(t, err)
	assert.Equal(t, 200, res.Status)
	assert.False(t, res.Conditional)
	assert.False(t, res.Unchanged)
	assert.Empty(t, site.last().Get("If-None-Match"))
	v, ok, _ := store.Load(ctx, srv.URL+"/p")
	require.True(t, ok)
	assert.Equal(t, fetch.Validators{ETag: `"v1"`, Size: int64(len(site.body))}, v)

	res, err = c.Get(ctx, srv.URL+"/p")
	require.NoError(t, err)
	assert.Equal(t, `"v1"`, site.last().Get("If-None-Match"))
	assert.Equal(t, 304, res.Status)
	assert.True(t, res.Conditional)
	assert.True(t, res.Unchanged)
	assert.Equal(t, int64(len(site.body)), res.BytesSaved)
	assert.Nil(t, res.Body)

	// The page changes: a full 200, new validators stored.
	site.set(func(s *validatingSite) { s.etag, s.body = `"v2"`, "<html>changed</html>" })
	res, err = c.Get(ctx, srv.URL+"/p")
	require.NoError(t, err)
	assert.Equal(t, 200, res.Status)
	assert.True(t, res.Conditional)
	assert.False(t, res.Unchanged)
	assert.Equal(t, "<html>changed</html>", string(res.Body))
	v, _, _ = store.Load(ctx, srv.URL+"/p")
	assert.Equal(t, `"v2"`, v.ETag)

	// HEAD is never conditional.
	_, err = c.Head(ctx, srv.URL+"/p")
	require.NoError(t, err)
	assert.Empty(t, site.last().Get("If-None-Match"))
}

func TestConditionalLastModified(t *testing.T) {
	lm := "Tue, 01 Dec 2026 10:00:00 GMT"
	site := &validatingSite{lastMod: lm, body: "page"}
	srv := httptest.NewServer(site)
	defer srv.Close()
	c := &fetch.Client{Gate: fetch.NoLimits{}, Validators: &fetch.MemoryValidators{}}
	_, err := c.Get(context.Background(), srv.URL+"/p")
	require.NoError(t, err)
	res, err := c.Get(context.Background(), srv.URL+"/p")
	require.NoError(t, err)
	assert.Equal(t, lm, site.last().Get("If-Modified-Since"))
	assert.Empty(t, site.last().Get("If-None-Match"))
	assert.True(t, res.Unchanged)
	assert.Equal(t, int64(4), res.BytesSaved)
}

// TestConditionalNoStore: a response marked no-store is never kept, and
// one that turns no-store drops what was kept, so nothing is sent after.
func TestConditionalNoStore(t *testing.T) {
	site := &validatingSite{etag: `"x"`, cacheControl: "private, no-store", body: "secret"}
	srv := httptest.NewServer(site)
	defer srv.Close()
	store := &fetch.MemoryValidators{}
	c := &fetch.Client{Gate: fetch.NoLimits{}, Validators: store}
	ctx := context.Background()
	for range 2 {
		res, err := c.Get(ctx, srv.URL+"/p")
		require.NoError(t, err)
		assert.Equal(t, 200, res.Status)
		assert.Empty(t, site.last().Get("If-None-Match"))
	}
	assert.Zero(t, store.Len())

	site.set(func(s *validatingSite) { s.cacheControl = "max-age=60" })
	_, err := c.Get(ctx, srv.URL+"/p")
	require.NoError(t, err)
	assert.Equal(t, 1, store.Len())
	site.set(func(s *validatingSite) { s.cacheControl = "No-Store"; s.etag = `"y"` })
	_, err = c.Get(ctx, srv.URL+"/p")
	require.NoError(t, err)
	assert.Zero(t, store.Len(), "a no-store response left validators behind")
}

// TestConditionalRedirect: validators belong to the URL that answered
// 200, not to the redirecting one.
func TestConditionalRedirect(t *testing.T) {
	site := &validatingSite{etag: `"r"`, body: "target"}
	mux := http.NewServeMux()
	mux.Handle("/", site)
	mux.Handle("/old", http.RedirectHandler("/new", http.StatusMovedPermanently))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	store := &fetch.MemoryValidators{}
	c := &fetch.Client{Gate: fetch.NoLimits{}, Validators: store}
	_, err := c.Get(context.Background(), srv.URL+"/old")
	require.NoError(t, err)
	_, ok, _ := store.Load(context.Background(), srv.URL+"/old")
	assert.False(t, ok)
	_, ok, _ = store.Load(context.Background(), srv.URL+"/new")
	assert.True(t, ok)
	res, err := c.Get(context.Background(), srv.URL+"/old")
	require.NoError(t, err)
	assert.True(t, res.Unchanged)
	assert.Equal(t, srv.URL+"/new", res.FinalURL)

	// A page that starts redirecting drops its validators.
	mux.Handle("/new/", http.RedirectHandler("/elsewhere", http.StatusFound))
	_, err = c.Get(context.Background(), srv.URL+"/new/")
	require.NoError(t, err)
	require.NoError(t, store.Store(context.Background(), srv.URL+"/new/", fetch.Validators{ETag: `"old"`}))
	_, err = c.Get(context.Background(), srv.URL+"/new/")
	require.NoError(t, err)
	_, ok, _ = store.Load(context.Background(), srv.URL+"/new/")
	assert.False(t, ok, "a redirecting URL kept its validators")
}

type failingStore struct{ fetch.MemoryValidators }

func (*failingStore) Store(context.Context, string, fetch.Validators) error {
	return errors.New("disk full")
}

func TestConditionalStoreError(t *testing.T) {
	site := &validatingSite{etag: `"e"`, body: "x"}
	srv := httptest.NewServer(site)
	defer srv.Close()
	c := &fetch.Client{Gate: fetch.NoLimits{}, Validators: &failingStore{}}
	_, err := c.Get(context.Background(), srv.URL+"/p")
	requireFetchError(t, err, srv.URL+"/p")
	assert.Contains(t, err.Error(), "disk full")
}

func TestMemoryValidatorsBounded(t *testing.T) {
	s := &fetch.MemoryValidators{Max: 3}
	for _, u := range []string{"a", "b", "c", "d", "e"} {
		require.NoError(t, s.Store(context.Background(), u, fetch.Validators{ETag: u}))
	}
	assert.Equal(t, 3, s.Len())
}
