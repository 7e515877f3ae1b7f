//go:build linux

package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkServeHostileChecksPeakRSS measures the peak RSS of the built
// `monitor serve` while 150 clients, each from its own loopback address,
// run free-tool checks at once against 150 hostile hosts: half announce a
// 2 GB body and stream without end, half send a gzip bomb (64 MiB of HTML
// in 64 KiB). A client answered 503 (the server-wide bound) tries again
// until its check is done. Reported: peak-RSS-MB (VmHWM of the server).
//
//	go test -run '^$' -bench ServeHostileChecksPeakRSS -benchtime 1x ./examples/monitor
func BenchmarkServeHostileChecksPeakRSS(b *testing.B) {
	const clients = 150
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	zw.Write([]byte("<!doctype html><title>bomb</title><p>"))
	line := bytes.Repeat([]byte("a "), 32<<10)
	for range (64 << 20) / len(line) {
		zw.Write(line)
	}
	zw.Close()
	hostile := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case "/bomb":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Length", strconv.Itoa(bomb.Len()))
			w.Write(bomb.Bytes())
		default:
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Length", strconv.Itoa(2<<30))
			chunk := bytes.Repeat([]byte("<p>word word word</p>\n"), 3000)
			for {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}
	})
	var targets []string
	for i := range clients {
		ln, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.%d:0", 2+i))
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: hostile}
		go srv.Serve(ln)
		b.Cleanup(func() { srv.Close() })
		path := "/big"
		if i%2 == 1 {
			path = "/bomb"
		}
		targets = append(targets, "http://"+ln.Addr().String()+path)
	}

	bin := monitorBinaryB(b)
	for range b.N {
		cmd := exec.Command(bin, "serve", "-db", filepath.Join(b.TempDir(), "mon.db"), "-addr", "127.0.0.1:0", "-allow-private")
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = io.Discard
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		first, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		go io.Copy(io.Discard, stdout)
		var addr string
		fmt.Sscanf(first, "serving http://%s", &addr)
		base := "http://" + strings.TrimSuffix(addr, "/")

		var wg sync.WaitGroup
		var busy, done atomic.Int64
		for i, target := range targets {
			wg.Go(func() {
				client := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{
					LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(2+i))}}).DialContext}}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				for ctx.Err() == nil {
					req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/check", strings.NewReader(url.Values{"url": {target}}.Encode()))
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
					resp, err := client.Do(req)
					if err != nil {
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == http.StatusServiceUnavailable {
						busy.Add(1)
						time.Sleep(50 * time.Millisecond)
						continue
					}
					if resp.StatusCode == http.StatusOK {
						done.Add(1)
					}
					return
				}
			})
		}
		wg.Wait()
		hwm := vmHWM(b, cmd.Process.Pid)
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		b.ReportMetric(float64(hwm)/1024, "peak-RSS-MB")
		b.ReportMetric(float64(done.Load()), "checks-done")
		b.ReportMetric(float64(busy.Load()), "503s")
	}
}

// vmHWM is the peak resident set of a process, in KiB.
func vmHWM(b *testing.B, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return kb
		}
	}
	b.Fatal("no VmHWM")
	return 0
}
