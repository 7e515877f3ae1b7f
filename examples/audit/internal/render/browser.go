package render

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/store"
)

// browserNames are the programs -browser looks for in PATH, in this order, when it is not given.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome"}

// FindBrowser returns the browser the rendered pass runs: the -browser value (a path or a name in PATH),
// or the first of browserNames found in PATH. Not finding one is a usage error: -render asked for
// something this machine cannot do, and the message says how to fix that.
func FindBrowser(flagValue string) (string, error) {
	if flagValue != "" {
		p, err := exec.LookPath(flagValue)
		if err != nil {
			return "", store.Usagef("-browser %s: not an executable browser (%v); install Chromium (on Debian: apt-get install chromium) or give its path", flagValue, errors.Unwrap(err))
		}
		return p, nil
	}
	for _, name := range browserNames {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", store.Usagef("-render needs a Chromium-based browser and none was found in PATH (looked for %s); install one (on Debian: apt-get install chromium) or give its path with -browser PATH",
		strings.Join(browserNames, ", "))
}

// browserFlags are the command-line switches of the one browser process of a rendered pass. The first
// group is what works on a locked-down machine (root, no network but the site's); the second keeps the
// browser from making requests of its own and makes every request of a page visible to the interception:
// no site isolation (a cross-site iframe would otherwise live in another process, out of the tab's
// reach), no automatic http -> https upgrade (an extra request the crawl never made).
func browserFlags(path string, resolve map[string]string) []chromedp.ExecAllocatorOption {
	opts := append([]chromedp.ExecAllocatorOption{}, chromedp.DefaultExecAllocatorOptions[:]...)
	opts = append(opts,
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),

		chromedp.Flag("disable-site-isolation-trials", true),
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,site-per-process,IsolateOrigins,"+
			"HttpsUpgrades,HttpsFirstBalancedModeAutoEnable,OptimizationHints,MediaRouter,AutofillServerCommunication"),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(1366, 900),
	)
	if rules := hostResolverRules(resolve); rules != "" {
		// -resolve sends the crawler to a staging address; the browser goes to the same place.
		opts = append(opts, chromedp.Flag("host-resolver-rules", rules))
	}
	return opts
}

// hostResolverRules turns -resolve entries ("host:port" -> "addr:port") into Chromium's
// --host-resolver-rules ("MAP host:port addr:port, ..."), sorted so the command line is stable.
func hostResolverRules(resolve map[string]string) string {
	var rules []string
	for from, to := range resolve {
		rules = append(rules, "MAP "+from+" "+to)
	}
	sort.Strings(rules)
	return strings.Join(rules, ", ")
}

// browser is the one headless browser process of a rendered pass. Its profile is a fresh temporary
// directory (chromedp makes it under $TMPDIR when no user-data-dir is given, and removes it, after
// killing any child process still using it, when the allocator is cancelled).
type browser struct {
	ctx         context.Context // the browser; tabs are chromedp.NewContext(ctx)
	cancelAlloc context.CancelFunc
	cancelCtx   context.CancelFunc
}

// startBrowser starts the browser and its first (blank) tab. It does not follow ctx: the browser is
// stopped by close, which the caller defers, so that Ctrl-C shuts it down in order rather than by a kill
// in the middle of writing its profile. The process is still killed by the kernel if this program dies
// (chromedp sets Pdeathsig on Linux).
func startBrowser(ctx context.Context, path string, resolve map[string]string) (*browser, error) {
	base := context.WithoutCancel(ctx)
	actx, cancelAlloc := chromedp.NewExecAllocator(base, browserFlags(path, resolve)...)
	bctx, cancelCtx := chromedp.NewContext(actx)
	b := &browser{ctx: bctx, cancelAlloc: cancelAlloc, cancelCtx: cancelCtx}
	// The first Do starts the process and attaches to its first tab. It must run on the browser's own
	// context (a derived one with a deadline would end the browser with it), so the wait is bounded here.
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(bctx) }()
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			b.close()
			// The error carries the browser's own output: enough of it to see why.
			return nil, fmt.Errorf("starting the browser %s: %s", path, crawl.Truncate(err.Error(), 800))
		}
	case <-timer.C:
		b.close()
		return nil, fmt.Errorf("starting the browser %s: no answer within 30s", path)
	case <-ctx.Done():
		b.close()
		return nil, ctx.Err()
	}
	return b, nil
}

// guard switches on the browser-wide interception, the safety net under each tab's: requests paused at
// the browser level are those a tab let go (they pass a second time) and those no tab saw at all, which
// the browser makes on its own behalf (favicons and declared icons, prefetches). decide returns whether
// to let one go; anything else is failed without being sent.
func (b *browser) guard(decide func(*fetch.EventRequestPaused) bool) error {
	br := chromedp.FromContext(b.ctx).Browser
	if err := chromedp.ListenBrowser(b.ctx, func(ev any) {
		e, ok := ev.(*fetch.EventRequestPaused)
		if !ok {
			return
		}
		go func() { // the listener must not block, nor send commands itself
			if decide(e) {
				_, _ = cdp.Call(b.ctx, br, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
				return
			}
			_, _ = cdp.Call(b.ctx, br, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
		}()
	}); err != nil {
		return err
	}
	_, err := cdp.Call(b.ctx, br, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}})
	return err
}

// close shuts the browser down: a graceful Browser.close first, and if that has not finished within a
// few seconds, the allocator's cancel, which kills the process. Cancelling the allocator also waits for
// the process to exit, kills leftover child processes and removes the profile directory, so when close
// returns no browser process of this run is left.
func (b *browser) close() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		defer cancel()
		_ = chromedp.Cancel(ctx)
	}()
	select {
	case <-done:
	case <-time.After(6 * time.Second):
	}
	b.cancelCtx()
	b.cancelAlloc() // waits for the process, kills leftovers, removes the profile
}

// hostOnly is the host name of a host[:port], lower-cased.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		hostport = h
	}
	return strings.ToLower(strings.Trim(hostport, "[]"))
}
