package main

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/politecrawl/polite/internal/testsite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A URL is requested once per crawl, however it is reached (issue 24): /a linked directly and reached
// through /redir (301 -> /a) and /redir-chain (302 -> /redir -> /a) is requested exactly once, whatever
// the order of the links and whether a redirect reaches /a before a link does; the report still shows
// both redirects, ending at /a's 200, and /a's own findings.
func TestRedirectTargetRequestedOnce(t *testing.T) {
	orders := [][]string{
		{"/a", "/redir", "/redir-chain"},
		{"/redir", "/redir-chain", "/a"},
		{"/redir-chain", "/redir", "/a"},
		{"/redir-chain", "/a", "/redir"},
		{"/redir", "/redir-chain", "/deep"}, // /a linked from a deeper page: a redirect reaches it first
	}
	for _, links := range orders {
		for _, conc := range []string{"1", "4"} {
			t.Run(strings.Join(links, ",")+"/concurrency="+conc, func(t *testing.T) {
				n, e := loopNet(t)
				s := n.Add("shop.test")
				s.Robots("")
				s.HTML("/", page("Home", links...))
				s.HTML("/deep", page("Deep", "/a"))
				s.Redirect("/redir", "/a", 301)
				s.Redirect("/redir-chain", "/redir", 302)
				s.HTML("/a", "<title>A</title><h1>A</h1><a href=/missing>x</a>") // no description: a finding of /a's
				r := audit(t, e, "-gap", "0", "-concurrency", conc, "http://shop.test/")
				require.Equal(t, crawl.ExitOK, r.code, r)

				assert.Equal(t, 1, s.Count("/a"), "requested once: %v", s.Paths())
				assert.Equal(t, 1, s.Count("/redir"), "%v", s.Paths())
				assert.Equal(t, 1, s.Count("/redir-chain"), "%v", s.Paths())
				assert.Equal(t, 1, s.Count("/missing"), "%v", s.Paths())

				assert.Equal(t, []string{"http://shop.test/redir -301-> /a (200)"},
					r.strs(t, `SELECT detail FROM findings WHERE kind = ? AND url = 'http://shop.test/redir'`, findings.KindRedirect))
				assert.Equal(t, []string{"2 hops: http://shop.test/redir-chain -302-> /redir -301-> /a (200)"},
					r.strs(t, `SELECT detail FROM findings WHERE kind = ? AND url = 'http://shop.test/redir-chain'`, findings.KindRedirectChain))
				for _, u := range []string{"http://shop.test/redir", "http://shop.test/redir-chain"} {
					assert.Equal(t, []string{"http://shop.test/a 200 A"}, r.strs(t, `SELECT final_url || ' ' || status || ' ' || COALESCE(title, '-') FROM pages WHERE url = ?`, u),
						"%s: the row reads as if the chain had been followed, whichever URL came first", u)
				}
				assert.Equal(t, []string{"http://shop.test/a"}, r.strs(t, `SELECT url FROM findings WHERE kind = ?`, findings.KindDescMissing),
					"/a's findings, once, under its own URL")
				assert.Equal(t, []string{"HTTP 404; linked from 1 page: http://shop.test/a"},
					r.strs(t, `SELECT detail FROM findings WHERE kind = ?`, findings.KindBrokenLink), "/a's links are /a's")
				assert.Zero(t, r.kinds(t)[findings.KindRedirectLoop])
			})
		}
	}
}

// Redirects that lead to each other across two requests (/x -> /y, where /y was requested on its own
// and redirects back to /x) are a redirect loop, as a client following them finds; neither URL is
// requested twice.
func TestRedirectLoopAcrossRequests(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", page("Home", "/x", "/y"))
	s.Redirect("/x", "/y", 302)
	s.Redirect("/y", "/x", 302)
	r := audit(t, e, "-gap", "0", "-concurrency", "1", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Equal(t, 1, s.Count("/x"), "%v", s.Paths())
	assert.Equal(t, 1, s.Count("/y"), "%v", s.Paths())
	assert.Equal(t, 2, r.kinds(t)[findings.KindRedirectLoop], "%v", r.strs(t, `SELECT kind || ' ' || detail FROM findings`))
}

// A URL requested as a hop of a chain that then failed (here a loop: /r1 -> /x -> /r1) is not requested
// again when a link names it later, and has its row: the rest of that chain, a loop from there too.
func TestHopOfAFailedChainRequestedOnce(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", page("Home", "/r1", "/deep"))
	s.HTML("/deep", page("Deep", "/x"))
	s.Redirect("/r1", "/x", 302)
	s.Redirect("/x", "/r1", 302)
	r := audit(t, e, "-gap", "0", "-concurrency", "1", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	assert.Equal(t, 1, s.Count("/x"), "%v", s.Paths())
	assert.Equal(t, 1, s.Count("/r1"), "%v", s.Paths())
	assert.Equal(t, []string{"redirect_loop"}, r.strs(t, `SELECT error_kind FROM pages WHERE url = 'http://shop.test/x'`), "/x has its row")
	assert.Equal(t, []string{"http://shop.test/deep"}, r.strs(t, `SELECT found_on FROM pages WHERE url = 'http://shop.test/x'`))
}

// A link naming a redirect's target while that redirect's request is still under way (the target is
// slow) still finds the target crawled: its row is made when the chain ends, with the link's page as
// found_on, and it is not requested twice.
func TestLinkToATargetWhileItsRedirectIsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, e := memNet(t)
		s := n.Add("shop.test")
		s.Robots("")
		s.HTML("/", page("Home", "/redir", "/b"))
		// /redir answers at once and /a takes 800 ms; /b, 200 ms, is read while /a is under way.
		s.Route("/b", testsite.Response{Body: page("B", "/a"), ContentType: "text/html; charset=utf-8", Delay: 200 * time.Millisecond})
		s.Redirect("/redir", "/a", 301)
		s.Route("/a", testsite.Response{Body: page("A"), ContentType: "text/html; charset=utf-8", Delay: 800 * time.Millisecond})
		r := audit(t, e, "-gap", "0", "-concurrency", "2", "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		assert.Equal(t, 1, s.Count("/a"), "%v", s.Paths())
		assert.Equal(t, []string{"200 http://shop.test/b A"}, r.strs(t, `SELECT status || ' ' || found_on || ' ' || title FROM pages WHERE url = 'http://shop.test/a'`),
			"/a has its row, found on /b")
	})
}
