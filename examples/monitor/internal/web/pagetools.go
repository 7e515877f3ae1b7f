package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/politecrawl/polite/examples/monitor/internal/schedule"
	"github.com/politecrawl/polite/examples/monitor/internal/textscope"
)

// A tracked page's tools on its history page: its rules (what is compared:
// a CSS selector, an exclude selector, ignore patterns), shown and edited
// with the same checks as `monitor rules`, and a "Check now" button that
// takes one snapshot through the process's host gate (`monitor run -now`).
// Both are same-origin POSTs, like every form of the site.

// checksNowInFlight bounds the checks now at once, server-wide: each holds
// a request open while it waits its turn at the host gate.
const checksNowInFlight = 4

// pageTools is what the history page shows of a page's tools.
type pageTools struct {
	Rules    textscope.Rules
	Ignore   string // the ignore patterns, one a line (the form's textarea)
	CheckNow bool   // the button is shown
}

func (s *Server) pageTools(ctx context.Context, u string) (pageTools, error) {
	r, err := s.st.Rules(ctx, u)
	if err != nil {
		return pageTools{}, err
	}
	return pageTools{Rules: r, Ignore: strings.Join(r.Ignore, "\n"), CheckNow: s.cfg.CheckNow != nil}, nil
}

// pageBack is the history page of u, with a flash.
func pageBack(u, done string) string {
	return "/page?" + url.Values{"url": {u}, "done": {done}}.Encode()
}

// rulesPost replaces a page's rules from the form (all fields empty: no
// rules). A rule that cannot be used is a 400 with the parser's reason;
// nothing is stored then.
func (s *Server) rulesPost(w http.ResponseWriter, r *http.Request) {
	_, u, err := s.formURL(r)
	if err != nil {
		s.dashboardWith(w, r, http.StatusBadRequest, err.Error())
		return
	}
	rules := textscope.Rules{
		Selector: strings.TrimSpace(r.PostFormValue("select")),
		Exclude:  strings.TrimSpace(r.PostFormValue("exclude")),
	}
	for line := range strings.SplitSeq(r.PostFormValue("ignore"), "\n") {
		if line = strings.TrimRight(line, "\r"); strings.TrimSpace(line) != "" {
			rules.Ignore = append(rules.Ignore, line)
		}
	}
	found, err := s.st.SetRules(r.Context(), u, rules)
	var se *textscope.SelectorError
	var re *textscope.RuleError
	switch {
	case errors.As(err, &se) || errors.As(err, &re):
		s.historyWith(w, r, u, http.StatusBadRequest, strings.TrimPrefix(err.Error(), "textscope: "))
	case err != nil:
		s.fail(w, err)
	case !found:
		s.dashboardWith(w, r, http.StatusNotFound, "not tracked: "+u)
	default:
		http.Redirect(w, r, pageBack(u, "rules"), http.StatusSeeOther)
	}
}

// checkNowPost takes one snapshot of a tracked page now. A refusal (the
// six-hour minimum, robots.txt's re-check wait, a check in progress) is a
// 409 saying from when it is allowed; too many at once is a 503.
func (s *Server) checkNowPost(w http.ResponseWriter, r *http.Request) {
	_, u, err := s.formURL(r)
	if err != nil {
		s.dashboardWith(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if s.cfg.CheckNow == nil {
		http.NotFound(w, r)
		return
	}
	select {
	case s.nowSlots <- struct{}{}:
		defer func() { <-s.nowSlots }()
	default:
		w.Header().Set("Retry-After", "5")
		s.historyWith(w, r, u, http.StatusServiceUnavailable, "other checks are running: try again in a few seconds")
		return
	}
	_, err = s.cfg.CheckNow(r.Context(), u)
	var refused *schedule.NowRefused
	switch {
	case errors.As(err, &refused):
		s.historyWith(w, r, u, http.StatusConflict, refused.Error())
	case errors.Is(err, schedule.ErrNotTracked):
		s.dashboardWith(w, r, http.StatusNotFound, "not tracked: "+u)
	case err != nil:
		s.fail(w, err)
	default:
		http.Redirect(w, r, pageBack(u, "checked"), http.StatusSeeOther)
	}
}
