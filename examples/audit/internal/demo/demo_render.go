package demo

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// The demo shop's JavaScript: each script puts one defect that only a rendering crawler sees on a page
// that the rendered pass's sample picks first (the home page and the first page of each section), so
// `audit -demo -render 5` shows every finding of the rendered pass. Without -render the pages are
// ordinary pages: the crawler does not run scripts, and none of this changes its findings.
//
//	/            shop.js adds a "Gift cards" link           -> links_only_after_render
//	/about       about.js sets the missing <title>          -> render_title_changed
//	/contact     contact.js fetches a missing API and calls
//	             a widget that is not there                 -> render_resource_failed, render_js_error
//	/offers/     offers.js changes the canonical, adds noindex,
//	             nofollow and an hreflang annotation,
//	             rewrites the description and the <h1>      -> render_canonical_changed,
//	                                                           render_robots_meta_changed, render_h1_changed,
//	                                                           render_noindex_changed, render_nofollow_changed,
//	                                                           render_hreflang_changed, render_description_changed
//	/products/   needs /basket/mini-basket.js, which
//	             robots.txt disallows                       -> render_resource_blocked_by_robots
//
// /products/ also has a stylesheet (loaded) and a product photo (an image: never loaded).
var demoScripts = map[string]string{
	"/":          `<script src="/assets/shop.js"></script>`,
	"/about":     `<script src="/assets/about.js"></script>`,
	"/contact":   `<script src="/assets/contact.js"></script>`,
	"/offers/":   `<script src="/assets/offers.js"></script>`,
	"/products/": `<link rel="stylesheet" href="/assets/shop.css"><img src="/assets/tent.jpg" alt="Tent" width="640" height="480"><script src="/basket/mini-basket.js"></script>`,
}

var demoAssets = map[string][2]string{ // path -> content type, body
	"/assets/shop.js": {"text/javascript", `// Gift cards are new: the link is added here until the templates are updated.
var a = document.createElement("a");
a.href = "/gift-cards";
a.textContent = "Gift cards";
document.querySelector("nav").appendChild(a);
`},
	"/assets/about.js": {"text/javascript", `document.title = "About us | Cove Outfitters";
`},
	"/assets/contact.js": {"text/javascript", `fetch("/api/opening-hours").then(function (r) { return r.ok ? r.json() : null; });
window.stockWidget.init(); // the widget's script was removed from the template
`},
	"/assets/offers.js": {"text/javascript", `// The campaign ended: point search engines at the old sale page and hide this one.
var canonical = document.querySelector('link[rel="canonical"]');
if (!canonical) {
  canonical = document.createElement("link");
  canonical.rel = "canonical";
  document.head.appendChild(canonical);
}
canonical.href = location.origin + "/summer-sale";
document.head.insertAdjacentHTML("beforeend", '<meta name="robots" content="noindex, nofollow">');
document.head.insertAdjacentHTML("beforeend", '<link rel="alternate" hreflang="fr" href="' + location.origin + '/offers/">');
var description = document.querySelector('meta[name="description"]');
if (description) {
  description.content = "The summer offers have ended; see the sale page.";
}
document.querySelector("h1").textContent = "Offers have ended";
`},
	"/assets/shop.css":       {"text/css", "body { font-family: sans-serif; } nav a { margin-right: 1em; }\n"},
	"/assets/tent.jpg":       {"image/jpeg", "not really a photo"},
	"/basket/mini-basket.js": {"text/javascript", "document.body.insertAdjacentHTML('beforeend', '<p>Basket: 0 items</p>');\n"},
}

func init() {
	for path, tail := range demoScripts {
		p := demoPages[path]
		p.tail = tail
		demoPages[path] = p
	}
	demoPages["/gift-cards"] = demoPage{title: "Gift cards | Cove Outfitters", description: "Give the coast: gift cards from 20 euros.",
		h1: []string{"Gift cards"}, body: "Delivered by email, valid for three years."}
}

// serveDemoAsset answers the shop's scripts, styles and images.
func serveDemoAsset(w http.ResponseWriter, path string) bool {
	a, ok := demoAssets[path]
	if !ok {
		return false
	}
	w.Header().Set("Content-Type", a[0])
	io.WriteString(w, a[1])
	return true
}

// isBrowserUA tells the rendered pass's browser (its own User-Agent) from the crawler.
func isBrowserUA(ua string) bool { return strings.Contains(ua, "Chrome/") }

// reportBrowser adds the rendered pass's requests, seen from the server, to the demo's report.
func (d *DemoSite) reportBrowser(w io.Writer, reqs []demoRequest) {
	n, disallowed := 0, 0
	ua := ""
	for _, r := range reqs {
		if !isBrowserUA(r.UserAgent) {
			continue
		}
		n++
		ua = r.UserAgent
		if strings.HasPrefix(r.Path, "/basket/") || strings.HasPrefix(r.Path, "/account/") {
			disallowed++
		}
	}
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "Of those, the rendered pass's browser made %d, with its own User-Agent (%s); to the disallowed /basket/ and /account/: %d.\n", n, ua, disallowed)
}
