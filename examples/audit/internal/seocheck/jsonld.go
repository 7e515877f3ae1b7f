package seocheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// MaxJSONLDBytes is the largest JSON-LD script checked; a bigger one is reported as too large
// rather than parsed (a real page's structured data is a few kilobytes).
const MaxJSONLDBytes = 1 << 20

// ProblemKind names what is wrong with a JSON-LD script.
type ProblemKind string

// The problems CheckJSONLD reports.
const (
	JSONLDInvalid         ProblemKind = "jsonld_invalid"          // does not parse as JSON, or too large
	JSONLDNoContext       ProblemKind = "jsonld_no_context"       // no @context
	JSONLDNoType          ProblemKind = "jsonld_no_type"          // a node without @type
	JSONLDMissingRequired ProblemKind = "jsonld_missing_required" // a property Google requires is missing
)

// Problem is one thing wrong with a JSON-LD script.
type Problem struct {
	Kind     ProblemKind // what is wrong: one of the JSONLD* kinds
	Type     string      // the schema.org type concerned, when there is one
	Property string      // the missing property, for JSONLDMissingRequired: "name", or "offers|review|aggregateRating"
	Detail   string      // a sentence for the finding's detail
}

// typeRule is what Google's rich-result documentation requires of one schema.org type.
type typeRule struct {
	required []string   // every one of these
	oneOf    [][]string // at least one of each list
	source   string
}

// Required properties per type, from Google Search Central's structured data documentation (read
// December 2026):
//
//   - Product (product snippets): name, and one of review, aggregateRating or offers.
//     https://developers.google.com/search/docs/appearance/structured-data/product-snippet
//   - Article (also NewsArticle, BlogPosting): no required properties; headline, image, author and
//     datePublished are recommended, so nothing is reported.
//     https://developers.google.com/search/docs/appearance/structured-data/article
//   - BreadcrumbList: itemListElement; each ListItem needs position and name, and item (its URL)
//     except the last one.
//     https://developers.google.com/search/docs/appearance/structured-data/breadcrumb
//   - Organization: no required properties (name, url, logo recommended).
//     https://developers.google.com/search/docs/appearance/structured-data/organization
//   - FAQPage: mainEntity; each Question needs name and acceptedAnswer, each Answer text.
//     https://developers.google.com/search/docs/appearance/structured-data/faqpage
//   - Event: name, startDate and location.
//     https://developers.google.com/search/docs/appearance/structured-data/event
var typeRules = map[string]typeRule{
	"Product": {required: []string{"name"}, oneOf: [][]string{{"offers", "review", "aggregateRating"}},
		source: "https://developers.google.com/search/docs/appearance/structured-data/product-snippet"},
	"Article":        {source: "https://developers.google.com/search/docs/appearance/structured-data/article"},
	"NewsArticle":    {source: "https://developers.google.com/search/docs/appearance/structured-data/article"},
	"BlogPosting":    {source: "https://developers.google.com/search/docs/appearance/structured-data/article"},
	"BreadcrumbList": {required: []string{"itemListElement"}, source: "https://developers.google.com/search/docs/appearance/structured-data/breadcrumb"},
	"Organization":   {source: "https://developers.google.com/search/docs/appearance/structured-data/organization"},
	"FAQPage":        {required: []string{"mainEntity"}, source: "https://developers.google.com/search/docs/appearance/structured-data/faqpage"},
	"Event":          {required: []string{"name", "startDate", "location"}, source: "https://developers.google.com/search/docs/appearance/structured-data/event"},
}

// CheckedTypes is the list of schema.org types whose required properties CheckJSONLD knows.
func CheckedTypes() []string {
	var ts []string
	for t := range typeRules {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

// CheckJSONLD checks the text of one <script type="application/ld+json">: that it parses, that it
// has a @context, that each node has a @type, and that nodes of the types in the table have the
// properties Google requires. A script may hold one object, an array of them, or a @graph. It
// returns nothing for a valid script.
func CheckJSONLD(script []byte) []Problem {
	if len(script) > MaxJSONLDBytes {
		return []Problem{{Kind: JSONLDInvalid, Detail: fmt.Sprintf("%d bytes, more than the %d checked", len(script), MaxJSONLDBytes)}}
	}
	dec := json.NewDecoder(bytes.NewReader(script))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return []Problem{{Kind: JSONLDInvalid, Detail: "does not parse: " + err.Error()}}
	}
	if rest := bytes.TrimSpace(script[dec.InputOffset():]); len(rest) > 0 {
		return []Problem{{Kind: JSONLDInvalid, Detail: "does not parse: text after the JSON value"}}
	}
	var c checker
	switch v := doc.(type) {
	case map[string]any:
		c.top(v)
	case []any:
		if len(v) == 0 {
			return []Problem{{Kind: JSONLDInvalid, Detail: "an empty array"}}
		}
		for _, e := range v {
			if m, ok := e.(map[string]any); ok {
				c.top(m)
			} else {
				c.add(Problem{Kind: JSONLDInvalid, Detail: "an array element that is not an object"})
			}
		}
	default:
		return []Problem{{Kind: JSONLDInvalid, Detail: "not an object or an array of objects"}}
	}
	return c.problems
}

type checker struct{ problems []Problem }

func (c *checker) add(p Problem) { c.problems = append(c.problems, p) }

// top checks a top-level object: its @context, then its nodes (itself, or its @graph).
func (c *checker) top(m map[string]any) {
	if !present(m["@context"]) {
		c.add(Problem{Kind: JSONLDNoContext, Detail: "no @context (expected \"https://schema.org\")"})
	}
	if g, ok := m["@graph"]; ok {
		nodes, _ := g.([]any)
		for _, n := range nodes {
			if nm, ok := n.(map[string]any); ok {
				c.node(nm)
			}
		}
		return
	}
	c.node(m)
}

// node checks one node's @type and the required properties of its types.
func (c *checker) node(m map[string]any) {
	types := typesOf(m["@type"])
	if len(types) == 0 {
		c.add(Problem{Kind: JSONLDNoType, Detail: "a node without @type"})
		return
	}
	for _, t := range types {
		rule, ok := typeRules[t]
		if !ok {
			continue
		}
		for _, p := range rule.required {
			if !present(m[p]) {
				c.missing(t, p, rule.source)
			}
		}
		for _, alts := range rule.oneOf {
			if !slices.ContainsFunc(alts, func(p string) bool { return present(m[p]) }) {
				c.missing(t, strings.Join(alts, "|"), rule.source)
			}
		}
		switch t {
		case "BreadcrumbList":
			items := list(m["itemListElement"])
			for i, it := range items {
				im, _ := it.(map[string]any)
				for _, p := range []string{"position", "name", "item"} {
					if p == "item" && i == len(items)-1 {
						continue // the last crumb is the page itself
					}
					if im == nil || !present(im[p]) && !(p == "name" && nestedName(im)) {
						c.missing("ListItem", p, rule.source)
					}
				}
			}
		case "FAQPage":
			for _, q := range list(m["mainEntity"]) {
				qm, _ := q.(map[string]any)
				for _, p := range []string{"name", "acceptedAnswer"} {
					if qm == nil || !present(qm[p]) {
						c.missing("Question", p, rule.source)
					}
				}
				for _, a := range list(qm["acceptedAnswer"]) {
					if am, _ := a.(map[string]any); am == nil || !present(am["text"]) {
						c.missing("Answer", "text", rule.source)
					}
				}
			}
		}
	}
}

func (c *checker) missing(typ, prop, source string) {
	c.add(Problem{Kind: JSONLDMissingRequired, Type: typ, Property: prop,
		Detail: fmt.Sprintf("%s without %s, which Google requires (%s)", typ, strings.ReplaceAll(prop, "|", " or "), source)})
}

// nestedName: a ListItem may carry its name on its item ({"item": {"@id": …, "name": …}}).
func nestedName(im map[string]any) bool {
	item, _ := im["item"].(map[string]any)
	return item != nil && present(item["name"])
}

// typesOf reads @type: a string or an array of strings, with a schema.org prefix dropped.
func typesOf(v any) []string {
	var out []string
	for _, t := range list(v) {
		if s, ok := t.(string); ok && strings.TrimSpace(s) != "" {
			s = strings.TrimSpace(s)
			for _, p := range []string{"https://schema.org/", "http://schema.org/", "schema:"} {
				s = strings.TrimPrefix(s, p)
			}
			out = append(out, s)
		}
	}
	return out
}

// list is v as a list: an array's elements, or v alone, or nothing for null.
func list(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	}
	return []any{v}
}

// present reports whether a property has a value: not missing, null, an empty string or an empty
// array.
func present(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return strings.TrimSpace(x) != ""
	case []any:
		return len(x) > 0
	}
	return true
}
