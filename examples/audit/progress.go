package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// counters are the crawl's running totals, read by the progress line and the summary.
type counters struct {
	pages    atomic.Int64 // page rows written: fetched or blocked
	fetched  atomic.Int64
	blocked  atomic.Int64
	errors   atomic.Int64 // pages that failed or answered >= 400
	requests atomic.Int64 // every HTTP request sent (robots.txt, sitemaps, pages, retries, probes)
}

// isTerminal reports whether w is a terminal; the progress line is drawn only there.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress draws one self-updating line on stderr with the progressbar library.
type progress struct {
	mu      sync.Mutex // one writer at a time on w
	w       io.Writer
	bar     *progressbar.ProgressBar
	stop    chan struct{}
	done    sync.WaitGroup
	state   func() (queued int, politeness string)
	started time.Time
	now     func() time.Time
	c       *counters
}

// startProgress starts redrawing every interval; state supplies the queue size and politeness state.
func startProgress(w io.Writer, c *counters, now func() time.Time, state func() (int, string)) *progress {
	p := &progress{
		bar: progressbar.NewOptions(-1,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSpinnerType(14),
			progressbar.OptionSetSpinnerChangeInterval(0), // we drive the redraws: no goroutine of its own
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionClearOnFinish(),
		),
		w: w, stop: make(chan struct{}), state: state, started: now(), now: now, c: c,
	}
	p.redraw()
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.redraw()
			}
		}
	}()
	return p
}

func (p *progress) line() string {
	secs := p.now().Sub(p.started).Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(p.c.requests.Load()) / secs
	}
	queued, politeness := p.state()
	return fmt.Sprintf("%d done / %d queued · %.1f req/s · %d errors · %s", p.c.pages.Load(), queued, rate, p.c.errors.Load(), politeness)
}

func (p *progress) redraw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bar.Describe(p.line())
	_ = p.bar.Set64(p.c.pages.Load())
}

// println writes a message line: the progress line is cleared first and redrawn by the next tick.
func (p *progress) println(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.bar.Clear()
	fmt.Fprintln(p.w, msg)
}

func (p *progress) finish() {
	close(p.stop)
	p.done.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.bar.Finish()
	_ = p.bar.Clear()
}
