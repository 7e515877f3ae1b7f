//go:build unix

package fetch_test

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time: benchmarks report it per
// op, which a machine shared with other work disturbs far less than
// wall-clock ns/op.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
