package main

import (
	"context"
	"html"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/polite/internal/testsite"
)

// TestBuiltBinaryNeverFetchesReescapedDisallowedURLs builds the audit
// program with go build and crawls a loopback site with it, as a user
// does (no test hooks): the home page links to the five disallowed URLs
// of issue 18, as written and as net/url re-escapes them (%28 %29 %27),
// and to redirects into them. The site must see none of them requested.
func TestBuiltBinaryNeverFetchesReescapedDisallowedURLs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program")
	}
	dir := t.TempDir()
	bin := buildAudit(t)

	site := testsite.New(t)
	site.Robots("User-agent: *\nDisallow: /my%20page%20(draft)\nDisallow: /café(1)\nDisallow: /a(b c\nDisallow: /it's here\nDisallow: /q*(x)\n")
	targets := []string{
		"/my page (draft)", "/café(1)", "/a(b c", "/it's here", "/q/z(x) y",
		"/my%20page%20%28draft%29", "/caf%C3%A9%281%29", "/a%28b%20c", "/it%27s%20here", "/q/z%28x%29%20y",
	}
	var body strings.Builder
	body.WriteString("<title>Home</title><h1>Home</h1>")
	for i, target := range targets {
		hop := "/hop/" + strconv.Itoa(i)
		site.Redirect(hop, target, 302)
		body.WriteString(`<a href="` + html.EscapeString(target) + `">t</a> <a href="` + hop + `">hop</a> `)
	}
	body.WriteString(`<a href="/ok(1)">ok</a>`)
	site.HTML("/", body.String())
	site.HTML("/ok(1)", "<title>OK</title><h1>OK</h1>")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-db", filepath.Join(dir, "a.db"), "-quiet", site.URL()+"/")
	cmd.Dir = dir
	cmd.Env = os.Environ()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("audit: %v\n%s", err, out)
	}
	for _, r := range site.Requests() {
		p, _, _ := strings.Cut(r.Path, "?")
		d, err := url.PathUnescape(p)
		if err != nil {
			t.Fatalf("request %q: %v", r.Path, err)
		}
		for _, pre := range []string{"/my page (draft)", "/café(1)", "/a(b c", "/it's here"} {
			if strings.HasPrefix(d, pre) {
				t.Errorf("the audit requested %s, disallowed by robots.txt", r.Path)
			}
		}
		if strings.HasPrefix(d, "/q") && strings.Contains(d[2:], "(x)") {
			t.Errorf("the audit requested %s, disallowed by robots.txt", r.Path)
		}
	}
	if site.Count("/ok(1)") != 1 || site.Count("/hop/0") != 1 {
		t.Errorf("the crawl did not reach the allowed page and the redirects; the site saw %v\n%s", site.Paths(), out)
	}
}
