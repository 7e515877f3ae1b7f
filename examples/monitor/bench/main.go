// Command bench measures the monitor at a million tracked pages: it writes a
// database of -pages pages on -hosts hosts with -per-page snapshots each
// (store.Synthesize: the store's own layout, most snapshots unchanged, one
// page in ten changed once), then reports the database's size per
// snapshot, the scheduler's cost per tick with 100 and with -due pages due,
// the dashboard's first byte from the built `monitor serve`, and one
// `monitor run` of the built binary over -due due pages on -due hosts,
// served by a few loopback servers that answer for any host (-resolve),
// with the per-host gap checked from the servers' own request logs, and
// the peak RSS of serve and run.
//
// It is not part of the test suite (minutes of work, gigabytes of disk):
//
//	go build -o /tmp/monitor ./examples/monitor
//	go run ./examples/monitor/bench -bin /tmp/monitor -dir /tmp/monitor-bench
//
// Everything goes to loopback; the database is deleted at the end unless
// -keep.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite"

	"github.com/politecrawl/polite/examples/monitor/internal/store"
)

func main() {
	bin := flag.String("bin", "", "the built monitor binary (required)")
	dir := flag.String("dir", "/tmp/monitor-bench", "working directory (deleted at the end unless -keep)")
	pages := flag.Int("pages", 1_000_000, "tracked pages")
	hosts := flag.Int("hosts", 10_000, "hosts")
	perPage := flag.Int("per-page", 10, "snapshots per page")
	due := flag.Int("due", 10_000, "pages due for the tick and the run (one per host, so at most -hosts)")
	parallel := flag.Int("parallel", 256, "-parallel of the run")
	servers := flag.Int("servers", 4, "loopback servers answering for every host")
	keep := flag.Bool("keep", false, "keep the database")
	skipRun := flag.Bool("skip-run", false, "measure no run")
	reuse := flag.Bool("reuse", false, "use the database a run with -keep left in -dir instead of writing one")
	flag.Parse()
	if *bin == "" || *due > *hosts {
		flag.Usage()
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	db := filepath.Join(*dir, "monitor.db")
	if !*reuse {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(db + suffix)
		}
	}
	if !*keep {
		defer os.RemoveAll(*dir)
	}
	b := &bench{bin: *bin, db: db}
	fmt.Printf("machine: %s\n", loadavg())

	// 1. The database.
	start := time.Now()
	now := time.Now().UTC()
	interval := 6 * time.Hour
	cfg := store.SynthConfig{Pages: *pages, Hosts: *hosts, PerPage: *perPage, HostFormat: "http://h%05d.bench:8080",
		PathFormat: "/p/%07d", ChangedEvery: 10, BlockedEvery: 100, Interval: interval,
		// The last snapshot 5h ago: every page due in an hour.
		Start: now.Add(-5*time.Hour - time.Duration(*perPage-1)*interval)}
	if !*reuse {
		check(store.Synthesize(context.Background(), db, cfg))
	}
	fmt.Printf("synthesized %d pages on %d hosts, %d snapshots, in %s (load %s)\n", *pages, *hosts, *pages**perPage,
		time.Since(start).Round(time.Second), loadavg())
	b.sizes(*pages * *perPage)

	// 2. The scheduler's tick at 100 and at -due pages due.
	for _, n := range []int{100, *due} {
		b.setDue(n, now)
		b.tick(n, now)
	}

	// 3. The dashboard's first byte, from the built serve.
	b.dashboard()

	// 4. One run over -due due pages, one per host.
	if !*skipRun {
		b.setDue(*due, now)
		b.run(*due, *parallel, *servers)
	}
	fmt.Printf("machine at the end: %s\n", loadavg())
}

type bench struct{ bin, db string }

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load average unknown"
	}
	f := strings.Fields(string(b))
	return "load average " + strings.Join(f[:3], " ") + " on 2 cores"
}

func (b *bench) raw() *sql.DB {
	db, err := sql.Open("sqlite", b.db+"?_busy_timeout=10000")
	check(err)
	db.SetMaxOpenConns(1)
	return db
}

// sizes reports the file's bytes per snapshot and, from dbstat, what each
// table and index takes.
func (b *bench) sizes(snapshots int) {
	db := b.raw()
	defer db.Close()
	fi, err := os.Stat(b.db)
	check(err)
	fmt.Printf("database: %.2f GB, %.0f bytes per snapshot overall (texts, states and pages included)\n",
		float64(fi.Size())/1e9, float64(fi.Size())/float64(snapshots))
	rows, err := db.Query(`SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC`)
	check(err)
	defer rows.Close()
	var logBytes int64
	for rows.Next() {
		var name string
		var n int64
		check(rows.Scan(&name, &n))
		if n > 1<<20 {
			fmt.Printf("  %-32s %8.1f MB\n", name, float64(n)/1e6)
		}
		if strings.HasPrefix(name, "snapshot_log") {
			logBytes += n
		}
	}
	check(rows.Err())
	var states, contents int
	check(db.QueryRow(`SELECT (SELECT count(*) FROM snapshot_states), (SELECT count(*) FROM contents)`).Scan(&states, &contents))
	fmt.Printf("  %d states, %d distinct texts; snapshot_log and its indexes: %.1f bytes per snapshot (what an unchanged snapshot costs)\n",
		states, contents, float64(logBytes)/float64(snapshots))
}

// setDue makes pages 1..n (one per host) due a minute ago and every other
// page due in an hour. A minute late is on schedule (within
// schedule.CatchUpGrace), the steady state of a million pages every six
// hours: the run is not held to the backlog's catch-up rate.
func (b *bench) setDue(n int, now time.Time) {
	db := b.raw()
	defer db.Close()
	due, later := store.FmtTime(now.Add(-time.Minute)), store.FmtTime(now.Add(time.Hour))
	_, err := db.Exec(`UPDATE pages SET next_due = CASE WHEN id <= ? THEN ? ELSE ? END, retry_at = NULL
		WHERE next_due != CASE WHEN id <= ? THEN ? ELSE ? END OR retry_at IS NOT NULL`,
		n, due, later, n, due, later)
	check(err)
}

// tick times what the scheduler asks of the store on each pass: the due
// pages, then when the next one is due.
func (b *bench) tick(n int, now time.Time) {
	ctx := context.Background()
	st, err := store.Open(ctx, b.db, store.CreateIfMissing)
	check(err)
	defer st.Close()
	var times []time.Duration
	for range 7 {
		start := time.Now()
		due, err := st.DuePages(ctx, now)
		check(err)
		_, _, err = st.NextDue(ctx)
		check(err)
		times = append(times, time.Since(start))
		if len(due) != n {
			log.Fatalf("tick: %d due, want %d", len(due), n)
		}
	}
	slices.Sort(times)
	fmt.Printf("scheduler tick with %d of %d pages due: median %s (min %s, max %s) for DuePages + NextDue\n",
		n, pagesOf(st), times[len(times)/2].Round(10*time.Microsecond), times[0].Round(10*time.Microsecond),
		times[len(times)-1].Round(10*time.Microsecond))
}

func pagesOf(st *store.Store) int {
	t, err := st.Totals(context.Background())
	check(err)
	return t.Pages
}

func freePort() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	defer l.Close()
	return l.Addr().String()
}

// cpuTime is the user and system CPU time process pid has used so far
// (/proc/PID/stat, in clock ticks of 10 ms), or 0.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	var utime, stime int64
	fmt.Sscan(f[11], &utime)
	fmt.Sscan(f[12], &stime)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// peakRSS is the peak resident set of running process pid so far, in MiB
// (VmHWM of /proc/PID/status: the child's own, where the rusage of a
// finished child also counts the parent's memory at the fork), or 0.
func peakRSS(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			fmt.Sscan(rest, &kb)
			return kb / 1024
		}
	}
	return 0
}

// watchRSS samples peakRSS of pid every 50 ms until stop is closed and
// returns the last sample.
func watchRSS(pid int, stop <-chan struct{}) <-chan float64 {
	out := make(chan float64, 1)
	go func() {
		var last float64
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if v := peakRSS(pid); v > 0 {
				last = v
			}
			select {
			case <-stop:
				out <- last
				return
			case <-t.C:
			}
		}
	}()
	return out
}

func (b *bench) dashboard() {
	addr := freePort()
	cmd := exec.Command(b.bin, "serve", "-db", b.db, "-addr", addr)
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	check(cmd.Start())
	base := "http://" + addr
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(base + "/check")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			log.Fatalf("serve did not answer: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	client := &http.Client{}
	for _, target := range []string{"/", "/?host=" + url.QueryEscape("http://h00042.bench:8080"), "/?outcome=blocked",
		"/?outcome=ok&page=1000", "/page?url=" + url.QueryEscape("http://h00042.bench:8080/p/0000042")} {
		var times []time.Duration
		var status int
		cpu0 := cpuTime(cmd.Process.Pid)
		for range 11 {
			var wrote, first time.Time
			trace := &httptrace.ClientTrace{
				WroteRequest:         func(httptrace.WroteRequestInfo) { wrote = time.Now() },
				GotFirstResponseByte: func() { first = time.Now() },
			}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", base+target, nil)
			resp, err := client.Do(req)
			check(err)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			status = resp.StatusCode
			times = append(times, first.Sub(wrote))
		}
		cpu := (cpuTime(cmd.Process.Pid) - cpu0) / 11
		slices.Sort(times)
		fmt.Printf("dashboard %-52s HTTP %d first byte: median %s (min %s, max %s); serve's CPU per view %s\n", target, status,
			times[len(times)/2].Round(100*time.Microsecond), times[0].Round(100*time.Microsecond), times[len(times)-1].Round(100*time.Microsecond),
			cpu.Round(100*time.Microsecond))
	}
	rss := peakRSS(cmd.Process.Pid)
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	fmt.Printf("serve peak RSS: %.0f MiB\n", rss)
}

// request is one request a loopback server saw.
type request struct {
	host, path string
	start, end time.Time
}

// sites answers for every host: robots.txt allows all, every page is a
// few KB of HTML; it logs every request and counts those in flight per host.
type sites struct {
	mu       sync.Mutex
	log      []request
	inFlight map[string]int
	maxHost  int // most requests in flight to one host at once
}

func (s *sites) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rq := request{host: r.Host, path: r.URL.Path, start: time.Now()}
	s.mu.Lock()
	s.inFlight[r.Host]++
	s.maxHost = max(s.maxHost, s.inFlight[r.Host])
	s.mu.Unlock()
	if r.URL.Path == "/robots.txt" {
		fmt.Fprint(w, "User-agent: *\nAllow: /\n")
	} else {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>%s</title><h1>%s</h1><p>%s</p>", r.URL.Path, r.Host,
			strings.Repeat("pricing plans start at ten euros a month billed yearly cancel any time ", 30))
	}
	rq.end = time.Now()
	s.mu.Lock()
	s.inFlight[r.Host]--
	s.log = append(s.log, rq)
	s.mu.Unlock()
}

func (b *bench) run(due, parallel, servers int) {
	// Every host's robots.txt is fetched in the run, as on a first run
	// (a -reuse run would otherwise find them cached for the hour).
	db := b.raw()
	_, err := db.Exec(`DELETE FROM robots_cache`)
	check(err)
	check(db.Close())
	s := &sites{inFlight: map[string]int{}}
	var addrs []string
	for range servers {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		check(err)
		srv := &http.Server{Handler: s}
		go srv.Serve(l)
		defer srv.Close()
		addrs = append(addrs, l.Addr().String())
	}
	args := []string{"run", "-db", b.db, "-parallel", fmt.Sprint(parallel), "-gap", "1s", "-allow-private"}
	for h := range due {
		args = append(args, "-resolve", fmt.Sprintf("h%05d.bench:8080:%s", h, addrs[h%len(addrs)]))
	}
	cmd := exec.Command(b.bin, args...)
	out, err := os.Create(filepath.Join(filepath.Dir(b.db), "run.out"))
	check(err)
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, os.Stderr
	start := time.Now()
	check(cmd.Start())
	stop := make(chan struct{})
	rssc := watchRSS(cmd.Process.Pid, stop)
	check(cmd.Wait())
	wall := time.Since(start)
	close(stop)
	rss := <-rssc
	summary := lastLine(filepath.Join(filepath.Dir(b.db), "run.out"))
	fmt.Printf("run over %d due pages on %d hosts, -parallel %d -gap 1s: %s, %.1f snapshots/s, peak RSS %.0f MiB (load %s)\n  %s\n",
		due, due, parallel, wall.Round(100*time.Millisecond), float64(due)/wall.Seconds(), rss, loadavg(), summary)

	// The per-host promise, from the servers' side.
	s.mu.Lock()
	defer s.mu.Unlock()
	byHost := map[string][]request{}
	for _, r := range s.log {
		byHost[r.host] = append(byHost[r.host], r)
	}
	minGap, robots, overlaps, short := time.Duration(1<<62), 0, 0, 0
	for _, rs := range byHost {
		sort.Slice(rs, func(i, j int) bool { return rs[i].start.Before(rs[j].start) })
		for i, r := range rs {
			if r.path == "/robots.txt" {
				robots++
			}
			if i > 0 {
				gap := r.start.Sub(rs[i-1].start)
				minGap = min(minGap, gap)
				if gap < time.Second {
					short++
				}
				if r.start.Before(rs[i-1].end) {
					overlaps++
				}
			}
		}
	}
	fmt.Printf("  servers saw %d requests on %d hosts: %d robots.txt, at most %d in flight per host, %d overlaps, least gap between two starts on one host %s (%d gaps under 1 s as the server timestamps them)\n",
		len(s.log), len(byHost), robots, s.maxHost, overlaps, minGap.Round(time.Millisecond), short)
}

func lastLine(path string) string {
	b, err := os.ReadFile(path)
	check(err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
