package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// claimHelperEnv makes the test binary a claimant of TestClaimHelper instead of running the tests.
const claimHelperEnv = "AUDIT_STORE_CLAIM_DB"

// TestClaimHelper is one process starting a crawl of $AUDIT_STORE_CLAIM_DB (a resume of crawl 1 when
// $AUDIT_STORE_CLAIM_RESUME is set): it prints "won" or "busy" and, when it won, keeps its crawl running
// until its stdin closes.
func TestClaimHelper(t *testing.T) {
	path := os.Getenv(claimHelperEnv)
	if path == "" {
		t.Skip("a subprocess of TestOneCrawlWinsARace")
	}
	st, err := OpenStore(t.Context(), path)
	if err != nil {
		fmt.Println("error", err)
		return
	}
	if os.Getenv("AUDIT_STORE_CLAIM_RESUME") != "" {
		err = st.ReopenCrawl(t.Context(), 1)
	} else {
		err = st.BeginCrawl(t.Context(), CrawlInfo{StartURL: "http://shop.test/", UserAgent: "x", Token: "x", Started: time.Now(), Settings: struct{}{}})
	}
	var busy *BusyError
	switch {
	case errors.As(err, &busy):
		fmt.Println("busy")
		return
	case err != nil:
		fmt.Println("error", err)
		return
	}
	fmt.Println("won")
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0) // killed, in effect: the crawl stays running, its process gone
}

// Two processes starting a crawl of one file at the same instant: exactly one wins and the other is
// refused with a *BusyError, every time, for a new crawl (BeginCrawl) and for a resume (ReopenCrawl).
// The check and the claim are one BEGIN IMMEDIATE transaction; as two steps, both often pass.
func TestOneCrawlWinsARace(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 2 processes per round")
	}
	rounds := 15
	for _, resume := range []bool{false, true} {
		for round := range rounds {
			path := filepath.Join(t.TempDir(), "race.db")
			st, err := OpenStore(t.Context(), path)
			require.NoError(t, err)
			if resume { // crawl 1, left running by a process that died: resumable by either
				require.NoError(t, st.BeginCrawl(t.Context(), CrawlInfo{StartURL: "http://shop.test/", UserAgent: "x", Token: "x", Started: time.Now(), Settings: struct{}{}}))
				require.NoError(t, st.Flush())
				_, err = st.db.Exec(`UPDATE crawl_runs SET pid = 0`)
				require.NoError(t, err)
			}
			require.NoError(t, st.Close())

			var wg sync.WaitGroup
			answers := make([]string, 2)
			stdins := make([]io.WriteCloser, 2)
			cmds := make([]*exec.Cmd, 2)
			start := make(chan struct{})
			for i := range 2 {
				cmd := exec.Command(os.Args[0], "-test.run=^TestClaimHelper$")
				cmd.Env = append(os.Environ(), claimHelperEnv+"="+path)
				if resume {
					cmd.Env = append(cmd.Env, "AUDIT_STORE_CLAIM_RESUME=1")
				}
				stdin, err := cmd.StdinPipe()
				require.NoError(t, err)
				out, err := cmd.StdoutPipe()
				require.NoError(t, err)
				stdins[i], cmds[i] = stdin, cmd
				wg.Go(func() {
					<-start
					if err := cmd.Start(); err != nil {
						answers[i] = "start: " + err.Error()
						return
					}
					line, _ := bufio.NewReader(out).ReadString('\n')
					answers[i] = strings.TrimSpace(line)
				})
			}
			close(start)
			wg.Wait()
			for i := range 2 {
				stdins[i].Close()
				_ = cmds[i].Wait()
			}
			won := 0
			for _, a := range answers {
				require.Contains(t, []string{"won", "busy"}, a, "round %d (resume %v)", round, resume)
				if a == "won" {
					won++
				}
			}
			assert.Equal(t, 1, won, "round %d (resume %v): exactly one of two racing starts wins: %q", round, resume, answers)
		}
	}
}
