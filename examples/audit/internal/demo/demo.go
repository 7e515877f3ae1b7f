package demo

import (
	"compress/gzip"
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
			`<sitemap><loc>`+base+`/sitemap-pages.xml</loc></sitemap>`+
			`<sitemap><loc>`+base+`/site-checks/sitemap.xml</loc></sitemap>`+
			`<sitemap><loc>`+base+LabMissingSitemap+`</loc></sitemap></sitemapindex>`)
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
		if serveLab(w, r, p) || serveSiteChecks(w, r, p) {
			return // the check pages (lab.go, lab_site.go)
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
		if p == "/about" && len(labPages) > 0 {
			// Linked from /about, not the home page: at depth 2 the index's section sorts after the
			// shop's own sections, so `-render 5` still samples the shop's pages (render.sampleForRender).
			pg.links = append(slices.Clip(pg.links), [2]string{"/lab/", "Check pages"})
		}
		writeHTML(w, r, pg.render(base, p))
	}
}

type demoPage struct {
	title, description, canonical string
	h1                            []string
	body                          string
	more, text                    string      // an h2 and its section: the page's own text
	links                         [][2]string // href, text
	tail                          string      // markup before </body>: scripts (demo_render.go)
}

const shopDescription = "Quality outdoor gear at fair prices from Cove Outfitters, the shop by the harbour since 1998."

var demoNav = [][2]string{{"/", "Home"}, {"/products/", "Products"}, {"/sale", "Sale"}, {"/about", "About us"}, {"/contact", "Contact"}, {"/basket/", "Basket"}}

// The shop's pages are ordinary, well-made pages but for their deliberate problems: each has a title of
// 30 to 60 characters, a description of 70 to 155, a self-referencing canonical, a viewport, Open Graph
// tags, an h2 and some 200 words of its own, so the checks of a page's own response (pagecheck) find
// nothing on them that is not intended. The check pages under /lab/ show those checks.
var demoPages = map[string]demoPage{
	"/": {title: "Cove Outfitters: outdoor gear for the coast", description: "Tents, lanterns and sea kayaks, tested on the coast by the people who sell them, and shipped the next day.",
		h1: []string{"Cove Outfitters"}, body: "Everything you need for a weekend by the sea, from shelter to light to a boat.",
		more: "Why we test by the sea", text: homeText,
		links: [][2]string{{"https://www.example.org/partners/cove", "Our partner, the coastal trust"}}},
	"/products/": {title: "All products: tents, lanterns, kayaks | Cove Outfitters", description: "Browse every tent, storm lantern and sea kayak we sell, with the conditions each one was tested in.",
		h1: []string{"Products"}, body: "Three products, all in stock.", more: "How we choose what we sell", text: productsText,
		links: [][2]string{{"/products/tent", "Tent"}, {"/products/lantern", "Lantern"}, {"/products/kayak", "Kayak"}, {"/products/?sort=price", "Sort by price"}}},
	"/products/tent": {title: "Two-person tent for windy coasts | Cove Outfitters", description: shopDescription,
		h1: []string{"Two-person tent"}, body: "A light tent that stands up to the wind off the sea.", more: "Pitching it in a gale", text: tentText},
	"/products/lantern": {title: "Storm lantern, twelve hours a charge | Cove Outfitters", description: shopDescription,
		h1: []string{"Storm lantern"}, body: "Burns for twelve hours on one charge.", more: "Light that survives salt", text: lanternText},
	"/products/kayak": {title: "Stable sea kayak for beginners | Cove Outfitters", description: "A stable sea kayak for beginners: wide, forgiving and light enough to carry down to the water alone.",
		h1: []string{"Sea kayak"}, body: "Add a paddle to your order.", more: "Your first trips", text: kayakText,
		links: [][2]string{{"/products/paddle", "Matching paddle"}}},
	"/offers/": {title: "Summer offers on tents and kayaks | Cove Outfitters", description: "This season's reductions on tents, lanterns and kayaks, while the stock of last year's colours lasts.",
		h1: []string{"Offers"}, body: "Ten percent off every tent.", more: "What is reduced and why", text: offersText},
	"/about": {description: "Who we are, where we come from, and why a small harbour shop tests all its gear in the worst weather.",
		h1: []string{"About Cove Outfitters"}, body: "A small shop by the harbour since 1998.", more: "Twenty-eight years of weather", text: aboutText},
	"/contact": {title: "Contact us or visit the harbour shop | Cove Outfitters", description: "Write to us, call, or visit the shop on the harbour wall; we answer every message within a working day.",
		h1: []string{"Contact", "Opening hours"}, body: "Open every day but Monday.", more: "Finding the shop", text: contactText,
		links: [][2]string{{"/account/login", "Your account"}, {"/contact/form", "Write to us"}}},
}

const (
	homeText = `We are a small team on the harbour, and every tent, lantern and kayak in this shop has spent a wet weekend
on the coast before we agreed to sell it. Wind off the water finds every weak seam, salt eats cheap zips, and a lantern that
fails at two in the morning is worse than no lantern at all. So we pitch, light and paddle each product in the conditions it
was made for, write down what broke, and send the notes back to the makers. Some of them listen and improve the next batch;
the ones that do not are no longer on our shelves. What you find here is the short list that survived. Orders placed before
three in the afternoon leave the same day, packed in boxes we reuse from our own deliveries. If something fails within two
years we repair or replace it, and we tell you honestly when a repair is the better choice. Come and see us on the harbour
wall if you are passing: the kettle is usually on, the tide tables are pinned by the door, and someone will have a story about
the last storm and the gear that came through it.`
	productsText = `We keep the range small on purpose. Three products that we know well are more useful to you than thirty we
have only read about. Each one was chosen after a season of trying the alternatives side by side on the same beach, in the
same weather, by the same people. We look for things that are light enough to carry from the car park to the dunes, simple
enough to fix with the tools in a jacket pocket, and tough enough to be handed down. Prices are what we think is fair for that
quality: not the cheapest, never inflated for a sale that is not real. Every product page lists what we tested it in, what
went wrong, and what the maker changed afterwards. When a newer model replaces one of ours we keep the old notes online, since
many of you still own the earlier version and want to know how to look after it. Sorting by price shows the same three
products in another order, for those who prefer it. Spare parts for all of them are in stock at the harbour shop, and most
can be posted the same day. If you are not sure which of them suits your trip, write to us with where and when you are going, and one of us who has been there will answer.`
	tentText = `Our two-person tent weighs under two kilograms with its pegs and poles, packs to the size of a loaf of bread,
and has stood through a night of gusts near eighty kilometres an hour on the headland above the harbour. Two crossing poles
spread the load, and twelve guy points let you pin it low to the ground when the forecast turns. The inner tent hangs from the
fly, so both go up together and the sleeping space stays dry even when you pitch in rain. There is room for two people and
their packs, with a porch on each side for boots and a stove. The fly is coated on both faces, the seams are taped, and the
zips are the large kind that still run when they are full of sand. We replaced the original pegs with longer ones that hold in
soft ground, and we include a small repair kit with spare pole sleeve and patches. Air it after every trip, never store it
damp, and it will last you many summers on the coast. If a pole ever cracks, bring it to the harbour shop: we splint it while you wait and order a new section from the maker, usually within the week, at the price of the part alone.`
	lanternText = `The storm lantern runs for twelve hours on its brightest setting and for four nights on its lowest, from one
charge over a standard cable. Its case is sealed against spray and survived a week tied to the mast of a fishing boat in the
bay, which is the test we use for anything that claims to be waterproof. A hook on the top hangs it from a tent loop, a
magnet on the base holds it to a car door, and the dimmer turns with gloves on. The light is warm rather than blue, so it does
not wreck your night vision when you step outside to check the guy lines. When the battery runs low it steps down slowly instead
of going dark without warning, which gives you time to find the spare. Rinse the salt off in fresh water after a trip and
charge it before you store it for the winter. The battery can be replaced at the shop in a few minutes, so the lantern itself
should outlive several of them. We also sell a spare battery and a soft case that keeps the lens from being scratched in a rucksack, though most of our customers find they never need either of them.`
	kayakText = `The sea kayak is wide, stable and forgiving, built for people who are new to paddling on open water and want
to feel safe in the first few trips. It tracks straight in a crosswind, turns easily with a sweep stroke, and has two sealed
hatches that keep a change of clothes and lunch dry. At twenty-two kilograms one person can carry it from a roof rack to the
water, and the moulded handles do not cut into your hands on the way. The seat and footrests adjust without tools, so it fits
a tall adult and a teenager alike. We recommend a paddle of two hundred and twenty centimetres for most people, a buoyancy aid,
and a first outing with one of the local clubs, who run sessions from the slipway every Saturday morning in summer. Rinse it
after each trip, store it out of the sun, and check the hatch seals at the start of each season. With that care the hull will
take many years of beaching on shingle. If you are unsure about the size, come down to the slipway on a Saturday in summer and try it on the water first: we bring two of them along for exactly that purpose.`
	offersText = `Every summer the makers change their colours, and last year's stock has to make room on the shelves. That is the
only reason for these reductions: the products are the same ones we tested and sell all year, in the colours that did not sell
out. Tents are ten percent off until the old stock is gone, lanterns are reduced while the grey ones last, and there is a
small saving on kayaks ordered together with a paddle. We do not raise prices before a sale to make the discount look larger,
and we never clear out products we would not recommend. If you bought something at the full price in the last month and it is
now reduced, write to us and we will refund the difference. Offers end when the stock ends, and we say so on this page the
same day. Delivery is free on orders over fifty euros during the summer, and returns are accepted for thirty days as always.
Ask at the harbour shop if you want to see the colours before you choose. Everything on offer comes with the same two-year repair promise as at the full price, and the same advice from the people who tested it on this coast.`
	aboutText = `Cove Outfitters started in 1998 in a former net loft on the harbour, when two sailors who were tired of gear
that failed on the coast decided to sell only what they had tested themselves. The loft is still the shop, though the nets
have gone and the stairs have been rebuilt twice. Today five of us run it, all of whom camp, paddle or sail on this coast in
every season. We have kept the rule from the first year: nothing goes on the shelves before it has been out in bad weather
with one of us. We work with a handful of makers in Europe who answer our emails and fix what we find, and we repair far more
than we replace. Many of our customers have been coming back for twenty years, first for themselves and now for their
children. We sponsor the lifeboat station's open day and the beach clean every spring, and we lend kit to the local scout
group. If you are in town, climb the stairs and say hello. You will usually find one of us at the counter, one in the workshop at the back mending something, and the rest out on the water testing the next thing we might sell.`
	contactText = `The shop is on the harbour wall, between the lifeboat station and the fish market, up the outside stairs of
the old net loft. There is parking by the market on weekdays and a bus stop at the top of the slipway. You can write to us
with the form on this site, by email or by post; we answer every message within one working day, and usually on the same day
in summer. Questions about a product are best sent with a photo if something has broken, so that we can tell you at once
whether a repair or a replacement is the right answer. We are open every day but Monday, from nine until six, and until eight
on Fridays in July and August. On stormy days we sometimes close early to help the harbour master, and we post a note on the
door when we do. Orders can be collected from the shop at no charge, usually two hours after you place them. We look forward
to seeing you. If you need to return something, bring it to the shop or post it back with a note saying what went wrong, and we will write to you as soon as it arrives.`
)

// shopOGImage is the picture the shop's pages name for social networks (never fetched: images are not).
const shopOGImage = "/assets/og-cove.jpg"

func (p demoPage) render(base, path string) string {
	var b strings.Builder
	b.WriteString("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	if p.title != "" {
		fmt.Fprintf(&b, "<title>%s</title>\n", html.EscapeString(p.title))
	}
	if p.description != "" {
		fmt.Fprintf(&b, "<meta name=\"description\" content=\"%s\">\n", html.EscapeString(p.description))
	}
	canonical := p.canonical
	if canonical == "" {
		canonical = base + path
	}
	fmt.Fprintf(&b, "<link rel=\"canonical\" href=\"%s\">\n", html.EscapeString(canonical))
	ogTitle := p.title
	if ogTitle == "" && len(p.h1) > 0 {
		ogTitle = p.h1[0]
	}
	fmt.Fprintf(&b, "<meta property=\"og:title\" content=\"%s\"><meta property=\"og:description\" content=\"%s\">"+
		"<meta property=\"og:image\" content=\"%s\">\n", html.EscapeString(ogTitle), html.EscapeString(p.description), base+shopOGImage)
	b.WriteString("</head><body><nav>")
	for _, l := range demoNav {
		fmt.Fprintf(&b, "<a href=\"%s\">%s</a> ", l[0], l[1])
	}
	b.WriteString("</nav>\n<main>")
	for _, h := range p.h1 {
		fmt.Fprintf(&b, "<h1>%s</h1>", html.EscapeString(h))
	}
	fmt.Fprintf(&b, "<p>%s</p>", html.EscapeString(p.body))
	if p.more != "" {
		fmt.Fprintf(&b, "\n<h2>%s</h2>\n<p>%s</p>\n", html.EscapeString(p.more), html.EscapeString(p.text))
	}
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

// writeHTML answers an HTML page as a well-configured server does: charset in Content-Type,
// X-Content-Type-Options: nosniff, a cache policy, and gzip when the request accepts it.
func writeHTML(w http.ResponseWriter, r *http.Request, page string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "max-age=300")
	writeMaybeGzip(w, r, page)
}

// writeMaybeGzip writes body, gzip-encoded when the request accepts gzip and it is worth it.
func writeMaybeGzip(w http.ResponseWriter, r *http.Request, body string) {
	if len(body) < 1024 || !acceptsGzip(r) {
		io.WriteString(w, body)
		return
	}
	w.Header().Set("Content-Encoding", "gzip")
	w.Header().Add("Vary", "Accept-Encoding")
	zw := gzip.NewWriter(w)
	io.WriteString(zw, body)
	zw.Close()
}

func acceptsGzip(r *http.Request) bool {
	for part := range strings.SplitSeq(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}
