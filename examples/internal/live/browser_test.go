package live

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/testbrowser"
)

// -update-screenshot writes testdata/live.png from TestLiveCountersInBrowser.
var updateScreenshot = flag.Bool("update-screenshot", false, "write testdata/live.png from the browser test")

// page is one crawled page, as the live list shows it.
type page struct {
	URL    string `json:"url"`
	Status int    `json:"status"`
}

// TestLiveCountersInBrowser opens a page (script from a file, served behind
// localweb's guard and CSP) whose EventSource shows the hub's counters, and
// publishes at 1,000, 10,000 and 50,000 events a second: the counters move
// while the publisher runs, arrive in order, and end at exactly what was
// published; the page gets at most one message per Interval. It logs, per
// rate, the messages a second the page received and how far behind the
// published count the page's was.
func TestLiveCountersInBrowser(t *testing.T) {
	ctx := testbrowser.New(t)
	h := &Hub{}
	mux := http.NewServeMux()
	mux.Handle("GET /events", h)
	for _, f := range []string{"live.html", "live.js", "live.css"} {
		route := "GET /" + f
		if f == "live.html" {
			route = "GET /{$}"
		}
		mux.HandleFunc(route, func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, filepath.Join("testdata", f)) })
	}
	s, _ := serveBehindGuard(t, mux, nil)

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(s.URL())))
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("pages").textContent === "0"`))
	require.NoError(t, err)

	var total atomic.Int64
	readPage := func() (pages, messages int64) {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[document.getElementById("pages").textContent, document.getElementById("messages").textContent]`))
		require.NoError(t, err)
		pages, _ = strconv.ParseInt(v[0], 10, 64)
		messages, _ = strconv.ParseInt(v[1], 10, 64)
		return pages, messages
	}

	for _, rate := range []int{1_000, 10_000, 50_000} {
		const phase = 2 * time.Second
		_, messagesBefore := readPage()
		base := total.Load()
		start := time.Now()
		done := make(chan struct{})
		go func() { // on schedule, every 5 ms, as many events as are due
			defer close(done)
			want := int64(rate) * int64(phase/time.Millisecond) / 1000
			for n := int64(0); n < want; {
				time.Sleep(5 * time.Millisecond)
				due := min(want, int64(rate)*int64(time.Since(start)/time.Microsecond)/1_000_000)
				for ; n < due; n++ {
					i := total.Add(1)
					h.Publish(Event{
						Add:  map[string]int64{"pages": 1, "requests": 1},
						Set:  map[string]string{"politeness": fmt.Sprintf("%d events/s", rate)},
						Item: page{URL: "https://shop.example/p/" + strconv.FormatInt(i, 10), Status: 200},
					})
				}
			}
		}()
		var seen []int64
		var maxLag int64
		for sampling := true; sampling; {
			select {
			case <-done:
				sampling = false
			case <-time.After(200 * time.Millisecond):
				published := total.Load()
				shown, _ := readPage()
				seen = append(seen, shown)
				maxLag = max(maxLag, published-shown)
			}
		}
		elapsed := time.Since(start)
		end := total.Load()
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](
			fmt.Sprintf(`document.getElementById("pages").textContent === "%d"`, end)))
		require.NoError(t, err, "the page ends at the published count")
		caughtUp := time.Since(start) - elapsed
		_, messagesAfter := readPage()
		got := messagesAfter - messagesBefore
		published := end - base
		assert.LessOrEqual(t, got, int64(time.Since(start)/DefaultInterval)+2, "at most one message per Interval")
		moving := 0
		for i := 1; i < len(seen); i++ {
			assert.GreaterOrEqual(t, seen[i], seen[i-1], "the counter never goes back")
			if seen[i] > seen[i-1] {
				moving++
			}
		}
		assert.GreaterOrEqual(t, moving, 3, "the counter moved while the publisher ran: %v", seen)
		t.Logf("%6d events/s asked: published %d in %v (%.0f/s); page received %d messages (%.1f/s); shown count at most %d events (%.0f ms) behind; final count on the page %v after the last publish",
			rate, published, elapsed.Round(time.Millisecond), float64(published)/elapsed.Seconds(), got,
			float64(got)/time.Since(start).Seconds(), maxLag, float64(maxLag)/float64(published)*elapsed.Seconds()*1000, caughtUp.Round(time.Millisecond))
	}

	flags, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`({...document.body.dataset, inline: document.documentElement.dataset.inline ?? ""})`))
	require.NoError(t, err)
	assert.Equal(t, "true", flags["inOrder"], "every message came in order, with its items following the last ones")
	assert.Equal(t, "0", flags["errors"], "the stream never failed or reconnected")
	assert.Empty(t, flags["inline"], "the page's inline script is blocked by the CSP; the file script ran")
	latest, err := chromedp.Run(ctx, chromedp.Text(`#latest li`))
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("200 https://shop.example/p/%d", total.Load()), latest, "the newest page is first")

	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(t.TempDir(), "live.png"), shot, 0o644))
	if *updateScreenshot {
		require.NoError(t, os.WriteFile(filepath.Join("testdata", "live.png"), shot, 0o644))
		t.Logf("wrote testdata/live.png (%d bytes)", len(shot))
	}
	t.Logf("hub: %+v", h.Stats())
}
