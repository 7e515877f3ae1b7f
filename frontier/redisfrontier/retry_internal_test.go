package redisfrontier

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/frontier/redisfrontier/redistest"
)

// TestAcquireRetryAdmitsOnce: when an Acquire's reply is lost (a master
// dies after running it, a connection breaks) the call is retried with
// the same slot id; the retry finds the slot in and admits nothing twice,
// so the site's in-flight count does not keep a phantom request.
func TestAcquireRetryAdmitsOnce(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	cfg := DefaultConfig("retry")
	cfg.Site = Limits{MaxDepth: 1, InFlight: 2}
	f, err := New(ctx, srv.Client(), cfg)
	require.NoError(t, err)
	defer f.Close()
	f.Add(ctx, "https://site.example/", 0, "")
	const slot = "w:s1"
	for range 2 { // the call and its retry
		res, err := f.run(ctx, 0, scriptAcquire, "site.example", slot, f.defIF, f.defGap)
		require.NoError(t, err)
		require.Equal(t, "OK", res[0])
	}
	st, err := f.FleetStats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, st.InFlight, "one request in flight")
	assert.Equal(t, 1, st.Requests, "one request admitted")
	f.mu.Lock()
	f.pending[0] = append(f.pending[0], slot)
	f.mu.Unlock()
	require.NoError(t, f.flushReleases(ctx))
	st, err = f.FleetStats(ctx)
	require.NoError(t, err)
	assert.Zero(t, st.InFlight, "its release frees it")
}
