//go:build race

package fetch_test

// raceEnabled is true under -race, where allocation counts are not exact.
const raceEnabled = true
