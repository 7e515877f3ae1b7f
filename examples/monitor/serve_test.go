package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/testsite"
)

// lockedBuffer is a bytes.Buffer safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startServe runs `monitor serve` in-process until the test ends and
// returns its base URL, its output, and a function that stops it and
// returns its exit status.
func startServe(t *testing.T, e env, args ...string) (string, *lockedBuffer, *lockedBuffer, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrCh := make(chan string, 1)
	e.listening = func(addr string) { addrCh <- addr }
	var out, errOut lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- runEnv(ctx, append([]string{"serve", "-addr", "127.0.0.1:0"}, args...), &out, &errOut, e)
	}()
	var addr string
	select {
	case addr = <-addrCh:
	case code := <-done:
		cancel()
		t.Fatalf("serve exited %d: %s", code, errOut.String())
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("serve did not start listening")
	}
	code := -1
	stop := func() int {
		if code < 0 {
			cancel()
			code = <-done
		}
		return code
	}
	t.Cleanup(func() { stop() })
	return "http://" + addr, &out, &errOut, stop
}

var runLine = regexp.MustCompile(`run: (\d+) due, (\d+) snapshots \((\d+) with errors\)`)

// snapshotsIn sums the snapshots counted by every run line of out.
func snapshotsIn(out string) int {
	n := 0
	for _, m := range runLine.FindAllStringSubmatch(out, -1) {
		k, _ := strconv.Atoi(m[2])
		n += k
	}
	return n
}

// TestServeWatchAndRunShareTheDatabase: one process serves with -watch
// while a cron `run` works on the same database. SQLite in WAL mode with a
// busy timeout and immediate transactions: no "database is locked", every
// page checked exactly once (each check claims its page first), nothing
// lost, and the dashboard answers meanwhile.
func TestServeWatchAndRunShareTheDatabase(t *testing.T) {
	n := testsite.NewNetwork(t, testsite.Loopback)
	var sites []*testsite.Site
	var urls []string
	for h := range 4 {
		s := n.Add(fmt.Sprintf("h%d.test", h))
		s.Robots("User-agent: *\nAllow: /\n")
		for p := range 10 {
			path := fmt.Sprintf("/p%d", p)
			s.Route(path, testsite.Response{ContentType: "text/html", Body: htmlPage(path, "words "+path), Delay: 15 * time.Millisecond})
			urls = append(urls, "http://"+s.Host()+path)
		}
		sites = append(sites, s)
	}
	db := tempDB(t)
	clk := newFakeClock()
	slept := make(chan struct{}, 1)
	e := env{now: clk.Now, transport: n.Transport(), anyGap: true,
		sleep: func(ctx context.Context, d time.Duration) error {
			select { // the watch's first pass is over
			case slept <- struct{}{}:
			default:
			}
			<-ctx.Done()
			return ctx.Err()
		}}
	code, _, errOut := cli(t, e, append([]string{"track", "-db", db}, urls...)...)
	require.Equal(t, exitOK, code, errOut)

	// -catch-up at its ceiling: the 40 pages, never checked, are backlog, and the default 60 a minute
	// would spread them over 30 s of waiting; both processes now go at them at once.
	catchUp := fmt.Sprint(maxCatchUp)
	base, serveOut, serveErr, stop := startServe(t, e, "-db", db, "-watch", "-gap", "0s", "-parallel", "4", "-catch-up", catchUp)

	// A cron run at the same moment, on its own connection to the file.
	var runOut, runErr bytes.Buffer
	runDone := make(chan int, 1)
	go func() {
		runDone <- runEnv(context.Background(), []string{"run", "-db", db, "-gap", "0s", "-parallel", "4", "-catch-up", catchUp}, &runOut, &runErr, e)
	}()
	// The dashboard keeps answering while both write.
	for range 5 {
		resp, err := http.Get(base + "/")
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	}
	require.Equal(t, exitOK, <-runDone, "run: %s\n%s", runOut.String(), runErr.String())
	select {
	case <-slept:
	case <-time.After(30 * time.Second):
		t.Fatal("the watch's pass did not finish")
	}
	require.Equal(t, exitOK, stop(), serveErr.String())

	all := serveOut.String() + runOut.String() + serveErr.String() + runErr.String()
	assert.NotContains(t, all, "database is locked")
	assert.NotContains(t, all, "SQLITE_BUSY")
	assert.NotContains(t, all, "(5)", "SQLite's busy code")
	assert.Equal(t, len(urls), snapshotsIn(serveOut.String())+snapshotsIn(runOut.String()),
		"serve:\n%s\nrun:\n%s", serveOut.String(), runOut.String())
	st := openTestStore(t, db)
	snaps, err := st.Snapshots(context.Background())
	require.NoError(t, err)
	assert.Len(t, snaps, len(urls), "one snapshot per page, none lost")
	for _, s := range sites {
		for p := range 10 {
			assert.Equal(t, 1, s.Count(fmt.Sprintf("/p%d", p)), "%s/p%d checked exactly once", s.Host(), p)
		}
	}
	t.Logf("watch took %d, run took %d", snapshotsIn(serveOut.String()), snapshotsIn(runOut.String()))
}

func TestServeListensOnLoopbackByDefault(t *testing.T) {
	code, _, errOut := cli(t, env{}, "serve", "-h")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, errOut, `-addr string`)
	assert.Contains(t, errOut, `(default "127.0.0.1:8080")`)
	code, _, errOut = cli(t, env{}, "serve", "-db", tempDB(t), "-addr", "nonsense")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "-addr")
}
