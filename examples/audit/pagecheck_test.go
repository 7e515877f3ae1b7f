package main

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/demo"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
)

// pageFindings are the findings of the kinds of a page's own response in the latest crawl, as
// "kind path" (the demo host dropped), sorted.
func pageFindings(t *testing.T, r *result, origin string) []string {
	t.Helper()
	var out []string
	for _, s := range r.strs(t, `SELECT kind || ' ' || url FROM findings WHERE page_check = 1 AND crawl_id = (SELECT MAX(id) FROM crawls) ORDER BY 1`) {
		kind, u, _ := strings.Cut(s, " ")
		require.True(t, findings.IsPageKind(kind), "page_check finding of kind %s", kind)
		out = append(out, kind+" "+strings.TrimPrefix(u, origin))
	}
	return out
}

// The demo crawl finds each kind of a page's own response on its check page, nothing on the clean page,
// and on the shop's own pages only what they show on purpose.
func TestDemoLabPageKinds(t *testing.T) {
	r := demoCrawl(t)
	require.Equal(t, crawl.ExitOK, r.code, r)
	got := slices.DeleteFunc(pageFindings(t, r, "http://cove-shop.test"), func(s string) bool {
		// A loaded test machine may answer any page slowly: slow_ttfb is asserted on its own page.
		return strings.HasPrefix(s, findings.KindSlowTTFB+" ") && s != findings.KindSlowTTFB+" /lab/slow-ttfb"
	})
	byPage := map[string][]string{}
	for _, s := range got {
		kind, path, _ := strings.Cut(s, " ")
		byPage[path] = append(byPage[path], kind)
	}
	checked := 0
	for path, kind := range demo.LabPageKinds() {
		if slices.Contains(demo.HTTPSOnlyKinds, kind) {
			assert.Empty(t, byPage[escapePath(path)], "%s is clean over http", path)
			continue
		}
		assert.Contains(t, byPage[escapePath(path)], kind, "%s shows %s; found %v", path, kind, byPage[escapePath(path)])
		checked++
	}
	assert.Equal(t, len(demo.LabPageKinds())-len(demo.HTTPSOnlyKinds), checked)
	assert.Empty(t, byPage[demo.LabCleanPath], "the clean page")
	assert.Empty(t, byPage["/lab/"], "the index")
	// The shop's own pages: only the intended findings.
	var shop []string
	for _, s := range got {
		if !strings.Contains(s, " /lab/") {
			shop = append(shop, s)
		}
	}
	assert.Empty(t, shop, "the shop's pages are clean of page checks")
	assert.Regexp(t, `\nviewport_missing +1 +/lab/viewport-missing  no <meta name=viewport>\n`, r.stdout, "the closing summary counts them")
}

// escapePath is the path as the crawl records it (spaces and non-ASCII percent-encoded).
func escapePath(p string) string {
	return strings.NewReplacer(" ", "%20", "é", "%C3%A9").Replace(p)
}

// Served over TLS, the https-only check pages produce their kinds: the crawl reaches the demo's own
// handler on an httptest TLS server (port 443) and a plain one (port 80) for the http URLs it names.
func TestLabPageKindsOverHTTPS(t *testing.T) {
	h := new(demo.DemoSite)
	tlsSrv := httptest.NewTLSServer(h)
	t.Cleanup(tlsSrv.Close)
	plain := httptest.NewServer(h)
	t.Cleanup(plain.Close)
	tr := tlsSrv.Client().Transport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: tr.TLSClientConfig.RootCAs, ServerName: "example.com"} // the test certificate's name
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if strings.HasSuffix(addr, ":443") {
			return d.DialContext(ctx, network, tlsSrv.Listener.Addr().String())
		}
		return d.DialContext(ctx, network, plain.Listener.Addr().String())
	}
	r := audit(t, crawl.Env{Transport: tr}, "-gap", "0", "-concurrency", "8", "https://cove-shop.test/lab/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	byPage := map[string][]string{}
	for _, s := range pageFindings(t, r, "https://cove-shop.test") {
		kind, path, _ := strings.Cut(s, " ")
		if kind == findings.KindSlowTTFB && path != "/lab/slow-ttfb" {
			continue // a loaded test machine may answer any page slowly: slow_ttfb is asserted on its own page
		}
		byPage[path] = append(byPage[path], kind)
	}
	for path, kind := range demo.LabPageKinds() {
		if slices.Contains(demo.HTTPSOnlyKinds, kind) {
			assert.Equal(t, []string{kind}, byPage[path], "%s over https", path)
		}
	}
	assert.Empty(t, byPage[demo.LabCleanPath], "the clean page over https")
}
