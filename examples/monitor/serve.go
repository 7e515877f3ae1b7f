package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
	"github.com/politecrawl/polite/examples/monitor/internal/web"
)

// serve runs `monitor serve`: the site on o.addr and, with -watch, the
// scheduler in the same process, until ctx ends.
func serve(ctx context.Context, m *monitor, e env, stdout, stderr io.Writer) error {
	s, err := newServer(m, stderr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", m.o.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", m.o.addr, err)
	}
	addr := ln.Addr().String()
	fmt.Fprintf(stdout, "serving http://%s/ (database %s)\n", addr, m.o.db)
	if host, _, _ := net.SplitHostPort(addr); !isLoopbackHost(host) {
		fmt.Fprintf(stderr, "monitor serve: listening on %s, not loopback: anyone who can reach it can use the free tool and track pages\n", addr)
	}
	if e.listening != nil {
		e.listening(addr)
	}
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    32 << 10,
		ErrorLog:          s.ErrorLog(),
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var watchErr error
	if m.o.alerts.publicURL == "" {
		m.o.alerts.publicURL = "http://" + addr
	}
	if m.o.watch {
		wg.Go(func() { m.alertSender().Run(ctx) })
		wg.Go(func() {
			watchErr = m.runner().Watch(ctx, &syncWriter{w: stdout}, e.sleeper())
			if watchErr != nil {
				cancel() // the database failed: stop serving too
			}
		})
	}
	wg.Go(func() {
		<-ctx.Done()
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		srv.Shutdown(sctx)
	})
	err = srv.Serve(ln)
	cancel()
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, watchErr)
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	a, err := net.ResolveIPAddr("ip", h)
	return err == nil && a.IP.IsLoopback()
}

// syncWriter serialises writes of the scheduler's goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// newServer wires the web surfaces to this process: its store, its free
// tool (the same check as `monitor check`), the CLI's URL and interval
// checks, and its address guard.
func newServer(m *monitor, errOut io.Writer) (*web.Server, error) {
	tool, err := newFreeTool(m)
	if err != nil {
		return nil, err
	}
	return web.New(web.Config{
		Store:          m.st,
		Check:          tool.check,
		CheckURL:       m.taker().CheckURL,
		CanonicalURL:   canonicalURL,
		ValidInterval:  validInterval,
		MinInterval:    minInterval,
		When:           snapshot.When,
		Duration:       fmtDuration,
		UserAgent:      m.o.userAgent,
		Token:          m.token,
		Addr:           m.o.addr,
		CheckRate:      m.o.checkRate,
		CheckBurst:     m.o.checkBurst,
		ChecksInFlight: m.o.checksInFlight,
		CheckNow: func(ctx context.Context, u string) (string, error) {
			_, line, err := m.runner().RunNow(ctx, u)
			return line, err
		},
		Now:      m.now,
		ErrorLog: errOut,

		NewAlertChannel:  m.newAlertChannel,
		TestAlertChannel: m.testChannel,
	})
}
