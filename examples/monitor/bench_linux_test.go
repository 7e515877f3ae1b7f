//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRunProcess1000Pages50Hosts runs one `run` over 1,000 due pages on
// 50 loopback hosts (gap 0, -parallel 16) as a separate process, reached
// through -resolve like the real command, and reports its peak RSS and the
// robots.txt requests the sites saw.
func BenchmarkRunProcess1000Pages50Hosts(b *testing.B) {
	n, sites, urls := benchNetwork(b)
	template := trackedDB(b, urls)
	var resolve []string
	for hostPort, addr := range n.Resolve() {
		resolve = append(resolve, "-resolve", hostPort+":"+addr)
	}
	dir := b.TempDir()
	i := 0
	var robots int
	var maxRSS int64
	var wall time.Duration
	for b.Loop() {
		b.StopTimer()
		i++
		db := filepath.Join(dir, fmt.Sprintf("run%d.db", i))
		copyFile(b, template, db)
		before := robotsRequests(sites)
		args := append([]string{"run", "-db", db, "-gap", "0s", "-catch-up", "1e9", "-parallel", "16", "-allow-private"}, resolve...)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "MONITOR_CHILD=1", "MONITOR_CHILD_ARGS="+strings.Join(args, "\x1f"))
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		b.StartTimer()
		start := time.Now()
		err := cmd.Run()
		wall += time.Since(start)
		b.StopTimer()
		if err != nil || !strings.Contains(out.String(), "run: 1000 due, 1000 snapshots (0 with errors)") {
			b.Fatalf("%v\n%s\n%s", err, lastLine(out.String()), errOut.String())
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			maxRSS = max(maxRSS, ru.Maxrss) // KiB on Linux
		}
		robots += robotsRequests(sites) - before
		os.Remove(db)
		b.StartTimer()
	}
	b.ReportMetric(float64(maxRSS)/1024, "peak-RSS-MiB")
	b.ReportMetric(float64(robots)/float64(i), "robots.txt/op")
}
