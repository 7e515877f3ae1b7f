package fetch

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
)

// Challenge says that a response is a bot-protection challenge or block
// (Cloudflare, Akamai, DataDome, PerimeterX/HUMAN, Imperva, AWS WAF, a
// captcha wall), not the page: neither a broken page nor a change of it.
// fetch never retries such a response (a 503 challenge is not a transient
// error) and sets Result.Challenge.
type Challenge struct {
	Vendor string // "cloudflare", "akamai", "datadome", "perimeterx", "imperva", "aws-waf" or "captcha"
	Signal string // what matched, e.g. "header cf-mitigated: challenge"
}

// String is "vendor (signal)".
func (c *Challenge) String() string { return c.Vendor + " (" + c.Signal + ")" }

// challengeScan bounds how much of a body DetectChallenge reads: challenge
// pages are small, and their markers come early.
const challengeScan = 64 << 10

// bodyMarker is a body signal of one vendor, matched case-insensitively
// on the start of an error response's body.
type bodyMarker struct{ vendor, marker string }

// bodyMarkers are markup and script references that a challenge page
// carries, never prose a page might use to talk about bot protection.
var bodyMarkers = []bodyMarker{
	{"cloudflare", "<title>just a moment...</title>"},
	{"cloudflare", "/cdn-cgi/challenge-platform/h/"}, // the challenge's own scripts (not .../scripts/jsd/, injected into every page)
	{"cloudflare", "window._cf_chl_opt"},
	{"cloudflare", "<title>attention required! | cloudflare</title>"},
	{"cloudflare", `id="cf-error-details"`},
	{"akamai", "errors.edgesuite.net"},
	{"akamai", "errors&#46;edgesuite&#46;net"}, // Akamai's Access Denied page writes it entity-encoded
	{"akamai", "reference&#32;&#35;18&#46;"},
	{"datadome", "captcha-delivery.com"},
	{"perimeterx", `id="px-captcha"`},
	{"perimeterx", "window._pxappid"},
	{"perimeterx", "captcha.px-cdn.net"},
	{"perimeterx", "perimeterx.net/whywasiblocked"},
	{"imperva", "_incapsula_resource"},
	{"imperva", "incapsula incident id"},
	{"captcha", "challenges.cloudflare.com/turnstile"},
	{"captcha", "google.com/recaptcha/api.js"},
	{"captcha", "recaptcha.net/recaptcha/api.js"},
	{"captcha", "hcaptcha.com/1/api.js"},
	{"captcha", `class="g-recaptcha"`},
	{"captcha", `class="h-captcha"`},
}

// DetectChallenge classifies a response as a bot-protection challenge, or
// returns nil. Header signals that only a challenge carries count at any
// status (cf-mitigated: challenge; x-amzn-waf-action: challenge or
// captcha). Everything else counts only on a refusal status (401, 403,
// 405, 429, 503; never 404 or 500, which stay broken pages): Akamai's "Server: AkamaiGHost" on a
// 403, a DataDome-protected site's (x-datadome) refusal, and the markup of
// challenge pages — the "Just a moment..." interstitial, challenge scripts,
// captcha widgets — in the first 64 KiB of the body. A 200 page that
// talks about Cloudflare or captchas, or embeds a captcha on its own form,
// is a page.
func DetectChallenge(status int, h http.Header, body []byte) *Challenge {
	if v := h.Get("Cf-Mitigated"); strings.EqualFold(strings.TrimSpace(v), "challenge") {
		return &Challenge{"cloudflare", "header cf-mitigated: challenge"}
	}
	if v := strings.ToLower(strings.TrimSpace(h.Get("X-Amzn-Waf-Action"))); v == "challenge" || v == "captcha" {
		return &Challenge{"aws-waf", "header x-amzn-waf-action: " + v}
	}
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusMethodNotAllowed,
		http.StatusTooManyRequests, http.StatusServiceUnavailable:
	default:
		return nil // 404, 410, 500...: a broken page stays a broken page
	}
	if status == http.StatusForbidden && strings.HasPrefix(strings.ToLower(h.Get("Server")), "akamaighost") {
		return &Challenge{"akamai", "403 from Server: AkamaiGHost"}
	}
	if h.Get("X-Datadome") != "" || h.Get("X-Dd-B") != "" {
		return &Challenge{"datadome", "header x-datadome on a " + strconv.Itoa(status)}
	}
	if len(body) == 0 {
		return nil
	}
	b := body[:min(len(body), challengeScan)]
	lower := bytes.ToLower(b)
	for _, m := range bodyMarkers {
		if bytes.Contains(lower, []byte(m.marker)) {
			return &Challenge{m.vendor, "body " + m.marker}
		}
	}
	return nil
}
