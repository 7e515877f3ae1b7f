package web

import (
	"context"

	"github.com/politecrawl/polite/examples/monitor/internal/store"
)

// maxHostChoices is the most hosts the dashboard's filter lists; past it
// the host is typed. Listing 10,000 hosts cost about 40 ms of CPU on every
// view and made a list nobody scrolls.
const maxHostChoices = 500

// hostChoices returns the hosts the filter lists (none when it is typed),
// how many hosts are tracked, and whether the filter is typed.
func hostChoices(ctx context.Context, st *store.Store) (hosts []string, count int, typed bool, err error) {
	if count, err = st.HostCount(ctx); err != nil || count > maxHostChoices {
		return nil, count, err == nil, err
	}
	hosts, err = st.Hosts(ctx)
	return hosts, count, false, err
}
