package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/testsite"
)

const (
	benchHosts        = 50
	benchPagesPerHost = 20
)

// benchBody is a page of a realistic size (about 6 KiB) for the benchmarks.
var benchBody = func() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><title>A tracked page</title>
<meta name="description" content="What this page is about"><link rel="canonical" href="/canonical">
<link rel="alternate" hreflang="de" href="/de/"></head><body><h1>Heading</h1>`)
	for i := range 60 {
		fmt.Fprintf(&b, `<p>Paragraph %d with some words about products and <a href="/link/%d">a link</a>.</p>`, i, i)
	}
	b.WriteString(`</body></html>`)
	return b.String()
}()

// benchNetwork starts benchHosts loopback sites with benchPagesPerHost pages
// each and returns the network and the page URLs.
func benchNetwork(tb testing.TB) (*testsite.Network, []*testsite.Site, []string) {
	n := testsite.NewNetwork(tb, testsite.Loopback)
	var sites []*testsite.Site
	var urls []string
	for h := range benchHosts {
		host := fmt.Sprintf("h%02d.test", h)
		s := n.Add(host)
		s.Robots("User-agent: *\nDisallow: /private/\n\nUser-agent: 2-UAcomBot\nAllow: /\n")
		for p := range benchPagesPerHost {
			path := fmt.Sprintf("/p%02d", p)
			s.HTML(path, benchBody)
			urls = append(urls, "http://"+host+path)
		}
		sites = append(sites, s)
	}
	return n, sites, urls
}

// trackedDB writes a database tracking urls and returns its path.
func trackedDB(tb testing.TB, urls []string) string {
	db := filepath.Join(tb.TempDir(), "template.db")
	var out, errOut strings.Builder
	code := runEnv(context.Background(), append([]string{"track", "-db", db}, urls...), &out, &errOut, env{guardHooks: guardHooks{Resolver: noDNS}})
	require.Equal(tb, exitOK, code, errOut.String())
	return db
}

func copyFile(tb testing.TB, from, to string) {
	b, err := os.ReadFile(from)
	require.NoError(tb, err)
	require.NoError(tb, os.WriteFile(to, b, 0o600))
}

func robotsRequests(sites []*testsite.Site) int {
	n := 0
	for _, s := range sites {
		n += s.Count("/robots.txt")
	}
	return n
}

// BenchmarkRun1000Pages50Hosts measures one in-process `run` over 1,000 due
// pages on 50 loopback hosts with no gap, and reports the robots.txt
// requests it made (must be 50: one per host).
func BenchmarkRun1000Pages50Hosts(b *testing.B) {
	for _, parallel := range []int{8, 16} {
		b.Run(fmt.Sprintf("parallel=%d", parallel), func(b *testing.B) {
			n, sites, urls := benchNetwork(b)
			template := trackedDB(b, urls)
			e := env{anyGap: true, anyCatchUp: true, guardHooks: guardHooks{Resolver: noDNS}}
			var resolve []string
			for hostPort, addr := range n.Resolve() {
				resolve = append(resolve, "-resolve", hostPort+":"+addr)
			}
			dir := b.TempDir()
			i := 0
			var robots, snaps int
			for b.Loop() {
				b.StopTimer()
				i++
				db := filepath.Join(dir, fmt.Sprintf("run%d.db", i))
				copyFile(b, template, db)
				before := robotsRequests(sites)
				var out, errOut strings.Builder
				b.StartTimer()
				code := runEnv(context.Background(), append([]string{"run", "-db", db, "-gap", "0s", "-catch-up", "1e9", "-allow-private", "-parallel", fmt.Sprint(parallel)}, resolve...), &out, &errOut, e)
				b.StopTimer()
				if code != exitOK || !strings.Contains(out.String(), "run: 1000 due, 1000 snapshots (0 with errors)") {
					b.Fatalf("exit %d\n%s\n%s", code, lastLine(out.String()), errOut.String())
				}
				robots += robotsRequests(sites) - before
				snaps += 1000
				os.Remove(db)
				b.StartTimer()
			}
			b.ReportMetric(float64(robots)/float64(i), "robots.txt/op")
			b.ReportMetric(float64(snaps)/float64(i), "snapshots/op")
		})
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}
