package seocheck

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestHreflang(t *testing.T) {
	valid := []string{"en", "EN", "en-GB", "en-gb", "de-AT", "x-default", "X-Default", "zh-Hant", "zh-Hant-TW",
		"sr-Latn-RS", "pt-BR", "es-MX", " fr "}
	for _, v := range valid {
		if err := Hreflang(v); err != nil {
			t.Errorf("Hreflang(%q) = %v, want valid", v, err)
		}
	}
	invalid := map[string]string{
		"":          "empty",
		"en_GB":     "underscore",
		"eng":       "two-letter",
		"jp":        "not an ISO 639-1",
		"xx":        "not an ISO 639-1",
		"iw":        `replaced by "he"`,
		"en-UK":     "GB",
		"en-EU":     "not an ISO 3166-1 country",
		"es-419":    "two-letter ISO 3166-1",
		"en-ZZ":     "not an ISO 3166-1 country",
		"en-GB-US":  "more than one region",
		"zh-Abcd":   "ISO 15924",
		"en-gb-x-y": "more than",
		"e1":        "two-letter",
		"en-":       "two-letter ISO 3166-1",
		"x-klingon": "more than one region", // x is not a language; caught at the first part
	}
	for v, want := range invalid {
		err := Hreflang(v)
		var he *HreflangError
		if !errors.As(err, &he) {
			t.Errorf("Hreflang(%q) = %v, want a *HreflangError", v, err)
			continue
		}
		if v != "x-klingon" && !strings.Contains(err.Error(), want) {
			t.Errorf("Hreflang(%q) = %v, want it to say %q", v, err, want)
		}
	}
	if HreflangLanguage("en-GB") != "en" || HreflangLanguage("x-default") != "" || HreflangLanguage("DE") != "de" {
		t.Error("HreflangLanguage")
	}
}

func TestHTMLLang(t *testing.T) {
	for _, v := range []string{"en", "en-GB", "gsw", "zh-Hant-TW", "sr-Latn"} {
		if err := HTMLLang(v); err != nil {
			t.Errorf("HTMLLang(%q) = %v", v, err)
		}
	}
	for _, v := range []string{"", "en_GB", "english", "12", "en--GB"} {
		if err := HTMLLang(v); err == nil {
			t.Errorf("HTMLLang(%q) valid, want an error", v)
		}
	}
}

func kinds(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		s := string(p.Kind)
		if p.Property != "" {
			s += ":" + p.Type + "." + p.Property
		}
		out = append(out, s)
	}
	return out
}

func TestCheckJSONLD(t *testing.T) {
	cases := []struct {
		name, script string
		want         []string
	}{
		{"valid product", `{"@context":"https://schema.org","@type":"Product","name":"Tent","offers":{"@type":"Offer","price":"99"}}`, nil},
		{"product without name or offers", `{"@context":"https://schema.org","@type":"Product"}`,
			[]string{"jsonld_missing_required:Product.name", "jsonld_missing_required:Product.offers|review|aggregateRating"}},
		{"product with a rating only", `{"@context":"https://schema.org","@type":"Product","name":"Tent","aggregateRating":{"ratingValue":4}}`, nil},
		{"empty name counts as missing", `{"@context":"https://schema.org","@type":"Product","name":" ","review":[]}`,
			[]string{"jsonld_missing_required:Product.name", "jsonld_missing_required:Product.offers|review|aggregateRating"}},
		{"article needs nothing", `{"@context":"https://schema.org","@type":"NewsArticle"}`, nil},
		{"organization needs nothing", `{"@context":"https://schema.org","@type":"Organization"}`, nil},
		{"no context", `{"@type":"Organization","name":"Cove"}`, []string{"jsonld_no_context"}},
		{"no type", `{"@context":"https://schema.org","name":"Cove"}`, []string{"jsonld_no_type"}},
		{"not json", `{"@context": "https://schema.org",}`, []string{"jsonld_invalid"}},
		{"trailing text", `{"@context":"https://schema.org","@type":"Thing"} x`, []string{"jsonld_invalid"}},
		{"a string", `"Product"`, []string{"jsonld_invalid"}},
		{"empty array", `[]`, []string{"jsonld_invalid"}},
		{"event", `{"@context":"https://schema.org","@type":"Event","name":"Paddle day","startDate":"2026-06-01"}`,
			[]string{"jsonld_missing_required:Event.location"}},
		{"type array with a prefix", `{"@context":"https://schema.org","@type":["Thing","https://schema.org/Event"],"name":"x","startDate":"2026","location":"Falmouth"}`, nil},
		{"breadcrumbs", `{"@context":"https://schema.org","@type":"BreadcrumbList","itemListElement":[
			{"@type":"ListItem","position":1,"name":"Home","item":"https://shop.example/"},
			{"@type":"ListItem","position":2,"item":{"@id":"https://shop.example/tents","name":"Tents"}},
			{"@type":"ListItem","position":3,"name":"Explorer 2"}]}`, nil},
		{"breadcrumb without position and url", `{"@context":"https://schema.org","@type":"BreadcrumbList","itemListElement":[
			{"@type":"ListItem","name":"Home"},{"@type":"ListItem","position":2,"name":"Tents"}]}`,
			[]string{"jsonld_missing_required:ListItem.position", "jsonld_missing_required:ListItem.item"}},
		{"breadcrumbs empty", `{"@context":"https://schema.org","@type":"BreadcrumbList"}`,
			[]string{"jsonld_missing_required:BreadcrumbList.itemListElement"}},
		{"faq", `{"@context":"https://schema.org","@type":"FAQPage","mainEntity":[
			{"@type":"Question","name":"Waterproof?","acceptedAnswer":{"@type":"Answer","text":"Yes."}},
			{"@type":"Question","name":"Weight?","acceptedAnswer":{"@type":"Answer"}},
			{"@type":"Question","acceptedAnswer":{"text":"2 kg"}}]}`,
			[]string{"jsonld_missing_required:Answer.text", "jsonld_missing_required:Question.name"}},
		{"graph", `{"@context":"https://schema.org","@graph":[{"@type":"Organization","name":"Cove"},{"name":"untyped"},{"@type":"Product","name":"Tent","offers":{}}]}`,
			[]string{"jsonld_no_type"}},
		{"array of nodes, one without context", `[{"@context":"https://schema.org","@type":"Organization"},{"@type":"Product","name":"x","offers":{}}]`,
			[]string{"jsonld_no_context"}},
	}
	for _, c := range cases {
		got := kinds(CheckJSONLD([]byte(c.script)))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	ps := CheckJSONLD([]byte(`{"@context":"https://schema.org","@type":"Event"}`))
	if len(ps) != 3 || !strings.Contains(ps[0].Detail, "developers.google.com/search/docs/appearance/structured-data/event") {
		t.Errorf("the detail cites the documentation: %+v", ps)
	}
	if ps := CheckJSONLD([]byte(strings.Repeat(" ", MaxJSONLDBytes+1))); len(ps) != 1 || ps[0].Kind != JSONLDInvalid {
		t.Errorf("too large: %+v", ps)
	}
	if got := CheckedTypes(); !slices.Contains(got, "FAQPage") || !slices.IsSorted(got) {
		t.Errorf("CheckedTypes %v", got)
	}
}

func TestCheckURL(t *testing.T) {
	cases := []struct {
		url  string
		want []string
	}{
		{"https://shop.example/products/tent", nil},
		{"https://SHOP.example/products/tent", nil}, // the host's case is not the URL's
		{"https://shop.example/Products/Tent", []string{"uppercase"}},
		{"https://shop.example/a%2Fb%C3%A9", []string{"non_ascii"}}, // hex digits in escapes are not uppercase letters
		{"https://shop.example/summer_sale", []string{"underscore"}},
		{"https://shop.example/summer sale", []string{"space"}},
		{"https://shop.example/summer%20sale", []string{"space"}},
		{"https://shop.example/search?q=red+tent", []string{"space", "has_query"}},
		{"https://shop.example//products//tent", []string{"repeated_slash"}},
		{"https://shop.example/café", []string{"non_ascii"}},
		{"https://shop.example/?q=caf%C3%A9", []string{"non_ascii", "has_query"}},
		{"https://bücher.example/", nil}, // an IDN host is fine
		{"https://shop.example/p?a=1&b=2&c=3", []string{"has_query"}},
		{"https://shop.example/p?a=1&b=2&c=3&d=4", []string{"has_query", "many_params"}},
		{"https://shop.example/p?", []string{"has_query"}},
		{"https://shop.example/" + strings.Repeat("a", MaxURLLength), []string{"too_long"}},
		{"https://shop.example/%zz", []string{"unparsable"}},
		{"/relative/Path_x", []string{"uppercase", "underscore"}},
	}
	for _, c := range cases {
		if got := CheckURL(c.url).Names(); !slices.Equal(got, c.want) {
			t.Errorf("CheckURL(%q) = %v, want %v", c.url, got, c.want)
		}
	}
	if len("https://shop.example/"+strings.Repeat("a", MaxURLLength-21)) != MaxURLLength ||
		CheckURL("https://shop.example/"+strings.Repeat("a", MaxURLLength-21)).Has(URLTooLong) {
		t.Error("a URL of exactly MaxURLLength bytes is not too long")
	}
	if QueryParams("a=1&&b=2;c") != 3 || QueryParams("") != 0 {
		t.Error("QueryParams")
	}
}

func TestInsecureOnSecureSite(t *testing.T) {
	for _, c := range []struct {
		link, site string
		want       bool
	}{
		{"http://shop.example/x", "https://shop.example/", true},
		{"http://www.shop.example/x", "https://shop.example/", true},
		{"HTTP://Shop.Example/x", "https://shop.example/", true},
		{"https://shop.example/x", "https://shop.example/", false},
		{"http://other.example/x", "https://shop.example/", false},
		{"http://shop.example/x", "http://shop.example/", false},
		{"%zz", "https://shop.example/", false},
	} {
		if got := InsecureOnSecureSite(c.link, c.site); got != c.want {
			t.Errorf("InsecureOnSecureSite(%q, %q) = %v", c.link, c.site, got)
		}
	}
}

func FuzzHreflang(f *testing.F) {
	for _, s := range []string{"en", "en-GB", "x-default", "zh-Hant-TW", "en_GB", "en-UK", "", "-", "a-b-c-d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := Hreflang(s)
		if err == nil {
			// A valid code is valid in any case, and has a two-letter language (or is x-default).
			if Hreflang(strings.ToUpper(s)) != nil || Hreflang(strings.ToLower(s)) != nil {
				t.Fatalf("%q valid but not in another case", s)
			}
			if l := HreflangLanguage(s); l != "" && len(l) != 2 {
				t.Fatalf("%q valid with language %q", s, l)
			}
		} else if he := (*HreflangError)(nil); !errors.As(err, &he) || he.Value != s {
			t.Fatalf("%q: %v", s, err)
		}
		_ = HTMLLang(s)
	})
}

func FuzzCheckJSONLD(f *testing.F) {
	for _, s := range []string{
		`{"@context":"https://schema.org","@type":"Product","name":"Tent","offers":{}}`,
		`{"@context":"https://schema.org","@graph":[{"@type":"FAQPage","mainEntity":[{"acceptedAnswer":[1,null]}]}]}`,
		`[{"@type":["BreadcrumbList"],"itemListElement":[null,1,"x",{"item":{"name":null}}]}]`,
		`{"@type":{"x":1},"@graph":7}`, `nul`, `[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ps := CheckJSONLD(b)
		for _, p := range ps {
			if p.Kind == "" || p.Detail == "" {
				t.Fatalf("a problem without kind or detail: %+v", p)
			}
			if p.Kind == JSONLDInvalid && len(ps) > 1 && !strings.HasPrefix(strings.TrimSpace(string(b)), "[") {
				t.Fatalf("an invalid script with more problems: %+v", ps)
			}
		}
	})
}

func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://shop.example/Products/summer_sale?a=1&b=2", "/a//b%20c", "%", "http://[::1]:80/é", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := CheckURL(s)
		if got.Has(URLUnparsable) && got != URLUnparsable {
			t.Fatalf("%q: unparsable with other issues %v", s, got.Names())
		}
		if got.Has(URLManyParams) && !got.Has(URLHasQuery) {
			t.Fatalf("%q: many parameters without a query", s)
		}
		if got.Has(URLTooLong) != (len(s) > MaxURLLength) && !got.Has(URLUnparsable) {
			t.Fatalf("%q: too long %v at %d bytes", s, got.Has(URLTooLong), len(s))
		}
		_ = InsecureOnSecureSite(s, "https://shop.example/")
	})
}
