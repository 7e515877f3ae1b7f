//go:build !unix

package fetch_test

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
