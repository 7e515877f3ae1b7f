package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBuiltBinaryApp builds the audit program and runs `audit app -no-browser -addr 127.0.0.1:0` as a
// person does: it reads the printed address, checks that a request without the token, with another Host
// and a cross-origin POST are refused, starts a crawl over HTTP as the app's form does, sees a CLI crawl
// of the same file refused while it runs, and stops the app with Ctrl-C (SIGINT): exit 0.
func TestBuiltBinaryApp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program")
	}
	dir := t.TempDir()
	bin := buildAudit(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		time.Sleep(150 * time.Millisecond) // slow enough for the CLI to try while the app crawls
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var links strings.Builder
		for i := range 8 {
			fmt.Fprintf(&links, `<a href="/p%d">p%d</a>`, i, i)
		}
		fmt.Fprintf(w, "<title>Page %s</title>%s", r.URL.Path, links.String())
	}))
	defer site.Close()

	db := filepath.Join(dir, "shop.db")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"app", "-h"}, 0, "usage: audit app"},
		{[]string{"app", "-addr", "0.0.0.0:8080", "-db", db}, 2, "this app serves only this computer"},
		{[]string{"app", "-addr", ":8080", "-db", db}, 2, "not a loopback address"},
		{[]string{"app", "-addr", "127.0.0.1:99999", "-db", db}, 2, "not a number from 0 to 65535"},
		{[]string{"app", "https://shop.example/"}, 2, "the address to crawl is typed into the app"},
	} {
		out, err := exec.CommandContext(ctx, bin, tc.args...).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, out)
		assert.Contains(t, string(out), tc.says, "%v", tc.args)
	}
	app := startAppBinary(t, ctx, bin, "-addr", "127.0.0.1:0", "-db", db)
	cmd, stderr, c, base := app.cmd, app.stderr, app.client, app.base
	u, err := url.Parse(base)
	require.NoError(t, err)
	appURL := app.url

	resp, err := http.Get(base + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "no token")
	req, _ := http.NewRequest(http.MethodGet, appURL, nil)
	req.Host = "attacker.example:" + u.Port()
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode, "another Host")

	form := url.Values{"url": {site.URL + "/"}, "max_pages": {"9"}, "max_depth": {"5"}, "concurrency": {"2"}, "gap": {"0s"},
		"user_agent": {"CrawlCove-Crawler"}, "render": {"0"}}
	post := func(origin string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, base+"/crawl", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		resp, err := c.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, _ := post("http://attacker.example")
	assert.Equal(t, http.StatusForbidden, code, "a cross-origin POST")
	code, body := post(base)
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `id="live"`)

	// While the app crawls, a crawl of the same file from the command line is refused.
	cli := exec.CommandContext(ctx, bin, "-db", db, "-no-report", "-gap", "0s", site.URL+"/")
	out, err := cli.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", out)
	assert.Equal(t, 2, ee.ExitCode())
	assert.Contains(t, string(out), "one crawl at a time per database")

	deadline := time.Now().Add(time.Minute)
	for {
		_, home := get(t, c, base+"/")
		if strings.Contains(home, `class="outcome">finished`) {
			assert.Contains(t, home, site.URL+"/")
			break
		}
		require.True(t, time.Now().Before(deadline), "the crawl did not finish: %s", home)
		time.Sleep(100 * time.Millisecond)
	}
	_, explore := get(t, c, base+"/crawls/1")
	assert.Contains(t, explore, "Page /p0")

	// The same crawl from the command line, now that the app is idle, writes the same rows.
	out, err = exec.CommandContext(ctx, bin, "-db", db, "-no-report", "-max-pages", "9", "-concurrency", "2", "-gap", "0s", site.URL+"/").CombinedOutput()
	require.NoError(t, err, "%s", out)
	rdb, err := store.OpenReadDB(ctx, db)
	require.NoError(t, err)
	defer rdb.Close()
	rows := func(id int64) []string {
		pages, err := store.LoadFullPages(ctx, rdb, id)
		require.NoError(t, err)
		var out []string
		for _, p := range pages {
			out = append(out, fmt.Sprintf("%s %d %q depth %d links %d/%d", p.URL, p.Status, p.Title, p.Depth, p.Internal, p.External))
		}
		links, err := store.ForCrawl(rdb, id).LoadLinks(ctx)
		require.NoError(t, err)
		return append(out, fmt.Sprintf("%d links", len(links)))
	}
	assert.Equal(t, rows(1), rows(2), "the app's crawl and the command line's wrote the same rows")

	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	require.NoError(t, cmd.Wait(), "stderr: %s", stderr.String())
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// builtAudit is the program as a user builds it (go build, no race detector, no test hooks), built once
// per test binary into the shared runs' directory (removed by TestMain). Tests only run it.
var builtAudit struct {
	once sync.Once
	bin  string
	err  error
}

// buildAudit returns the built program, building it the first time.
func buildAudit(t *testing.T) string {
	t.Helper()
	builtAudit.once.Do(func() {
		dir, err := os.MkdirTemp(sharedDir(t), "bin-")
		if err != nil {
			builtAudit.err = err
			return
		}
		bin := filepath.Join(dir, "audit")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			builtAudit.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		builtAudit.bin = bin
	})
	require.NoError(t, builtAudit.err)
	return builtAudit.bin
}

// appProcess is a running `audit app -no-browser` of the built binary, and a client holding its cookie.
type appProcess struct {
	cmd    *exec.Cmd
	url    string // the printed, tokened address
	base   string
	client *http.Client
	stderr *strings.Builder
}

func startAppBinary(t *testing.T, ctx context.Context, bin string, args ...string) *appProcess {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, append([]string{"app", "-no-browser"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	p := &appProcess{cmd: cmd, stderr: &strings.Builder{}}
	cmd.Stderr = p.stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addrRE := regexp.MustCompile(`Open this address in your browser: (http://127\.0\.0\.1:\d+/\?token=\S+)`)
	lines := bufio.NewScanner(stdout)
	var appURL string
	for lines.Scan() {
		if m := addrRE.FindStringSubmatch(lines.Text()); m != nil {
			appURL = m[1]
			break
		}
	}
	require.NotEmpty(t, appURL, "the printed address; stderr: %s", p.stderr.String())
	go io.Copy(io.Discard, stdout)
	u, err := url.Parse(appURL)
	require.NoError(t, err)
	p.base, p.url = "http://"+u.Host, appURL
	jar, _ := cookiejar.New(nil)
	p.client = &http.Client{Jar: jar, Timeout: 30 * time.Second}
	code, _ := get(t, p.client, appURL)
	require.Equal(t, http.StatusOK, code)
	return p
}

func (p *appProcess) post(t *testing.T, path string, form url.Values) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", p.base)
	resp, err := p.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestBuiltBinaryAppKilledCrawlResumes kills the app (kill -9) in the middle of a crawl: the file is not
// left locked, a new app offers the crawl for resume, and the resumed crawl ends with every page, as an
// uninterrupted crawl of the command line has them.
func TestBuiltBinaryAppKilledCrawlResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program")
	}
	dir := t.TempDir()
	bin := buildAudit(t)
	const n = 30
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<title>Page %s</title>", r.URL.Path)
		for i := range n {
			fmt.Fprintf(w, `<a href="/p%d">p%d</a>`, i, i)
		}
	}))
	defer site.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db := filepath.Join(dir, "shop.db")

	first := startAppBinary(t, ctx, bin, "-db", db)
	form := url.Values{"url": {site.URL + "/"}, "max_pages": {"500"}, "max_depth": {"5"}, "concurrency": {"1"}, "gap": {"100ms"},
		"user_agent": {"CrawlCove-Crawler"}, "render": {"0"}}
	code, body := first.post(t, "/crawl", form)
	require.Equal(t, http.StatusOK, code, body)
	rdb, err := store.OpenReadDB(ctx, db)
	require.NoError(t, err)
	defer rdb.Close()
	for {
		row, err := store.LoadCrawl(ctx, rdb, 1)
		if err == nil && row.Pages >= 5 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, first.cmd.Process.Kill())
	first.cmd.Wait()

	second := startAppBinary(t, ctx, bin, "-db", db)
	_, home := get(t, second.client, second.base+"/")
	assert.Contains(t, home, `<td class="outcome">running</td>`, "the killed crawl is still marked running")
	assert.Contains(t, home, `class="resume"`, "and offered for resume: its process is gone")
	code, body = second.post(t, "/resume", url.Values{"crawl": {"1"}})
	require.Equal(t, http.StatusOK, code, body)
	deadline := time.Now().Add(time.Minute)
	for {
		row, err := store.LoadCrawl(ctx, rdb, 1)
		require.NoError(t, err)
		if row.Outcome == "finished" {
			break
		}
		require.True(t, time.Now().Before(deadline), "the resumed crawl did not finish: %+v", row)
		time.Sleep(50 * time.Millisecond)
	}
	out, err := exec.CommandContext(ctx, bin, "-db", db, "-no-report", "-concurrency", "1", "-gap", "0s", site.URL+"/").CombinedOutput()
	require.NoError(t, err, "%s", out)
	urls := func(id int64) []string {
		pages, err := store.LoadFullPages(ctx, rdb, id)
		require.NoError(t, err)
		var out []string
		for _, p := range pages {
			out = append(out, fmt.Sprintf("%s %d", p.URL, p.Status))
		}
		return out
	}
	assert.Len(t, urls(1), n+1)
	assert.Equal(t, urls(2), urls(1), "the resumed crawl has the pages of an uninterrupted one")
}
