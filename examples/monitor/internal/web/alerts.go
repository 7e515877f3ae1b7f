package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/politecrawl/polite/examples/monitor/internal/alert"
	"github.com/politecrawl/polite/examples/monitor/internal/changes"
	"github.com/politecrawl/polite/examples/monitor/internal/store"
)

// The alert side of the site: the alerts page (channels, the form that adds
// one, the latest deliveries with their state), the dashboard's banner when
// a delivery failed, and the Atom feeds of changes. Feeds need no token: the
// dashboard itself has none (it listens on loopback and checks the Host
// header), and a feed shows no more than the history page does.

const (
	// feedSize is the entries of one feed.
	feedSize = 50
	// deliveriesShown is the rows of the alerts page's delivery list.
	deliveriesShown = 50
)

// AlertForm is what the alerts page's form sends: one channel, its target
// and its filter, as `monitor alert add` takes them.
type AlertForm struct {
	Kind        string // webhook, slack or email
	URL         string // webhook, slack
	Secret      string // webhook
	Email, SMTP string // email: recipients (comma-separated), host:port
	Page, Host  string // target; both empty: every page
	Kinds       string // comma-separated change kinds; "": every kind
	MinSeverity string
	Name        string
}

type alertsData struct {
	common
	Channels   []store.Channel
	Deliveries []alert.Delivery
	Failed     int
	Kinds      []changes.Kind
	Severities []string
}

func (s *Server) alertsPage(w http.ResponseWriter, r *http.Request) {
	s.alertsWith(w, r, http.StatusOK, "")
}

func (s *Server) alertsWith(w http.ResponseWriter, r *http.Request, status int, errMsg string) {
	ctx := r.Context()
	d := alertsData{common: s.common(r), Kinds: changes.Kinds,
		Severities: []string{"info", "low", "medium", "high", "critical"}}
	d.Err = errMsg
	var err error
	if d.Channels, err = s.st.Channels(ctx); err != nil {
		s.fail(w, err)
		return
	}
	if d.Deliveries, err = s.st.Deliveries(ctx, deliveriesShown); err != nil {
		s.fail(w, err)
		return
	}
	if d.Failed, err = s.st.FailedDeliveries(ctx); err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, status, "alerts", d)
}

func (s *Server) alertAddPost(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.alertsWith(w, r, http.StatusBadRequest, fmt.Sprintf("bad form: %v", err))
		return
	}
	f := AlertForm{Kind: r.PostFormValue("kind"), URL: strings.TrimSpace(r.PostFormValue("url")),
		Secret: r.PostFormValue("secret"), Email: strings.TrimSpace(r.PostFormValue("email")),
		SMTP: strings.TrimSpace(r.PostFormValue("smtp")), Page: strings.TrimSpace(r.PostFormValue("page")),
		Host: strings.TrimSpace(r.PostFormValue("host")), Kinds: strings.Join(r.PostForm["kinds"], ","),
		MinSeverity: r.PostFormValue("min_severity"), Name: strings.TrimSpace(r.PostFormValue("name"))}
	if s.cfg.NewAlertChannel == nil {
		s.alertsWith(w, r, http.StatusServiceUnavailable, "alert channels cannot be added from this server")
		return
	}
	ch, err := s.cfg.NewAlertChannel(r.Context(), f)
	if err != nil {
		s.alertsWith(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if _, err := s.st.AddChannel(r.Context(), ch, s.now()); err != nil {
		s.alertsWith(w, r, http.StatusBadRequest, err.Error())
		return
	}
	http.Redirect(w, r, "/alerts?done=alert-added", http.StatusSeeOther)
}

func (s *Server) alertRemovePost(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PostFormValue("id"), 10, 64)
	if err != nil {
		s.alertsWith(w, r, http.StatusBadRequest, "bad channel ID")
		return
	}
	ok, err := s.st.RemoveChannel(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return
	}
	if !ok {
		s.alertsWith(w, r, http.StatusNotFound, fmt.Sprintf("no alert channel %d", id))
		return
	}
	http.Redirect(w, r, "/alerts?done=alert-removed", http.StatusSeeOther)
}

func (s *Server) alertTestPost(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PostFormValue("id"), 10, 64)
	if err != nil {
		s.alertsWith(w, r, http.StatusBadRequest, "bad channel ID")
		return
	}
	if s.cfg.TestAlertChannel == nil {
		s.alertsWith(w, r, http.StatusServiceUnavailable, "alert channels cannot be tested from this server")
		return
	}
	if _, err := s.cfg.TestAlertChannel(r.Context(), id); err != nil {
		s.alertsWith(w, r, http.StatusBadGateway, err.Error())
		return
	}
	http.Redirect(w, r, "/alerts?done=alert-tested", http.StatusSeeOther)
}

// failedDeliveries is the dashboard banner's count; an error shows no banner
// rather than no dashboard.
func (s *Server) failedDeliveries(ctx context.Context) int {
	n, err := s.st.FailedDeliveries(ctx)
	if err != nil {
		s.errLog.Print(err)
	}
	return n
}

// origin is this server as the request named it (the Host header was
// checked): the base of the feeds' links.
func origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func historyURL(base, page string) string {
	return base + "/page?" + url.Values{"url": {page}}.Encode()
}

// feed serves the Atom feed of the whole monitor (/feed.atom) or of one
// tracked page (/page/feed.atom?url=...).
func (s *Server) feed(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	base := origin(r)
	page := ""
	f := alert.Feed{Title: "Changes · 2-UA monitor", ID: "urn:polite:feed:monitor", SelfURL: base + "/feed.atom", Link: base + "/"}
	if r.URL.Path == "/page/feed.atom" {
		page = r.URL.Query().Get("url")
		_, ok, err := s.st.Page(ctx, page)
		if err != nil {
			s.fail(w, err)
			return
		}
		if !ok {
			http.Error(w, "not tracked: "+page, http.StatusNotFound)
			return
		}
		f.Title = "Changes of " + page
		f.ID = "urn:polite:feed:page:" + page
		f.SelfURL = base + "/page/feed.atom?" + url.Values{"url": {page}}.Encode()
		f.Link = historyURL(base, page)
	}
	msgs, err := s.st.ChangeMessages(ctx, page, feedSize)
	if err != nil {
		s.fail(w, err)
		return
	}
	for i := range msgs {
		if msgs[i].HistoryURL == "" {
			msgs[i].HistoryURL = historyURL(base, msgs[i].PageURL)
		}
	}
	f.Entries = msgs
	w.Header().Set("Content-Type", "application/atom+xml; charset=utf-8")
	if _, err := f.WriteTo(w); err != nil {
		s.errLog.Print(err)
	}
}
