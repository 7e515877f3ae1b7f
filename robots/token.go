package robots

import "strings"

// ProductToken derives the robots.txt product token from a User-Agent
// header: the name in a "(compatible; NAME/version ...)" comment if there
// is one, else the first product name. Only letters, digits, `_` and `-`
// are kept, so "Mozilla/5.0 (compatible; 2-UAcomBot/1.0; +https://2-ua.com/)"
// gives "2-UAcomBot" and "CrawlCove-Crawler" gives itself.
func ProductToken(userAgent string) string {
	ua := trimSpace(userAgent)
	const compat = "compatible;"
	for i := 0; i+len(compat) <= len(ua); i++ {
		if hasPrefixFold(ua[i:], compat) {
			if t := tokenPart(trimSpace(ua[i+len(compat):])); t != "" {
				return t
			}
			break
		}
	}
	return tokenPart(strings.TrimLeft(ua, "("))
}

// Tokens returns the product tokens a crawler answers to, in order of
// preference: ProductToken(userAgent), then fallbacks, each reduced to its
// token part, without empty ones and without repeats (ignoring case). A
// crawler whose User-Agent changes keeps its old token as a fallback, so
// rules site owners wrote for it keep working:
//
//	robots.Tokens("Mozilla/5.0 (compatible; CrawlCove/2.0)", "CrawlCove-Crawler")
//	// [CrawlCove CrawlCove-Crawler]
func Tokens(userAgent string, fallbacks ...string) []string {
	out := make([]string, 0, 1+len(fallbacks))
	add := func(t string) {
		t = tokenPart(trimSpace(t))
		if t == "" {
			return
		}
		for _, o := range out {
			if strings.EqualFold(o, t) {
				return
			}
		}
		out = append(out, t)
	}
	add(ProductToken(userAgent))
	for _, f := range fallbacks {
		add(f)
	}
	return out
}
