package alert

import (
	"encoding/xml"
	"io"
	"net/url"
	"strings"
	"time"
)

// Feed is an Atom feed (RFC 4287) of change messages: one per tracked page
// (its history) or one for the whole monitor. The monitor serves it; any
// feed reader subscribes.
type Feed struct {
	Title   string    // "Changes of https://example.com/pricing"
	ID      string    // a permanent IRI of the feed, e.g. "urn:polite:feed:page:" + page URL
	SelfURL string    // where the feed is served
	Link    string    // the HTML page it belongs to (the dashboard or the page's history)
	Author  string    // "": Title
	Updated time.Time // zero: the newest entry's time
	Entries []Message // newest first; the caller caps how many
}

// EntryID is the Atom id of a message's entry: permanent, built from the
// change's ID only, so a message rendered twice is one entry.
func EntryID(m *Message) string { return "urn:polite:change:" + url.PathEscape(m.ID) }

type atomLink struct {
	Href string `xml:"href,attr"`
	Rel  string `xml:"rel,attr,omitempty"`
	Type string `xml:"type,attr,omitempty"`
}

type atomText struct {
	Type string `xml:"type,attr"`
	Text string `xml:",chardata"`
}

type atomEntry struct {
	ID       string     `xml:"id"`
	Title    atomText   `xml:"title"`
	Updated  string     `xml:"updated"`
	Links    []atomLink `xml:"link"`
	Category []struct {
		Term string `xml:"term,attr"`
	} `xml:"category"`
	Summary atomText `xml:"summary"`
	Content atomText `xml:"content"`
}

type atomFeed struct {
	XMLName xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	ID      string      `xml:"id"`
	Title   atomText    `xml:"title"`
	Updated string      `xml:"updated"`
	Author  string      `xml:"author>name"`
	Links   []atomLink  `xml:"link"`
	Entries []atomEntry `xml:"entry"`
}

// xmlSafe drops the characters XML 1.0 cannot carry at all (NUL and the
// other C0 controls but tab and line breaks): a page title may hold them.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

func atomTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// WriteTo writes the feed as Atom XML.
func (f *Feed) WriteTo(w io.Writer) (int64, error) {
	updated := f.Updated
	for i := range f.Entries {
		if t := f.Entries[i].TakenAt; t.After(updated) {
			updated = t
		}
	}
	if updated.IsZero() {
		updated = time.Unix(0, 0)
	}
	author := f.Author
	if author == "" {
		author = f.Title
	}
	af := atomFeed{
		ID: xmlSafe(f.ID), Title: atomText{"text", xmlSafe(f.Title)}, Updated: atomTime(updated), Author: xmlSafe(author),
	}
	if f.SelfURL != "" {
		af.Links = append(af.Links, atomLink{Href: xmlSafe(f.SelfURL), Rel: "self", Type: "application/atom+xml"})
	}
	if f.Link != "" {
		af.Links = append(af.Links, atomLink{Href: xmlSafe(f.Link), Rel: "alternate", Type: "text/html"})
	}
	for i := range f.Entries {
		m := &f.Entries[i]
		e := atomEntry{
			ID:      xmlSafe(EntryID(m)),
			Title:   atomText{"text", xmlSafe(m.Subject())},
			Updated: atomTime(m.TakenAt),
			Summary: atomText{"text", xmlSafe(summary(m))},
			Content: atomText{"text", xmlSafe(m.Text())},
		}
		if m.HistoryURL != "" {
			e.Links = append(e.Links, atomLink{Href: xmlSafe(m.HistoryURL), Rel: "alternate", Type: "text/html"})
		}
		seen := map[string]bool{}
		for _, c := range m.Changes {
			if !seen[c.Kind] {
				seen[c.Kind] = true
				e.Category = append(e.Category, struct {
					Term string `xml:"term,attr"`
				}{xmlSafe(c.Kind)})
			}
		}
		af.Entries = append(af.Entries, e)
	}
	cw := &countWriter{w: w}
	if _, err := io.WriteString(cw, xml.Header); err != nil {
		return cw.n, err
	}
	enc := xml.NewEncoder(cw)
	enc.Indent("", "  ")
	if err := enc.Encode(af); err != nil {
		return cw.n, err
	}
	_, err := io.WriteString(cw, "\n")
	return cw.n, err
}

// summary is one line per change: "title: "A" -> "B"".
func summary(m *Message) string {
	lines := make([]string, 0, len(m.Changes))
	for _, c := range m.Changes {
		lines = append(lines, c.Kind+": "+quoteValue(c.Old)+" -> "+quoteValue(c.New))
	}
	return strings.Join(lines, "\n")
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
