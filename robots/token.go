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
