package crawl

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/report"
	"github.com/politecrawl/polite/examples/audit/internal/store"
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

// IsTerminal reports whether w is a terminal; the progress line is drawn only there.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// termColumns is the width of the terminal w, or 0 when it is not known.
func termColumns(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return cols
}

// progressReserve is what the progress bar adds around our text: spinner, spaces, " [59m59s] ", and a
// column spare so the cursor never wraps.
const progressReserve = 14

// progress draws one self-updating line on stderr with the progressbar library.
type progress struct {
	mu      sync.Mutex // one writer at a time on w
	w       io.Writer
	bar     *progressbar.ProgressBar
	stop    chan struct{}
	done    sync.WaitGroup
	state   func() (queued int, politeness string, slowed bool)
	columns func() int // terminal width; the line is cut to fit, since a wrapped line cannot be redrawn in place
	started time.Time
	now     func() time.Time
	c       *counters
	phase   func() string // when set, the phase's own counts replace the crawl's (the rendered pass)
}

// startProgress starts redrawing every interval; state supplies the queue size and politeness state.
func startProgress(w io.Writer, c *counters, now func() time.Time, state func() (int, string, bool)) *progress {
	return StartPhaseProgress(w, c, now, state, nil)
}

// StartPhaseProgress is startProgress for a phase after the crawl, whose counts phase supplies.
func StartPhaseProgress(w io.Writer, c *counters, now func() time.Time, state func() (int, string, bool), phase func() string) *progress {
	p := &progress{phase: phase,
		bar: progressbar.NewOptions(-1,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSpinnerType(14),
			progressbar.OptionSetSpinnerChangeInterval(0), // we drive the redraws: no goroutine of its own
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionClearOnFinish(),
		),
		w: w, stop: make(chan struct{}), state: state, started: now(), now: now, c: c,
		columns: func() int { return termColumns(w) },
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
	queued, politeness, slowed := p.state()
	errs := p.c.errors.Load()
	counts := fmt.Sprintf("%d done / %d queued · %.1f req/s · %d error%s", p.c.pages.Load(), queued, rate, errs, store.Plural(int(errs)))
	if p.phase != nil {
		counts = p.phase()
	}
	line := counts + " · " + politeness
	if slowed {
		line = politeness + " · " + counts // the unusual state first, where a narrow terminal cannot cut it off
	}
	if cols := p.columns(); cols > progressReserve {
		line = report.TruncateRunes(line, cols-progressReserve)
	}
	return line
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

func (p *progress) Finish() {
	close(p.stop)
	p.done.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.bar.Finish()
	_ = p.bar.Clear()
}
