package frontier_test

import (
	"net/url"
	"testing"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/frontier"
	"github.com/politecrawl/polite/robots"
)

// The frontier is fetch's politeness gate, and robots.Cache its checker;
// any fetch.RobotsChecker serves the frontier too.
var (
	_ fetch.Gate          = (*frontier.Frontier)(nil)
	_ fetch.Gate          = frontier.Interface(nil)
	_ frontier.Interface  = (*frontier.Frontier)(nil)
	_ frontier.Robots     = (*robots.Cache)(nil)
	_ frontier.Robots     = fetch.RobotsChecker(nil)
	_ fetch.RobotsChecker = (*robots.Cache)(nil)
)

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
