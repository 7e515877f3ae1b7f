package robots

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// realisticRobots generates a large robots.txt in the style of big retail
// and publishing sites: about 30 KiB, ~150 user-agent lines in ~60 groups,
// ~500 wildcard rules, comments, sitemaps and crawl-delays.
func realisticRobots(seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 42))
	bots := []string{"Googlebot", "Googlebot-Image", "Googlebot-News", "Bingbot", "Slurp", "DuckDuckBot",
		"Baiduspider", "YandexBot", "Sogou", "Exabot", "facebot", "ia_archiver", "AhrefsBot", "SemrushBot",
		"MJ12bot", "DotBot", "PetalBot", "Applebot", "CCBot", "GPTBot", "ChatGPT-User", "anthropic-ai",
		"ClaudeBot", "Bytespider", "Amazonbot", "Screaming-Frog", "rogerbot", "SeznamBot", "Mail-RU",
		"Qwantify", "coccocbot", "BLEXBot", "DataForSeoBot", "serpstatbot", "MegaIndex", "Linguee",
		"archive-org-bot", "Twitterbot", "LinkedInBot", "Pinterestbot", "Slackbot", "Discordbot",
		"TelegramBot", "WhatsApp", "Embedly", "Quora-Link-Preview", "redditbot", "Mediapartners-Google",
		"AdsBot-Google", "AdsBot-Google-Mobile", "Storebot-Google", "Google-Extended", "FacebookBot",
		"omgili", "Diffbot", "ImagesiftBot", "YouBot", "cohere-ai", "PerplexityBot", "Timpibot"}
	dirs := []string{"search", "cart", "checkout", "account", "login", "wishlist", "compare", "api", "tmp",
		"private", "admin", "cgi-bin", "print", "preview", "feeds", "tag", "author", "filter", "sort", "ajax"}
	params := []string{"sessionid", "sid", "utm_source", "utm_medium", "ref", "sort", "order", "filter",
		"color", "size", "price", "page", "limit", "view", "q", "lang", "currency", "variant"}
	exts := []string{"pdf", "doc", "xls", "zip", "json", "xml", "php", "asp", "cgi", "gif", "jpg", "png"}
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	wildRule := func() string {
		switch rng.IntN(6) {
		case 0:
			return fmt.Sprintf("/*?%s=", pick(params))
		case 1:
			return fmt.Sprintf("/*&%s=*", pick(params))
		case 2:
			return fmt.Sprintf("/*.%s$", pick(exts))
		case 3:
			return fmt.Sprintf("/%s/*/%s", pick(dirs), pick(dirs))
		case 4:
			return fmt.Sprintf("/*/%s/*%s", pick(dirs), pick(params))
		default:
			return fmt.Sprintf("/%s*?*%s=", pick(dirs), pick(params))
		}
	}
	var b strings.Builder
	b.WriteString("# robots.txt for www.example.com\n# Questions: webmaster@example.com\n\n")
	agents, wild := 0, 0
	for g := 0; agents < 150; g++ {
		n := 1 + rng.IntN(4)
		for range n {
			fmt.Fprintf(&b, "User-agent: %s\n", bots[agents%len(bots)])
			agents++
		}
		if g%7 == 0 {
			fmt.Fprintf(&b, "Crawl-delay: %d\n", 1+rng.IntN(10))
		}
		for range 2 + rng.IntN(4) {
			if rng.IntN(3) == 0 {
				fmt.Fprintf(&b, "Disallow: /%s/\n", pick(dirs))
			} else {
				fmt.Fprintf(&b, "Disallow: %s\n", wildRule())
				wild++
			}
		}
		if rng.IntN(2) == 0 {
			fmt.Fprintf(&b, "Allow: /%s/*.css$\n", pick(dirs))
			wild++
		}
		b.WriteString("\n")
	}
	b.WriteString("# everyone else\nUser-agent: *\n")
	for wild < 500 {
		if rng.IntN(5) == 0 {
			fmt.Fprintf(&b, "Allow: %s\n", wildRule())
		} else {
			fmt.Fprintf(&b, "Disallow: %s # legacy\n", wildRule())
		}
		wild++
	}
	b.WriteString("Disallow: /search\nDisallow: /cart/\nAllow: /search/help\n\n")
	b.WriteString("# retired catalogue sections (kept for old links)\nUser-agent: *\n")
	for i := range 200 {
		fmt.Fprintf(&b, "Disallow: /catalog/archive/%s/category-%d/listing\n", pick(dirs), 1000+i*7)
	}
	b.WriteString("\n")
	for i := range 5 {
		fmt.Fprintf(&b, "Sitemap: https://www.example.com/sitemaps/sitemap-%d.xml\n", i)
	}
	return b.String()
}
