package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDashboardHostFilterIsTypedPastFiveHundredHosts: the host filter
// lists the hosts while there are at most 500 of them; past that (10,000
// hosts cost ~40 ms of CPU per view to list) it is a text field, and
// filtering by a typed host still works.
func TestDashboardHostFilterIsTypedPastFiveHundredHosts(t *testing.T) {
	h := newHarness(t)
	st := openTestStore(t, h.db)
	var urls []string
	for i := range 500 {
		urls = append(urls, fmt.Sprintf("https://h%03d.test/", i))
	}
	require.NoError(t, st.Track(context.Background(), urls, 6*time.Hour, h.clk.Now()))
	s := newTestServer(t, h)
	r := do(t, s, "GET", "/", nil)
	require.Equal(t, http.StatusOK, r.code)
	assert.Contains(t, r.body, `<select name="host">`)
	assert.Equal(t, 500, strings.Count(r.body, `<option value="https://h`))

	require.NoError(t, st.Track(context.Background(), []string{"https://h500.test/", "https://h500.test/b"}, 6*time.Hour, h.clk.Now()))
	r = do(t, s, "GET", "/?host=https%3A%2F%2Fh500.test", nil)
	require.Equal(t, http.StatusOK, r.code)
	assert.NotContains(t, r.body, `<select name="host">`)
	assert.Zero(t, strings.Count(r.body, `<option value="https://h`))
	assert.Contains(t, r.body, `<input type="text" name="host" value="https://h500.test"`)
	assert.Contains(t, r.body, "2 matching")
}
