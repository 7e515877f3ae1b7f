package alert

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mmcdole/gofeed"
)

func TestAtomFeedParsesInAFeedReader(t *testing.T) {
	older := sample()
	older.ID, older.Severity = "change-41", "low"
	older.TakenAt = older.TakenAt.Add(-6 * time.Hour)
	older.Changes = []Change{{Kind: "h1", Severity: "low", Field: "h1", Old: "Prices", New: "Pricing\x00\x1b[31m"}}
	older.DiffLines = nil
	f := &Feed{
		Title: "Changes of https://shop.example/pricing", ID: "urn:polite:feed:page:https://shop.example/pricing",
		SelfURL: "http://127.0.0.1:8080/page/feed.atom?url=https%3A%2F%2Fshop.example%2Fpricing",
		Link:    "http://127.0.0.1:8080/page?url=https%3A%2F%2Fshop.example%2Fpricing",
		Entries: []Message{*sample(), *older},
	}
	var buf bytes.Buffer
	n, err := f.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteTo: %d, %v (wrote %d)", n, err, buf.Len())
	}
	feed, err := gofeed.NewParser().ParseString(buf.String())
	if err != nil {
		t.Fatalf("gofeed: %v\n%s", err, buf.String())
	}
	if feed.FeedType != "atom" || feed.Title != f.Title || feed.FeedLink != f.SelfURL || feed.Link != f.Link ||
		feed.UpdatedParsed == nil || !feed.UpdatedParsed.Equal(sample().TakenAt) || len(feed.Items) != 2 {
		t.Fatalf("feed %+v", feed)
	}
	first := feed.Items[0]
	if first.GUID != "urn:polite:change:change-42" || first.Title != "[critical] noindex_added, title: https://shop.example/pricing" ||
		first.Link != sample().HistoryURL || first.UpdatedParsed == nil || !first.UpdatedParsed.Equal(sample().TakenAt) ||
		strings.Join(first.Categories, ",") != "noindex_added,title" {
		t.Fatalf("entry %+v", first)
	}
	for _, want := range []string{"Plans start at [-ten-]{+twelve+} euros", `"Pricing <b>plans</b> & more`, "History: http://127.0.0.1:8080/page?url="} {
		if !strings.Contains(first.Content, want) {
			t.Errorf("content lacks %q:\n%s", want, first.Content)
		}
	}
	if !strings.Contains(first.Description, `title: "Pricing" -> `) {
		t.Errorf("summary %q", first.Description)
	}
	// A NUL or an escape from a page is shown escaped, never raw.
	if second := feed.Items[1]; !strings.Contains(second.Content, `"Pricing\x00\x1b[31m"`) || second.GUID != "urn:polite:change:change-41" {
		t.Errorf("second entry %q", second.Content)
	}
	// The same messages give the same feed: entry ids are permanent.
	var again bytes.Buffer
	if _, err := f.WriteTo(&again); err != nil || again.String() != buf.String() {
		t.Fatal("feed not stable")
	}
}

func TestEmptyMonitorFeed(t *testing.T) {
	var buf bytes.Buffer
	// A control character XML cannot carry is dropped from the title.
	f := &Feed{Title: "2-UAcomBot monitor:\x00 all changes\x0c", ID: "urn:polite:feed:monitor"}
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	feed, err := gofeed.NewParser().ParseString(buf.String())
	if err != nil || len(feed.Items) != 0 || feed.Title != "2-UAcomBot monitor: all changes" {
		t.Fatalf("%v %+v", err, feed)
	}
}
