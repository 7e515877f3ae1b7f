package sitemap

import (
	"strings"
	"time"
)

// parseW3C parses a W3C Datetime (YYYY, YYYY-MM, YYYY-MM-DD,
// YYYY-MM-DDThh:mmTZD, YYYY-MM-DDThh:mm:ssTZD, YYYY-MM-DDThh:mm:ss.sTZD)
// and returns it in UTC. It is lenient where real sitemaps are: a missing
// time zone is read as UTC, a space may replace 'T', "+hhmm" and "+hh" are
// accepted. It never allocates.
func parseW3C(b []byte) (time.Time, bool) {
	b = trimSpace(b)
	num := func(s []byte) (int, bool) {
		if len(s) == 0 {
			return 0, false
		}
		n := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	if len(b) < 4 {
		return time.Time{}, false
	}
	year, ok := num(b[:4])
	if !ok {
		return time.Time{}, false
	}
	month, day := 1, 1
	rest := b[4:]
	if len(rest) > 0 {
		if len(rest) < 3 || rest[0] != '-' {
			return time.Time{}, false
		}
		if month, ok = num(rest[1:3]); !ok {
			return time.Time{}, false
		}
		rest = rest[3:]
		if len(rest) > 0 {
			if len(rest) < 3 || rest[0] != '-' {
				return time.Time{}, false
			}
			if day, ok = num(rest[1:3]); !ok {
				return time.Time{}, false
			}
			rest = rest[3:]
		}
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) {
		return time.Time{}, false
	}
	var hour, minute, sec, nsec, offset int
	if len(rest) > 0 {
		if rest[0] != 'T' && rest[0] != 't' && rest[0] != ' ' {
			return time.Time{}, false
		}
		rest = rest[1:]
		if len(rest) < 5 || rest[2] != ':' {
			return time.Time{}, false
		}
		if hour, ok = num(rest[:2]); !ok {
			return time.Time{}, false
		}
		if minute, ok = num(rest[3:5]); !ok {
			return time.Time{}, false
		}
		rest = rest[5:]
		if len(rest) > 0 && rest[0] == ':' {
			if len(rest) < 3 {
				return time.Time{}, false
			}
			if sec, ok = num(rest[1:3]); !ok {
				return time.Time{}, false
			}
			rest = rest[3:]
			if len(rest) > 0 && (rest[0] == '.' || rest[0] == ',') {
				i := 1
				scale := 100000000
				for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
					nsec += int(rest[i]-'0') * scale
					scale /= 10
					i++
				}
				if i == 1 {
					return time.Time{}, false
				}
				rest = rest[i:]
			}
		}
		if hour > 24 || minute > 59 || sec > 60 || (hour == 24 && (minute != 0 || sec != 0 || nsec != 0)) {
			return time.Time{}, false
		}
		if sec == 60 { // leap second: the last instant of the minute
			sec, nsec = 59, 999999999
		}
		switch {
		case len(rest) == 0, len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
		case rest[0] == '+' || rest[0] == '-':
			z := rest[1:]
			var zh, zm int
			switch {
			case len(z) == 2:
				zh, ok = num(z)
			case len(z) == 4:
				zh, ok = num(z[:2])
				if ok {
					zm, ok = num(z[2:])
				}
			case len(z) == 5 && z[2] == ':':
				zh, ok = num(z[:2])
				if ok {
					zm, ok = num(z[3:])
				}
			default:
				ok = false
			}
			if !ok || zh > 23 || zm > 59 {
				return time.Time{}, false
			}
			offset = zh*3600 + zm*60
			if rest[0] == '-' {
				offset = -offset
			}
		default:
			return time.Time{}, false
		}
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	return t.Add(-time.Duration(offset) * time.Second), true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

var rfc822Layouts = []string{
	time.RFC1123Z, time.RFC1123, // Mon, 02 Jan 2006 15:04:05 -0700 / MST
	"Mon, 2 Jan 2006 15:04:05 -0700", "Mon, 2 Jan 2006 15:04:05 MST",
	"Mon, 02 Jan 2006 15:04 -0700", "Mon, 2 Jan 2006 15:04 -0700",
	"Mon, 02 Jan 2006 15:04 MST", "Mon, 2 Jan 2006 15:04 MST",
	"02 Jan 2006 15:04:05 -0700", "2 Jan 2006 15:04:05 -0700",
	"02 Jan 2006 15:04:05 MST", "2 Jan 2006 15:04:05 MST",
	time.RFC822Z, time.RFC822, "Mon, 02 Jan 06 15:04:05 -0700", "Mon, 02 Jan 06 15:04:05 MST",
}

// parseRSSDate parses an RFC 822 date as RSS 2.0 uses in pubDate, with the
// usual variations, falling back to W3C Datetime; the result is in UTC.
func parseRSSDate(b []byte) (time.Time, bool) {
	b = trimSpace(b)
	if len(b) == 0 || len(b) > 64 {
		return time.Time{}, false
	}
	if t, ok := parseW3C(b); ok {
		return t, true
	}
	s := strings.Join(strings.Fields(string(b)), " ")
	if strings.HasSuffix(s, " UT") { // RFC 822 allows "UT"
		s += "C"
	}
	for _, layout := range rfc822Layouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
