package main

import (
	"time"

	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
	"github.com/politecrawl/polite/examples/monitor/internal/store"
)

// maxJitter is how much later than six hours a page tracked every six hours
// may be due again (store.Jitter): tests that wait "one interval" wait this
// much longer.
const maxJitter = 6 * time.Hour / store.JitterDivisor

// dueAfter is when a page checked at the given time (UTC, "2006-01-02
// 15:04:05Z") every six hours is due again, as status prints it.
func dueAfter(url, checked string) string {
	t, err := time.Parse("2006-01-02 15:04:05Z", checked)
	if err != nil {
		panic(err)
	}
	return snapshot.When(store.NextDue(url, t, 6*time.Hour))
}
