package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// In-process resume tests: Ctrl-C (a cancelled context) stops a crawl, -resume continues it. Times are
// fake (synctest) where the politeness across the restart is checked. resume_kill_test.go kills real
// processes.

// interruptAfter cancels the crawl's context once the answer to path has been read.
func interruptAfter(e crawl.Env, path string) (crawl.Env, context.Context) {
	ctx, cancel := context.WithCancel(context.Background())
	e.Transport = &hookTransport{rt: e.Transport, path: path, fn: cancel}
	return e, ctx
}

func TestResumeAfterCtrlC(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("User-agent: *\nDisallow: /private/\n")
	flatSite(s, 20, 0)
	s.HTML("/p5", page("P5", "/private/x", "/p5/deeper"))
	s.HTML("/p5/deeper", page("Deeper"))
	db := filepath.Join(t.TempDir(), "shop.db")
	ie, ctx := interruptAfter(e, "/p7")
	r := auditCtx(t, ctx, db, ie, "-gap", "0", "-concurrency", "1", "http://shop.test/")
	require.Equal(t, crawl.ExitFailure, r.code, r)
	assert.Contains(t, r.stderr, "audit: interrupted; everything crawled so far is in "+db+" (crawl 1). To continue it: audit -resume -db "+db+" -crawl 1\n")
	crawledBefore := r.int(t, `SELECT COUNT(*) FROM pages`)
	requestsBefore, servedBefore := r.int(t, `SELECT requests FROM crawls`), len(s.Paths())
	require.Greater(t, crawledBefore, 3)
	require.Less(t, crawledBefore, 20)
	assert.Equal(t, 0, s.Count("/p8"), "Ctrl-C after /p7: nothing more was requested")

	r = auditDB(t, db, e, "-resume", "-crawl", "1")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Contains(t, r.stdout, fmt.Sprintf("Resuming crawl 1 of http://shop.test/ (%d URLs crawled,", crawledBefore))
	assert.Contains(t, r.stdout, "Crawl 1 of http://shop.test/ finished")
	assert.Contains(t, r.stdout, "Report: ")
	for _, p := range append([]string{"/", "/p5/deeper", "/llms.txt", "/robots.txt"}, numbered("/p", 20)...) {
		assert.Equal(t, 1, s.Count(p), "%s requested once over both runs: %v", p, s.Paths())
	}
	assert.Zero(t, s.Count("/private/x"))
	assert.Equal(t, []string{"1 finished 23"}, r.strs(t, `SELECT id || ' ' || outcome || ' ' || pages FROM crawls`),
		"one crawl: /, 20 pages, /p5/deeper and the blocked /private/x")
	assert.Equal(t, 1, r.int(t, `SELECT COUNT(*) FROM pages WHERE blocked_by_robots = 1`))
	assert.Equal(t, requestsBefore+len(s.Paths())-servedBefore, r.int(t, `SELECT requests FROM crawls`),
		"the request count goes on from where it was (the resumed run asked no robots.txt again)")
	assert.Equal(t, 0, r.int(t, `SELECT COUNT(*) FROM queue`), "a finished crawl keeps no queue")

	r = auditDB(t, db, e, "-resume")
	assert.Equal(t, crawl.ExitUsage, r.code)
	assert.Contains(t, r.stderr, "crawl 1 of http://shop.test/ finished: there is nothing to resume")
}

func numbered(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprint(prefix, i))
	}
	return out
}

// The first request after a resume waits a whole gap from the resume: never sooner after the last
// request before the interruption than the gap, however quick the restart.
func TestResumeKeepsTheGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, e := memNet(t)
		s := n.Add("shop.test")
		s.Robots("")
		flatSite(s, 6, 0)
		db := filepath.Join(t.TempDir(), "a.db")
		ie, ctx := interruptAfter(e, "/p2")
		r := auditCtx(t, ctx, db, ie, "-gap", "10s", "-concurrency", "1", "http://shop.test/")
		require.Equal(t, crawl.ExitFailure, r.code, r)
		before := len(n.Requests())
		time.Sleep(2 * time.Second) // a quick restart

		resumedAt := time.Now()
		r = auditDB(t, db, e, "-resume")
		require.Equal(t, crawl.ExitOK, r.code, r)
		reqs := n.Requests()
		require.Greater(t, len(reqs), before)
		assert.GreaterOrEqual(t, reqs[before].Time.Sub(reqs[before-1].Time), 10*time.Second, "the gap holds across the restart")
		assert.GreaterOrEqual(t, reqs[before].Time.Sub(resumedAt), 10*time.Second, "counted from the resume")
		for i := before + 1; i < len(reqs); i++ {
			assert.GreaterOrEqual(t, reqs[i].Time.Sub(reqs[i-1].Time), 10*time.Second)
		}
	})
}

// A run slowed by a 429 stays slowed after a resume: one request at a time, 3 s apart.
func TestResumeKeepsTheSlowdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, e := memNet(t)
		s := n.Add("shop.test")
		s.Robots("")
		flatSite(s, 8, 0)
		s.Route("/p0", responseStatus(429), responseStatus(200))
		db := filepath.Join(t.TempDir(), "a.db")
		ie, ctx := interruptAfter(e, "/p2")
		r := auditCtx(t, ctx, db, ie, "-gap", "0", "-concurrency", "1", "http://shop.test/")
		require.Equal(t, crawl.ExitFailure, r.code, r)
		require.Equal(t, []string{"http://shop.test/p0"}, r.strs(t, `SELECT slowed_by FROM crawls`))
		before := len(n.Requests())

		r = auditDB(t, db, e, "-resume")
		require.Equal(t, crawl.ExitOK, r.code, r)
		reqs := n.Requests()[before:]
		require.NotEmpty(t, reqs)
		for i := 1; i < len(reqs); i++ {
			assert.GreaterOrEqual(t, reqs[i].Time.Sub(reqs[i-1].Time), 3*time.Second, "before %s", reqs[i].Path)
		}
		assert.Equal(t, 1, r.kinds(t)[findings.KindSlowedDown])
		assert.Contains(t, r.stdout, "Slowed down after 429 from http://shop.test/p0")
	})
}

// robots.txt is fetched again on resume only when the copy the crawl obeyed has expired (an hour).
func TestResumeRefetchesExpiredRobotsTxt(t *testing.T) {
	for _, tc := range []struct {
		later time.Duration
		want  int
	}{{10 * time.Minute, 1}, {2 * time.Hour, 2}} {
		t.Run(tc.later.String(), func(t *testing.T) {
			n, e := loopNet(t)
			s := n.Add("shop.test")
			s.Robots("User-agent: *\nDisallow: /private/\n")
			flatSite(s, 10, 0)
			var mu sync.Mutex
			now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			e.Now = func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				return now
			}
			db := filepath.Join(t.TempDir(), "a.db")
			ie, ctx := interruptAfter(e, "/p3")
			r := auditCtx(t, ctx, db, ie, "-gap", "0", "-concurrency", "1", "http://shop.test/")
			require.Equal(t, crawl.ExitFailure, r.code, r)
			require.Equal(t, 1, s.Count("/robots.txt"))
			mu.Lock()
			now = now.Add(tc.later)
			mu.Unlock()
			r = auditDB(t, db, e, "-resume")
			require.Equal(t, crawl.ExitOK, r.code, r)
			assert.Equal(t, tc.want, s.Count("/robots.txt"))
			assert.Equal(t, 1, s.Count("/p9"))
		})
	}
}

// What -resume refuses, with exit 2 and why.
func TestResumeRefusals(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	flatSite(s, 3, 0)
	dir := t.TempDir()

	db := filepath.Join(dir, "a.db")
	ie, ctx := interruptAfter(e, "/p0")
	first := auditCtx(t, ctx, db, ie, "-gap", "0", "-concurrency", "1", "http://shop.test/")
	require.Equal(t, crawl.ExitFailure, first.code, first)
	r := first

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-resume", "-gap", "1s"}, "-resume continues the crawl with its own settings: -gap cannot be given"},
		{[]string{"-resume", "-max-pages", "9", "-user-agent", "X"}, "-max-pages, -user-agent cannot be given"},
		{[]string{"-resume", "http://shop.test/"}, `give no URL (got "http://shop.test/")`},
		{[]string{"-crawl", "1"}, "-crawl 1 is for -resume"},
		{[]string{"-resume", "-crawl", "7"}, "crawl 7 is not in the database"},
	} {
		r := auditDB(t, db, e, tc.args...)
		assert.Equal(t, crawl.ExitUsage, r.code, "%v: %s", tc.args, r)
		assert.Contains(t, r.stderr, tc.want, tc.args)
	}
	r = auditDB(t, filepath.Join(dir, "none.db"), e, "-resume")
	assert.Equal(t, crawl.ExitUsage, r.code)
	assert.Contains(t, r.stderr, "none.db: no such file")
	assert.NoFileExists(t, filepath.Join(dir, "none.db"))

	// Still running, in another live process of this machine: not resumed under its feet.
	sleeper := exec.Command("sleep", "30")
	require.NoError(t, sleeper.Start())
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	host, _ := os.Hostname()
	_, err := first.db.Exec(`UPDATE crawls SET outcome = 'running'`)
	require.NoError(t, err)
	_, err = first.db.Exec(`INSERT INTO crawl_runs (crawl_id, pid, host, started_at) VALUES (1, ?, ?, '2026-01-01T00:00:00Z')`, sleeper.Process.Pid, host)
	require.NoError(t, err)
	r = auditDB(t, db, e, "-resume")
	assert.Equal(t, crawl.ExitUsage, r.code)
	assert.Contains(t, r.stderr, fmt.Sprintf("crawl 1 seems to be running still, in process %d on this machine", sleeper.Process.Pid))
	sleeper.Process.Kill()
	sleeper.Wait()
	r = auditDB(t, db, e, "-resume")
	assert.Equal(t, crawl.ExitOK, r.code, "once that process is gone (killed), it resumes: %s", r)

	// A crawl whose frontier was not kept in the file cannot be resumed.
	mem := filepath.Join(dir, "mem.db")
	me := e
	me.MemoryQueue = true
	ie, ctx = interruptAfter(me, "/p1")
	r = auditCtx(t, ctx, mem, ie, "-gap", "0", "-concurrency", "1", "http://shop.test/")
	require.Equal(t, crawl.ExitFailure, r.code, r)
	r = auditDB(t, mem, e, "-resume")
	assert.Equal(t, crawl.ExitUsage, r.code)
	assert.Contains(t, r.stderr, "crawl 1 was not recorded for resuming")

	var out, errb bytes.Buffer
	assert.Equal(t, crawl.ExitOK, run(t.Context(), []string{"-h"}, &out, &errb))
	assert.Contains(t, errb.String(), "audit -resume [-db FILE] [-crawl N]")
}
