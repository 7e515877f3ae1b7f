package robots

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnreachableCauseKeepsTheErrorValue: the cause of an Unreachable
// verdict is the network error itself, not a copy of its text, whether the
// answer comes from memory or is reloaded (after an LRU eviction) from a
// Store that keeps Entry values. A Store that rebuilds entries from their
// fields gives only the text, which still matches ErrUnreachable.
func TestUnreachableCauseKeepsTheErrorValue(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := "http://" + l.Addr().String()
	require.NoError(t, l.Close()) // connection refused from now on
	up := newSite(t, robotsBody(""))
	ctx := context.Background()

	refused := func(t *testing.T, v Verdict) {
		t.Helper()
		require.Equal(t, Unreachable, v.Outcome)
		assert.ErrorIs(t, v.Err, ErrUnreachable)
		assert.ErrorIs(t, v.Err, syscall.ECONNREFUSED)
		var op *net.OpError
		assert.ErrorAs(t, v.Err, &op)
		var fe *FetchError
		require.ErrorAs(t, v.Err, &fe)
		assert.Equal(t, down+"/robots.txt", fe.URL)
	}

	store := &MemoryStore{}
	c := &Cache{Client: &http.Client{}, Store: store, MaxEntries: 1}
	v, err := c.Check(ctx, "bot", down+"/a")
	require.NoError(t, err)
	refused(t, v)
	v, _ = c.Check(ctx, "bot", down+"/b") // from memory
	refused(t, v)
	_, err = c.Check(ctx, "bot", up.URL+"/") // evicts down's entry
	require.NoError(t, err)
	v, _ = c.Check(ctx, "bot", down+"/c") // reloaded from the store, not refetched
	refused(t, v)

	// A new process whose Store keeps only the persisted fields.
	key, err := authority(down)
	require.NoError(t, err)
	e, ok, _ := store.Load(ctx, key)
	require.True(t, ok)
	persisted := Entry{Authority: e.Authority, URL: e.URL, Status: e.Status, Body: e.Body,
		FetchedAt: e.FetchedAt, ExpiresAt: e.ExpiresAt, Err: e.Err}
	fresh := &MemoryStore{}
	require.NoError(t, fresh.Save(ctx, persisted))
	v, _ = (&Cache{Store: fresh, Now: func() time.Time { return e.FetchedAt }}).Check(ctx, "bot", down+"/d")
	require.Equal(t, Unreachable, v.Outcome)
	assert.ErrorIs(t, v.Err, ErrUnreachable)
	assert.False(t, errors.Is(v.Err, syscall.ECONNREFUSED), "only the text was persisted")
	assert.Contains(t, v.Err.Error(), "connection refused")
}

// TestUnreachableMessageNamesTheURLOnce: the message says which robots.txt
// failed and why, without net/http's copy of the same URL in between.
func TestUnreachableMessageNamesTheURLOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := "http://" + l.Addr().String()
	require.NoError(t, l.Close())
	c := &Cache{}
	v, err := c.Check(context.Background(), "bot", down+"/page")
	require.NoError(t, err)
	require.Equal(t, Unreachable, v.Outcome)
	msg := v.Err.Error()
	assert.Equal(t, 1, strings.Count(msg, down+"/robots.txt"), msg)
	assert.Contains(t, msg, "connection refused")
	assert.ErrorIs(t, v.Err, syscall.ECONNREFUSED)
}
