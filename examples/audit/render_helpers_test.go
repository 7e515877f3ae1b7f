package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/politecrawl/polite/examples/audit/internal/render"
	"github.com/politecrawl/polite/internal/testsite"
)

// requireBrowser returns the browser the rendered-pass tests run. Under CI a missing browser fails the
// test (CI installs it); elsewhere the test is skipped with the way to install one.
func requireBrowser(t testing.TB) string {
	t.Helper()
	p, err := render.FindBrowser("")
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("the rendered pass tests need Chromium and CI must have it: %v", err)
	}
	t.Skipf("skipping: no browser for the rendered pass (%v); install one with: apt-get install chromium", err)
	return ""
}

// resolveArgs are -resolve flags sending every site of a loopback network's hosts to its listener, so
// that the crawler and the browser reach the same servers by name.
func resolveArgs(n *testsite.Network) []string {
	var args []string
	for k, v := range n.Resolve() {
		args = append(args, "-resolve", k+":"+v)
	}
	return args
}

// jsPage is an HTML page with a title, description, h1, extra head markup and extra body markup.
func jsPage(title, h1, head, body string) string {
	t := ""
	if title != "" {
		t = "<title>" + title + "</title>"
	}
	return fmt.Sprintf(`<!doctype html><html><head>%s<meta name="description" content="About %s">%s</head><body><h1>%s</h1><p>Some words about %s.</p>%s</body></html>`,
		t, title, head, h1, title, body)
}

// script is a JavaScript response for a route.
func script(body string) testsite.Response {
	return testsite.Response{ContentType: "text/javascript", Body: body}
}

// browserUA reports whether a request came from the rendered pass's browser.
func browserUA(r testsite.Request) bool {
	return strings.Contains(r.Header.Get("User-Agent"), "Chrome")
}

// paths lists the request paths of reqs matching keep, sorted.
func paths(reqs []testsite.Request, keep func(testsite.Request) bool) []string {
	var out []string
	for _, r := range reqs {
		if keep(r) {
			out = append(out, r.Path)
		}
	}
	sort.Strings(out)
	return out
}
