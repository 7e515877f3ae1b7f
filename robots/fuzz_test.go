package robots

import (
	"slices"
	"strings"
	"testing"
)

// refMatch is a plain dynamic-programming glob matcher: the reference the
// fast matcher (prefix checks, byte-set filter, early exit) is held to.
func refMatch(pat string, anchored bool, path string) bool {
	// m[j]: pat[:i] matches path[:j] for the current i.
	m := make([]bool, len(path)+1)
	m[0] = true
	for i := 0; i < len(pat); i++ {
		next := make([]bool, len(path)+1)
		if pat[i] == '*' {
			seen := false
			for j := 0; j <= len(path); j++ {
				seen = seen || m[j]
				next[j] = seen
			}
		} else {
			for j := 1; j <= len(path); j++ {
				next[j] = m[j-1] && path[j-1] == pat[i]
			}
		}
		m = next
	}
	if anchored {
		return m[len(path)]
	}
	for _, ok := range m {
		if ok {
			return true
		}
	}
	return false
}

// refAllowed decides by trying every rule of the selected groups.
func refAllowed(r *Rules, token, rawURL string) bool {
	path := pathOf(rawURL)
	if path == "/robots.txt" {
		return true
	}
	sel := r.lookup(token)
	if sel < 0 {
		return true
	}
	best, allow := int32(-1), true
	for _, gi := range r.sels[sel].groups {
		g := r.groups[gi]
		for ri := g.ruleLo; ri < g.ruleHi; ri++ {
			p := r.pats[ri]
			if !refMatch(p.s, p.anchored, path) {
				continue
			}
			if p.octets > best || (p.octets == best && p.allow) {
				best, allow = p.octets, p.allow
			}
		}
	}
	return allow
}

// dropColons rewrites every "name: value" line whose name Parse knows and
// whose value is one word as "name value", the colon forgotten. Parse must
// read the result exactly as the original.
func dropColons(body []byte) []byte {
	out := make([]byte, 0, len(body))
	for len(body) > 0 {
		end := len(body)
		for i, c := range body {
			if c == '\n' || c == '\r' {
				end = i
				break
			}
		}
		line := string(body[:end])
		text := line
		if c := strings.IndexByte(text, '#'); c >= 0 {
			text = text[:c]
		}
		if colon := strings.IndexByte(text, ':'); colon >= 0 {
			name, value := trimSpace(text[:colon]), trimSpace(text[colon+1:])
			if knownName(name) && value != "" && !hasSpace(value) {
				line = line[:colon] + " " + line[colon+1:]
			}
		}
		out = append(out, line...)
		body = body[end:]
		for len(body) > 0 && (body[0] == '\n' || body[0] == '\r') {
			out = append(out, body[0])
			body = body[1:]
		}
	}
	return out
}

func FuzzParseAllowed(f *testing.F) {
	seeds := []string{
		"User-agent: *\nDisallow: /\n",
		"User-agent: 2-UAcomBot\nDisallow: /\nAllow: /blog/\n",
		"User-agent: CrawlCove\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\n",
		"\xEF\xBB\xBFUser-agent : a\r\nDisallow: /*.pdf$\rAllow: /a*b*c\n# c\nSitemap: https://e.com/s.xml\nCrawl-delay: 2\n",
		"User-agent: *\nDisallow: /caf%c3%a9\nAllow: /%7Ejoe\nDisallow: /file-%2A.html\nDisallow: /foo-%24\n",
		"Disallow: /x\nUser-agent: a\nUser-agent: b\nAllow: /p\nDisallow: /pa\nAllow: /pag\nUser-agent: a\nDisallow: /q$\n",
		realisticRobots(7),
		"User-agent a\nDisallow /private\nAllow /private/ok # c\nSitemap https://e.com/s.xml\nCrawl-delay 2\nDisallow /a /b\nDisalow /c\n",
		"user-agent *\r\ndisallow /a:b\r\nallow\t/a:b/c\rDisallow\n",
	}
	urls := []string{"/", "/robots.txt", "https://e.com/blog/x?y#z", "/a1b2c3.pdf", "/café", "/%7ejoe/x", "/file-*.html", "http://e.com"}
	tokens := []string{"a", "2-UAcomBot", "CrawlCove-Crawler", "*", "", "Googlebot"}
	for i, s := range seeds {
		f.Add([]byte(s), tokens[i%len(tokens)], urls[i%len(urls)])
	}
	f.Fuzz(func(t *testing.T, body []byte, token, rawURL string) {
		r := Parse(body)
		got := r.Allowed(token, rawURL)
		if again := Parse(body).Allowed(token, rawURL); again != got {
			t.Fatalf("not deterministic: %v then %v", got, again)
		}
		d := r.Explain(token, rawURL)
		if d.Allowed != got {
			t.Fatalf("Explain %v, Allowed %v", d.Allowed, got)
		}
		if d.Rule != nil && d.Rule.Allow != got {
			t.Fatalf("decision %v by rule %+v", got, *d.Rule)
		}
		_ = d.String()
		if !r.Allowed(token, "/robots.txt") || !r.Allowed(token, "https://example.com/robots.txt") {
			t.Fatal("/robots.txt disallowed")
		}
		if len(body) < 4096 && len(rawURL) < 512 {
			if want := refAllowed(r, token, rawURL); want != got {
				t.Fatalf("Allowed(%q, %q) = %v, reference matcher says %v (%s)", token, rawURL, got, want, d)
			}
		}
		for _, s := range r.Sitemaps() {
			if !strings.HasPrefix(strings.ToLower(s), "http") {
				t.Fatalf("sitemap %q is not absolute", s)
			}
		}
		if delay, ok := r.CrawlDelay(token); ok && (delay < 0 || delay > maxCrawlDelay) {
			t.Fatalf("crawl-delay %v", delay)
		}
		_ = ProductToken(token)

		// A forgotten colon changes nothing (Google's parser reads it the
		// same way); only a shorter body could move the 500 KiB cut.
		if len(body) <= MaxBodySize {
			nc := Parse(dropColons(body))
			if !slices.Equal(nc.Rules(), r.Rules()) || !slices.Equal(nc.Sitemaps(), r.Sitemaps()) {
				t.Fatalf("without colons: rules %v, sitemaps %v; with: %v, %v", nc.Rules(), nc.Sitemaps(), r.Rules(), r.Sitemaps())
			}
			if nc.Allowed(token, rawURL) != got {
				t.Fatalf("without colons Allowed(%q, %q) = %v, with %v", token, rawURL, !got, got)
			}
			d1, ok1 := nc.CrawlDelay(token)
			d2, ok2 := r.CrawlDelay(token)
			if d1 != d2 || ok1 != ok2 {
				t.Fatalf("without colons crawl-delay %v %v, with %v %v", d1, ok1, d2, ok2)
			}
		}
	})
}
