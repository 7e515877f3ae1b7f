// Package testbrowser starts the real headless Chromium that the project's
// browser tests drive with chromedp. Under CI a missing browser fails the
// test (CI installs Debian's chromium); elsewhere the test is skipped with
// the way to install it.
package testbrowser

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Names are the programs looked for in PATH, in order.
var Names = []string{"chromium", "chromium-browser", "google-chrome"}

// Path returns the Chromium binary, or skips (under CI: fails) the test.
func Path(t testing.TB) string {
	t.Helper()
	for _, name := range Names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("Chromium is required under CI and was not found: apt-get install chromium")
	}
	t.Skip("Chromium not found; to run this test: apt-get install chromium")
	return ""
}

// New starts headless Chromium with a fresh profile in the test's temp dir
// and returns a tab context that ends after two minutes; the browser is shut
// down (and waited for) when the test ends. The flags work as root on a
// machine without network, and no name is looked up: the pages under test
// are on loopback, and nothing may leave the machine. opts are applied
// after the defaults.
func New(t testing.TB, opts ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	all := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Path(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("no-proxy-server", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.Flag("dns-prefetch-disable", true),
		chromedp.Flag("disable-features", "AsyncDns,DnsOverHttps,MediaRouter,OptimizationHints,Translate"),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(all, opts...)...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() {
		cancelTime()
		cancelTab()
		cancelAlloc() // waits for the browser to exit, before its profile directory is removed
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}
