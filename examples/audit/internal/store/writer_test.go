package store

import (
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The writer at unit level, with an injected failing write: nothing queued after a failed transaction
// is committed, the failure is signalled once, and the functions waiting for a commit still run.
func TestWriterStopsAtTheFirstFailedWrite(t *testing.T) {
	st, err := OpenStore(t.Context(), filepath.Join(t.TempDir(), "w.db"))
	require.NoError(t, err)
	defer st.Close()
	require.NoError(t, st.BeginCrawl(t.Context(), CrawlInfo{StartURL: "http://shop.test/", UserAgent: "x", Token: "x", Started: time.Now(), Settings: struct{}{}}))
	st.Page(&PageRecord{URL: "http://shop.test/", Source: "start"})
	flushForTest(t, st)
	boom := errors.New("injected: disk full")
	st.enqueue(func(*sql.Tx) error { return boom })
	st.Page(&PageRecord{URL: "http://shop.test/later", Source: "link", Depth: 1})
	ran := make(chan struct{})
	st.AfterCommit(func() { close(ran) })
	<-ran
	select {
	case <-st.Failed():
	default:
		t.Fatal("Failed is closed at the first write error")
	}
	require.ErrorIs(t, st.Flush(), boom)
	var urls []string
	rows, err := st.Reader().Query(`SELECT url FROM pages ORDER BY url`)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var u string
		require.NoError(t, rows.Scan(&u))
		urls = append(urls, u)
	}
	assert.Equal(t, []string{"http://shop.test/"}, urls, "the page queued after the failed write is not written")
}

// flushForTest waits until everything queued so far is committed, keeping the writer running.
func flushForTest(t *testing.T, s *Store) {
	done := make(chan struct{})
	s.AfterCommit(func() { close(done) })
	<-done
	require.NoError(t, s.Err())
}
