// Package seocheck holds the pure validators the audit's finding kinds need: hreflang codes, JSON-LD
// structured data and the shape of URLs. Each takes a value the crawl already has (an attribute, a
// script's text, a URL) and returns what is wrong with it; thresholds are documented constants.
//
// seocheck never fetches, never reads the database and never decides a finding's severity or wording:
// the findings package turns its answers into rows. Nothing here keeps state between calls.
package seocheck

import (
	"fmt"
	"strings"

	"golang.org/x/text/language"
)

// XDefault is the hreflang value for the page shown to users whose language no alternate matches.
const XDefault = "x-default"

// HreflangError says why an hreflang value is not one Google accepts.
type HreflangError struct {
	Value  string // the hreflang value as found
	Reason string // why it is refused, in words a site owner can act on
}

// Error quotes the value with its reason.
func (e *HreflangError) Error() string {
	return fmt.Sprintf("hreflang %q: %s", e.Value, e.Reason)
}

// replacedLanguages are ISO 639-1 codes withdrawn and replaced (ISO 639-1 change notices, 1989 and
// 2008): x/text still parses them, search engines expect the current code.
var replacedLanguages = map[string]string{
	"iw": "he", "in": "id", "ji": "yi", "jw": "jv", "mo": "ro", "sh": "sr",
}

// notRegions are two-letter codes that look like ISO 3166-1 alpha-2 countries, and which x/text
// accepts, but that are not assigned in ISO 3166-1: UK is exceptionally reserved (the code is GB),
// AN was deleted in 2011, XK is user-assigned.
var notRegions = map[string]string{
	"UK": "use GB, the ISO 3166-1 code of the United Kingdom",
	"AN": "deleted from ISO 3166-1 in 2011",
	"XK": "user-assigned, not in ISO 3166-1",
}

// Hreflang checks one hreflang value against Google's rules
// (https://developers.google.com/search/docs/specialty/international/localized-versions): "x-default",
// or a language in ISO 639-1 (two letters), optionally a script in ISO 15924 (four letters, as in
// zh-Hant), optionally a region in ISO 3166-1 alpha-2, separated by hyphens. Case does not matter.
// It returns nil for a valid value and a *HreflangError saying which part is wrong otherwise: an
// underscore (en_GB), a three-letter language (eng), an unknown one (jp for ja), a region that is
// not a country (EU, 419) or not ISO 3166-1 (UK).
func Hreflang(value string) error {
	bad := func(reason string, a ...any) error {
		return &HreflangError{Value: value, Reason: fmt.Sprintf(reason, a...)}
	}
	v := strings.TrimSpace(value)
	if v == "" {
		return bad("empty")
	}
	if strings.EqualFold(v, XDefault) {
		return nil
	}
	if strings.Contains(v, "_") {
		return bad("an underscore: subtags are separated by a hyphen (en-GB)")
	}
	parts := strings.Split(v, "-")
	if len(parts) > 3 {
		return bad("more than language, script and region")
	}
	lang := strings.ToLower(parts[0])
	if len(lang) != 2 || !isLetters(lang) {
		return bad("the language %q is not a two-letter ISO 639-1 code", parts[0])
	}
	if now, ok := replacedLanguages[lang]; ok {
		return bad("the language code %q was replaced by %q", lang, now)
	}
	if _, err := language.ParseBase(lang); err != nil {
		return bad("the language %q is not an ISO 639-1 code", lang)
	}
	rest := parts[1:]
	if len(rest) > 0 && len(rest[0]) == 4 {
		if !isLetters(rest[0]) {
			return bad("the script %q is not an ISO 15924 code", rest[0])
		}
		if _, err := language.ParseScript(rest[0]); err != nil {
			return bad("the script %q is not an ISO 15924 code", rest[0])
		}
		rest = rest[1:]
	}
	switch len(rest) {
	case 0:
		return nil
	case 1:
	default:
		return bad("more than one region")
	}
	region := strings.ToUpper(rest[0])
	if len(region) != 2 || !isLetters(region) {
		return bad("the region %q is not a two-letter ISO 3166-1 code", rest[0])
	}
	if why, ok := notRegions[region]; ok {
		return bad("the region %q: %s", region, why)
	}
	r, err := language.ParseRegion(region)
	if err != nil || !r.IsCountry() {
		return bad("the region %q is not an ISO 3166-1 country", region)
	}
	return nil
}

// HreflangLanguage is the language part of a valid hreflang value, in lower case ("" for
// x-default), for comparing with <html lang>.
func HreflangLanguage(value string) string {
	v := strings.TrimSpace(value)
	if strings.EqualFold(v, XDefault) {
		return ""
	}
	lang, _, _ := strings.Cut(v, "-")
	return strings.ToLower(lang)
}

func isLetters(s string) bool {
	for i := range len(s) {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return s != ""
}

// HTMLLang checks the lang attribute of <html>: any well-formed BCP 47 tag (RFC 5646) whose
// language x/text knows, such as en, en-GB, zh-Hant-TW or sr-Latn; unlike hreflang, the language
// may be three letters (gsw). It returns nil or a *HreflangError.
func HTMLLang(value string) error {
	v := strings.TrimSpace(value)
	if v == "" {
		return &HreflangError{Value: value, Reason: "empty"}
	}
	if strings.Contains(v, "_") {
		return &HreflangError{Value: value, Reason: "an underscore: subtags are separated by a hyphen"}
	}
	if _, err := language.Parse(v); err != nil {
		return &HreflangError{Value: value, Reason: "not a BCP 47 language tag: " + err.Error()}
	}
	return nil
}
