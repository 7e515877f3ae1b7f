package sitemap

import (
	"bytes"
	"unicode/utf8"
)

// win1252 maps bytes 0x80-0x9F of windows-1252 to runes; ISO-8859-1 labels
// are read as windows-1252, as browsers do.
var win1252 = [32]rune{
	0x20AC, 0xFFFD, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0xFFFD, 0x017D, 0xFFFD,
	0xFFFD, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0xFFFD, 0x017E, 0xFFFD,
}

// appendLatin1 appends windows-1252 bytes to dst as UTF-8.
func appendLatin1(dst, src []byte) []byte {
	for _, c := range src {
		switch {
		case c < 0x80:
			dst = append(dst, c)
		case c < 0xA0:
			dst = utf8.AppendRune(dst, win1252[c-0x80])
		default:
			dst = utf8.AppendRune(dst, rune(c))
		}
	}
	return dst
}

// decodeEntities replaces the five predefined entities and character
// references in b, in place (a reference is never shorter than its UTF-8
// encoding). Anything else after '&' — a bare ampersand, an entity declared
// in a DTD — is kept literally: entities are never expanded.
func decodeEntities(b []byte) []byte {
	i := bytes.IndexByte(b, '&')
	if i < 0 {
		return b
	}
	w := i
	for i < len(b) {
		c := b[i]
		if c != '&' {
			b[w] = c
			w++
			i++
			continue
		}
		rest := b[i+1:]
		if len(rest) > 12 {
			rest = rest[:12]
		}
		end := bytes.IndexByte(rest, ';')
		r := rune(-1)
		if end > 0 {
			r = entityRune(rest[:end])
		}
		if r < 0 {
			b[w] = '&'
			w++
			i++
			continue
		}
		w += utf8.EncodeRune(b[w:], r)
		i += end + 2
	}
	return b[:w]
}

func entityRune(name []byte) rune {
	switch string(name) {
	case "amp":
		return '&'
	case "lt":
		return '<'
	case "gt":
		return '>'
	case "quot":
		return '"'
	case "apos":
		return '\''
	}
	if len(name) < 2 || name[0] != '#' {
		return -1
	}
	var n rune
	digits := name[1:]
	if digits[0] == 'x' || digits[0] == 'X' {
		digits = digits[1:]
		if len(digits) == 0 {
			return -1
		}
		for _, c := range digits {
			switch {
			case '0' <= c && c <= '9':
				n = n*16 + rune(c-'0')
			case 'a' <= c && c <= 'f':
				n = n*16 + rune(c-'a'+10)
			case 'A' <= c && c <= 'F':
				n = n*16 + rune(c-'A'+10)
			default:
				return -1
			}
			if n > utf8.MaxRune {
				return -1
			}
		}
	} else {
		for _, c := range digits {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + rune(c-'0')
			if n > utf8.MaxRune {
				return -1
			}
		}
	}
	if n == 0 || !utf8.ValidRune(n) {
		return -1
	}
	return n
}

// trimSpace trims XML white space (and the odd NBSP-free junk is left alone).
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// normEncoding folds an encoding label to lower-case letters and digits.
func normEncoding(b []byte) string {
	var buf [32]byte
	n := 0
	for _, c := range b {
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		default:
			continue
		}
		if n == len(buf) {
			break
		}
		buf[n] = c
		n++
	}
	return string(buf[:n])
}

// encodingLatin1 classifies a declared encoding: UTF-8 and US-ASCII read
// as UTF-8, ISO-8859-1 and windows-1252 as windows-1252, others are refused.
func encodingLatin1(label []byte) (latin1, ok bool) {
	switch normEncoding(label) {
	case "", "utf8", "unicode11utf8", "unicode20utf8", "xunicode20utf8",
		"ascii", "usascii", "iso646us", "ansix341968", "us", "ibm367", "cp367", "isoir6", "csascii":
		return false, true
	case "iso88591", "latin1", "l1", "cp819", "ibm819", "isoir100", "csisolatin1", "iso885911987",
		"windows1252", "cp1252", "xcp1252", "win1252":
		return true, true
	}
	return false, false
}
