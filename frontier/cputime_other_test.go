//go:build !unix

package frontier_test

// cpuTime is not measured on this platform.
func cpuTime() int64 { return 0 }
