package testsite

import (
	"bufio"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLoopbackArrivalIsKernelReceiveTime: Request.Arrived is when the
// request's first bytes reached the server's host, not when the handler
// ran: a request whose last line comes 60 ms after its first arrived
// before the last line was sent, while its handler started after. The
// next request on the same connection gets its own arrival.
func TestLoopbackArrivalIsKernelReceiveTime(t *testing.T) {
	s := New(t)
	s.HTML("/", "hi")
	c, err := net.Dial("tcp", s.Addr())
	require.NoError(t, err)
	defer c.Close()
	br := bufio.NewReader(c)
	read := func() {
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, 200, resp.StatusCode)
	}

	before1 := time.Now()
	_, err = c.Write([]byte("GET /?first HTTP/1.1\r\nHost: x\r\n"))
	require.NoError(t, err)
	time.Sleep(60 * time.Millisecond)
	before2 := time.Now()
	_, err = c.Write([]byte("\r\n"))
	require.NoError(t, err)
	read()

	before3 := time.Now()
	_, err = c.Write([]byte("GET /?second HTTP/1.1\r\nHost: x\r\n\r\n"))
	require.NoError(t, err)
	read()

	reqs := s.Requests()
	require.Len(t, reqs, 2)
	first, second := reqs[0], reqs[1]
	require.False(t, first.Arrived.IsZero(), "kernel receive timestamps on a Linux loopback site")
	require.False(t, first.Arrived.Before(before1), "arrived %v before it was sent (%v)", first.Arrived, before1)
	require.True(t, first.Arrived.Before(before2), "arrival %v is the first bytes' (sent %v), not the last's (%v)",
		first.Arrived, before1, before2)
	require.False(t, first.Time.Before(before2), "the handler ran once the request was complete")
	require.False(t, second.Arrived.Before(before3), "second request: arrived %v, sent %v", second.Arrived, before3)
	require.False(t, second.Arrived.After(second.Time), "arrival %v after the handler started (%v)", second.Arrived, second.Time)
}
