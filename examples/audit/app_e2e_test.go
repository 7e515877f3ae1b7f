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
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
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
	bin := filepath.Join(dir, "audit")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
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
	cmd := exec.CommandContext(ctx, bin, "app", "-no-browser", "-addr", "127.0.0.1:0", "-db", db)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()

	lines := bufio.NewScanner(stdout)
	var appURL string
	addrRE := regexp.MustCompile(`Open this address in your browser: (http://127\.0\.0\.1:\d+/\?token=\S+)`)
	for lines.Scan() {
		if m := addrRE.FindStringSubmatch(lines.Text()); m != nil {
			appURL = m[1]
			break
		}
	}
	require.NotEmpty(t, appURL, "the printed address; stderr: %s", stderr.String())
	go io.Copy(io.Discard, stdout)
	u, err := url.Parse(appURL)
	require.NoError(t, err)
	base := "http://" + u.Host

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

	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err = c.Get(appURL)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

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
