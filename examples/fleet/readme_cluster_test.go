package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// freeClusterPort returns a free loopback port below 55535 whose cluster
// bus port (+10000) is free too.
func freeClusterPort(t *testing.T) int {
	for range 200 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if p >= 55535 {
			continue
		}
		if b, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000)); err == nil {
			b.Close()
			return p
		}
	}
	t.Fatal("no free port pair")
	return 0
}

// TestREADMEClusterCommands runs the README's commands for a 3-master
// cluster (redis-server, redis-cli --cluster create) on free ports, then
// the README's worker command line against it, twice: the fleet crawls
// the sites once between the two workers.
func TestREADMEClusterCommands(t *testing.T) {
	script, worker := readmeCommands(t, "redis-cli --cluster create", `(?m)^\./fleet .*cluster=true.*$`)

	ports := map[string]string{}
	for _, p := range []string{"7000", "7001", "7002"} {
		ports[p] = strconv.Itoa(freeClusterPort(t))
	}
	subst := func(s string) string {
		for from, to := range ports {
			s = strings.ReplaceAll(s, from, to)
		}
		return s
	}
	dir := t.TempDir()
	t.Cleanup(func() {
		for _, p := range ports {
			_ = exec.Command("redis-cli", "-p", p, "shutdown", "nosave").Run()
		}
	})
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", subst(script))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "cluster_state:ok")

	sites := shopSites(t, 3)
	file := sitesFile(t, sites)
	fields := strings.Fields(subst(worker))
	require.Equal(t, "./fleet", fields[0])
	var all []page
	var procs []*exec.Cmd
	var errs []*bytes.Buffer
	for i := range 2 {
		args := slices.Clone(fields[1:])
		for k, a := range args {
			switch {
			case a == "sites.txt":
				args[k] = file
			case strings.HasSuffix(a, ".jsonl"):
				args[k] = filepath.Join(dir, "w"+strconv.Itoa(i)+".jsonl")
			case strings.HasPrefix(a, "'"):
				args[k] = strings.Trim(a, "'")
			}
		}
		c := exec.Command(os.Args[0], append(args, "-progress", "0", "-gap", "10ms")...)
		c.Env = append(os.Environ(), mainEnv+"=1")
		var stderr bytes.Buffer
		c.Stderr = &stderr
		require.NoError(t, c.Start())
		procs = append(procs, c)
		errs = append(errs, &stderr)
	}
	for i, c := range procs {
		require.NoError(t, c.Wait(), "worker %d: %s", i, errs[i])
		all = append(all, readPages(t, filepath.Join(dir, "w"+strconv.Itoa(i)+".jsonl"))...)
	}
	got := keys(t, sites, all)
	assert.Equal(t, slices.Compact(slices.Clone(got)), got, "no page fetched twice")
	assert.Len(t, got, 7+7+3)
}

// readmeCommands returns the README's sh block that contains marker and
// the worker command line matching workerLine, after checking that the
// Redis programs those commands run are installed (a failure under CI, a
// skip with the install hint elsewhere).
func readmeCommands(t *testing.T, marker, workerLine string) (script, worker string) {
	t.Helper()
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not found (CI is set, so this fails): .ci/run installs redis-server and redis-tools", bin)
			}
			t.Skipf("%s not installed; install it with: apt-get install redis-server redis-tools", bin)
		}
	}
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		if strings.Contains(m[1], marker) {
			script = m[1]
		}
	}
	require.NotEmpty(t, script, "README has the commands with %q", marker)
	worker = regexp.MustCompile(workerLine).FindString(string(readme))
	require.NotEmpty(t, worker, "README has the worker command %s", workerLine)
	return script, worker
}
