package main

import (
	"net/http"
	"testing"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/examples/audit/internal/report"
	"github.com/politecrawl/polite/internal/testsite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A page behind bot protection (Cloudflare's "Just a moment..." challenge, 403 with cf-mitigated:
// challenge) is its own finding, naming the vendor and the signal, and never a broken page or link: the
// site did not show the page, so the audit cannot say it is broken. It is asked once (a challenge is not
// retried), and the report's cards do not count it as an error.
func TestBotProtectionIsNotABrokenPage(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", page("Home", "/members", "/gone"))
	s.Route("/members", testsite.Response{Status: http.StatusForbidden, ContentType: "text/html; charset=UTF-8",
		Header: http.Header{"Cf-Mitigated": {"challenge"}, "Server": {"cloudflare"}},
		Body:   `<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title></head><body>Checking your browser</body></html>`})
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)

	assert.Equal(t, 1, s.Count("/members"), "a challenge is not retried")
	k := r.kinds(t)
	assert.Equal(t, 1, k[findings.KindBotProtection], "%v", k)
	assert.Equal(t, 1, k[findings.KindBrokenLink], "only /gone is broken: %v", k)
	assert.Zero(t, k[findings.KindBrokenPage])
	assert.Zero(t, k[findings.KindTitleDuplicate]+k[findings.KindDescMissing]+k[findings.KindH1Missing], "the challenge page is not read as the site's page: %v", k)
	d := r.strs(t, `SELECT detail FROM findings WHERE kind = ? AND url = 'http://shop.test/members'`, findings.KindBotProtection)
	require.Len(t, d, 1)
	assert.Contains(t, d[0], "cloudflare", "the vendor")
	assert.Contains(t, d[0], "header cf-mitigated: challenge", "the signal")
	assert.Contains(t, d[0], "HTTP 403")
	assert.Equal(t, []string{"http://shop.test/gone"}, r.strs(t, `SELECT url FROM findings WHERE kind IN ('broken_link', 'broken_page')`))
	assert.Contains(t, r.stdout, "1 error.", "the summary counts /gone alone: %s", r.stdout)
	assert.Equal(t, "warning", findings.InfoOf(findings.KindBotProtection).Severity.String())

	doc := parseHTMLFile(t, reportPath(t, r))
	tiles := tilesOf(t, doc)
	assert.Equal(t, 1, tiles[report.ErrorsCard], "the 4xx/5xx card counts /gone, not the challenge: %v", tiles)
	status, _ := bars(t, doc, "status")
	assert.Equal(t, 1, status["bot protection"], "%v", status)
	assert.Equal(t, 1, status["4xx"], "%v", status)
	assertCardsAddUp(t, doc)
}
