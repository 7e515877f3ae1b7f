package main

import (
	"html"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/internal/testsite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nginxBlock is a site with the bot page's nginx rule, `if ($http_user_agent ~* "CrawlCove-Crawler")
// { return 403; }`, in front of a WordPress site with a sitemap and an llms.txt: any other user agent
// gets the site, so a request the audit should not make would be answered.
func nginxBlock(t *testing.T, n *testsite.Network, host string) *testsite.Site {
	s := n.Add(host)
	s.NotFound(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(strings.ToLower(r.UserAgent()), "crawlcove-crawler") {
			w.Header().Set("Server", "nginx/1.24.0")
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, "<html>\r\n<head><title>403 Forbidden</title></head>\r\n<body>\r\n<center><h1>403 Forbidden</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n")
			return
		}
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nDisallow:\nSitemap: http://"+host+"/sitemap.xml\n")
		case "/llms.txt":
			io.WriteString(w, "# Shop\n")
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, `<title>Shop</title><meta name="generator" content="WordPress 6.4"><a href="/a">a</a>`)
		}
	})
	return s
}

// A site that answers 403 to robots.txt and to the start page (a user-agent rule, as the bot page
// tells site owners to write) refuses the crawler: the audit asks robots.txt of both twins and the start
// page, then nothing else (no llms.txt, no WordPress probe, no sitemap, no link), exits 4, says the site
// refuses this crawler naming the user agent and the statuses, records it on the crawl row, and reports
// it as such: never a broken page.
func TestSiteRefusingTheCrawlerStopsTheAudit(t *testing.T) {
	for _, ua := range []string{"CrawlCove-Crawler", "Mozilla/5.0 (compatible; CrawlCove-Crawler/2.0; +https://crawlcove.com/bot)"} {
		t.Run(ua, func(t *testing.T) {
			n, e := loopNet(t)
			s, www := nginxBlock(t, n, "shop.test"), nginxBlock(t, n, "www.shop.test")
			r := audit(t, e, "-gap", "0", "-user-agent", ua, "http://shop.test/")
			require.Equal(t, crawl.ExitRefused, r.code, r)
			assert.Equal(t, []string{"/robots.txt", "/"}, s.Paths(), "robots.txt and the start page, then nothing")
			assert.Equal(t, []string{"/robots.txt"}, www.Paths())
			assert.Contains(t, r.stderr, "site refuses this crawler (User-Agent "+ua+"): robots.txt 403, start page 403")

			assert.Equal(t, []string{"refused"}, r.strs(t, `SELECT outcome FROM crawls`))
			assert.Equal(t, []string{"site refuses this crawler (User-Agent " + ua + "): robots.txt 403, start page 403"}, r.strs(t, `SELECT message FROM crawls`))
			k := r.kinds(t)
			assert.Equal(t, map[string]int{findings.KindRefusesCrawler: 1}, k, "the refusal, and no broken page")
			assert.Contains(t, r.stdout, "stopped (the site refuses this crawler)")
			assert.Contains(t, r.stdout, "0 errors")

			b, err := os.ReadFile(reportPath(t, r))
			require.NoError(t, err)
			raw := html.UnescapeString(string(b))
			assert.Contains(t, raw, "site refuses this crawler (User-Agent "+ua+"): robots.txt 403, start page 403")
			assert.NotContains(t, raw, "Broken page")
			assert.Zero(t, tilesOf(t, parseHTMLFile(t, reportPath(t, r)))["errors"], "no error in the report's cards")

			again := auditDB(t, r.dbPath, e, "-resume")
			assert.Equal(t, crawl.ExitUsage, again.code, "a refused crawl is not resumed: %s", again)
			assert.Contains(t, again.stderr, "stopped because the site refuses this crawler")
			assert.Equal(t, []string{"/robots.txt", "/"}, s.Paths(), "and -resume asked nothing")
		})
	}
}

// The same, as the binary is run: exit status 4 and the message on stderr.
func TestSiteRefusingTheCrawlerBinary(t *testing.T) {
	n, _ := loopNet(t)
	s, www := nginxBlock(t, n, "shop.test"), nginxBlock(t, n, "www.shop.test")
	args := []string{"-db", filepath.Join(t.TempDir(), "shop.db"), "-quiet", "-gap", "0"}
	for hp, addr := range n.Resolve() {
		args = append(args, "-resolve", hp+":"+addr)
	}
	code, stdout, stderr := runBinary(t, append(args, "http://shop.test/")...)
	require.Equal(t, crawl.ExitRefused, code, "%s%s", stdout, stderr)
	assert.Contains(t, stderr, "audit: site refuses this crawler (User-Agent CrawlCove-Crawler): robots.txt 403, start page 403")
	assert.Equal(t, []string{"/robots.txt", "/"}, s.Paths())
	assert.Equal(t, []string{"/robots.txt"}, www.Paths())
	assert.NotContains(t, stdout, "broken_page")
	assert.Contains(t, stdout, "refuses_crawler")
}
