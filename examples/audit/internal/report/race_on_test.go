//go:build race

package report

// raceEnabled: the race detector is on (it slows SQLite many times over and changes the heap).
const raceEnabled = true
