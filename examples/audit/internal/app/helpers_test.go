package app

import (
	"context"
	"database/sql"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/demo"
	"github.com/politecrawl/polite/examples/internal/localweb"
)

// served is the app on a real loopback server, behind localweb's Guard, as `audit app` serves it.
type served struct {
	app   *App
	srv   *localweb.Server
	base  string // http://127.0.0.1:PORT
	url   string // the tokened address the program prints
	token string
	db    string
}

// serve starts the app over a new database in the test's temp dir; the shop is the demo (nil: none).
func serve(t testing.TB, shop *demo.DemoSite) *served {
	t.Helper()
	return serveOpts(t, filepath.Join(t.TempDir(), "audit.db"), shop)
}

// serveDB starts the app over an existing database.
func serveDB(t testing.TB, db string) *served { return serveOpts(t, db, nil) }

func serveOpts(t testing.TB, db string, shop *demo.DemoSite) *served {
	t.Helper()
	a, err := New(context.Background(), Options{DB: db, Demo: shop})
	if err != nil {
		t.Fatal(err)
	}
	srv := &localweb.Server{Handler: a.Handler()}
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ctx); err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if err := a.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return &served{app: a, srv: srv, base: "http://" + srv.ListenAddr(), url: srv.URL(), token: srv.Guard.Token, db: db}
}

// client is a browser-like client that has opened the tokened address (so it holds the cookie).
func (s *served) client(t testing.TB) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := c.Get(s.url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("opening the tokened address: HTTP %d", resp.StatusCode)
	}
	return c
}

// get returns the status and body of a GET.
func get(t testing.TB, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// post sends a form as the app's own page does (same origin), following the redirect.
func (s *served) post(t testing.TB, c *http.Client, path string, form url.Values) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// crawlForm is the start form with the defaults, for address u, changed by kv (name, value pairs).
func crawlForm(u string, kv ...string) url.Values {
	f := defaultForm(u)
	v := url.Values{"url": {f.URL}, "max_pages": {f.MaxPages}, "max_depth": {f.MaxDepth}, "concurrency": {f.Concurrency},
		"gap": {f.Gap}, "user_agent": {f.UserAgent}, "render": {f.Render}}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// site is a loopback site of HTML pages by path (robots.txt: 404, all allowed), counting requests.
type site struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
	delay time.Duration
	// status answers these paths with a bare status (a 429, say) instead of their page.
	status map[string]int
}

func newSite(t testing.TB, pages map[string]string) *site {
	s := &site{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.RequestURI())
		d := s.delay
		code := s.status[r.URL.Path]
		s.mu.Unlock()
		time.Sleep(d)
		if code != 0 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(code)
			return
		}
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

// dropPageChecks deletes the findings of the pages' own responses (a test site's minimal pages have
// many: no viewport, thin content...), for tests that count the findings of other kinds; the page
// checks have their own tests (internal/pagecheck, and the audit's pagecheck_test.go).
func dropPageChecks(t testing.TB, s *served) {
	t.Helper()
	db, err := sql.Open("sqlite", s.db)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DELETE FROM findings WHERE page_check = 1`); err != nil {
		t.Fatal(err)
	}
	// And the kinds of the passes over the whole crawl that these small sites show on many pages (one
	// internal link, a link to a redirect...): the tests count the core kinds.
	for _, c := range findings.Categories {
		for _, k := range findings.KindsOf(c) {
			if !findings.IsSiteKind(k) {
				continue
			}
			if _, err := db.Exec(`DELETE FROM findings WHERE kind = ?`, k); err != nil {
				t.Fatal(err)
			}
		}
	}
}
