package fetch_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/fetch"
)

// botSite answers every page with one canned response and counts page
// requests; robots.txt answers robotsStatus (404: no robots.txt).
func botSite(t *testing.T, status int, header http.Header, body string, robotsStatus int) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.WriteHeader(robotsStatus)
			return
		}
		n.Add(1)
		for k, vs := range header {
			w.Header()[k] = vs
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// Bodies imitating what the vendors send (shortened, same markers).
const (
	cfInterstitial = `<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title><meta http-equiv="refresh" content="390"></head>
<body><div class="main-wrapper" role="main"><div class="main-content"><noscript>Enable JavaScript and cookies to continue</noscript></div></div>
<script>(function(){window._cf_chl_opt={cvId: '3',cZone: "example.com",cType: 'managed'};var a = document.createElement('script');a.src = '/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1?ray=8c';})();</script></body></html>`
	cfBlock      = `<!DOCTYPE html><html><head><title>Attention Required! | Cloudflare</title></head><body><div id="cf-wrapper"><div id="cf-error-details" class="cf-error-details-wrapper"><h1>Sorry, you have been blocked</h1></div></div></body></html>`
	akamaiDenied = `<HTML><HEAD><TITLE>Access Denied</TITLE></HEAD><BODY><H1>Access Denied</H1>You don't have permission to access "http&#58;&#47;&#47;www&#46;example&#46;com&#47;" on this server.<P>Reference&#32;&#35;18&#46;2f1e3b17&#46;1733050000&#46;1a2b3c4d<P>https&#58;&#47;&#47;errors&#46;edgesuite&#46;net&#47;18&#46;2f1e3b17</BODY></HTML>`
	dataDome     = `<html><head><title>example.com</title></head><body style="margin:0"><p id="cmsg">Please enable JS and disable any ad blocker</p><script data-cfasync="false">var dd={'rt':'c','cid':'AHrlqAAAAAMA','hsh':'2211F522B61E269B869FA6EAFFB5E1','t':'fe','host':'geo.captcha-delivery.com'}</script><script data-cfasync="false" src="https://ct.captcha-delivery.com/c.js"></script></body></html>`
	perimeterX   = `<!DOCTYPE html><html lang="en"><head><title>Access to this page has been denied</title></head><body><div id="px-captcha"></div><p>Press &amp; Hold to confirm you are a human (and not a bot).</p><script>window._pxAppId = 'PXabc123';</script><script src="https://captcha.px-cdn.net/PXabc123/captcha.js"></script></body></html>`
	imperva      = `<html><head><META NAME="robots" CONTENT="noindex,nofollow"><script src="/_Incapsula_Resource?SWJIYLWA=5074a744e2e3d891814e9a2dace20bd4,719d34d31c8e3a6e6fffd425f7e032f3"></script></head><body>Request unsuccessful. Incapsula incident ID: 1234-5678</body></html>`
	captchaWall  = `<html><head><title>Verify you are human</title><script src="https://www.google.com/recaptcha/api.js" async defer></script></head><body><form method="post"><div class="g-recaptcha" data-sitekey="6Lc_abc"></div><button>Continue</button></form></body></html>`
)

func TestChallengeSignals(t *testing.T) {
	cases := []struct {
		name   string
		status int
		header http.Header
		body   string
		vendor string
	}{
		{"cf-mitigated header", 403, http.Header{"Cf-Mitigated": {"challenge"}, "Server": {"cloudflare"}}, "<html></html>", "cloudflare"},
		{"cf-mitigated on 200", 200, http.Header{"Cf-Mitigated": {"challenge"}}, "", "cloudflare"},
		{"just a moment 503", 503, http.Header{"Server": {"cloudflare"}}, cfInterstitial, "cloudflare"},
		{"cloudflare block 403", 403, nil, cfBlock, "cloudflare"},
		{"akamai server 403", 403, http.Header{"Server": {"AkamaiGHost"}}, akamaiDenied, "akamai"},
		{"akamai body", 403, nil, akamaiDenied, "akamai"},
		{"datadome header", 403, http.Header{"X-Datadome": {"protected"}}, "", "datadome"},
		{"datadome body", 403, nil, dataDome, "datadome"},
		{"perimeterx", 403, nil, perimeterX, "perimeterx"},
		{"imperva", 403, nil, imperva, "imperva"},
		{"aws waf", 202, http.Header{"X-Amzn-Waf-Action": {"challenge"}}, "", "aws-waf"},
		{"captcha wall 429", 429, nil, captchaWall, "captcha"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, hits := botSite(t, tc.status, tc.header, tc.body, 404)
			c := &fetch.Client{Gate: fetch.NoLimits{}}
			res, err := c.Get(context.Background(), srv.URL+"/page")
			require.NoError(t, err)
			require.NotNil(t, res.Challenge, "not classified")
			assert.Equal(t, tc.vendor, res.Challenge.Vendor)
			assert.NotEmpty(t, res.Challenge.Signal)
			assert.Equal(t, tc.status, res.Status)
			assert.Equal(t, int64(1), hits.Load(), "a challenge was retried")
			assert.Len(t, res.Attempts, 1)
			assert.False(t, res.RefusesCrawler())
		})
	}
}

// TestChallengeNoFalsePositive: real pages that talk about bot protection,
// embed a captcha on their own form, or are plain error pages of sites
// behind those vendors are not challenges; a plain 503 is still retried.
func TestChallengeNoFalsePositive(t *testing.T) {
	article := `<html><head><title>How we moved to Cloudflare</title></head><body><h1>Just a moment... said our CDN</h1>
<p>We compared Cloudflare, Akamai, DataDome, PerimeterX (now HUMAN) and Imperva Incapsula. Our captcha of choice is reCAPTCHA;
see cf-mitigated: challenge in their docs, and "Access Denied" pages with a Reference #18 number.</p></body></html>`
	loginForm := captchaWall // the same widget on a 200 login page is the site's own form
	jsd := `<html><head><title>Not found</title></head><body>No such page<script src="/cdn-cgi/challenge-platform/scripts/jsd/main.js"></script></body></html>`
	cases := []struct {
		name   string
		status int
		header http.Header
		body   string
	}{
		{"article 200", 200, http.Header{"Server": {"cloudflare"}}, article},
		{"login form with recaptcha 200", 200, nil, loginForm},
		{"datadome-protected 200", 200, http.Header{"X-Datadome": {"protected"}}, "<html>ok</html>"},
		{"cloudflare 404 with jsd script", 404, http.Header{"Server": {"cloudflare"}}, jsd},
		{"datadome-protected 404", 404, http.Header{"X-Datadome": {"protected"}}, "<html>not found</html>"},
		{"akamai 404", 404, http.Header{"Server": {"AkamaiGHost"}}, "<html>Not Found</html>"},
		{"plain 403 mentioning words", 403, nil, article},
		{"akamai 200", 200, http.Header{"Server": {"AkamaiGHost"}}, akamaiDenied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := botSite(t, tc.status, tc.header, tc.body, 404)
			res, err := (&fetch.Client{Gate: fetch.NoLimits{}}).Get(context.Background(), srv.URL+"/page")
			require.NoError(t, err)
			assert.Nil(t, res.Challenge, "false positive: %v", res.Challenge)
		})
	}
	assert.Nil(t, fetch.DetectChallenge(200, http.Header{}, []byte(cfInterstitial)), "a 200 interstitial-looking page")
}

// TestPlainHardBlock: 403 to robots.txt and to the page is the site
// refusing the crawler; a 403 page under a 200/404 robots.txt is not.
func TestPlainHardBlock(t *testing.T) {
	for _, rs := range []int{401, 403} {
		srv, _ := botSite(t, 403, nil, "<html><h1>403 Forbidden</h1><hr>nginx</html>", rs)
		res, err := (&fetch.Client{Gate: fetch.NoLimits{}}).Get(context.Background(), srv.URL+"/")
		require.NoError(t, err)
		assert.Equal(t, rs, res.RobotsStatus)
		assert.True(t, res.RefusesCrawler(), "robots %d", rs)
		assert.Nil(t, res.Challenge)
	}
	srv, _ := botSite(t, 403, nil, "forbidden", 404)
	res, err := (&fetch.Client{Gate: fetch.NoLimits{}}).Get(context.Background(), srv.URL+"/")
	require.NoError(t, err)
	assert.Equal(t, 404, res.RobotsStatus)
	assert.False(t, res.RefusesCrawler())
}
