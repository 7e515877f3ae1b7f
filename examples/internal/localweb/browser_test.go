package localweb

import (
	"context"
	"flag"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/testbrowser"
)

// -update-screenshot writes testdata/app.png from TestBrowserOpensTokenedApp.
var updateScreenshot = flag.Bool("update-screenshot", false, "write testdata/app.png from the browser test")

// page is served content with an inline script that the CSP must stop and a
// script file that it must allow, each setting a DOM marker.
const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>%s</title>
<script src="/app.js"></script></head>
<body><h1 id="title">%s</h1>
<script>document.documentElement.dataset.inline = "ran";</script>
%s
</body></html>`

func testApp() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, page, "Local app", "Local app",
			`<p>Served to the person who ran the program.</p><a id="next" href="/next?tab=links">Next page</a>`)
	})
	mux.HandleFunc("GET /next", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, page, "Second", "Second page", `<p id="tab">tab `+html.EscapeString(r.URL.Query().Get("tab"))+`</p>`)
	})
	mux.HandleFunc("GET /app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		io.WriteString(w, `document.documentElement.dataset.external = "ran";`)
	})
	return mux
}

// TestBrowserOpensTokenedApp opens the printed address in headless Chromium:
// the bare address shows how to get in, the tokened one lands on the page
// with the token gone from the address bar, a link is followed with the
// cookie, the script file runs and the inline script does not. A tokened
// link on another site's page (other.test) lands in the app too.
func TestBrowserOpensTokenedApp(t *testing.T) {
	ctx := testbrowser.New(t, chromedp.Flag("host-resolver-rules", "MAP other.test 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"))
	s := start(t, testApp(), nil)
	var mu sync.Mutex
	var console []string
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			mu.Lock()
			console = append(console, m.Text)
			mu.Unlock()
		}
	}()

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base(s)+"/"), chromedp.WaitVisible(`h1`)))
	refused, err := chromedp.Run(ctx, chromedp.Text(`body`))
	require.NoError(t, err)
	assert.Contains(t, refused, "Open the address the program printed")

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(s.URL()), chromedp.WaitVisible(`#next`)))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	assert.Equal(t, base(s)+"/", loc, "the token is not left in the address bar")
	title, err := chromedp.Run(ctx, chromedp.Text(`#title`))
	require.NoError(t, err)
	assert.Equal(t, "Local app", title)
	markers, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`({...document.documentElement.dataset, cookie: document.cookie})`))
	require.NoError(t, err)
	assert.Equal(t, "ran", markers["external"], "the app's own script file runs")
	assert.Empty(t, markers["inline"], "the inline script did not run")
	assert.Empty(t, markers["cookie"], "the token cookie is HttpOnly")

	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(t.TempDir(), "app.png"), shot, 0o644))
	if *updateScreenshot {
		require.NoError(t, os.WriteFile(filepath.Join("testdata", "app.png"), shot, 0o644))
		t.Logf("wrote testdata/app.png (%d bytes)", len(shot))
	}

	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`#next`), chromedp.WaitVisible(`#tab`)))
	tab, err := chromedp.Run(ctx, chromedp.Text(`#tab`))
	require.NoError(t, err)
	assert.Equal(t, "tab links", tab, "the link was followed with the cookie")
	loc, err = chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	assert.Equal(t, base(s)+"/next?tab=links", loc)
	markers, err = chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`({...document.documentElement.dataset})`))
	require.NoError(t, err)
	assert.Equal(t, "ran", markers["external"])
	assert.Empty(t, markers["inline"], "the inline script did not run on the second page either")

	mu.Lock()
	defer mu.Unlock()
	csp := 0
	for _, m := range console {
		if strings.Contains(m, "Content Security Policy") && strings.Contains(m, "inline script") {
			csp++
		}
	}
	assert.GreaterOrEqual(t, csp, 1, "the browser reported the blocked inline script: %q", console)

	// Followed from another site: a browser withholds the Strict cookie from
	// a redirect of that navigation, so the guard's page moves on itself.
	// (A second server: its own port, token and cookie name.)
	s2 := start(t, testApp(), nil)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<a id="open" href="%s">open the app</a>`, html.EscapeString(s2.URL()))
	}))
	defer other.Close()
	_, otherPort, _ := net.SplitHostPort(other.Listener.Addr().String())
	quick, cancel := context.WithTimeout(ctx, 20*time.Second) // a refusal page has no #next: fail soon
	defer cancel()
	require.NoError(t, chromedp.Do(quick, chromedp.Navigate("http://other.test:"+otherPort+"/"), chromedp.WaitVisible(`#open`),
		chromedp.Click(`#open`), chromedp.WaitVisible(`#next`)), "the app opened from another site's link")
	loc, err = chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	assert.Equal(t, base(s2)+"/", loc, "landed in the app, token dropped")
}
