package readme

import (
	"bytes"
	"context"
	"fmt"
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
			site.HTML("/", `<title>Home</title><a href="/a">A</a> <a href="/private/x">secret</a> <a href="https://elsewhere.example/">out</a>`)
			site.HTML("/a", `<title>A</title><a href="/">home</a> <a href="/b">B</a>`)
			site.HTML("/b", `<title>B</title>no links`)

			rctx, rcancel := context.WithTimeout(context.Background(), time.Minute)
			defer rcancel()
			var stdout, stderr bytes.Buffer
			cmd := exec.CommandContext(rctx, bin, site.URL()+"/")
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Run(), "README Go block %d failed:\nstdout:\n%s\nstderr:\n%s", i+1, stdout.String(), stderr.String())
			assert.NotEmpty(t, strings.TrimSpace(stdout.String()), "README Go block %d printed nothing", i+1)
			assert.Zero(t, site.Count("/private/x"), "README Go block %d requested a URL robots.txt forbids", i+1)
			assert.Equal(t, "/robots.txt", site.Paths()[0], "robots.txt first")
			t.Logf("block %d printed:\n%s", i+1, stdout.String())
		})
	}
}
