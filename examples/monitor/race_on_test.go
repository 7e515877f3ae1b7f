//go:build race

package main

// raceOn: the race detector slows the SQLite-heavy tests about tenfold.
const raceOn = true
