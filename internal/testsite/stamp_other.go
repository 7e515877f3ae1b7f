//go:build !linux

package testsite

import "net"

// stampListener leaves l alone: kernel receive timestamps are read on
// Linux only, and Request.Arrived stays zero elsewhere.
func stampListener(l net.Listener) net.Listener { return l }
