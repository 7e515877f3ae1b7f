package textscope

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// A news article as a CMS renders it: navigation, a dated byline, a
// "read by N people" counter, the article, a related-articles box and a
// footer with the copyright year.
const newsPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Council approves new bridge — Riverside Post</title>
<script>window.dataLayer=[{"page":"article"}]</script><style>.byline{color:#666}</style></head>
<body>
<header><nav><a href="/">Home</a> <a href="/local">Local</a> <a href="/sport">Sport</a></nav></header>
<main>
<article class="story">
<h1>Council approves new bridge</h1>
<p class="byline">By Ann Lee · Updated 1 December 2026, 10:42</p>
<p class="reads">Read by 1,204 people</p>
<p>The city council voted 7–2 on Monday to fund a <em>pedestrian</em> bridge across the river.</p>
<p>Construction starts in spring.</p>
</article>
<aside class="related"><h2>Related</h2><ul><li><a href="/a">Roadworks on Main Street</a></li></ul></aside>
</main>
<footer>© 2026 Riverside Post</footer>
</body></html>`

// A shop product page: a "N in stock" counter, a "M people are looking"
// ticker and an ad slot whose creative rotates on every load.
const shopPage = `<!doctype html>
<html><head><title>Blue kettle | Kettle Shop</title></head>
<body>
<div id="cookie-banner">We use cookies. <button>OK</button></div>
<div class="product">
  <h1>Blue kettle</h1>
  <span class="price">€ 24.90</span>
  <p class="stock">Only 7 left in stock</p>
  <p class="ticker">12 people are looking at this right now</p>
  <div class="description"><p>1.7 litre, boils in 3 minutes.</p><p>Limescale filter included.</p></div>
  <div class="ad-slot" data-ad="top"><a href="https://ads.example/c?id=991">Sponsored: Cheap flights to Lisbon</a></div>
</div>
<noscript>Enable JavaScript</noscript>
</body></html>`

func scoped(t *testing.T, r Rules, page string) Result {
	t.Helper()
	s, err := Compile(r)
	if err != nil {
		t.Fatalf("Compile(%+v): %v", r, err)
	}
	res, err := s.Text(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestWholePageVisibleText(t *testing.T) {
	got := scoped(t, Rules{}, newsPage)
	want := "Home Local Sport\nCouncil approves new bridge\nBy Ann Lee · Updated 1 December 2026, 10:42\nRead by 1,204 people\n" +
		"The city council voted 7–2 on Monday to fund a pedestrian bridge across the river.\nConstruction starts in spring.\n" +
		"Related\nRoadworks on Main Street\n© 2026 Riverside Post"
	if got.Text != want || got.Matched != 1 || got.Cut {
		t.Fatalf("got %+v\n%s\nwant\n%s", got, got.Text, want)
	}
}

func TestNewsPageSelectorAndDateRule(t *testing.T) {
	rules := Rules{
		Selector: "main article.story",
		Ignore: []string{
			`(?i)updated \d{1,2} (january|february|march|april|may|june|july|august|september|october|november|december) \d{4}, \d{2}:\d{2}`,
			`(?m)^Read by [\d,]+ people$`,
		},
	}
	a := scoped(t, rules, newsPage)
	want := "Council approves new bridge\nBy Ann Lee ·\nThe city council voted 7–2 on Monday to fund a pedestrian bridge across the river.\nConstruction starts in spring."
	if a.Text != want || a.Matched != 1 {
		t.Fatalf("got %q\nwant %q", a.Text, want)
	}
	// The next day: new date, more readers, a new related article, a new
	// footer year: the compared text is the same.
	later := strings.NewReplacer("1 December 2026, 10:42", "2 December 2026, 08:05", "1,204", "3,977",
		"Roadworks on Main Street", "Schools close early", "© 2026", "© 2027").Replace(newsPage)
	if b := scoped(t, rules, later); b.Text != a.Text {
		t.Fatalf("date and counter changes leaked:\n%q\n%q", a.Text, b.Text)
	}
	// An edit of the article itself is seen.
	edited := strings.Replace(newsPage, "starts in spring", "starts in autumn", 1)
	if b := scoped(t, rules, edited); b.Text == a.Text || !strings.Contains(b.Text, "autumn") {
		t.Fatalf("article edit not seen: %q", b.Text)
	}
}

func TestShopPageCounterAndAdSlot(t *testing.T) {
	rules := Rules{
		Selector: ".product",
		Exclude:  ".ad-slot, .ticker",
		Ignore:   []string{`Only \d+ left in stock`},
	}
	a := scoped(t, rules, shopPage)
	want := "Blue kettle\n€ 24.90\n1.7 litre, boils in 3 minutes.\nLimescale filter included."
	if a.Text != want {
		t.Fatalf("got %q\nwant %q", a.Text, want)
	}
	reload := strings.NewReplacer("Only 7 left", "Only 3 left", "12 people", "31 people",
		"Cheap flights to Lisbon", "Win a phone", "id=991", "id=17").Replace(shopPage)
	if b := scoped(t, rules, reload); b.Text != a.Text {
		t.Fatalf("counter or ad leaked: %q", b.Text)
	}
	repriced := strings.Replace(shopPage, "24.90", "29.90", 1)
	if b := scoped(t, rules, repriced); !strings.Contains(b.Text, "29.90") {
		t.Fatalf("price change not seen: %q", b.Text)
	}
	// Without rules the counter and the ad are part of the text.
	if whole := scoped(t, Rules{}, shopPage).Text; !strings.Contains(whole, "Only 7 left") || !strings.Contains(whole, "Sponsored") || strings.Contains(whole, "Enable JavaScript") {
		t.Fatalf("whole page: %q", whole)
	}
}

func TestSelectorMatchingNothingOrNested(t *testing.T) {
	if r := scoped(t, Rules{Selector: "#gone"}, shopPage); r.Matched != 0 || r.Text != "" {
		t.Fatalf("no match: %+v", r)
	}
	// div matches the product and the description inside it: written once.
	r := scoped(t, Rules{Selector: "div.product, div.description"}, shopPage)
	if strings.Count(r.Text, "Limescale") != 1 || r.Matched != 2 {
		t.Fatalf("nested matches: %+v", r)
	}
}

func TestInvalidRulesAreTypedErrors(t *testing.T) {
	for _, tc := range []struct {
		rules     Rules
		selector  bool
		field     string
		index     int
		tooComplx bool
	}{
		{rules: Rules{Selector: "div[class="}, selector: true, field: "selector"},
		{rules: Rules{Exclude: ":nth-child(x)"}, selector: true, field: "exclude"},
		{rules: Rules{Selector: strings.Repeat("div ", 300)}, selector: true, field: "selector", tooComplx: true},
		{rules: Rules{Ignore: []string{"ok", "(unclosed"}}, index: 1},
		{rules: Rules{Ignore: []string{`(\w)\1`}}}, // backreferences are not RE2
		{rules: Rules{Ignore: []string{"a*"}}},     // matches the empty text
		{rules: Rules{Ignore: []string{""}}},
		{rules: Rules{Ignore: []string{`(\w+\s){999}`}}, tooComplx: true},
		{rules: Rules{Ignore: []string{strings.Repeat("x", MaxRuleBytes+1)}}, tooComplx: true},
		{rules: Rules{Ignore: make([]string, MaxRules+1)}, index: MaxRules, tooComplx: true},
	} {
		_, err := Compile(tc.rules)
		var se *SelectorError
		var re *RuleError
		switch {
		case err == nil:
			t.Errorf("Compile(%+v) succeeded", tc.rules)
			continue
		case tc.selector && (!errors.As(err, &se) || se.Field != tc.field):
			t.Errorf("Compile(%+v): %T %v, want a SelectorError for %s", tc.rules, err, err, tc.field)
		case !tc.selector && (!errors.As(err, &re) || re.Index != tc.index):
			t.Errorf("Compile(%+v): %T %v, want a RuleError for rule %d", tc.rules, err, err, tc.index)
		}
		if errors.Is(err, ErrTooComplex) != tc.tooComplx {
			t.Errorf("Compile(%+v): %v: ErrTooComplex is %v", tc.rules, err, !tc.tooComplx)
		}
		if !strings.HasPrefix(err.Error(), "textscope: ") || len(err.Error()) > 400 {
			t.Errorf("error text %q", err)
		}
	}
}

func TestBoundedInputAndOutput(t *testing.T) {
	// A text longer than MaxTextBytes is cut at a word.
	long := "<p>" + strings.Repeat("word ", MaxTextBytes/5+100) + "</p>"
	r := scoped(t, Rules{}, long)
	if !r.Cut || len(r.Text) > MaxTextBytes || len(r.Text) < MaxTextBytes-5 || !strings.HasSuffix(r.Text, "word") {
		t.Fatalf("long text: cut=%v len=%d suffix=%q", r.Cut, len(r.Text), r.Text[len(r.Text)-10:])
	}
	// A body larger than MaxHTMLBytes is read no further.
	big := "<p>short</p><!--" + strings.Repeat("x", MaxHTMLBytes) + "--><p>after the cap</p>"
	if r := scoped(t, Rules{}, big); !r.Cut || r.Text != "short" {
		t.Fatalf("big page: cut=%v text=%q", r.Cut, cut(r.Text, 50))
	}
	// Nesting the parser accepts is walked without recursion; deeper is a
	// typed error, not a panic.
	nest := func(n int) string { return strings.Repeat("<div>", n) + "deep" + strings.Repeat("</div>", n) }
	if r := scoped(t, Rules{Selector: "div"}, nest(500)); r.Text != "deep" || r.Matched != 500 {
		t.Fatalf("deep page: %q, %d matched", cut(r.Text, 50), r.Matched)
	}
	s, _ := Compile(Rules{})
	if _, err := s.Text(strings.NewReader(nest(600))); !errors.Is(err, ErrUnparsable) {
		t.Fatalf("600 deep: %v", err)
	}
}

// FuzzScopeText: any selector, exclude, rule and page compile to an error or
// give valid UTF-8 text within MaxTextBytes, without a panic.
func FuzzScopeText(f *testing.F) {
	f.Add("main article", ".ad-slot", `\d+ people`, newsPage)
	f.Add(".product", ".ticker", `Only \d+ left`, shopPage)
	f.Add("p:nth-child(2n+1) > a[href^=http]", "", "(?m)^x$", "<p><a href=http://a>x</a></p>")
	f.Add("*", "*", ".", "<table><tr><td>a<td>b</table>")
	f.Add("div:has(p)", "", "[", "\xff\xfe<p>bad utf8\x80</p>")
	f.Fuzz(func(t *testing.T, sel, exclude, rule, page string) {
		rules := Rules{Selector: sel, Exclude: exclude}
		if rule != "" {
			rules.Ignore = []string{rule}
		}
		s, err := Compile(rules)
		if err != nil {
			var se *SelectorError
			var re *RuleError
			if !errors.As(err, &se) && !errors.As(err, &re) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		r, err := s.Text(strings.NewReader(page))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Text) > MaxTextBytes || !utf8.ValidString(r.Text) {
			t.Fatalf("text of %d bytes, valid UTF-8 %v", len(r.Text), utf8.ValidString(r.Text))
		}
		if r.Matched < 0 || (sel == "" && r.Matched != 1) {
			t.Fatalf("matched %d", r.Matched)
		}
	})
}
