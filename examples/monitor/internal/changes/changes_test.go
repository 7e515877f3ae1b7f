package changes

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// page is a plain 200 snapshot of a product page; each test changes a copy.
func page() *Snapshot {
	return &Snapshot{
		Status: 200, FinalURL: "https://shop.example/p/1",
		Title: "Blue kettle", MetaDescription: "A blue kettle.", Canonical: "https://shop.example/p/1",
		MetaRobots: "index, follow", H1: "Blue kettle",
		Hreflang:    []Alternate{{"en", "https://shop.example/p/1"}, {"de", "https://shop.example/de/p/1"}},
		ContentHash: "h1", Text: "Blue kettle\nBoils water fast.\nPrice 20 euros", HasText: true,
	}
}

func kinds(cs []Change) []Kind {
	var out []Kind
	for _, c := range cs {
		out = append(out, c.Kind)
	}
	return out
}

func TestEachKind(t *testing.T) {
	cases := []struct {
		name   string
		change func(s *Snapshot)
		want   Change // Kind, Severity, Field, Old, New compared; Text ignored
	}{
		{"status 200 to 404", func(s *Snapshot) { s.Status = 404 },
			Change{Kind: KindStatus, Severity: High, Field: "status", Old: "200", New: "404"}},
		{"status 200 to 301", func(s *Snapshot) { s.Status = 301 },
			Change{Kind: KindStatus, Severity: Medium, Field: "status", Old: "200", New: "301"}},
		{"no response", func(s *Snapshot) { s.Status = 0; s.Error = "connection refused" },
			Change{Kind: KindStatus, Severity: High, Field: "status", Old: "200", New: "no response: connection refused"}},
		{"redirect appears", func(s *Snapshot) {
			s.Redirects = []Hop{{URL: "https://shop.example/p/1", Status: 301, Location: "/p/2"}}
			s.FinalURL = "https://shop.example/p/2"
		}, Change{Kind: KindRedirect, Severity: Medium, Field: "final_url", Old: "(no redirect)", New: "https://shop.example/p/2"}},
		{"title", func(s *Snapshot) { s.Title = "Red kettle" },
			Change{Kind: KindTitle, Severity: Medium, Field: "title", Old: "Blue kettle", New: "Red kettle"}},
		{"meta description", func(s *Snapshot) { s.MetaDescription = "" },
			Change{Kind: KindMetaDescription, Severity: Low, Field: "meta_description", Old: "A blue kettle."}},
		{"canonical", func(s *Snapshot) { s.Canonical = "https://shop.example/p/9" },
			Change{Kind: KindCanonical, Severity: High, Field: "canonical", Old: "https://shop.example/p/1", New: "https://shop.example/p/9"}},
		{"noindex appears in meta robots", func(s *Snapshot) { s.MetaRobots = "NoIndex, follow" },
			Change{Kind: KindNoindexAdded, Severity: Critical, Field: "meta_robots", Old: `meta robots "index, follow"`, New: `meta robots "NoIndex, follow"`}},
		{"noindex appears in X-Robots-Tag for one bot", func(s *Snapshot) { s.XRobotsTag = "googlebot: noindex" },
			Change{Kind: KindNoindexAdded, Severity: Critical, Field: "x_robots_tag", Old: `meta robots "index, follow"`, New: `meta robots "index, follow"; X-Robots-Tag "googlebot: noindex"`}},
		{"none means noindex", func(s *Snapshot) { s.MetaRobots = "none" },
			Change{Kind: KindNoindexAdded, Severity: Critical, Field: "meta_robots", Old: `meta robots "index, follow"`, New: `meta robots "none"`}},
		{"other directive", func(s *Snapshot) { s.XRobotsTag = "noarchive" },
			Change{Kind: KindRobotsDirectives, Severity: Low, Field: "x_robots_tag", New: "noarchive"}},
		{"unavailable_after is not a crawler name", func(s *Snapshot) { s.XRobotsTag = "unavailable_after: 2027-01-01" },
			Change{Kind: KindRobotsDirectives, Severity: Low, Field: "x_robots_tag", New: "unavailable_after: 2027-01-01"}},
		{"h1", func(s *Snapshot) { s.H1 = "Kettles" },
			Change{Kind: KindH1, Severity: Low, Field: "h1", Old: "Blue kettle", New: "Kettles"}},
		{"hreflang set", func(s *Snapshot) { s.Hreflang = s.Hreflang[:1] },
			Change{Kind: KindHreflang, Severity: Low, Field: "hreflang", Old: "de=https://shop.example/de/p/1, en=https://shop.example/p/1", New: "en=https://shop.example/p/1"}},
		{"text", func(s *Snapshot) { s.ContentHash = "h2"; s.Text = strings.Replace(s.Text, "20", "25", 1) },
			Change{Kind: KindText, Severity: Low, Field: "text", Old: "8 words", New: "8 words (+1 −1, 12.5% changed)"}},
		{"content without text", func(s *Snapshot) { s.ContentHash = "h2"; s.Text = ""; s.HasText = false },
			Change{Kind: KindText, Severity: Low, Field: "content", New: "changed"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prev, next := page(), page()
			tc.change(next)
			got := Compare(prev, next, Options{})
			if len(got) != 1 {
				t.Fatalf("got %d changes %+v, want one %s", len(got), got, tc.want.Kind)
			}
			g := got[0]
			g.Text = nil
			if g != tc.want {
				t.Errorf("got  %+v\nwant %+v", g, tc.want)
			}
		})
	}
}

func TestNoindexDisappears(t *testing.T) {
	prev, next := page(), page()
	prev.MetaRobots, prev.XRobotsTag = "noindex", "noindex"
	next.MetaRobots, next.XRobotsTag = "index", ""
	got := Compare(prev, next, Options{})
	if len(got) != 1 || got[0].Kind != KindNoindexRemoved || got[0].Field != "meta_robots,x_robots_tag" || got[0].Severity != Medium {
		t.Fatalf("got %+v", got)
	}
	// Noindex moving from the tag to the header is no flip: two directive changes.
	next.MetaRobots, next.XRobotsTag = "index", "noindex"
	prev.XRobotsTag = ""
	if got := kinds(Compare(prev, next, Options{})); !slices.Equal(got, []Kind{KindRobotsDirectives, KindRobotsDirectives}) {
		t.Fatalf("noindex moved from meta to header: %v", got)
	}
}

func TestRedirectTargetChanges(t *testing.T) {
	prev, next := page(), page()
	prev.Redirects = []Hop{{URL: "https://shop.example/old", Status: 301}}
	next.Redirects = []Hop{{URL: "https://shop.example/old", Status: 302}}
	next.FinalURL = "https://shop.example/p/2"
	got := Compare(prev, next, Options{})
	if len(got) != 1 || got[0].Kind != KindRedirect || got[0].Old != "https://shop.example/p/1" || got[0].New != "https://shop.example/p/2" {
		t.Fatalf("got %+v", got)
	}
	// The redirect going away.
	next = page()
	if got := Compare(prev, next, Options{}); len(got) != 1 || got[0].New != "(no redirect)" {
		t.Fatalf("redirect removed: %+v", got)
	}
}

func TestHreflangOrderIsNoChange(t *testing.T) {
	prev, next := page(), page()
	next.Hreflang = []Alternate{{"DE", "https://shop.example/de/p/1"}, {"en", "https://shop.example/p/1"}, {"en", "https://shop.example/p/1"}}
	if got := Compare(prev, next, Options{}); len(got) != 0 {
		t.Fatalf("reordered hreflang set: %+v", got)
	}
}

func TestRobotsBlockStartsAndEnds(t *testing.T) {
	blocked := &Snapshot{Blocked: true, RobotsRule: `disallowed by "Disallow: /p/" (line 2)`}
	got := Compare(page(), blocked, Options{})
	if len(got) != 1 || got[0].Kind != KindRobotsBlocked || got[0].Severity != High ||
		got[0].New != `blocked by robots.txt: disallowed by "Disallow: /p/" (line 2)` {
		t.Fatalf("newly blocked: %+v", got)
	}
	if got := Compare(blocked, blocked, Options{}); got != nil {
		t.Fatalf("still blocked: %+v", got)
	}
	changed := page()
	changed.Title = "Other"
	got = Compare(blocked, changed, Options{})
	if !slices.Equal(kinds(got), []Kind{KindRobotsUnblocked}) {
		t.Fatalf("unblocked: %+v", got)
	}
}

func TestBotProtectionIsNeverAContentChange(t *testing.T) {
	challenge := &Snapshot{BotProtection: "cloudflare challenge", Status: 403, Title: "Just a moment...",
		ContentHash: "cf", Text: "Checking your browser", HasText: true}
	got := Compare(page(), challenge, Options{})
	if !slices.Equal(kinds(got), []Kind{KindBotProtection}) || got[0].Severity != Info {
		t.Fatalf("challenge after the page: %+v", got)
	}
	if got := Compare(challenge, challenge, Options{}); got != nil {
		t.Fatalf("challenge again: %+v", got)
	}
	if got := kinds(Compare(challenge, page(), Options{})); !slices.Equal(got, []Kind{KindBotProtectionEnd}) {
		t.Fatalf("page after the challenge: %v", got)
	}
	// Compared with the last real response (as the monitor does), the
	// page is unchanged.
	if got := Compare(page(), page(), Options{}); got != nil {
		t.Fatalf("same page: %+v", got)
	}
	// A challenge with a filter for content changes selects nothing.
	if got := (Filter{Kinds: []Kind{KindText, KindTitle, KindStatus}}).Apply(Compare(page(), challenge, Options{})); got != nil {
		t.Fatalf("filter for content kinds selected %+v", got)
	}
}

func TestFirstSnapshotAndUnchanged(t *testing.T) {
	if got := Compare(nil, page(), Options{}); got != nil {
		t.Fatalf("first snapshot: %+v", got)
	}
	if got := Compare(page(), page(), Options{}); got != nil {
		t.Fatalf("unchanged: %+v", got)
	}
	// Same hash, texts not loaded: unchanged.
	a, b := page(), page()
	a.HasText, b.HasText, a.Text, b.Text = false, false, "", ""
	if got := Compare(a, b, Options{}); got != nil {
		t.Fatalf("same hash: %+v", got)
	}
}

func TestSeveralChangesInKindOrder(t *testing.T) {
	prev, next := page(), page()
	next.Title, next.Status, next.MetaRobots, next.H1 = "New", 404, "noindex", "New"
	next.ContentHash, next.Text = "h9", "Not found"
	got := Compare(prev, next, Options{})
	want := []Kind{KindStatus, KindNoindexAdded, KindTitle, KindH1, KindText}
	if !slices.Equal(kinds(got), want) {
		t.Fatalf("got %v, want %v", kinds(got), want)
	}
	if Max(got) != Critical {
		t.Fatalf("max severity %v", Max(got))
	}
	f := Filter{MinSeverity: High}
	if got := kinds(f.Apply(got)); !slices.Equal(got, []Kind{KindStatus, KindNoindexAdded}) {
		t.Fatalf("high and above: %v", got)
	}
	f = Filter{Kinds: []Kind{KindTitle, KindText}, MinSeverity: Medium}
	if got := kinds(f.Apply(Compare(prev, next, Options{}))); !slices.Equal(got, []Kind{KindTitle}) {
		t.Fatalf("title or text, medium and above: %v", got)
	}
}

func TestSeverityOverride(t *testing.T) {
	prev, next := page(), page()
	next.H1, next.MetaRobots = "Other", "noindex"
	got := Compare(prev, next, Options{Severity: map[Kind]Severity{KindH1: Critical, KindNoindexAdded: Low}})
	if got[0].Kind != KindNoindexAdded || got[0].Severity != Low || got[1].Kind != KindH1 || got[1].Severity != Critical {
		t.Fatalf("got %+v", got)
	}
}

func TestTextThreshold(t *testing.T) {
	prev, next := page(), page()
	next.ContentHash, next.Text = "h2", prev.Text+"\nFree delivery"
	// 2 words added, 8 and 10 words: 2/18 = 11.1%.
	for _, tc := range []struct {
		th   TextThreshold
		want bool
	}{
		{TextThreshold{}, true},
		{TextThreshold{Words: 2}, true},
		{TextThreshold{Words: 3}, false},
		{TextThreshold{Percent: 11.1}, true},
		{TextThreshold{Percent: 11.2}, false},
		{TextThreshold{Words: 2, Percent: 12}, false},
		{TextThreshold{Words: 1, Percent: 10}, true},
	} {
		got := Compare(prev, next, Options{Text: tc.th})
		if (len(got) == 1) != tc.want {
			t.Errorf("threshold %+v: got %+v, want reported=%v", tc.th, got, tc.want)
		}
	}
	// A moved paragraph is no word change.
	next.Text = "Price 20 euros\nBlue kettle\nBoils water fast."
	if got := Compare(prev, next, Options{}); got != nil {
		t.Fatalf("moved paragraph: %+v", got)
	}
}

func TestParse(t *testing.T) {
	for _, k := range Kinds {
		if got, err := ParseKind(" " + strings.ToUpper(string(k))); err != nil || got != k {
			t.Errorf("ParseKind(%s) = %v, %v", k, got, err)
		}
		if _, ok := DefaultSeverity[k]; !ok {
			t.Errorf("kind %s has no default severity", k)
		}
	}
	if _, err := ParseKind("titel"); err == nil || !strings.Contains(err.Error(), `"titel"`) {
		t.Errorf("ParseKind(titel): %v", err)
	}
	for s := Info; s <= Critical; s++ {
		b, err := s.MarshalText()
		var back Severity
		if err != nil || back.UnmarshalText(b) != nil || back != s {
			t.Errorf("severity %d round trip: %s %v -> %v", s, b, err, back)
		}
	}
	if _, err := ParseSeverity("urgent"); err == nil {
		t.Error("ParseSeverity(urgent) succeeded")
	}
	if _, err := Severity(9).MarshalText(); err == nil {
		t.Error("severity 9 marshalled")
	}
}

// FuzzDiffWords checks the properties the text threshold relies on: counts
// add up, Percent is in [0, 100] and symmetric, a text compared with itself
// or with its words reordered is unchanged, and raising a threshold never
// reports more.
func FuzzDiffWords(f *testing.F) {
	f.Add("Price 20 euros", "Price 25 euros", 1, 10.0)
	f.Add("", "new page", 0, 0.0)
	f.Add("a a a b", "a b b", 2, 50.0)
	f.Add("Updated 1 Dec 2026\nNews text", "Updated 2 Dec 2026\nNews text", 3, 5.5)
	f.Fuzz(func(t *testing.T, old, new string, words int, percent float64) {
		if !utf8.ValidString(old) || !utf8.ValidString(new) {
			t.Skip()
		}
		d := DiffWords(old, new)
		r := DiffWords(new, old)
		if d.Added != r.Removed || d.Removed != r.Added || d.Percent != r.Percent {
			t.Fatalf("not symmetric: %+v vs %+v", d, r)
		}
		if d.OldWords-d.Removed != d.NewWords-d.Added || d.Added < 0 || d.Removed < 0 {
			t.Fatalf("counts do not add up: %+v", d)
		}
		if d.Percent < 0 || d.Percent > 100 {
			t.Fatalf("percent out of range: %+v", d)
		}
		if s := DiffWords(old, old); s.Added+s.Removed != 0 || s.Percent != 0 {
			t.Fatalf("text against itself: %+v", s)
		}
		w := strings.Fields(old)
		slices.Reverse(w)
		if s := DiffWords(old, strings.Join(w, "\n")); s.Added+s.Removed != 0 {
			t.Fatalf("reordered words: %+v", s)
		}
		th := TextThreshold{Words: words, Percent: percent}
		if th.Reached(d) {
			if d.Added+d.Removed == 0 {
				t.Fatalf("no change reached %+v", th)
			}
			if !(TextThreshold{Words: words - 1, Percent: percent / 2}).Reached(d) {
				t.Fatalf("a lower threshold than %+v is not reached by %+v", th, d)
			}
		}
		if (TextThreshold{}).Reached(d) != (d.Added+d.Removed > 0) {
			t.Fatalf("zero threshold on %+v", d)
		}
	})
}

// BenchmarkDiffWords at two sizes: time grows with the text (the 100k-word
// text takes about 100× the 1k one), memory with its distinct words only.
func BenchmarkDiffWords(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		words := make([]string, n)
		for i := range words {
			words[i] = "w" + strings.Repeat("x", i%7) + string(rune('a'+i%26))
		}
		old := strings.Join(words, " ")
		words[n/2] = "changed"
		new := strings.Join(words, " ")
		b.Run(strconv.Itoa(n)+"words", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				DiffWords(old, new)
			}
		})
	}
}
