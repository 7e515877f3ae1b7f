package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawSite is a loopback HTTP/1.1 server that keeps every request head as the
// bytes on the wire: Go's server canonicalises header names, so only a raw
// reader can tell X-AGENT from X-Agent.
type rawSite struct {
	ln    net.Listener
	mu    sync.Mutex
	heads []string
	wg    sync.WaitGroup
}

func newRawSite(t *testing.T) *rawSite {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &rawSite{ln: ln}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Go(func() { s.serve(c) })
		}
	})
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *rawSite) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(io.LimitReader(c, 1<<20))
	for {
		var head strings.Builder
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			head.WriteString(line)
			if line == "\r\n" {
				break
			}
		}
		s.mu.Lock()
		s.heads = append(s.heads, head.String())
		s.mu.Unlock()
		body, status := "<title>raw</title><h1>raw</h1>", "200 OK"
		if strings.HasPrefix(head.String(), "GET /robots.txt ") {
			body, status = "", "404 Not Found"
		}
		if _, err := fmt.Fprintf(c, "HTTP/1.1 %s\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s", status, len(body), body); err != nil {
			return
		}
	}
}

func (s *rawSite) Heads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.heads...)
}

func TestXAgentHeaderSpelledAsThePageSaysOnTheWire(t *testing.T) {
	s := newRawSite(t)
	db := tempDB(t)
	page := "http://" + s.ln.Addr().String() + "/p"
	e := env{anyGap: true} // the real base transport, as the command uses it
	code, _, errOut := cli(t, e, "track", "-db", db, page)
	require.Equal(t, exitOK, code, errOut)
	code, out, errOut := cli(t, e, "run", "-db", db, "-gap", "0s")
	require.Equal(t, exitOK, code, "%s\n%s", out, errOut)

	heads := s.Heads()
	require.Len(t, heads, 2, "robots.txt and the page")
	assert.True(t, strings.HasPrefix(heads[0], "GET /robots.txt "), heads[0])
	assert.True(t, strings.HasPrefix(heads[1], "GET /p "), heads[1])
	for _, h := range heads {
		assert.Contains(t, h, "\r\nX-AGENT: 2-UA\r\n", h)
		assert.Equal(t, 1, strings.Count(strings.ToLower(h), "\r\nx-agent:"), "one X-AGENT header only:\n%s", h)
		assert.Contains(t, h, "\r\nUser-Agent: "+defaultUserAgent+"\r\n", h)
	}
}
