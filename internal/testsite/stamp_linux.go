package testsite

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// stampListener turns on kernel receive timestamps (SO_TIMESTAMPNS) for
// the connections l accepts, so a request's arrival is the moment its
// bytes reached the host, not the later moment the server's goroutine got
// to run (which a loaded machine delays by milliseconds).
func stampListener(l net.Listener) net.Listener {
	tl, ok := l.(*net.TCPListener)
	if !ok {
		return l
	}
	stampsOn()
	if rc, err := tl.SyscallConn(); err == nil {
		// Set on the listener so that segments arriving before Accept
		// returns are stamped too; accepted sockets inherit it.
		_ = rc.Control(func(fd uintptr) { _ = enableStamps(fd) })
	}
	return stampingListener{tl}
}

// stampsOn makes sure the kernel stamps received packets before the
// first site is reachable. Setting SO_TIMESTAMPNS on the first socket of
// the system that asks for it only schedules the switch (Linux's
// net_enable_timestamp defers it to a workqueue); on a loaded machine
// that work runs after a test's first request has arrived, unstamped, and
// recvmsg then carries no timestamp at all for it. So once per process a
// loopback connection with the option set, kept open for the life of the
// process (holding the switch on, whatever sites close), is written to
// until what it reads comes back stamped.
var stampsOn = sync.OnceFunc(func() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return
	}
	defer l.Close()
	client, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		return
	}
	c, err := l.Accept()
	if err != nil {
		_ = client.Close()
		return
	}
	rc, err := c.(*net.TCPConn).SyscallConn()
	var serr error
	if err == nil {
		err = rc.Control(func(fd uintptr) { serr = enableStamps(fd) })
	}
	if err != nil || serr != nil {
		_ = client.Close()
		_ = c.Close()
		return
	}
	stampKeeper = [2]net.Conn{client, c}
	var buf [64]byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, err := client.Write([]byte{0}); err != nil {
			return
		}
		var oob [64]byte
		var oobn int
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			_, oobn, _, _, rerr = syscall.Recvmsg(int(fd), buf[:], oob[:], 0)
			return rerr != syscall.EAGAIN && rerr != syscall.EINTR
		}); err != nil || rerr != nil {
			return
		}
		if !kernelStamp(oob[:oobn]).IsZero() {
			return
		}
	}
})

// stampKeeper holds the connection of stampsOn open: only reachable, the
// garbage collector never closes it.
//
//lint:ignore U1000 written, never read: being reachable is its job
var stampKeeper [2]net.Conn

func enableStamps(fd uintptr) error {
	return syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
}

type stampingListener struct{ *net.TCPListener }

func (l stampingListener) Accept() (net.Conn, error) {
	c, err := l.AcceptTCP()
	if err != nil {
		return nil, err
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return c, nil
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = enableStamps(fd) }); err != nil || serr != nil {
		return c, nil
	}
	return &linuxStampConn{stampConn: stampConn{Conn: c, fresh: true}, tcp: c, rc: rc}, nil
}

// linuxStampConn reads with recvmsg to get each read's kernel timestamp.
type linuxStampConn struct {
	stampConn
	tcp *net.TCPConn // for CloseWrite, which http.Server uses
	rc  syscall.RawConn
}

func (c *linuxStampConn) CloseWrite() error { return c.tcp.CloseWrite() }

func (c *linuxStampConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var (
		n, oobn int
		rerr    error
		oob     [64]byte
	)
	// RawConn.Read waits on the runtime's poller and honours the read
	// deadlines http.Server sets.
	err := c.rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = syscall.Recvmsg(int(fd), p, oob[:], 0)
		return rerr != syscall.EAGAIN && rerr != syscall.EINTR
	})
	if err == nil && rerr != nil {
		err = os.NewSyscallError("recvmsg", rerr)
	}
	if err != nil {
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	if n == 0 {
		return 0, io.EOF
	}
	c.read(kernelStamp(oob[:oobn]))
	return n, nil
}

// kernelStamp returns the SCM_TIMESTAMPNS time in oob, or the zero time.
func kernelStamp(oob []byte) time.Time {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}
	}
	for _, m := range msgs {
		if m.Header.Level != syscall.SOL_SOCKET || m.Header.Type != syscall.SO_TIMESTAMPNS {
			continue
		}
		// struct timespec: two longs (the word size of the platform).
		switch w := unsafe.Sizeof(uintptr(0)); {
		case w == 8 && len(m.Data) >= 16:
			return time.Unix(int64(binary.NativeEndian.Uint64(m.Data)), int64(binary.NativeEndian.Uint64(m.Data[8:])))
		case w == 4 && len(m.Data) >= 8:
			return time.Unix(int64(int32(binary.NativeEndian.Uint32(m.Data))), int64(int32(binary.NativeEndian.Uint32(m.Data[4:]))))
		}
	}
	return time.Time{}
}
