package demo

import (
	"context"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
)

// demoHost is the demo shop's name. .test is reserved for testing (RFC 6761), so it can never be a real
// site; the crawler reaches it through -resolve-style mapping to the loopback listener.
const demoHost = "cove-shop.test"

// DemoSite is the built-in shop with deliberate problems: a broken link, a redirect chain, a missing title,
// duplicate descriptions, a robots-disallowed area, a sitemap index, an external link and a page behind
// bot protection. It records what
// it was asked for so the demo can show the crawler's manners from the server's side.
type DemoSite struct {
	srv *http.Server
	ln  net.Listener

	mu       sync.Mutex
	requests []demoRequest
}

type demoRequest struct {
	Method, Host, Path, UserAgent string
}

// StartDemo serves the shop on a loopback port until ctx ends or stop is called.
func StartDemo() (*DemoSite, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo site: %w", err)
	}
	d := &DemoSite{ln: ln}
	d.srv = &http.Server{Handler: d}
	go func() {
		_ = d.srv.Serve(ln) // ends with ErrServerClosed; a failure shows as failed requests in the crawl
	}()
	return d, nil
}

// URL is the start URL of the demo crawl. It has no port: the shop's address is the same in every run,
// so crawls of it in one database can be compared.
func (d *DemoSite) URL() string { return "http://" + demoHost + "/" }

// Resolve maps the shop's names (and its www twin) on port 80 to the listener, like
// -resolve cove-shop.test:80:127.0.0.1:PORT.
func (d *DemoSite) Resolve() map[string]string {
	addr := d.ln.Addr().String()
	return map[string]string{demoHost + ":80": addr, "www." + demoHost + ":80": addr}
}

// Stop closes the shop at once, dropping idle keep-alive connections, so neither a test nor -demo waits
// for a browser's open connection.
func (d *DemoSite) Stop() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // do not wait for idle keep-alive connections
	_ = d.srv.Shutdown(ctx)
	_ = d.srv.Close()
}

func (d *DemoSite) seen() []demoRequest {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]demoRequest(nil), d.requests...)
}

// Report says, from the server's side, how the crawler behaved.
func (d *DemoSite) Report(w io.Writer, userAgent string) {
	reqs := d.seen()
	methods := map[string]int{}
	otherUA := 0
	disallowed := 0
	paths := map[string]bool{}
	for _, r := range reqs {
		methods[r.Method]++
		if r.UserAgent != userAgent && !isBrowserUA(r.UserAgent) {
			otherUA++
		}
		if strings.HasPrefix(r.Path, "/basket/") || strings.HasPrefix(r.Path, "/account/") {
			disallowed++
		}
		paths[r.Path] = true
	}
	var ms []string
	for m, n := range methods {
		ms = append(ms, fmt.Sprintf("%d %s", n, m))
	}
	sort.Strings(ms)
	first := "-"
	if len(reqs) > 0 {
		first = reqs[0].Host + reqs[0].Path
	}
	sitemapXML := 0
	if paths["/sitemap.xml"] {
		sitemapXML = 1
	}
	fmt.Fprintf(w, "\nThe demo shop's server saw %d requests (%s); first: %s; with another User-Agent: %d; to the disallowed /basket/ and /account/: %d; to /sitemap.xml: %d.\n",
		len(reqs), strings.Join(ms, ", "), first, otherUA, disallowed, sitemapXML)
	d.reportBrowser(w, reqs)
}

// ServeHTTP serves the shop and records every request, so a test or -demo's closing line can show what
// the crawler actually sent (User-Agent, disallowed paths, sitemap fetches).
func (d *DemoSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	d.mu.Lock()
	d.requests = append(d.requests, demoRequest{r.Method, host, r.URL.RequestURI(), r.UserAgent()})
	d.mu.Unlock()

	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	base := "http://" + demoHost
	if host == "www."+demoHost {
		// The www twin publishes its own robots.txt and sends everything else to the apex host.
		if r.URL.Path == "/robots.txt" {
			text(w, "User-agent: *\nDisallow:\n")
			return
		}
		http.Redirect(w, r, base+r.URL.RequestURI(), http.StatusMovedPermanently)
		return
	}
	switch p := r.URL.Path; p {
	case "/robots.txt":
		text(w, "# Cove Outfitters\nUser-agent: *\nDisallow: /basket/\nDisallow: /account/\n"+
			"# Crawl Cove does not read Crawl-delay; it waits 300 ms between requests on its own.\nCrawl-delay: 10\n\n"+
			"Sitemap: "+base+"/sitemap_index.xml\n")
	case "/sitemap_index.xml":
		xmlDoc(w, `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+
			`<sitemap><loc>`+base+`/sitemap-products.xml</loc></sitemap>`+
			`<sitemap><loc>`+base+`/sitemap-pages.xml</loc></sitemap></sitemapindex>`)
	case "/sitemap-products.xml":
		xmlDoc(w, Urlset(base, "/products/tent", "/products/lantern", "/products/kayak", "/products/stove", "/summer-sale"))
	case "/sitemap-pages.xml":
		xmlDoc(w, Urlset(base, "/", "/about", "/contact", "/basket/"))
	case "/llms.txt":
		text(w, "# Cove Outfitters\n> Outdoor gear for the coast.\n\n- [Products](/products/): tents, lanterns, kayaks\n")
	case "/sale":
		http.Redirect(w, r, "/summer-sale", http.StatusMovedPermanently)
	case "/summer-sale":
		http.Redirect(w, r, "/offers/", http.StatusFound)
	case "/contact/form":
		// Behind bot protection: Cloudflare's managed challenge, as a crawler gets it. Not a broken page.
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.Header().Set("cf-mitigated", "challenge")
		w.Header().Set("Server", "cloudflare")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, "<!DOCTYPE html><html lang=\"en-US\"><head><title>Just a moment...</title></head><body>"+
			"<noscript>Enable JavaScript and cookies to continue</noscript></body></html>")
	default:
		if serveDemoAsset(w, p) {
			return // scripts and styles of the pages (demo_render.go)
		}
		if serveLab(w, r, p) {
			return // the check pages (lab.go)
		}
		pg, ok := demoPages[p]
		if !ok {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, "<!doctype html><title>Not found</title><h1>Not found</h1>")
			return
		}
		if p == "/products/" && r.URL.RawQuery != "" {
			pg.canonical = base + "/products/"
		}
		if p == "/" && len(labPages) > 0 {
			pg.links = append(slices.Clip(pg.links), [2]string{"/lab/", "Check pages"})
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, pg.render())
	}
}

type demoPage struct {
	title, description, canonical string
	h1                            []string
	body                          string
	links                         [][2]string // href, text
	tail                          string      // markup before </body>: scripts (demo_render.go)
}

const shopDescription = "Quality outdoor gear at fair prices from Cove Outfitters."

var demoNav = [][2]string{{"/", "Home"}, {"/products/", "Products"}, {"/sale", "Sale"}, {"/about", "About us"}, {"/contact", "Contact"}, {"/basket/", "Basket"}}

var demoPages = map[string]demoPage{
	"/": {title: "Cove Outfitters: outdoor gear for the coast", description: "Tents, lanterns and sea kayaks, tested on the coast.",
		h1: []string{"Cove Outfitters"}, body: "Everything you need for a weekend by the sea, from shelter to light to a boat.",
		links: [][2]string{{"https://www.example.org/partners/cove", "Our partner, the coastal trust"}}},
	"/products/": {title: "All products | Cove Outfitters", description: "Browse every tent, lantern and kayak we sell.",
		h1: []string{"Products"}, body: "Three products, all in stock.",
		links: [][2]string{{"/products/tent", "Tent"}, {"/products/lantern", "Lantern"}, {"/products/kayak", "Kayak"}, {"/products/?sort=price", "Sort by price"}}},
	"/products/tent": {title: "Two-person tent | Cove Outfitters", description: shopDescription,
		h1: []string{"Two-person tent"}, body: "A light tent that stands up to the wind off the sea."},
	"/products/lantern": {title: "Storm lantern | Cove Outfitters", description: shopDescription,
		h1: []string{"Storm lantern"}, body: "Burns for twelve hours on one charge."},
	"/products/kayak": {title: "Sea kayak | Cove Outfitters", description: "A stable sea kayak for beginners.",
		h1: []string{"Sea kayak"}, body: "Add a paddle to your order.",
		links: [][2]string{{"/products/paddle", "Matching paddle"}}},
	"/offers/": {title: "Summer offers | Cove Outfitters", description: "This season's reductions.",
		h1: []string{"Offers"}, body: "Ten percent off every tent."},
	"/about": {description: "Who we are and where we come from.",
		h1: []string{"About Cove Outfitters"}, body: "A small shop by the harbour since 1998."},
	"/contact": {title: "Contact | Cove Outfitters", description: "Write to us or visit the shop.",
		h1: []string{"Contact", "Opening hours"}, body: "Open every day but Monday.",
		links: [][2]string{{"/account/login", "Your account"}, {"/contact/form", "Write to us"}}},
}

func (p demoPage) render() string {
	var b strings.Builder
	b.WriteString("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	if p.title != "" {
		fmt.Fprintf(&b, "<title>%s</title>\n", html.EscapeString(p.title))
	}
	if p.description != "" {
		fmt.Fprintf(&b, "<meta name=\"description\" content=\"%s\">\n", html.EscapeString(p.description))
	}
	if p.canonical != "" {
		fmt.Fprintf(&b, "<link rel=\"canonical\" href=\"%s\">\n", html.EscapeString(p.canonical))
	}
	b.WriteString("</head><body><nav>")
	for _, l := range demoNav {
		fmt.Fprintf(&b, "<a href=\"%s\">%s</a> ", l[0], l[1])
	}
	b.WriteString("</nav>\n<main>")
	for _, h := range p.h1 {
		fmt.Fprintf(&b, "<h1>%s</h1>", html.EscapeString(h))
	}
	fmt.Fprintf(&b, "<p>%s</p>", html.EscapeString(p.body))
	for _, l := range p.links {
		fmt.Fprintf(&b, "<p><a href=\"%s\">%s</a></p>", html.EscapeString(l[0]), html.EscapeString(l[1]))
	}
	b.WriteString("</main>" + p.tail + "</body></html>\n")
	return b.String()
}

// Urlset is a sitemap urlset XML document listing base+path for each path, for the shop and for tests
// that serve their own sitemaps.
func Urlset(base string, paths ...string) string {
	var b strings.Builder
	b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, p := range paths {
		fmt.Fprintf(&b, "<url><loc>%s%s</loc></url>", base, p)
	}
	b.WriteString("</urlset>")
	return b.String()
}

func text(w http.ResponseWriter, s string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, s)
}

func xmlDoc(w http.ResponseWriter, s string) {
	w.Header().Set("Content-Type", "application/xml")
	io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+s)
}
