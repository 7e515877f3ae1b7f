package robots

import (
	"strings"
	"testing"
)

func TestRealisticRobotsShape(t *testing.T) {
	s := realisticRobots(1)
	ua := strings.Count(s, "User-agent:")
	wild := 0
	for _, l := range strings.Split(s, "\n") {
		if (strings.HasPrefix(l, "Allow:") || strings.HasPrefix(l, "Disallow:")) && strings.Contains(l, "*") {
			wild++
		}
	}
	t.Logf("size=%d user-agent lines=%d wildcard rules=%d", len(s), ua, wild)
	if len(s) < 25_000 || len(s) > 35_000 || ua < 140 || ua > 160 || wild < 480 || wild > 520 {
		t.Errorf("generated file is not the size the benchmarks claim: %d bytes, %d user-agents, %d wildcard rules", len(s), ua, wild)
	}
}
