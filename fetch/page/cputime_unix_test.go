//go:build unix

package page

import "syscall"

// cpuTime is the process's user+system CPU time in ns: benchmarks report
// it per op, which a machine shared with other work disturbs far less than
// wall-clock ns/op.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
