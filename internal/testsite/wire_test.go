package testsite

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWireKeepsHeadsAsSent: header names keep the client's spelling, and
// heads on one keep-alive connection are split at their blank lines.
func TestWireKeepsHeadsAsSent(t *testing.T) {
	w := NewWire(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		fmt.Fprint(rw, r.URL.Path)
	}))
	c, err := net.Dial("tcp", w.URL()[len("http://"):])
	require.NoError(t, err)
	defer c.Close()
	br := bufio.NewReader(c)
	for _, path := range []string{"/a", "/b"} {
		_, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nX-AGENT: 2-UA\r\n\r\n", path)
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, path, string(body))
	}
	assert.Equal(t, []string{
		"GET /a HTTP/1.1\r\nHost: x\r\nX-AGENT: 2-UA\r\n\r\n",
		"GET /b HTTP/1.1\r\nHost: x\r\nX-AGENT: 2-UA\r\n\r\n",
	}, w.Heads())
}
