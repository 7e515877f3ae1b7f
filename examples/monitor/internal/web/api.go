package web

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/politecrawl/polite/examples/monitor/internal/pagetext"
	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
	"github.com/politecrawl/polite/examples/monitor/internal/store"
)

// The JSON API: the dashboard's data for scripts. Times are RFC 3339 UTC;
// lists are paginated with ?page=N (50 pages or 30 snapshots a page).

// APIPage is one tracked page in /api/pages.
type APIPage struct {
	URL             string     `json:"url"`
	Host            string     `json:"host"`
	IntervalSeconds int64      `json:"interval_seconds"`
	AddedAt         time.Time  `json:"added_at"`
	LastCheck       *time.Time `json:"last_check"`
	LastOutcome     string     `json:"last_outcome"` // ok, error, blocked, robots-unreachable, bot-protection, "" (never checked)
	LastDetail      string     `json:"last_detail,omitempty"`
	LastStatus      int        `json:"last_status,omitempty"`
	NextDue         time.Time  `json:"next_due"`
	LastChange      string     `json:"last_change,omitempty"`
	LastChangeAt    *time.Time `json:"last_change_at,omitempty"`
	Banner          string     `json:"banner,omitempty"` // set when the latest check was skipped by robots.txt, or met bot protection
}

// APIPageList is the answer of GET /api/pages.
type APIPageList struct {
	Total   int       `json:"total"`
	Page    int       `json:"page"`
	PerPage int       `json:"per_page"`
	Pages   []APIPage `json:"pages"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

func (s *Server) toAPIPage(p store.Page) APIPage {
	a := APIPage{URL: p.URL, Host: p.Host, IntervalSeconds: int64(p.Interval / time.Second), AddedAt: p.Added.UTC(),
		LastCheck: timePtr(p.LastAttempt), LastOutcome: p.LastOutcome, LastDetail: p.LastDetail, LastStatus: p.LastStatus,
		NextDue: p.Due().UTC(), LastChange: p.LastChange, LastChangeAt: timePtr(p.LastChanged)}
	switch p.LastOutcome {
	case snapshot.OutcomeBlocked:
		a.Banner = s.banner
	case snapshot.OutcomeBotProtection:
		a.Banner = p.LastDetail // blocked by bot protection (vendor, signal)
	}
	return a
}

func (s *Server) apiPages(w http.ResponseWriter, r *http.Request) {
	f, err := s.filter(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	n := pageNumber(r)
	pages, total, err := s.st.ListPages(r.Context(), f, pageSize, (n-1)*pageSize)
	if err != nil {
		s.fail(w, err)
		return
	}
	out := APIPageList{Total: total, Page: n, PerPage: pageSize, Pages: make([]APIPage, 0, len(pages))}
	for _, p := range pages {
		out.Pages = append(out.Pages, s.toAPIPage(p))
	}
	writeJSON(w, http.StatusOK, out)
}

// APISnapshot is one snapshot in /api/pages/{url}/snapshots.
type APISnapshot struct {
	ID              int64                `json:"id"`
	TakenAt         time.Time            `json:"taken_at"`
	Blocked         bool                 `json:"blocked_by_robots"`
	RobotsRule      string               `json:"robots_rule,omitempty"`
	Status          int                  `json:"status,omitempty"`
	NotModified     bool                 `json:"not_modified"`
	BytesSaved      int64                `json:"bytes_saved,omitempty"`
	FinalURL        string               `json:"final_url,omitempty"`
	Redirects       []snapshot.Hop       `json:"redirects,omitempty"`
	Title           string               `json:"title,omitempty"`
	MetaDescription string               `json:"meta_description,omitempty"`
	Canonical       string               `json:"canonical,omitempty"`
	MetaRobots      string               `json:"meta_robots,omitempty"`
	XRobotsTag      string               `json:"x_robots_tag,omitempty"`
	H1              string               `json:"h1,omitempty"`
	Hreflang        []snapshot.Alternate `json:"hreflang,omitempty"`
	WordCount       int                  `json:"word_count,omitempty"`
	ResponseMS      int64                `json:"response_ms,omitempty"`
	Error           string               `json:"error,omitempty"`
	Changes         []APIChange          `json:"changes,omitempty"`
}

// APIChange is one classified change; for a text change, Diff holds the word diff as
// segments whose op is "equal", "delete", "insert" or "gap" (unchanged text
// left out).
type APIChange struct {
	Kind     string       `json:"kind"`     // changes.Kind: status, title, noindex_added, ...
	Severity string       `json:"severity"` // info, low, medium, high, critical
	Field    string       `json:"field"`
	Old      string       `json:"old,omitempty"`
	New      string       `json:"new,omitempty"`
	Added    int          `json:"words_added,omitempty"`
	Removed  int          `json:"words_removed,omitempty"`
	Diff     []APIDiffSeg `json:"diff,omitempty"`
}

// APIDiffSeg is one segment of a word diff in the API.
type APIDiffSeg struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

var opNames = map[pagetext.Op]string{pagetext.OpEqual: "equal", pagetext.OpDelete: "delete", pagetext.OpInsert: "insert", pagetext.OpGap: "gap"}

func (s *Server) apiSnapshots(w http.ResponseWriter, r *http.Request) {
	u := r.PathValue("url")
	p, ok, err := s.st.Page(r.Context(), u)
	if err != nil {
		s.fail(w, err)
		return
	}
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not tracked: " + u})
		return
	}
	n := pageNumber(r)
	entries, total, err := s.historyEntries(r.Context(), p.URL, n)
	if err != nil {
		s.fail(w, err)
		return
	}
	out := struct {
		URL       string        `json:"url"`
		Total     int           `json:"total"`
		Page      int           `json:"page"`
		PerPage   int           `json:"per_page"`
		Snapshots []APISnapshot `json:"snapshots"`
	}{URL: p.URL, Total: total, Page: n, PerPage: historySize, Snapshots: make([]APISnapshot, 0, len(entries))}
	for _, e := range entries {
		sn := e.S
		a := APISnapshot{ID: sn.ID, TakenAt: sn.TakenAt.UTC(), Blocked: sn.Blocked, RobotsRule: sn.RobotsRule,
			Status: sn.Status, NotModified: sn.NotModified, BytesSaved: sn.BytesSaved, FinalURL: sn.FinalURL,
			Redirects: sn.Redirects, Title: sn.Title, MetaDescription: sn.MetaDescription, Canonical: sn.Canonical,
			MetaRobots: sn.MetaRobots, XRobotsTag: sn.XRobotsTag, H1: sn.H1, Hreflang: sn.Hreflang,
			WordCount: sn.WordCount, ResponseMS: sn.ResponseTime.Milliseconds(), Error: sn.Error}
		for _, c := range e.Changes {
			ac := APIChange{Kind: string(c.Kind), Severity: c.Severity.String(), Field: c.Field, Old: c.Old, New: c.New}
			if c.Text != nil {
				ac.Added, ac.Removed = c.Text.Added, c.Text.Removed
				for _, sg := range c.Text.Segs {
					ac.Diff = append(ac.Diff, APIDiffSeg{Op: opNames[sg.Op], Text: sg.Text})
				}
			}
			a.Changes = append(a.Changes, ac)
		}
		out.Snapshots = append(out.Snapshots, a)
	}
	writeJSON(w, http.StatusOK, out)
}

// apiCheck is the free tool: POST a form field url=... or a JSON body
// {"url": "..."}; the answer is the card.
func (s *Server) apiCheck(w http.ResponseWriter, r *http.Request) {
	var raw string
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
		var body struct {
			URL string `json:"url"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("bad JSON body: %v", err)})
			return
		}
		raw = body.URL
	} else {
		if err := r.ParseForm(); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("bad form: %v", err)})
			return
		}
		raw = r.PostFormValue("url")
	}
	raw = strings.TrimSpace(raw)
	if raw == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "no URL given"})
		return
	}
	u, err := s.cfg.CanonicalURL(raw)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	release, ok := s.admitCheck(w, r)
	if !ok {
		return
	}
	c := s.cfg.Check(r.Context(), u)
	release()
	writeJSON(w, http.StatusOK, c)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
