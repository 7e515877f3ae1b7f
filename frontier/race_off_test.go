//go:build !race

package frontier_test

// raceEnabled is true under -race, where the 1M-URL memory test is skipped.
const raceEnabled = false
