package readme

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/testsite"
)

var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// TestREADMEGoBlocksBuildAndRun builds every Go block of README.md as a
// program of this module and runs it with a loopback site's start URL as
// its only argument: it must exit 0 within a minute, request nothing
// robots.txt forbids, and print something.
func TestREADMEGoBlocksBuildAndRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs with the go command")
	}
	goCmd, err := exec.LookPath("go")
	require.NoError(t, err, "the go command must be in PATH")
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	blocks := goBlock.FindAllSubmatch(readme, -1)
	require.NotEmpty(t, blocks, "README.md has no Go block")

	for i, m := range blocks {
		src := m[1]
		t.Run(fmt.Sprintf("block%d", i+1), func(t *testing.T) {
			require.True(t, bytes.HasPrefix(src, []byte("package main\n")),
				"README Go block %d must be a complete program (package main), so it is built and run here:\n%s", i+1, src)
			// A directory inside the module, so the program imports this
			// module's packages as a user's would import the release.
			require.NoError(t, os.MkdirAll("testdata", 0o755))
			dir, err := os.MkdirTemp("testdata", "prog")
			require.NoError(t, err)
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644))
			bin := filepath.Join(t.TempDir(), "prog")
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, goCmd, "build", "-o", bin, "./"+filepath.ToSlash(dir)).CombinedOutput()
			require.NoError(t, err, "README Go block %d does not build:\n%s", i+1, out)

			site := testsite.New(t)
			site.Robots("User-agent: *\nDisallow: /private/\n")
			site.HTML("/", `<title>Home</title><a href="/redir-chain">chain</a> <a href="/redir">R</a> <a href="/a">A</a> <a href="/private/x">secret</a> <a href="https://elsewhere.example/">out</a>`)
			site.Redirect("/redir", "/a", http.StatusMovedPermanently)
			site.Redirect("/redir-chain", "/redir", http.StatusFound)
			site.HTML("/a", `<title>A</title><a href="/">home</a> <a href="/b">B</a>`)
			site.HTML("/b", `<title>B</title>no links`)
			site.Redirect("/private/start", "/", http.StatusFound)

			rctx, rcancel := context.WithTimeout(context.Background(), time.Minute)
			defer rcancel()
			var stdout, stderr bytes.Buffer
			cmd := exec.CommandContext(rctx, bin, site.URL()+"/")
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Run(), "README Go block %d failed:\nstdout:\n%s\nstderr:\n%s", i+1, stdout.String(), stderr.String())
			assert.NotEmpty(t, strings.TrimSpace(stdout.String()), "README Go block %d printed nothing", i+1)
			assert.Zero(t, site.Count("/private/x"), "README Go block %d requested a URL robots.txt forbids", i+1)
			assert.Equal(t, "/robots.txt", site.Paths()[0], "robots.txt first")
			// /a is linked directly and reached through /redir and /redir-chain: requested once.
			assert.Equal(t, 1, site.Count("/a"), "README Go block %d requested /a more than once: %v", i+1, site.Paths())
			assert.Equal(t, 1, site.Count("/redir"), "README Go block %d: %v", i+1, site.Paths())
			t.Logf("block %d printed:\n%s", i+1, stdout.String())

			// A start URL robots.txt refuses: nothing is crawled, and the program says so and fails.
			before := site.Total()
			stdout.Reset()
			stderr.Reset()
			cmd = exec.CommandContext(rctx, bin, site.URL()+"/private/start")
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err = cmd.Run()
			require.Error(t, err, "README Go block %d exited 0 for a start URL robots.txt refuses:\n%s", i+1, stdout.String())
			assert.Contains(t, stderr.String(), "/private/start", "README Go block %d did not name the refused start URL", i+1)
			assert.Zero(t, site.Count("/private/start"), "README Go block %d requested a disallowed start URL", i+1)
			assert.LessOrEqual(t, site.Total()-before, 1, "README Go block %d crawled after a refused start (only robots.txt may be asked again)", i+1)
		})
	}
}
